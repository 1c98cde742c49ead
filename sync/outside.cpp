#include "sync/outside.hpp"

#include <set>
#include <tuple>

#include "sync/health/outside/fleet.hpp"

namespace glbd::sync {

std::vector<OutsideTarget> outside_targets(const std::vector<LiveReport>& reports, const std::string& own_cluster,
                                           const std::string& own_instance, unsigned vantages) {
    std::vector<OutsideTarget> out;
    std::set<std::string> candidates;  // clusters with a live instance that probes from outside
    std::vector<std::string> own_probers;
    bool probing = false;
    for (const LiveReport& r : reports) {
        if (!r.alive || !r.state->probes_outside) continue;
        candidates.insert(r.state->cluster);
        if (r.state->cluster != own_cluster) continue;
        own_probers.push_back(r.state->instance);
        probing |= r.state->instance == own_instance;
    }
    if (!probing) return out;
    const std::vector<std::string> clusters(candidates.begin(), candidates.end());
    // Replicas of a cluster report the same entries: each (cluster, host, endpoint, check) once.
    std::set<std::tuple<std::string, std::string, Endpoint, std::string>> seen;
    for (const LiveReport& r : reports) {
        const InstanceState& s = *r.state;
        if (!r.alive || s.cluster == own_cluster || s.checks.empty()) continue;
        for (const HostEntry& h : s.hosts) {
            if (h.check == 0 || h.check > s.checks.size() || s.checks[h.check - 1].inside_only) continue;
            for (const EndpointState& ep : h.endpoints) {
                const std::string key = ep.target.str();
                if (!health::outside::is_vantage(key, s.cluster, own_cluster, clusters, vantages)) continue;
                if (health::outside::prober(key, own_probers) != own_instance) continue;
                const SharedCheck& check = s.checks[h.check - 1];
                if (!seen.emplace(s.cluster, h.host, ep.target, format_check(check)).second) continue;
                out.push_back(OutsideTarget{s.cluster, h.host, ep.target, check});
            }
        }
    }
    return out;
}

}  // namespace glbd::sync
