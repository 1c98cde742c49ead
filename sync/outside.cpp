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

const std::vector<OutsideTarget>& OutsideTargets::update(const std::vector<LiveReport>& reports,
                                                         const std::string& own_cluster,
                                                         const std::string& own_instance, unsigned vantages,
                                                         uint64_t keep_dead_ms, const std::vector<Prefix>& deny) {
    // What decides every origin's share: the live clusters that probe from outside, this cluster's live
    // probers (and whether this instance is one), vantages and denyNetworks.
    std::set<std::string> candidates;
    std::vector<std::string> own_probers;
    bool probing = false;
    for (const LiveReport& r : reports) {
        if (!r.alive || !r.state->probes_outside) continue;
        candidates.insert(r.state->cluster);
        if (r.state->cluster != own_cluster) continue;
        own_probers.push_back(r.state->instance);
        probing |= r.state->instance == own_instance;
    }
    std::string context = own_cluster + '\n' + own_instance + '\n' + std::to_string(vantages);
    for (const auto& c : candidates) context += '\n' + c;
    context += "\n-";
    for (const auto& i : own_probers) context += '\n' + i;
    context += "\n-";
    for (const auto& p : deny) context += '\n' + p.str();
    if (context != context_) context_ = std::move(context), by_origin_.clear();
    all_.clear();
    if (!probing) {
        by_origin_.clear();
        return all_;
    }
    const std::vector<std::string> clusters(candidates.begin(), candidates.end());
    const Probed probed(reports, keep_dead_ms);
    std::map<std::string, Of> now;
    std::map<std::string, unsigned> origins_of;  // probed origins by cluster: replicas report the same entries
    for (const LiveReport& r : reports) {
        const InstanceState& s = *r.state;
        if (!probed(r) || s.cluster == own_cluster) continue;
        ++origins_of[s.cluster];
        auto was = by_origin_.find(s.origin());
        if (was != by_origin_.end() && was->second.incarnation == s.incarnation && was->second.version == s.version) {
            now[s.origin()] = std::move(was->second);
            continue;
        }
        Of& of = now[s.origin()];
        of.incarnation = s.incarnation, of.version = s.version;
        each_checked_endpoint(s, [&](const HostEntry& h, const Endpoint& ep) {
            if (ep.is_address() &&
                std::any_of(deny.begin(), deny.end(), [&](const Prefix& p) { return p.contains(ep.address()); }))
                return;
            const std::string key = ep.str();
            if (!health::outside::is_vantage(key, s.cluster, own_cluster, clusters, vantages)) return;
            if (health::outside::prober(key, own_probers) != own_instance) return;
            of.targets.push_back(OutsideTarget{s.cluster, h.host.str(), ep, s.checks[h.check - 1]});
        });
    }
    by_origin_ = std::move(now);
    // In the reports' order; each (cluster, host, endpoint, check) once where a cluster has replicas.
    std::set<std::tuple<std::string, std::string, Endpoint, std::string>> seen;
    for (const LiveReport& r : reports) {
        auto of = by_origin_.find(r.state->origin());
        if (of == by_origin_.end()) continue;
        const bool replicas = origins_of[r.state->cluster] > 1;
        for (const OutsideTarget& t : of->second.targets) {
            if (replicas && !seen.emplace(t.cluster, t.host, t.endpoint, format_check(t.check)).second) continue;
            all_.push_back(t);
        }
    }
    return all_;
}

std::vector<OutsideTarget> outside_targets(const std::vector<LiveReport>& reports, const std::string& own_cluster,
                                           const std::string& own_instance, unsigned vantages, uint64_t keep_dead_ms,
                                           const std::vector<Prefix>& deny) {
    OutsideTargets t;
    return t.update(reports, own_cluster, own_instance, vantages, keep_dead_ms, deny);
}

Vantages::Vantages(const std::vector<LiveReport>& reports) {
    for (const LiveReport& r : reports) {
        if (!r.alive || !r.state->probes_outside) continue;
        probers_[r.state->cluster].push_back(r.state->instance);
        by_origin_[r.state->origin()] = r.state;
    }
    for (const auto& [c, i] : probers_) clusters_.push_back(c);
    // Cut off: what each vantage cluster's instances probed and failed, by the cluster probed.
    for (const auto& [v, instances] : probers_) {
        std::map<std::string, health::outside::Probed> by_cluster;
        for (const std::string& i : instances) {
            for (const auto& [c, o] : by_origin_.at(v + "/" + i)->outside) {
                by_cluster[c].endpoints += o.probed;
                by_cluster[c].failing += static_cast<unsigned>(o.failing.size());
            }
        }
        if (health::outside::cut_off(by_cluster)) cut_off_.insert(v);
    }
}

std::vector<health::outside::Vantage> Vantages::seen(const std::string& c, const std::string& host, const Endpoint& ep,
                                                     unsigned n) const {
    namespace out = health::outside;
    const std::string key = ep.str();
    std::vector<out::Vantage> seen;
    for (const std::string& v : out::vantages(key, c, clusters_, n)) {
        out::Vantage x{v, out::Seen::none, true, cut_off_.count(v) > 0};
        auto origin = by_origin_.find(v + "/" + out::prober(key, probers_.at(v)).value_or(""));
        if (origin != by_origin_.end()) {
            auto o = origin->second->outside.find(c);
            if (o != origin->second->outside.end()) {  // its failures are in order (check_report)
                const auto& f = o->second.failing;
                x.seen = std::binary_search(f.begin(), f.end(), std::pair{host, ep}) ? out::Seen::fails
                         : o->second.probed                                          ? out::Seen::reaches
                                                                                     : out::Seen::none;
            }
        }
        seen.push_back(std::move(x));
    }
    return seen;
}

FleetVerdicts fleet_verdicts(const std::vector<LiveReport>& reports, const Vantages& all, unsigned vantages,
                             unsigned quorum, uint64_t keep_dead_ms) {
    namespace out = health::outside;
    FleetVerdicts verdicts;
    verdicts.cut_off = all.cut_off();
    // The endpoints some vantage fails: only they can be withdrawn.
    std::set<std::tuple<std::string, std::string, Endpoint>> failed_somewhere;
    for (const auto& [origin, s] : all.reports()) {
        for (const auto& [c, o] : s->outside) {
            for (const auto& [host, ep] : o.failing) failed_somewhere.emplace(c, host, ep);
        }
    }
    for (const auto& [c, host, ep] : failed_somewhere) {
        verdicts.disputed[c].emplace(host, ep);
        if (out::decide(true, all.seen(c, host, ep, vantages), quorum).withdrawn) verdicts.failed[c].emplace(host, ep);
    }
    // A dead glbd is not a dead application: what its vantages still reach stays, within keepDead.
    const Probed probed(reports, keep_dead_ms);
    for (const LiveReport& r : reports) {
        if (r.alive || !probed(r)) continue;
        const std::string& c = r.state->cluster;
        const auto dead_for = std::chrono::milliseconds(r.dead_for_ms);
        each_checked_endpoint(*r.state, [&](const HostEntry& h, const Endpoint& ep) {
            std::string host = h.host.str();
            if (out::keep_dead(all.seen(c, host, ep, vantages), quorum, dead_for,
                               std::chrono::milliseconds(keep_dead_ms)))
                verdicts.kept[c].emplace(std::move(host), ep);
        });
    }
    return verdicts;
}

}  // namespace glbd::sync
