#include "sync/view.hpp"

#include <algorithm>

namespace glbd {

std::string Overrides::set(const std::string& target, const std::string& state) {
    auto slash = target.find('/');
    std::string cluster = target.substr(0, slash);
    bool ok = !cluster.empty() && cluster.size() <= 63 && std::all_of(cluster.begin(), cluster.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
    if (!ok) return "target must be CLUSTER or CLUSTER/ENDPOINT, got \"" + target + "\"";
    if (slash != std::string::npos && (slash + 1 == target.size() || target.find('/', slash + 1) != std::string::npos)) {
        return "target must be CLUSTER or CLUSTER/ENDPOINT, got \"" + target + "\"";
    }
    if (state == "auto") {
        map_.erase(target);
    } else if (state == "down") {
        map_[target] = Override::down;
    } else if (state == "up") {
        map_[target] = Override::up;
    } else {
        return "state must be down, up or auto, got \"" + state + "\"";
    }
    return "";
}

std::optional<Override> Overrides::find(const std::string& cluster, const std::string& endpoint) const {
    if (map_.empty()) return std::nullopt;
    if (auto it = map_.find(cluster + "/" + endpoint); it != map_.end()) return it->second;
    if (auto it = map_.find(cluster); it != map_.end()) return it->second;
    return std::nullopt;
}

void apply_overrides(GlobalView& view, const Overrides& overrides) {
    if (overrides.all().empty()) return;
    for (auto& cluster : view) {
        for (auto& host : cluster.hosts) {
            for (auto& ep : host.endpoints) {
                if (auto o = overrides.find(cluster.id, ep.target)) ep.healthy = *o == Override::up;
            }
        }
    }
}

ClusterView local_view(const conf::Config& config, const health::States& health, const Overrides& overrides) {
    ClusterView v = local_cluster_view(config);
    for (auto& host : v.hosts) {
        for (auto& ep : host.endpoints) {
            if (auto it = health.find({host.host, ep.target}); it != health.end()) ep.healthy = it->second.healthy;
        }
    }
    GlobalView one{std::move(v)};
    apply_overrides(one, overrides);
    return std::move(one.front());
}

}  // namespace glbd
