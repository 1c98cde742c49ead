// server/app/key_governance — a signed zone's keys change only as RFC 7583 allows (resolver/dnssec/rollover.hpp):
// the history of what each zone published, kept in stateDir; the check a reload or a restart makes (asking the
// parent's servers for the DS set when a KSK would go); and whether every peer publishes the same DNSKEY sets
// (a warning when one starts not to, /v1/summary's and /v1/state's "dnssec", a metric). Control thread.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/result.hpp"
#include "resolver/dnssec/rollover.hpp"
#include "sync/service.hpp"

namespace glbd {
namespace metrics {
class Writer;
}

class KeyGovernance {
public:
    // At start, before any key is noted: the history the last run saved, and whether `config`'s keys may follow
    // it (a restart is checked as a reload is). 0, or 1 when they may not (the reason logged).
    int restore(const conf::Config& config, const sync::Service& sync);
    // Whether the keys may change from `current`'s to `next`'s now; asks the parent's servers when a KSK goes.
    Status check(const conf::Config& current, const conf::Config& next, const sync::Service& sync);
    // `config`'s keys are published from now (after a start or a reload); saved in its stateDir.
    void note_published(const conf::Config& config);
    // After each build: a warning when a live instance starts publishing other keys than ours, a note when it
    // stops (or is no longer alive).
    void log_mismatches(const sync::Service& sync);
    [[nodiscard]] nlohmann::json json_of(const sync::Service& sync) const;
    void write_metrics(metrics::Writer& m, const sync::Service& sync, const std::vector<model::Zone>& zones) const;
    // How long a resolver may hold `origin`'s DNSKEY set or an answer: the largest TTL of `current`, `next` and
    // every cluster's entries, and the time a change takes to reach the peers (twice syncInterval), and a second.
    static uint64_t hold_ms(const conf::Config& current, const conf::Config& next, const sync::Service& sync,
                            const std::string& origin);

private:
    void save() const;
    [[nodiscard]] std::string path() const;

    dnssec::KeyHistory history_;        // since when each signed zone's keys are published
    std::string state_dir_;             // where it is kept (the config's stateDir)
    std::set<std::string> mismatches_;  // as last logged
};

}  // namespace glbd
