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
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include <nlohmann/json_fwd.hpp>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/base/mutex.hpp"
#include "resolver/dnssec/rollover.hpp"
#include "resolver/snapshot/builder.hpp"
#include "server/app/admin.hpp"
#include "server/app/admin_routes.hpp"
#include "server/app/answer_ids.hpp"
#include "server/app/cookies.hpp"
#include "server/app/key_governance.hpp"
#include "server/app/kube_feed.hpp"
#include "server/app/notify.hpp"
#include "server/app/outside_probes.hpp"
#include "server/net/publisher.hpp"
#include "server/net/server.hpp"
#include "sync/health/checker.hpp"
#include "sync/kube/source.hpp"
#include "sync/service.hpp"

namespace glbd {
namespace metrics {
class Writer;
}

class Daemon {
public:
    static constexpr std::chrono::milliseconds kMinRebuild{50};
    static constexpr std::chrono::milliseconds kHoldForPulls{1000};

    // `path` is re-read on SIGHUP; empty for an embedded config, which then cannot reload. `state_read`: the
    // stateDir file's read begun while the config was parsed (the sync service takes it when it is the
    // config's stateDir's).
    Daemon(conf::Config config, std::string path, sync::StateReadAhead state_read = {});
    ~Daemon();
    // Builds the first snapshot, binds, and runs until SIGTERM/SIGINT. Returns the exit code.
    int run(const std::string& banner = "");
    // As root with `user:` set: gives a missing stateDir to that user, then drops to it (uid, gid, no
    // supplementary groups). False (logged) when that fails.
    bool drop_privileges();
    // Validates `path` again and swaps in the new snapshot; a bad file keeps the running config. A change that
    // drops a KSK asks the parent's servers first, on a worker thread (the control thread serves on meanwhile):
    // `pending` then, and the reload concludes (applied or refused, logged) when they have answered.
    enum class Reload { applied, refused, pending };
    Reload reload();
    // Drains or forces a cluster or an endpoint ("eu-1", "eu-1/192.0.2.10"; "down", "up", "auto"),
    // shared with every peer. Why not, for a bad target or state.
    Status set_override(const std::string& target, const std::string& state);
    Status forget_instance(const std::string& origin);  // sync::Service::forget_instance, then a rebuild

    // The failover groups' TXT per zone while the admin's set holds, and the log of the set in force
    // (daemon_groups.cpp).
    [[nodiscard]] std::vector<ZoneRecord> served_records() const;
    void log_groups();
    std::optional<std::optional<sync::GroupsInForce>> groups_logged_;  // the set in force as last logged
    // Serving, its snapshot published, and the first health round done (/readyz, systemd's READY).
    [[nodiscard]] bool ready() const;
    [[nodiscard]] AdminRoutes& admin() { return admin_; }

private:
    friend class AdminRoutes;  // its routes read the daemon's state on the control thread
    // run()'s steps, in order (each returning non-zero is the exit code).
    void init_loop();
    int make_sources();
    int open_sockets();
    int start_serving();
    void wait_for_signal();
    void shut_down();

    uint32_t next_serial(uint32_t of_view);
    void start_checker(const health::States& previous);
    void apply_kubernetes();  // records changed: merge, restart the probes, rebuild
    // The statuses controller and delegate mode write, once the sync service holds this cluster's report as made
    // from the records merged last (a deletion is judged by the report version that withdrew it).
    void update_kube_statuses(const health::States* states);  // null: the checker's now
    void request_rebuild();
    void due_rebuild();  // request_rebuild's timer: rebuild(), or wait for the pulls under way
    static void on_rebuild_timer(uv_timer_t* t) { static_cast<Daemon*>(t->data)->due_rebuild(); }
    void rebuild();
    KeyGovernance keys_;  // the signed zones' key changes, and whether peers publish the same keys

    uv_signal_t signals_[3]{};  // SIGHUP, SIGTERM, SIGINT
    conf::Config config_;
    std::string path_;
    sync::StateReadAhead state_read_;  // taken (waited for) when the sync service is made
    Publisher publisher_;
    SnapshotBuilder builder_;  // each snapshot from the last: only the hosts a change touches are built
    std::shared_ptr<const geo::GeoDb> geo_;
    std::unique_ptr<DnsServer> server_;
    std::unique_ptr<health::Checker> checker_;
    std::unique_ptr<sync::Service> sync_;
    OutsideProbes outside_{[this] { uv_async_send(&changed_); }};  // other clusters' endpoints, as a vantage
    AdminRoutes admin_{*this};                                     // the admin endpoint (when admin.listen is set)
    std::unique_ptr<KubeFeed> kube_;  // with `kubernetes:`, this cluster's hosts from its DNSRecords
    // Where this cluster's hosts from DNSRecords come from (none without `kubernetes:`).
    [[nodiscard]] std::shared_ptr<const HostSources> kube_sources() const {
        return kube_ ? kube_->sources() : std::make_shared<const HostSources>();
    }
    Notifier notifier_{[this] { return service_status(); }};
    [[nodiscard]] std::string service_status() const;  // systemd's STATUS= line
    // Answers per (host, cluster): counters that outlive snapshots, wired into each one built.
    // Answer counter ids by (host, cluster), 0..size-1 in order of first use: stable for the process's
    // life, so counts survive rebuilds.
    std::shared_ptr<SharedAnswerIds> counter_ids_ = std::make_shared<SharedAnswerIds>();
    uint64_t reloads_ok_ = 0, reloads_failed_ = 0;
    bool serving_ = false;
    uint32_t serial_ = 0;
    CookieSecrets cookies_;  // the DNS cookies' secrets (RFC 7873, 9018), rotated daily unless configured
    uv_loop_t* loop_ = nullptr;
    uv_async_t changed_{};
    // ---- reloads (daemon_reload.cpp): one waiting for the parent's servers at a time, a SIGHUP meanwhile
    // taken when it ends.
    struct PendingReload {
        conf::Config next;
        std::shared_ptr<const geo::GeoDb> geo;
        std::vector<KeyGovernance::ParentQuestion> questions;
    };
    std::optional<PendingReload> pending_reload_;  // control thread
    bool reload_again_ = false;                    // control thread
    std::thread parent_asker_;                     // started and joined by the control thread
    Mutex parent_mu_;
    std::optional<KeyGovernance::ParentAnswers> parent_answers_ GLBD_GUARDED_BY(parent_mu_);
    uv_async_t parent_answered_{};
    void init_reloads();
    void close_reloads();
    void conclude_reload();
    void apply_reload(conf::Config next, std::shared_ptr<const geo::GeoDb> geo);
    uv_timer_t rebuild_timer_{};
    // Signed zones: a full build when the snapshot's first signature is due to be made again.
    static constexpr uint64_t kResignCheckMs = uint64_t{3600} * 1000;
    uv_timer_t resign_timer_{};
    uv_timer_t outside_timer_{};  // OutsideProbes::update's next: a keepDead ending, a batch of verdicts due
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
