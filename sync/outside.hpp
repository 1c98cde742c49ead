// sync/outside — which of the other clusters' endpoints this instance probes from outside (a pure reading of
// the shared view; sync/health/outside/README.md has the rules): every server that reads the same live reports
// makes the same choice, so each endpoint is probed by its vantages and by one instance of each.
#pragma once

#include <compare>
#include <string>
#include <vector>

#include "resolver/model/endpoint.hpp"
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

// A known origin's report and whether it is alive (Service::instances()).
struct LiveReport {
    const InstanceState* state = nullptr;
    bool alive = false;
};

// The endpoints this instance (`own_cluster`/`own_instance`) probes from outside: of every live origin of
// another cluster, each endpoint of a host whose check may be probed from outside (not inside only) and whose
// vantages (`vantages` of the live clusters that probe from outside) include this cluster, and of this
// cluster's live instances that probe from outside, this one. Each (cluster, host, endpoint, check) once, in
// the reports' order. None when this instance does not probe from outside (its own report says so).
std::vector<OutsideTarget> outside_targets(const std::vector<LiveReport>& reports, const std::string& own_cluster,
                                           const std::string& own_instance, unsigned vantages);

}  // namespace glbd::sync
