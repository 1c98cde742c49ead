// sync/health/checker — probes this cluster's endpoints on a thread of its own and keeps each endpoint's
// health with hysteresis (sync/health/README.md). The probes themselves are tcp_probe.* and http_probe.*.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/clock.hpp"
#include "sync/health/probes.hpp"
#include "sync/health/schedule.hpp"

namespace glbd::health {

// Consecutive-result hysteresis. The first result decides; afterwards a flip needs
// `failure_threshold` failures in a row (to unhealthy) or `success_threshold` successes (to healthy).
struct Hysteresis {
    unsigned failure_threshold = 3;
    unsigned success_threshold = 1;
    bool healthy = true;
    bool known = false;
    unsigned failures = 0;
    unsigned successes = 0;
    // Records one result; returns true when `healthy` changed.
    bool record(bool ok);
};

struct EndpointHealth {
    bool healthy = true;
    bool known = false;  // at least one result
    std::string reason;  // last failure reason, or "ok"
    uint64_t probes = 0;
    uint64_t failures = 0;
    uint64_t transitions = 0;
    // Carried into the checker a reload or a change of hosts starts, so that it goes on where this one
    // was: the hysteresis' results in a row, and when the last round began (steady clock, ms; 0: never).
    unsigned failures_in_a_row = 0;
    unsigned successes_in_a_row = 0;
    uint64_t last_round_ms = 0;
};

using Key = std::pair<std::string, Endpoint>;  // host name, endpoint
using States = std::map<Key, EndpointHealth>;

// What a test may give the checker in place of the real thing: the clock that stamps its rounds, and its probes
// (probes.hpp). Null and empty: the system's clock, probes over the network.
struct CheckerSeams {
    const Clock* clock = nullptr;
    ProbesFactory probes;
};

// What a checker is to the operator: its log lines' prefix and its thread's name. This cluster's own endpoints
// (inside probes), or other clusters' that this instance probes as their vantage (outside probes).
struct CheckerRole {
    const char* log = "health";
    const char* thread = "glbd-health";
    // The first round spread over each target's whole interval, not over about a second (kFirstRoundPerSecond):
    // where the intervals were stretched to keep a rate (health.outside.maxProbesPerSecond), the first round
    // keeps it too. Readiness does not wait for such a checker.
    bool spread_first_round = false;
};
inline constexpr CheckerRole kOutsideRole{"outside health", "glbd-outside", true};

class Checker {
public:
    // The probing thread's nice value, above the DNS threads' (0): on a shared core, answers go first.
    static constexpr int kProbeNice = 10;
    // At most this many first probes a second: a first round of more endpoints takes longer than a second.
    static constexpr uint64_t kFirstRoundPerSecond = Schedule::kFirstRoundPerSecond;
    // `on_change` runs on the checker's thread whenever an endpoint flips or the first round completes.
    Checker(const conf::Config& config, std::function<void()> on_change, const States& previous = {},
            CheckerSeams seams = {}, CheckerRole role = {});
    ~Checker();
    Checker(const Checker&) = delete;
    Checker& operator=(const Checker&) = delete;

    void start();
    void stop();
    [[nodiscard]] States states() const;
    // Only those of these hosts (what a page of /v1/hosts shows).
    [[nodiscard]] States states_of(const std::vector<std::string>& hosts) const;
    [[nodiscard]] bool first_round_done() const;
    [[nodiscard]] size_t targets() const;
    // How many times an endpoint's state went from unknown to known or flipped (not probe rounds): while it
    // stays the same, so do the healthy bits that states() would give. Bumped before on_change runs.
    [[nodiscard]] uint64_t health_changes() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace glbd::health
namespace glbd::metrics {
class Writer;
}
namespace glbd::health {
// The checker's counters as Prometheus families (sync/health/metrics.cpp).
void write_metrics(metrics::Writer& out, const Checker& checker, bool per_endpoint_series);

// The name a host's probes use for the URL, Host header and SNI: a wildcard's base name.
std::string probe_host_name(const std::string& host);

}  // namespace glbd::health
