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
    // What the parent's servers must be asked before a change: each signed zone that drops a KSK, with its
    // dnssec.parent servers.
    struct ParentQuestion {
        std::string zone;
        std::vector<std::shared_ptr<const dnssec::Key>> keys;  // the zone's keys after the change
        std::vector<SocketAddress> servers;
    };
    using ParentAnswers = std::vector<std::vector<dnssec::KeyHistory::ParentAnswer>>;  // per question, in order
    // The first half of check(), on the control thread with no network: whether the keys may change from
    // `current`'s to `next`'s as far as this instance can tell, and which parents must be asked.
    Result<std::vector<ParentQuestion>> precheck(const conf::Config& current, const conf::Config& next,
                                                 const sync::Service& sync);
    // Every server of every question asked at once, over TCP (an off-path forger cannot answer in their
    // place, as over UDP), all within `budget_ms` in total. Any thread: a reload's worker asks while the
    // control thread serves on.
    static ParentAnswers ask_parents(const std::vector<ParentQuestion>& questions, int budget_ms);
    // The second half: what the parents said. Each must have answered, all alike (servers of one parent that
    // disagree are still propagating a change), and point at a KSK that stays for the DS set's TTL.
    Status conclude(const std::vector<ParentQuestion>& questions, const ParentAnswers& answers);
    // Both halves, asking in between (the check a restart makes, before serving).
    Status check(const conf::Config& current, const conf::Config& next, const sync::Service& sync);
    static constexpr int kParentBudgetMs = 3000;
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
