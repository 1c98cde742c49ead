#include "resolver/global_view.hpp"

#include <algorithm>

namespace glbd {

ClusterView local_cluster_view(const conf::Config& config) {
    ClusterView v{config.cluster.id, true, {}, config.cluster.location};
    v.hosts.reserve(config.hosts.size());
    for (const auto& h : config.hosts) {
        HostEntry e{h.name, h.ttl, h.load_balancing, {}, h.entry};
        for (const auto& ep : h.endpoints) e.endpoints.push_back(EndpointState{ep, true});
        v.hosts.push_back(std::move(e));
    }
    order_entries(v.hosts);
    return v;
}

void order_entries(HostList& hosts) {
    const std::vector<HostEntry>& list = hosts;
    auto before = [](const HostEntry& a, const HostEntry& b) { return a.before(b); };
    if (std::is_sorted(list.begin(), list.end(), before)) return;
    std::stable_sort(hosts.begin(), hosts.end(), before);
}

SharedView share(GlobalView view) {
    SharedView out;
    out.reserve(view.size());
    for (auto& c : view) out.push_back(std::make_shared<const ClusterView>(std::move(c)));
    return out;
}

}  // namespace glbd
