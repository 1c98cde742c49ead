#include "sync/local_view.hpp"

namespace glbd {

ClusterView local_view(const conf::Config& config, const health::States& health,
                       std::vector<sync::SharedCheck>* checks) {
    ClusterView v = local_cluster_view(config);
    std::vector<sync::SharedCheck> numbered = sync::own_checks(config.hosts, v.hosts);
    if (checks) *checks = std::move(numbered);
    for (auto& host : v.hosts) {
        for (auto& ep : host.endpoints) {
            if (auto it = health.find({host.host.str(), ep.target}); it != health.end())
                ep.healthy = it->second.healthy;
        }
    }
    return v;
}

}  // namespace glbd
