// sync/kube/source — this cluster's entries and static records from Kuadrant DNSRecords: one Watcher per
// namespace (or one for the whole cluster), the records the mode selects (records.hpp, docs/kuadrant.md),
// mapped once per resourceVersion, so that an event costs the record it changed. Which record keeps a name
// that records of two namespaces publish is decided here: the older (creationTimestamp, then namespace/name),
// unless kubernetes.owners gives the name to both. The watchers run on their threads, Secrets (probe headers)
// and the status writes of controller and delegate mode on a requests thread; collect() and update_statuses() run on
// the control thread. Never throws after construction.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/log_throttle.hpp"
#include "resolver/base/mutex.hpp"
#include "sync/health/checker.hpp"
#include "sync/kube/client.hpp"
#include "sync/kube/records.hpp"

namespace glbd::kube {

class Source {
public:
    // Throws std::runtime_error when the API server cannot be located (no kubeconfig, not in a cluster).
    Source(const conf::Config& config, const std::function<void()>& on_change);
    ~Source();
    void start();
    void stop();
    // A reload: the zones records are matched against (the kubernetes section itself applies at restart).
    void set_zones(std::vector<model::Zone> zones);

    struct Collected {
        std::vector<model::Host> hosts;                       // the older records' first, in no other order
        std::vector<StaticRecord> records;                    // NS and TXT, sorted by name and type
        std::unordered_map<std::string, std::string> source;  // host or record name -> "namespace/name"
        std::string group;  // the status.group most of the served records show (dns-operator's --group), or ""
        size_t valid = 0, invalid = 0;
        size_t other_zone = 0;  // inputs of this mode for a zone glbd does not serve (logged, and in status)
        size_t not_input = 0;   // records this mode does not read (delegated ones in controller mode...)
        size_t deleting = 0;    // delegate mode: records being deleted, withdrawn (no longer served)
        size_t refused = 0;     // names refused now (a record's, or contested)
    };
    // What the records held now give. Only records that changed since the last call are mapped again.
    // Every refusal is logged once per record version (throttled, its bytes escaped) and counted.
    Collected collect();
    [[nodiscard]] uint64_t refusals_total() const { return refusals_total_; }
    [[nodiscard]] uint64_t maps_total() const { return maps_total_; }  // records mapped since the start

    // What the daemon knows of this cluster's report to its peers, for the deletions of delegate mode: a record
    // being deleted is Removed once every live peer holds a report made after its withdrawal.
    struct Fleet {
        uint64_t own_version = 0;  // this instance's report as it is now (made after the last collect())
        // The live peers (printable origins) not known to hold this instance's report at `version` or later.
        std::function<std::vector<std::string>(uint64_t version)> not_holding;
        uint64_t max_wait_ms = 10'000;  // how long a withdrawal waits for them (then logged)
    };
    // Controller and delegate mode (writes_status): the status each record should have now (Ready from the mapping and
    // its refusals, Healthy from the probes of its hosts), written by the requests thread with a merge patch to /status
    // when it differs from what the record shows. In delegate mode, a record being deleted (withdrawn by
    // collect()) gets Ready=False ProviderEndpointsDeletion, then ProviderEndpointsRemoved once `fleet` holds
    // this cluster's report without it (or after fleet.max_wait_ms, logged), which lets dns-operator's secondary
    // remove its finalizer. Control thread, after the report made from the last collect() went to the sync
    // service.
    void update_statuses(const health::States& health, const Fleet& fleet);
    // Whether a deletion waits for the fleet (update_statuses should be called again soon).
    [[nodiscard]] bool deletions_pending() const;
    [[nodiscard]] bool controller() const { return mode_ == Mode::controller; }
    // Whether update_statuses() writes: controller mode (the record's own status) and delegate mode (glbd's
    // entry of status.remoteRecordStatuses, as a Kuadrant primary writes its own; dns-operator on each cluster,
    // a secondary, keeps the rest).
    [[nodiscard]] bool writes_status() const { return mode_ == Mode::controller || mode_ == Mode::delegate; }
    [[nodiscard]] const char* mode_name() const {
        return mode_ == Mode::controller ? "controller" : mode_ == Mode::delegate ? "delegate" : "coredns";
    }
    [[nodiscard]] uint64_t statuses_written() const { return written_.load(); }

    struct Stats {
        uint64_t events = 0, relists = 0, errors = 0, bad_events = 0, over_limit = 0, last_event_ms = 0;
        bool synced = true;  // every watcher has listed at least once
    };
    [[nodiscard]] Stats stats() const;
    [[nodiscard]] std::string label_selector() const { return selector_; }

private:
    struct Held {
        RecordPtr record;
        Mapped mapped;
        std::vector<Refusal> contested;  // names other records keep (an older one of another namespace...)
        [[nodiscard]] bool refuses(const std::string& name) const {
            auto is = [&](const Refusal& r) { return r.name == name; };
            return std::any_of(contested.begin(), contested.end(), is);
        }
    };
    struct Emitted {
        std::unordered_set<std::string> entries;         // name '\0' entry, given so far
        std::unordered_map<std::string, bool> balanced;  // name -> load-balanced (or a simple host)
        std::map<std::string, std::string> unprobed;     // record -> why its hosts are not probed
    };
    // A record being deleted in delegate mode: the report version it was withdrawn in, since when, and
    // whether Removed was written.
    struct Deletion {
        uint64_t version = 0, since_ms = 0;
        bool removed = false;
    };
    nlohmann::json deletion_condition(const std::string& key, const Held& h, const Fleet& fleet, uint64_t now);
    struct Secret {
        bool fetched = false;
        std::string error;  // why its headers cannot be used ("" when they can)
        std::vector<std::pair<std::string, std::string>> headers;
    };
    void take_changes();
    void settle_names(std::vector<Held*>& live);
    void emit_hosts(Held& h, Collected& c, Emitted& e);
    void emit_records(Held& h, Collected& c, const Emitted& e);
    static void merge_simple(std::vector<model::Host>& hosts, const model::Host& more);
    void log_refusals(const Held& h);
    std::optional<std::vector<std::pair<std::string, std::string>>> headers_for(const Record& r, std::string& why);
    void run_requests();  // the requests thread: Secrets and status patches

    Mode mode_ = Mode::coredns;
    MapOptions options_;
    std::function<void()> on_change_;
    std::string selector_;
    std::vector<std::unique_ptr<Watcher>> watchers_;
    std::vector<std::map<std::string, Held>> held_;  // per watcher, by "namespace/name"
    bool remap_ = false;                             // the options changed: map every record again
    uint64_t refusals_total_ = 0, maps_total_ = 0;
    std::set<std::string> logged_;               // "key@resourceVersion@..." of records whose refusals were logged
    std::set<std::string> unprobed_logged_;      // "key@why" said
    std::set<std::string> other_zone_logged_;    // "key@why" said
    std::map<std::string, Deletion> deletions_;  // delegate mode: records being deleted, by key
    // (NOLINT: nlohmann::json's noexcept move checks its invariant, which clang-tidy reads as a throw.)
    struct Queued {  // NOLINT(bugprone-exception-escape): the status last queued for a record, and its version
        std::string resource_version;
        nlohmann::json status;
    };
    std::map<std::string, Queued> queued_;
    LogThrottle log_throttle_{5, 1000};

    std::unique_ptr<Watcher> requests_;  // not started: its requests are the requests thread's
    std::thread requests_thread_;
    Mutex requests_mu_;
    CondVar requests_cv_;
    std::map<std::string, nlohmann::json> pending_ GLBD_GUARDED_BY(requests_mu_);  // key -> status to write
    std::set<std::string> wanted_secrets_ GLBD_GUARDED_BY(requests_mu_);           // "namespace/name" to read
    std::map<std::string, Secret> secrets_ GLBD_GUARDED_BY(requests_mu_);
    bool requests_stop_ GLBD_GUARDED_BY(requests_mu_) = false;
    std::atomic<uint64_t> written_{0};
};

}  // namespace glbd::kube
namespace glbd::metrics {
class Writer;
}
namespace glbd::kube {
// The source's counters as Prometheus families (sync/kube/metrics.cpp); `shadowed`: hosts the config file
// named too (the daemon counts them).
void write_metrics(metrics::Writer& out, const Source& source, const Source::Collected& counts, uint64_t shadowed);

// The label selector of coredns mode: every record labelled for a zone (those for glbd's zones are served).
std::string coredns_selector();

}  // namespace glbd::kube
