#include "resolver/global_view.hpp"

namespace glbd {

ClusterView local_cluster_view(const conf::Config& config) {
    ClusterView v{config.cluster.id, true, {}, config.cluster.location};
    v.hosts.reserve(config.hosts.size());
    for (const auto& h : config.hosts) {
        HostEntry e{h.name, h.ttl, h.load_balancing, {}};
        for (const auto& ep : h.endpoints) e.endpoints.push_back(EndpointState{ep, true});
        v.hosts.push_back(std::move(e));
    }
    return v;
}

SharedView share(GlobalView view) {
    SharedView out;
    out.reserve(view.size());
    for (auto& c : view) out.push_back(std::make_shared<const ClusterView>(std::move(c)));
    return out;
}

}  // namespace glbd
