// server/app/daemon — the running process on the control thread (the main thread's libuv loop): it owns the
// config, the health checker and the sync service, builds snapshots from the merged view and publishes
// them. Health and sync wake it through a uv_async from their own threads; rebuilds are coalesced to
// at most one every kMinRebuild, or twice the CPU time the last took (request_rebuild), and one due while a
// pull is under way with a peer that answers waits for it, at most kHoldForPulls (due_rebuild). Query threads
// only ever see published snapshots.
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include <nlohmann/json_fwd.hpp>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/base/mutex.hpp"
#include "resolver/dnssec/rollover.hpp"
#include "resolver/snapshot/builder.hpp"
#include "server/app/admin.hpp"
#include "server/app/answer_ids.hpp"
#include "server/app/notify.hpp"
#include "server/net/publisher.hpp"
#include "server/net/server.hpp"
#include "sync/health/checker.hpp"
#include "sync/kube/source.hpp"
#include "sync/service.hpp"

namespace glbd {
namespace metrics {
class Writer;
}

// The admin routes' parts that both daemon_admin.cpp and daemon_hosts.cpp use.
nlohmann::json peers_json(const sync::Service& sync, uint64_t now);
nlohmann::json clusters_json(const GlobalView& view, const std::vector<sync::Service::InstanceStatus>& statuses,
                             const sync::OverrideMap& in_force, uint64_t now);

// A host's entries in every cluster (views into a GlobalView).
using HostEntries = std::vector<std::pair<const ClusterView*, const HostEntry*>>;
// Where this cluster's hosts from DNSRecords come from: host -> "namespace/name".
using HostSources = std::unordered_map<std::string, std::string>;

// What a host's JSON (in /v1/state and /v1/hosts) needs beside its entries, owned, so that /v1/state's
// stream can take it to the admin thread.
struct HostFacts {
    std::string self;  // this cluster's id
    sync::OverrideMap in_force;
    health::States probes;                       // this cluster's probe results (at least the hosts shown)
    std::vector<uint64_t> counts;                // answers by counter id
    std::shared_ptr<const HostSources> sources;  // never null
    std::shared_ptr<const SharedAnswerIds> ids;  // never null
};
// Appends one host as compact JSON (bytes that are not UTF-8 become U+FFFD).
void append_host_json(std::string& out, const HostEntries& entries, const HostFacts& facts);
// Where this cluster's entry of a host comes from: "file", or "dnsrecord:namespace/name".
std::string host_source(const HostSources& sources, const std::string& host);

// The hosts of a view by name, each with its entries in every cluster: a merge of the clusters' lists (each
// sorted by name), so that a page costs what it returns and its place, never an index of the whole view.
// The view must outlive the walk.
class HostWalk {
public:
    // From the first name at or after `from` (after it when `after`).
    HostWalk(const GlobalView& view, std::string_view from, bool after);
    // The next host's entries, or null after the last (valid until the next call).
    const HostEntries* next();

private:
    std::vector<std::pair<const ClusterView*, size_t>> at_;
    HostEntries entries_;
};

class Daemon {
public:
    static constexpr std::chrono::milliseconds kMinRebuild{50};
    static constexpr std::chrono::milliseconds kHoldForPulls{1000};

    // `path` is re-read on SIGHUP; empty for an embedded config, which then cannot reload.
    Daemon(conf::Config config, std::string path);
    ~Daemon();
    // Builds the first snapshot, binds, and runs until SIGTERM/SIGINT. Returns the exit code.
    int run(const std::string& banner = "");
    // As root with `user:` set: gives a missing stateDir to that user, then drops to it (uid, gid, no
    // supplementary groups). False (logged) when that fails.
    bool drop_privileges();
    // Validates `path` again and swaps in the new snapshot; a bad file keeps the running config.
    bool reload();
    // Drains or forces a cluster or an endpoint ("eu-1", "eu-1/192.0.2.10"; "down", "up", "auto"),
    // shared with every peer. Why not, for a bad target or state.
    Status set_override(const std::string& target, const std::string& state);

    // The admin endpoint's routes (control thread).
    admin::Response admin(const admin::Request& req);
    [[nodiscard]] std::string metrics() const;
    void answer_metrics(metrics::Writer& out) const;
    // GET /v1/state: the whole view, streamed by the admin thread from what this takes (never built whole).
    [[nodiscard]] admin::Response state_route();
    // GET /v1/summary and GET /v1/hosts (daemon_hosts.cpp): the view in parts that stay small at any size.
    [[nodiscard]] std::string summary_json() const;
    [[nodiscard]] nlohmann::json kube_json(uint64_t now) const;
    [[nodiscard]] admin::Response hosts_route(const std::string& query) const;
    [[nodiscard]] admin::Response explain_route(const std::string& query) const;
    // GET and PUT /v1/groups, and the failover groups' TXT per zone (daemon_groups.cpp).
    [[nodiscard]] admin::Response groups_route(const admin::Request& req);
    [[nodiscard]] std::string groups_json() const;
    [[nodiscard]] std::vector<ZoneRecord> served_records() const;
    void log_groups();
    std::optional<std::optional<sync::GroupsInForce>> groups_logged_;  // the set in force as last logged
    void group_metrics(metrics::Writer& m) const;
    // Whether peers publish our DNSKEY sets (daemon_dnssec.cpp).
    [[nodiscard]] nlohmann::json dnssec_json() const;
    void dnssec_metrics(metrics::Writer& m) const;
    [[nodiscard]] bool ready() const;

private:
    // What host JSON needs, with these probe results.
    [[nodiscard]] HostFacts host_facts(health::States probes) const;
    // run()'s steps, in order (each returning non-zero is the exit code).
    void init_loop();
    int make_sources();
    int open_sockets();
    int start_serving();
    void wait_for_signal();
    void shut_down();

    uint32_t next_serial(uint32_t of_view);
    void start_checker(const health::States& previous);
    // Kubernetes DNSRecords (daemon_kube.cpp): config_.hosts = the file's hosts + the records' (the file wins).
    void merge_kubernetes();
    void apply_kubernetes();  // a record changed: merge, restart the probes, rebuild
    void request_rebuild();
    void due_rebuild();  // request_rebuild's timer: rebuild(), or wait for the pulls under way
    static void on_rebuild_timer(uv_timer_t* t) { static_cast<Daemon*>(t->data)->due_rebuild(); }
    void rebuild();
    void log_key_mismatches();
    std::set<std::string> key_mismatches_;  // as last logged
    // Since when each signed zone's keys are published, and the key changes a reload may make (RFC 7583).
    dnssec::KeyHistory key_history_;
    [[nodiscard]] uint64_t key_hold_ms(const conf::Config& next, const std::string& origin) const;
    // "" when allowed; asks the parent's servers when a KSK is removed (its answers kept in the history)
    [[nodiscard]] std::string refused_key_change(const conf::Config& next);
    void note_published_keys();     // config_'s keys, now; saved in stateDir
    void save_key_history() const;  // in stateDir, if there is one
    // At start, before any key is noted: the history saved by the last run, and whether config_'s keys may
    // follow it (a restart is checked as a reload is). 0, or 1 when they may not (the reason logged).
    int restore_key_history();
    [[nodiscard]] std::string key_history_path() const;  // in stateDir

    uv_signal_t signals_[3]{};  // SIGHUP, SIGTERM, SIGINT
    conf::Config config_;
    std::string path_;
    Publisher publisher_;
    SnapshotBuilder builder_;  // each snapshot from the last: only the hosts a change touches are built
    std::shared_ptr<const geo::GeoDb> geo_;
    std::unique_ptr<DnsServer> server_;
    std::unique_ptr<health::Checker> checker_;
    std::unique_ptr<sync::Service> sync_;
    std::unique_ptr<admin::Server> admin_;
    // Admin requests for the control thread (every route but the static page and /healthz, which the admin
    // thread answers itself): queued by the admin thread, answered in admin_wake_'s turn.
    struct AdminCall {
        admin::Request request;
        admin::Reply reply;
    };
    Mutex admin_mu_;
    std::vector<AdminCall> admin_calls_ GLBD_GUARDED_BY(admin_mu_);
    uv_async_t admin_wake_{};
    void admin_on_admin_thread(const admin::Request& req, admin::Reply reply);
    void answer_admin_calls();
    std::unique_ptr<kube::Source> kube_;
    Notifier notifier_{[this] { return service_status(); }};
    [[nodiscard]] std::string service_status() const;  // systemd's STATUS= line
    std::vector<conf::Host> file_hosts_;               // the config file's hosts (with kubernetes only)
    std::vector<HostEntry> kube_seed_;                 // records' hosts from stateDir, served until the first list
    RecordList kube_seed_records_;                     // and their static records
    RecordList kube_records_;                          // this cluster's static records (from its DNSRecords)
    std::shared_ptr<const HostSources> host_source_ = std::make_shared<HostSources>();  // hosts from records
    kube::Source::Collected kube_counts_;                                               // its counts (hosts left empty)
    std::set<std::string> shadowed_;  // hosts both in the file and in a record (file wins)
    uint64_t kube_shadowed_total_ = 0;
    uv_async_t kube_changed_{};
    uv_timer_t kube_timer_{};  // applies a burst of record events at once
    static constexpr uint64_t kKubeSettleMs = 100;
    void update_kube_statuses(const health::States* states);  // null: the checker's now
    uv_timer_t deletion_timer_{};                             // while a deletion waits for the peers
    static constexpr uint64_t kDeletionPollMs = 250;
    // Answers per (host, cluster): counters that outlive snapshots, wired into each one built.
    // Answer counter ids by (host, cluster), 0..size-1 in order of first use: stable for the process's
    // life, so counts survive rebuilds.
    std::shared_ptr<SharedAnswerIds> counter_ids_ = std::make_shared<SharedAnswerIds>();
    // /v1/state streams under way (each holds a view): at most kMaxStateStreams at once.
    static constexpr int kMaxStateStreams = 2;
    std::shared_ptr<std::atomic<int>> state_streams_ = std::make_shared<std::atomic<int>>(0);
    uint64_t reloads_ok_ = 0, reloads_failed_ = 0;
    bool serving_ = false;
    uint32_t serial_ = 0;
    // DNS cookies (RFC 7873, 9018): the secret server cookies are made with (listen.cookieSecretFile's, or
    // random and rotated every kCookieRotateMs), and the one before it, still accepted.
    static constexpr uint64_t kCookieRotateMs = uint64_t{24} * 3600 * 1000;
    cookie::Secret cookie_secret_ = cookie::random_secret();
    std::optional<cookie::Secret> cookie_previous_;
    uv_timer_t cookie_timer_{};
    void set_cookie_secret(const std::optional<std::array<uint8_t, 16>>& configured);
    uv_loop_t* loop_ = nullptr;
    uv_async_t changed_{};
    uv_timer_t rebuild_timer_{};
    // Signed zones: a full build when the snapshot's first signature is due to be made again.
    static constexpr uint64_t kResignCheckMs = uint64_t{3600} * 1000;
    uv_timer_t resign_timer_{};
    void schedule_resign(uint32_t at);
    uv_timer_t reclaim_timer_{};
    uint64_t last_build_ms_ = 0;
    // This cluster's part of the view is made again (from config_.hosts and the endpoints' health) only when
    // either changed: at 10,000 hosts it is 10,000 entries to make and compare, at every rebuild.
    uint64_t hosts_generation_ = 0;    // bumped wherever config_.hosts changes
    uint64_t checker_generation_ = 0;  // bumped with each new health checker
    // What this cluster's view in the sync store was last made from: hosts, checker, its health changes.
    struct OwnViewMadeFor {
        uint64_t hosts = UINT64_MAX, checker = 0, health = 0;
        bool operator==(const OwnViewMadeFor&) const = default;
    };
    OwnViewMadeFor own_made_for_;
    [[nodiscard]] OwnViewMadeFor own_view_now() const;
    uint64_t due_since_ = 0;    // when the build waiting for pulls was first due (uv_now; 0: none waits)
    uint64_t builds_held_ = 0;  // builds that waited for pulls (glbd_snapshot_builds_held_total)
    uint64_t last_build_cost_us_ = 0;
    // The control thread's CPU time for the last build: what paces the next (request_rebuild); the wall time
    // of a build on a busy machine is mostly waiting for a core.
    uint64_t last_build_cpu_us_ = 0;
    uint64_t builds_ = 0, build_cpu_us_ = 0;  // every snapshot built since start, and its CPU time
};

void setup_logging(const std::string& level, const std::string& format);

}  // namespace glbd
