// sync/core — what every part of the sync service shares (internal to sync/): the config, the store of every
// instance's report, this instance's own state, what is known of each member, under one mutex; the counters; and
// the loop the parts' handles run on. The parts each own the rest of their state: serving (transfer/serving.hpp,
// the TCP thread), pulls and rounds (transfer/pulls.hpp), heartbeats (transfer/beats.hpp), members
// (membership.hpp), liveness (liveness.hpp) and stateDir (state_dir.hpp); Service::Impl (service_impl.hpp) holds
// the core and one of each. What several threads touch is GLBD_GUARDED_BY(mu), checked by clang.
#pragma once

#include <uv.h>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "resolver/base/clock.hpp"
#include "resolver/base/log_throttle.hpp"
#include "resolver/base/mutex.hpp"
#include "sync/members.hpp"
#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/transfer/codec.hpp"
#include "sync/transfer/datagrams.hpp"
#include "sync/transfer/tsig.hpp"

namespace glbd::sync {

struct Core {
    // Our own origin taken back from peers this many times within the window: another glbd runs as this one.
    static constexpr size_t kConflictRefutes = 3;
    static constexpr uint64_t kConflictWindowMs = 300'000;

    // Written only by reconfigure() on the control thread while the sync thread is stopped; read by the
    // control and sync threads. The TCP thread reads none of it (it takes the key through current_key()).
    // Without its hosts: this instance's come from the daemon (set_own_hosts), and are not kept twice.
    conf::Config config;
    std::vector<HostEntry> saved_own_hosts;  // this instance's hosts as stateDir had them at start (constructor only)
    RecordList saved_own_records;            // and its static records
    std::atomic<bool> networked{false};
    std::function<void()> on_change;
    // The clocks every part reads (a test's, Service::Seams) and the way heartbeats leave.
    const Clock* clock = &system_clock();
    Datagrams* datagrams = nullptr;
    [[nodiscard]] uint64_t now() const { return clock->wall_ms(); }     // versions, heartbeats: compared by peers
    [[nodiscard]] uint64_t mono() const { return clock->steady_ms(); }  // intervals on this machine

    mutable Mutex mu;
    std::shared_ptr<const tsig::Key> sync_key GLBD_GUARDED_BY(mu);  // swapped whole by a reload
    Store store GLBD_GUARDED_BY(mu);
    InstanceState own GLBD_GUARDED_BY(mu);
    std::map<SocketAddress, PeerStatus> peer_status GLBD_GUARDED_BY(mu);
    std::set<SocketAddress> self_addresses GLBD_GUARDED_BY(mu);  // members that turned out to be this instance
    std::set<Address> pull_now GLBD_GUARDED_BY(mu);              // addresses that sent a NOTIFY
    std::map<Address, uint64_t> pulled_at GLBD_GUARDED_BY(mu);   // members' addresses: when they last pulled (ms)
    std::set<Address> member_addresses GLBD_GUARDED_BY(mu);      // the members' resolved addresses (trust)
    bool notify_pending GLBD_GUARDED_BY(mu) = false;
    bool own_hosts_set GLBD_GUARDED_BY(mu) = false;
    std::set<std::string> warned GLBD_GUARDED_BY(mu);  // origin+version already warned about foreign hosts
    bool save_pending GLBD_GUARDED_BY(mu) = false;
    bool stopping GLBD_GUARDED_BY(mu) = false;  // set by stop(), read by the sync thread when woken
    // The sync thread runs, and `wake` may be signalled: from start() until stop() (the TCP thread's NOTIFYs
    // come at any time, also while a reload restarts the loop, and must never signal a handle that is closed
    // or not made yet).
    bool wakeable GLBD_GUARDED_BY(mu) = false;
    std::string records_group GLBD_GUARDED_BY(mu);  // status.group of this cluster's DNSRecords
    // Per peer origin, the newest version of this instance's report it showed holding (its beats, the origin
    // records of a pull from it): Service::not_holding. At most one entry per known origin.
    std::map<std::string, Held> own_held GLBD_GUARDED_BY(mu);
    // Another glbd that runs as this instance (the same cluster.id and cluster.instance): where it was seen (its
    // address, or the peer that relayed its report), when last, and our refutes lately (two instances of one
    // origin take turns at newer lives).
    IdentityConflict identity_conflict GLBD_GUARDED_BY(mu);
    std::deque<uint64_t> refutes GLBD_GUARDED_BY(mu);
    // Each origin's beats as they came (transfer/beats.hpp): liveness stretches deadAfter by their loss, the
    // status shows them. At most one entry per origin that may be known (ReportLimits::kMaxOrigins).
    struct BeatLink {
        static constexpr double kLossWindow = 32;    // beats the share lost is smoothed over, about
        static constexpr uint64_t kRemembered = 64;  // a gap counts at most this many beats lost
        uint64_t last_seq = 0, last_mono_ms = 0, received = 0, lost = 0;
        uint64_t incarnation = 0;  // the sender's life its numbers belong to (its own record's, in its beats)
        double loss = 0;           // the share of beats lost lately
        // What a beat is to the link: new (counted, its gap as loss), again (one that came late or twice: a
        // resend keeps its number), or a replay (of an earlier life, or further behind than any reordering:
        // someone sent a captured beat). Numbers never move back within a life; a new life (a higher
        // incarnation) starts its numbering afresh, whatever its clock says.
        enum class Seen { fresh, again, replay };
        Seen count(uint64_t seq, uint64_t mono_ms, uint64_t incarnation);
    };
    std::map<std::string, BeatLink> beat_links GLBD_GUARDED_BY(mu);  // by the sender's origin
    LearntMembers learnt GLBD_GUARDED_BY(mu);                // members learnt from peers (sync thread; status: control)
    std::set<SocketAddress> configured GLBD_GUARDED_BY(mu);  // peers.members, resolved (never learnt)

    SyncCounters counters;              // atomics
    LogThrottle report_log{1, 60'000};  // sync thread: rejected reports, per peer and origin, once a minute

    // The sync thread's loop (the control thread touches it only in start() and stop(), before the thread
    // starts and after it is joined).
    uv_loop_t loop{};
    uv_async_t wake{};
    uint64_t started_ms = 0;  // when the loop started (wall clock): a member never heard is suspect from then
    bool running = false;     // the loop runs (from start() to the stop): exchanges may begin
    bool closing = false;     // the stop was seen: no new exchange

    // ---- own state
    // This cluster's group: kubernetes.group when set, else its records'.
    [[nodiscard]] std::string own_group() const GLBD_REQUIRES(mu);
    // This instance changed: a new version, to be announced and written to stateDir. `outside_only`: only
    // its outside verdicts changed (its base_version stays, so pullers that hold it are sent those alone).
    void bump_own(bool outside_only = false) GLBD_REQUIRES(mu);
    void wake_up() GLBD_EXCLUDES(mu);
    [[nodiscard]] uint64_t dead_after() const;
    [[nodiscard]] std::shared_ptr<const tsig::Key> current_key() const GLBD_EXCLUDES(mu);
    // How long a member may stay silent (no beat, no transfer) before it is suspect: max(3 x syncInterval,
    // deadAfter / 2). Also how recent its last beat must be for a change to go to it by beats alone.
    [[nodiscard]] uint64_t suspect_after() const;
    // A member never heard at all: no beat, no pull that succeeded.
    [[nodiscard]] bool never_heard(const SocketAddress& m) const GLBD_REQUIRES(mu);
    // ---- stateDir: a write is due (the sync thread makes it, StateDir::schedule_save; without peers, now)
    void request_save() GLBD_REQUIRES(mu);
    [[nodiscard]] std::vector<InstanceState> known_states() const GLBD_REQUIRES(mu);
    // {"saved": ms, "origins": [...]} (state_file.hpp); a failure is logged.
    void write_states(const std::vector<InstanceState>& states) const;
    // ---- what peers say of us, and which of their hosts we take
    void note_own_held(const std::string& peer, const InstanceState& ours) GLBD_REQUIRES(mu);
    // A peer holds this instance's origin from a life at least as new as ours (we restarted without stateDir,
    // perhaps with the clock set back): a newer life at once, so that peers take it.
    void refute(const InstanceState& heard, const std::string& via) GLBD_REQUIRES(mu);
    // Whether a report of our own origin may be our own (this life, a version we have had): else another glbd
    // made it.
    [[nodiscard]] bool may_be_ours(const InstanceState& heard) const GLBD_REQUIRES(mu) {
        return heard.incarnation == own.incarnation && heard.version <= own.version;
    }
    // Another glbd runs as this instance, seen at `where`: remembered for the status, logged (once a minute).
    void conflict(const std::string& where) GLBD_REQUIRES(mu);
    [[nodiscard]] bool in_our_zones(std::string_view host) const;
    // A peer's entry we can serve: in our zones, and at a zone apex with addresses only (a host name there would
    // be answered as a CNAME beside the SOA and NS: model::kApexCname).
    [[nodiscard]] bool servable(const HostEntry& h) const;
};

}  // namespace glbd::sync
