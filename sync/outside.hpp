// sync/outside — which of the other clusters' endpoints this instance probes from outside (a pure reading of
// the shared view; sync/health/outside/README.md has the rules): every server that reads the same live reports
// makes the same choice, so each endpoint is probed by its vantages and by one instance of each.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "resolver/model/endpoint.hpp"
#include "sync/health/outside/fleet.hpp"
#include "sync/state.hpp"

namespace glbd::sync {

// One endpoint this instance probes from outside, with the check its own cluster gave it.
struct OutsideTarget {
    std::string cluster;  // the endpoint's own cluster
    std::string host;     // its host's name (the probe's Host header and SNI: its base, for a wildcard)
    Endpoint endpoint;
    SharedCheck check;
    bool operator==(const OutsideTarget&) const = default;
};

// A known origin's report, whether it is alive, and how long it has been dead (Service::instances()).
struct LiveReport {
    const InstanceState* state = nullptr;
    bool alive = false;
    uint64_t dead_for_ms = 0;
};

// The endpoints this instance (`own_cluster`/`own_instance`) probes from outside: of every live origin of
// another cluster, each endpoint of a host whose check may be probed from outside (not inside only) and whose
// vantages (`vantages` of the live clusters that probe from outside) include this cluster, and of this
// cluster's live instances that probe from outside, this one. Each (cluster, host, endpoint, check) once, in
// the reports' order. None when this instance does not probe from outside (its own report says so). A cluster
// with no live instance is probed from its last reports while they are dead for less than `keep_dead_ms`
// (health.outside.keepDead: a dead glbd is not a dead application). Never an address in `deny` (this
// cluster's kubernetes.denyNetworks): another cluster's record author must not make this glbd probe its own
// private networks, where its own records are refused already.
std::vector<OutsideTarget> outside_targets(const std::vector<LiveReport>& reports, const std::string& own_cluster,
                                           const std::string& own_instance, unsigned vantages,
                                           uint64_t keep_dead_ms = 0, const std::vector<Prefix>& deny = {});
// The same, kept between calls (OutsideProbes, at each change of the live reports): an origin's targets are
// read again only when its report (life, version) changed or it came to be probed, and all of them when what
// decides the shares did (the live clusters that probe from outside, this cluster's probers, vantages,
// denyNetworks). At 10,000 hosts x 20 clusters a full reading hashes every endpoint for every cluster.
class OutsideTargets {
public:
    const std::vector<OutsideTarget>& update(const std::vector<LiveReport>& reports, const std::string& own_cluster,
                                             const std::string& own_instance, unsigned vantages,
                                             uint64_t keep_dead_ms = 0, const std::vector<Prefix>& deny = {});

private:
    struct Of {
        uint64_t incarnation = 0, version = 0;
        std::vector<OutsideTarget> targets;
    };
    std::string context_;
    std::map<std::string, Of> by_origin_;
    std::vector<OutsideTarget> all_;
};

// The vantages' side of the live reports: the live instances that probe from outside, by cluster, each one's
// report, and the vantage clusters cut off (health::outside::cut_off). It points into `reports`' states,
// which must outlive it.
class Vantages {
public:
    explicit Vantages(const std::vector<LiveReport>& reports);
    [[nodiscard]] const std::set<std::string>& cut_off() const { return cut_off_; }
    [[nodiscard]] const std::map<std::string, const InstanceState*>& reports() const { return by_origin_; }
    // The vantages of cluster `c`'s (host, ep), best first, and each one's part: its probing instance's
    // (health::outside::prober) verdict: fails when that report lists it, reaches when that report has results
    // for `c` and does not list it, none otherwise.
    [[nodiscard]] std::vector<health::outside::Vantage> seen(const std::string& c, const std::string& host,
                                                             const Endpoint& ep, unsigned n) const;

private:
    std::map<std::string, std::vector<std::string>> probers_;
    std::map<std::string, const InstanceState*> by_origin_;
    std::vector<std::string> clusters_;
    std::set<std::string> cut_off_;
};

// The fleet's verdict, the same on every server that reads the same live reports: the endpoints a quorum of
// their vantages fails (health::outside::decide; `quorum` 0: a majority), by cluster, as (host, endpoint); and
// the vantage clusters cut off, whose verdicts do not count. A report's verdict on an endpoint it is not a
// vantage of is not read. Whether its own cluster calls the endpoint healthy is the caller's to add: only
// then is it withdrawn. `kept`: of each cluster with no live instance, dead for less than `keep_dead_ms`, the
// endpoints its vantages still reach (health::outside::keep_dead). `disputed`: every endpoint some vantage
// fails, counted or not, failed or not (what status shows beside the inside verdict).
using EndpointsByCluster = std::map<std::string, std::set<std::pair<std::string, Endpoint>>>;  // (host, endpoint)
struct FleetVerdicts {
    EndpointsByCluster failed, kept, disputed;
    std::set<std::string> cut_off;
    bool operator==(const FleetVerdicts&) const = default;
    // Whether `by_cluster` has cluster's (host, endpoint).
    [[nodiscard]] static bool has(const EndpointsByCluster& by_cluster, const std::string& cluster,
                                  const std::string& host, const Endpoint& endpoint) {
        auto it = by_cluster.find(cluster);
        return it != by_cluster.end() && it->second.count({host, endpoint}) > 0;
    }
};
FleetVerdicts fleet_verdicts(const std::vector<LiveReport>& reports, const Vantages& all, unsigned vantages,
                             unsigned quorum, uint64_t keep_dead_ms = 0);
inline FleetVerdicts fleet_verdicts(const std::vector<LiveReport>& reports, unsigned vantages, unsigned quorum,
                                    uint64_t keep_dead_ms = 0) {
    return fleet_verdicts(reports, Vantages(reports), vantages, quorum, keep_dead_ms);
}

}  // namespace glbd::sync
