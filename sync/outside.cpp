#include "sync/outside.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "sync/health/outside/fleet.hpp"

namespace glbd::sync {

namespace {

// Whether a report's endpoints are probed: its origin alive, or its whole cluster dead (no live instance) for
// less than keepDead.
struct Probed {
    std::set<std::string> live_clusters;
    uint64_t keep_dead_ms = 0;
    explicit Probed(const std::vector<LiveReport>& reports, uint64_t keep) : keep_dead_ms(keep) {
        for (const LiveReport& r : reports) {
            if (r.alive) live_clusters.insert(r.state->cluster);
        }
    }
    [[nodiscard]] bool operator()(const LiveReport& r) const {
        return r.alive || (!live_clusters.count(r.state->cluster) && r.dead_for_ms < keep_dead_ms);
    }
};

// Calls `f(host, endpoint)` for each endpoint of `s` whose host has a check probed from outside.
template <class F>
void each_checked_endpoint(const InstanceState& s, F&& f) {
    for (const HostEntry& h : s.hosts) {
        if (h.check == 0 || h.check > s.checks.size() || s.checks[h.check - 1].inside_only) continue;
        for (const EndpointState& ep : h.endpoints) f(h, ep.target);
    }
}

}  // namespace

std::vector<OutsideTarget> outside_targets(const std::vector<LiveReport>& reports, const std::string& own_cluster,
                                           const std::string& own_instance, unsigned vantages, uint64_t keep_dead_ms) {
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
    const Probed probed(reports, keep_dead_ms);
    for (const LiveReport& r : reports) {
        const InstanceState& s = *r.state;
        if (!probed(r) || s.cluster == own_cluster) continue;
        each_checked_endpoint(s, [&](const HostEntry& h, const Endpoint& ep) {
            const std::string key = ep.str();
            if (!health::outside::is_vantage(key, s.cluster, own_cluster, clusters, vantages)) return;
            if (health::outside::prober(key, own_probers) != own_instance) return;
            const SharedCheck& check = s.checks[h.check - 1];
            if (!seen.emplace(s.cluster, h.host, ep, format_check(check)).second) return;
            out.push_back(OutsideTarget{s.cluster, h.host, ep, check});
        });
    }
    return out;
}

FleetVerdicts fleet_verdicts(const std::vector<LiveReport>& reports, unsigned vantages, unsigned quorum,
                             uint64_t keep_dead_ms) {
    namespace out = health::outside;
    FleetVerdicts verdicts;
    // The live instances that probe from outside, by cluster (the candidates), and each one's report.
    std::map<std::string, std::vector<std::string>> probers;
    std::map<std::string, const InstanceState*> by_origin;
    for (const LiveReport& r : reports) {
        if (!r.alive || !r.state->probes_outside) continue;
        probers[r.state->cluster].push_back(r.state->instance);
        by_origin[r.state->origin()] = r.state;
    }
    std::vector<std::string> clusters;
    for (const auto& [c, i] : probers) clusters.push_back(c);
    // Cut off: what each vantage cluster's instances probed and failed, by the cluster probed.
    for (const auto& [v, instances] : probers) {
        std::map<std::string, out::Probed> by_cluster;
        for (const std::string& i : instances) {
            for (const auto& [c, o] : by_origin[v + "/" + i]->outside) {
                by_cluster[c].endpoints += o.probed;
                by_cluster[c].failing += static_cast<unsigned>(o.failing.size());
            }
        }
        if (out::cut_off(by_cluster)) verdicts.cut_off.insert(v);
    }
    // The endpoints some vantage fails: only they can be withdrawn.
    std::set<std::tuple<std::string, std::string, Endpoint>> failed_somewhere;
    for (const auto& [origin, s] : by_origin) {
        for (const auto& [c, o] : s->outside) {
            for (const auto& [host, ep] : o.failing) failed_somewhere.emplace(c, host, ep);
        }
    }
    // Each vantage's part in the verdict on (c, host, ep).
    auto seen_by = [&](const std::string& c, const std::string& host, const Endpoint& ep) {
        const std::string key = ep.str();
        std::vector<out::Vantage> seen;
        for (const std::string& v : out::vantages(key, c, clusters, vantages)) {
            out::Vantage x{v, out::Seen::none, true, verdicts.cut_off.count(v) > 0};
            const InstanceState* s = by_origin[v + "/" + out::prober(key, probers[v]).value_or("")];
            auto o = s ? s->outside.find(c) : OutsideMap::const_iterator{};
            if (s && o != s->outside.end()) {  // its failures are in order (check_report)
                const auto& f = o->second.failing;
                x.seen = std::binary_search(f.begin(), f.end(), std::pair{host, ep}) ? out::Seen::fails
                         : o->second.probed                                          ? out::Seen::reaches
                                                                                     : out::Seen::none;
            }
            seen.push_back(std::move(x));
        }
        return seen;
    };
    for (const auto& [c, host, ep] : failed_somewhere) {
        if (out::decide(true, seen_by(c, host, ep), quorum).withdrawn) verdicts.failed[c].emplace(host, ep);
    }
    // A dead glbd is not a dead application: what its vantages still reach stays, within keepDead.
    const Probed probed(reports, keep_dead_ms);
    for (const LiveReport& r : reports) {
        if (r.alive || !probed(r)) continue;
        const std::string& c = r.state->cluster;
        const auto dead_for = std::chrono::milliseconds(r.dead_for_ms);
        each_checked_endpoint(*r.state, [&](const HostEntry& h, const Endpoint& ep) {
            if (out::keep_dead(seen_by(c, h.host, ep), quorum, dead_for, std::chrono::milliseconds(keep_dead_ms)))
                verdicts.kept[c].emplace(h.host, ep);
        });
    }
    return verdicts;
}

}  // namespace glbd::sync
