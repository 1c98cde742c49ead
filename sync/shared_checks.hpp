// sync/shared_checks — what a report carries for outside probes (sync/health/outside/README.md): its hosts'
// health checks as other clusters may probe them, and what this instance's outside probes found of other
// clusters' endpoints; each with the text reports and the state file write (shared_checks.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resolver/model/global_view.hpp"
#include "resolver/model/host.hpp"

namespace glbd::sync {

// A host's health check as its cluster's report carries it, so that other clusters can probe its endpoints
// from outside (sync/health/outside/): the check without its headers, which never leave their cluster (a
// check with headers, some from a Secret, is `inside_only`: probed by its own cluster alone, and shown so).
// A report numbers its checks from 1 (HostEntry::check); hosts with the same check share one.
struct SharedCheck {
    model::HealthCheck check;  // headers always empty
    bool inside_only = false;
    bool operator==(const SharedCheck&) const = default;
};
// One check as reports and the state file write it: "PROTO PORT INTERVAL_MS TIMEOUT_MS FAILURES SUCCESSES
// STATUS,... FLAGS PATH", FLAGS "-" or "k" (insecureSkipVerify) and "i" (inside only), e.g.
// "HTTPS 443 5000 2000 3 1 200,201 - /healthz". The path goes last: it holds no space.
std::string format_check(const SharedCheck& c);
// Back from that text; false (with `why`) for anything else or a value out of the config's ranges.
bool parse_check(std::string_view text, SharedCheck& out, std::string& why);
// The checks of `config`'s hosts as this instance's report carries them, and each host's number among them
// (HostEntry::check) set in `hosts` (matched by host and entry).
std::vector<SharedCheck> own_checks(const std::vector<model::Host>& config_hosts, HostList& hosts);

// What an instance's outside probes (sync/outside.hpp) found of one other cluster's endpoints: how many of
// them have a result, and those that fail, by host and endpoint in order. A vantage lists failures only, so
// a report grows with what fails, not with what it probes.
struct OutsideVerdicts {
    uint32_t probed = 0;
    std::vector<std::pair<std::string, Endpoint>> failing;  // (host, endpoint)
    bool operator==(const OutsideVerdicts&) const = default;
};
using OutsideMap = std::map<std::string, OutsideVerdicts>;  // by the endpoints' cluster
// An outside map as the state file keeps it: a line "=CLUSTER PROBED" for each cluster, then a line "HOST
// ENDPOINT" for each failure; parse_outside reads it back (false, with `why`, for anything else).
std::string format_outside(const OutsideMap& m);
bool parse_outside(std::string_view text, OutsideMap& out, std::string& why);

}  // namespace glbd::sync
