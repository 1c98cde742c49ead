// sync/health/outside/fleet — the fleet's verdict, computed alike on every server from the shared view: which
// clusters (and which instance of each) probe an endpoint from outside, which vantages are cut off, and
// whether an endpoint is healthy (sync/health/outside/README.md). Pure: no state, no clock, no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glbd::health::outside {

// The rank of `who` (a cluster id or an instance name) for `endpoint`: FNV-1a (64 bit) of "endpoint\0who",
// then splitmix64's finalizer. The same on every platform and build: every server ranks alike.
uint64_t rank(std::string_view endpoint, std::string_view who);

// The clusters that probe `endpoint` (its text, as the report writes it) of cluster `own`: the `n` of
// `candidates` (the live clusters that probe from outside, in any order; `own` among them or not) that rank
// highest, best first. Fewer when there are fewer.
std::vector<std::string> vantages(std::string_view endpoint, std::string_view own,
                                  const std::vector<std::string>& candidates, unsigned n);

// Whether `cluster` is among vantages(endpoint, own, candidates, n) (`cluster` a candidate itself): the same
// answer without the list (no sort, no allocation; what each server asks of every endpoint of the view).
bool is_vantage(std::string_view endpoint, std::string_view own, std::string_view cluster,
                const std::vector<std::string>& candidates, unsigned n);

// Of a vantage cluster's live instances, the one that probes `endpoint` (its cluster's share split among
// them); nullopt when there is none.
std::optional<std::string> prober(std::string_view endpoint, const std::vector<std::string>& instances);

// What a vantage probed of the other clusters, by cluster: endpoints probed and how many of them fail.
struct Probed {
    unsigned endpoints = 0;
    unsigned failing = 0;
};
// Whether the vantage is likely cut off itself: its verdicts fail at least 90 % (and at least 3) of the
// endpoints it probes, across at least two clusters.
bool cut_off(const std::map<std::string, Probed>& by_cluster);
inline constexpr unsigned kCutOffPercent = 90, kCutOffLeast = 3, kCutOffClusters = 2;

// One vantage's part in an endpoint's verdict.
enum class Seen : uint8_t { none, reaches, fails };  // none: no verdict (yet)
struct Vantage {
    std::string cluster;
    Seen seen = Seen::none;
    bool alive = true;
    bool cut_off = false;
    [[nodiscard]] bool counts() const { return alive && !cut_off && seen != Seen::none; }
};

struct Verdict {
    bool healthy = true;
    bool withdrawn = false;  // healthy inside, failed by the quorum
    unsigned counted = 0;    // vantages that count
    unsigned failing = 0;    // of them, those that fail it
    unsigned needed = 0;     // failing verdicts that withdraw it (at least 2)
};

// The failing verdicts that withdraw an endpoint: `quorum` (0: a majority of `counted`), and never fewer
// than 2: one vantage alone never withdraws anything.
unsigned needed(unsigned quorum, unsigned counted);

// The fleet's verdict on an endpoint whose own cluster says `inside_healthy`.
Verdict decide(bool inside_healthy, const std::vector<Vantage>& vantages, unsigned quorum);

// Whether a dead cluster's endpoint stays usable: within `keep_dead` of its death (`dead_for`), and the
// vantages that count and reach it make the quorum (0: a majority of those that count), at least one.
bool keep_dead(const std::vector<Vantage>& vantages, unsigned quorum, std::chrono::milliseconds dead_for,
               std::chrono::milliseconds keep_dead);

// How far every outside interval stretches under the cap: this glbd's outside targets, each probed every
// its check's interval, make `probes_per_second`; above `max_per_second` each interval grows by their ratio.
double stretch(double probes_per_second, unsigned max_per_second);

}  // namespace glbd::health::outside
