// sync/service_impl — the sync service's state and the functions that work on it, defined in
// sync/service.cpp (the loop, rounds, stateDir, own state), sync/liveness.cpp (alive, suspect, accrual),
// sync/transfer/serve.cpp (answering peers on the TCP thread), sync/transfer/pull.cpp (exchanges with peers
// on the sync thread) and sync/transfer/beat.cpp (heartbeats over UDP).
// Internal to sync/. Which thread touches what is written beside each field; what several threads share is
// GLBD_GUARDED_BY(mu), checked by clang.
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
#include <thread>
#include <vector>

#include "resolver/base/fd.hpp"
#include "resolver/base/log_throttle.hpp"
#include "resolver/base/lookup.hpp"
#include "resolver/base/mutex.hpp"
#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/transfer/codec.hpp"
#include "sync/transfer/tsig.hpp"

namespace glbd::sync {

struct Service::Impl {
    // Written only by reconfigure() on the control thread while the sync thread is stopped; read by the
    // control and sync threads. The TCP thread reads none of it (it takes the key through current_key()).
    // Without its hosts: this instance's come from the daemon (set_own_hosts), and are not kept twice.
    conf::Config config;
    std::vector<HostEntry> saved_own_hosts;  // this instance's hosts as stateDir had them at start (constructor only)
    RecordList saved_own_records;            // and its static records
    std::atomic<bool> networked{false};
    // Service::pulling(): the pulls whose connection opened and that have not ended, and when one last
    // opened or read a message (steady_ms): a peer that stopped answering holds no build.
    std::atomic<int> pulls_open{0};
    std::atomic<uint64_t> pull_heard_ms{0};
    static constexpr uint64_t kPullQuietMs = 250;
    std::function<void()> on_change;

    mutable Mutex mu;
    std::shared_ptr<const tsig::Key> sync_key GLBD_GUARDED_BY(mu);  // swapped whole by a reload
    Store store GLBD_GUARDED_BY(mu);
    InstanceState own GLBD_GUARDED_BY(mu);
    std::map<SocketAddress, PeerStatus> peer_status GLBD_GUARDED_BY(mu);
    std::set<SocketAddress> self_addresses GLBD_GUARDED_BY(mu);  // members that turned out to be this instance
    std::set<Address> pull_now GLBD_GUARDED_BY(mu);              // addresses that sent a NOTIFY
    std::map<Address, uint64_t> pulled_at GLBD_GUARDED_BY(mu);   // members' addresses: when they last pulled (ms)
    std::set<Address> member_addresses GLBD_GUARDED_BY(mu);      // the members' resolved addresses (trust)
    // The MACs of the signed requests answered lately: one seen again is a replay (NOTAUTH). Kept for
    // kMacKeepMs (a signature's time is good for 300 s either way), at most kMaxMacs.
    static constexpr size_t kMaxMacs = 16384;
    static constexpr uint64_t kMacKeepMs = 600'000;
    std::set<std::string> seen_macs GLBD_GUARDED_BY(mu);
    std::deque<std::pair<uint64_t, std::string>> mac_order GLBD_GUARDED_BY(mu);
    bool notify_pending GLBD_GUARDED_BY(mu) = false;
    bool own_hosts_set GLBD_GUARDED_BY(mu) = false;
    std::map<std::string, bool> last_alive GLBD_GUARDED_BY(mu);
    // Each origin's data as last served, encoded once per data change (its Known::changed_generation).
    struct Served {
        uint32_t generation;
        std::shared_ptr<const EncodedData> data;
    };
    std::map<std::string, Served> served_data GLBD_GUARDED_BY(mu);
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
    void note_own_held(const std::string& peer, const InstanceState& ours) GLBD_REQUIRES(mu);
    LearntMembers learnt GLBD_GUARDED_BY(mu);                // members learnt from peers (sync thread; status: control)
    std::set<SocketAddress> configured GLBD_GUARDED_BY(mu);  // peers.members, resolved (never learnt)

    SyncCounters counters;                              // atomics
    Mutex reject_mu;                                    // the TCP thread (requests) and the sync thread (beats)
    LogThrottle reject_log GLBD_GUARDED_BY(reject_mu);  // rejected requests, per source address and reason
    LogThrottle report_log{1, 60'000};  // sync thread: rejected reports, per peer and origin, once a minute

    // The sync thread's own: its loop, timers and exchanges (the control thread touches them only in
    // start() and stop(), before the thread starts and after it is joined).
    uv_loop_t loop{};
    uv_async_t wake{};
    uv_timer_t pull_timer{}, live_timer{}, save_timer{};
    uint64_t last_save_ms = 0, last_save_cost_ms = 0;
    uint64_t started_ms = 0;  // when the loop started (wall clock): a member never heard is suspect from then
    std::thread thread;
    bool closing = false;                                // the stop was seen: no new exchange
    std::set<std::pair<SocketAddress, bool>> in_flight;  // (peer, notify) of the exchanges under way
    // Pulls wanted while one from the same peer (or the round's lead) was under way: a NOTIFY during a long
    // transfer (`again`), or versions a beat showed. Looked at when that pull ends (take_wanted): pulled again
    // if still wanted, so that a change made during a transfer waits for no syncInterval, and a beat repeated
    // during a pull costs no second one.
    struct Wanted {
        bool again = false;
        std::map<std::string, Held> versions;  // origin -> the version and life shown
    };
    std::map<SocketAddress, Wanted> wanted;
    struct Exchange;
    std::map<Exchange*, std::unique_ptr<Exchange>> exchanges;  // until its handles have closed
    std::vector<SocketAddress> members;                        // resolved addresses, refreshed each round
    // A round pulls one member first (its lead, a different one each round) and the others when that
    // pull ends, so that they ask with what the lead brought: a fresh node learns each origin once, not
    // once from every peer that holds it.
    // The others (and pulls a NOTIFY sets off) ask for the peer's own origin only ("relay=0"), with
    // heartbeats of the rest; a heartbeat newer than what we hold puts the peer in want_relay, whose next
    // pull asks for everything (how news crosses a cut link).
    std::optional<SocketAddress> round_lead;
    std::vector<SocketAddress> round_rest;
    size_t rounds = 0;  // every round so far (relayed news waits for them)
    // The rounds that pulled: the next lead is the next member due. It starts at a hash of our origin, so that
    // a fleet started together does not ask its first member for everything at once, each server in turn.
    size_t leads = 0;
    std::set<SocketAddress> want_relay;
    std::map<SocketAddress, uint32_t> last_generation;  // per peer: the serial last received
    int resolving = 0;

    // One TCP exchange with a peer: a transfer of its `_glbd.` zone, or a NOTIFY.
    struct Exchange {
        Impl* impl = nullptr;
        SocketAddress peer;
        bool notify = false;
        bool relay = false;  // a pull that asked for what the peer relays too (not its own origin only)
        // The connection, and a second attempt started when the first has not opened within hedge_ms() (a
        // lost SYN is sent again only after a second); the first to open is `stream`, the other is closed.
        uv_tcp_t tcp{}, spare{};
        uv_connect_t conn{}, spare_conn{};
        uv_tcp_t* stream = nullptr;
        bool spare_started = false;
        int connecting = 0;                         // attempts under way
        uint64_t began_ns = 0, spare_began_ns = 0;  // uv_hrtime()
        uv_write_t write{};
        uv_timer_t timer{}, hedge{};
        std::vector<uint8_t> out, in;
        std::array<char, size_t{64} << 10> read_buffer;  // one read at a time per stream: libuv reads into it
        std::shared_ptr<const tsig::Key> key;            // the key the request was signed with
        std::string mac;                                 // the request's, then the previous message's
        int messages = 0, soas = 0, open = 3;            // handles not yet closed: tcp, timer, hedge (and spare)
        uint32_t serial = 0;
        size_t total = 0;
        bool done = false;
        bool changed = false, need_full = false;  // what the reports merged so far did
        TxtViews records;                         // of the message being read (views into it)
        Decoder decoder;
    };

    // ---- heartbeats over UDP (transfer/beat.cpp; sync thread but set_beat_source)
    Fd beat_in;  // the DNS server's hand-off socket (UDP NOTIFYs for `_glbd.`)
    uv_poll_t beat_poll{};
    uv_timer_t beat_timer{};  // the resends after a change
    uint64_t beat_seq = 0;    // the last beat's number (from the clock at start, then +1 per beat)
    struct {                  // this instance's last change, as announced by beats (announce_by_beats)
        uint64_t seq = 0, at_ms = 0;
        std::vector<SocketAddress> unacked;
        int resends_left = 0;
    } change;
    // Sending sockets, by source address (none: the kernel's choice) and family.
    std::map<std::pair<std::optional<Address>, int>, Fd> beat_out;
    struct BeatLink {  // beats received from one origin
        uint64_t last_seq = 0, last_mono_ms = 0, received = 0, lost = 0;
        double loss = 0;  // the share of beats lost, smoothed over about kLossWindow beats
    };
    std::map<std::string, BeatLink> beat_links GLBD_GUARDED_BY(mu);  // by the sender's origin
    struct SentBeat {
        uint64_t seq = 0, at_ms = 0;
        bool again = false;  // sent more than once: its echo times no single trip
    };
    struct MemberBeats {            // our beats to one member, and its echoes of them
        std::deque<SentBeat> sent;  // lately
        uint64_t echo_sent = 0;     // the echo our last beat to it carried
        uint64_t echoed = 0;        // the newest of ours it echoed
    };
    std::map<SocketAddress, MemberBeats> member_beats;  // per member; a former member's go (resolve_members)
    struct RelayedNews {
        Held held;           // the newest version shown
        SocketAddress from;  // the member that relayed it first
        size_t round = 0;    // `rounds` when it was first shown
    };
    std::map<std::string, RelayedNews> relayed_news;  // of origins we do not know (or of new lives), by origin
    static constexpr size_t kRelayedNewsRounds = 2;
    static constexpr size_t kBeatsRemembered = 64;
    static constexpr double kLossWindow = 32;
    static constexpr uint64_t kChangeResendMs = 200;
    static constexpr int kBeatsPerWake = 256;
    static constexpr size_t kTsigRoom = 100;  // a TSIG record but its key name

    Impl(const conf::Config& c, std::function<void()> cb);
    ~Impl();
    // ---- stateDir
    std::string state_path() const;
    void load_state_dir(uint64_t now) GLBD_REQUIRES(mu);
    // stateDir is written on the sync thread, at most every max(1 s, 4 x the last write's cost): at
    // 10,000 hosts x 20 clusters one write is about a second of work. The known states are copied
    // under the lock; serializing and writing happen outside it. A stop writes what is pending.
    void request_save() GLBD_REQUIRES(mu);
    void schedule_save();
    void save_now();
    void save_locked() GLBD_REQUIRES(mu);
    std::vector<InstanceState> known_states() const GLBD_REQUIRES(mu);
    // {"saved": ms, "origins": [...]}, one origin's JSON at a time.
    void write_state(const std::vector<InstanceState>& states) const;
    // ---- own state (control thread)
    void set_own_hosts(HostList hosts, RecordList records);
    Status set_override(const std::string& target, const std::string& state);
    void set_records_group(const std::string& group);
    Status set_active_groups(const std::optional<std::vector<std::string>>& groups);  // nullopt: clear
    // This cluster's group: kubernetes.group when set, else its records'.
    [[nodiscard]] std::string own_group() const GLBD_REQUIRES(mu);
    void bump_own() GLBD_REQUIRES(mu);
    void wake_up() GLBD_EXCLUDES(mu);
    uint64_t dead_after() const;
    // ---- serving (TCP thread)
    static Auth verify(const tsig::Key& key, const uint8_t* wire, size_t len, uint64_t now_s, std::string* mac);
    Handled handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out,
                   MoreMessages& more);
    void reject(Auth a, const char* what, const std::string& peer);  // what: NOTIFY, transfer, heartbeat
    bool first_use(const std::string& mac);
    std::set<Address> literal_members() const;
    // One origin's record for a transfer and, when asked, its data (false: no longer known); and this
    // instance's origin name.
    bool encode_origin(const std::string& origin, bool data, std::vector<std::string>& record,
                       std::shared_ptr<const EncodedData>& encoded) GLBD_EXCLUDES(mu);
    std::string own_origin_name() const GLBD_EXCLUDES(mu);
    // The `_glbd.` zone as a transfer: SOA, the records, SOA; split into messages of about kMessageBudget
    // bytes, each signed (the first with the request's MAC, the next ones chained), written one message at
    // a time by the returned producer as the connection takes them (see serve.cpp).
    MoreMessages transfer(std::shared_ptr<const tsig::Key> key, uint16_t id, uint16_t qtype, const std::string& req_mac,
                          std::optional<uint32_t> known_serial, const std::map<std::string, Held>& have, bool own_only)
        GLBD_EXCLUDES(mu);
    // A reload: new members, key, zones or intervals; what is known stays.
    void reconfigure(const conf::Config& c);
    std::shared_ptr<const tsig::Key> current_key() const GLBD_EXCLUDES(mu);
    // ---- the sync loop
    void start();
    void stop();
    void on_wake();
    // Every syncInterval: resolve the members again, then pull from each.
    void round();
    // The rest of a round, now (its lead's pull ended, or is still out when the next round begins).
    void pull_rest();
    std::vector<SocketAddress> due_pulls() GLBD_EXCLUDES(mu);
    static constexpr uint64_t kPullAtLeastEvery = 10;  // rounds
    bool is_own_listen(const SocketAddress& addr) const;
    // ---- members, configured and learnt (service_members.cpp)
    void resolve_members();
    void forget_former_members() GLBD_EXCLUDES(mu);
    [[nodiscard]] std::vector<SocketAddress> own_reach() const;  // peers.advertise, else the listen addresses
    std::vector<SocketAddress> plan_learnt(std::vector<SocketAddress>& next) GLBD_REQUIRES(mu);
    void claim(const std::string& origin, const std::vector<SocketAddress>& reach, uint64_t now) GLBD_REQUIRES(mu);
    // The origins (printable) a configured member answers as: their advertised addresses are not learnt.
    [[nodiscard]] std::set<std::string> reached_origins() const GLBD_REQUIRES(mu);
    std::vector<SocketAddress> first_contact(const Beat& beat) GLBD_EXCLUDES(mu);
    // A pull of `peer` now, or when the pull under way (its own or the round's lead) ends, if still wanted
    // then: `versions` (shown by a beat) newer than the store's, or any (none given).
    void want_pull(const SocketAddress& peer, const std::map<std::string, Held>& versions);
    bool take_wanted(const SocketAddress& peer) GLBD_EXCLUDES(mu);
    // A member never heard at all: no beat, no pull that succeeded.
    bool never_heard(const SocketAddress& m) const GLBD_REQUIRES(mu);
    void check_liveness();
    void judge_members(uint64_t now) GLBD_REQUIRES(mu);
    std::string evidence(const std::string& origin, const Known& k, uint64_t now) const GLBD_REQUIRES(mu);
    void exchange(const SocketAddress& peer, bool notify);
    // The address an exchange with `to` leaves from: this server's first DNS listen address of the same
    // family that is not a wildcard and is loopback exactly when `to` is; none (the kernel picks) otherwise.
    [[nodiscard]] std::optional<Address> source_for(const Address& to) const;
    std::vector<std::string> held_versions();
    // An exchange's TCP connection: each attempt (`tcp` from a fresh socket bound to the source), the one
    // that opened first taking the exchange on, and how long a second attempt waits.
    void connect(Exchange* x, uv_tcp_t* tcp, uv_connect_t* conn);
    static void connected(uv_connect_t* c, int status);
    [[nodiscard]] uint64_t hedge_ms(const SocketAddress& peer) const;
    void on_data(Exchange* x);
    bool in_our_zones(const std::string& host) const;
    bool servable(const HostEntry& h) const;
    void refute(const InstanceState& heard) GLBD_REQUIRES(mu);
    void accept(Exchange* x, std::vector<Report>& reports);
    void accept_heartbeat(Exchange* x, const Report& r, uint64_t now) GLBD_REQUIRES(mu);
    void complete(Exchange* x);
    static void finish(Exchange* x, const std::string& error);
    // ---- heartbeats (transfer/beat.cpp)
    void set_beat_source(int fd);
    void start_beats();
    void close_beat_sockets();
    int beat_socket(const std::optional<Address>& source, int family);
    uint64_t send_beats();
    // How a beat sent again is timed: its echo may answer either copy (maybe_heard: no round-trip sample from
    // it), the first went unheard (unheard: its echo times this copy), or the first was heard (heard: its echo
    // times the first).
    enum class Again : uint8_t { maybe_heard, unheard, heard };
    uint64_t send_beat(uint64_t seq, const std::vector<SocketAddress>& to, Again again = Again::maybe_heard);
    void announce_by_beats();
    void resend_change();
    void announce();
    void notify_still_unheard();
    bool notify_unheard = false;  // announce() held a NOTIFY back from members never heard (sync thread)
    // How long a member may stay silent (no beat, no transfer) before it is suspect: max(3 x syncInterval,
    // deadAfter / 2). Also how recent its last beat must be for a change to go to it by beats alone.
    [[nodiscard]] uint64_t suspect_after() const;
    // The most deadAfter may grow by for a lossy path: peers.deadAfterMax - deadAfter (a tenth of deadAfter
    // when unset).
    [[nodiscard]] uint64_t max_grace() const;
    void read_beats();
    void on_beat(const uint8_t* msg, size_t len, const SocketAddress& sender);
    bool count_beat(const Beat& beat) GLBD_REQUIRES(mu);
    std::vector<SocketAddress> note_beat(const Beat& beat, const SocketAddress& sender, bool& fresh) GLBD_EXCLUDES(mu);
    struct BeatNews {
        std::map<std::string, Held> direct;       // the sender's own newer version or life
        std::map<std::string, Held> relayed;      // a newer version of an origin we know, relayed
        std::map<std::string, Held> relayed_new;  // an origin we do not know, or its new life, relayed
    };
    BeatNews merge_beat(Beat& beat) GLBD_EXCLUDES(mu);
    void take_relayed_news() GLBD_EXCLUDES(mu);
    static bool is_newer(const Held& shown, const InstanceState& held);
    // Whether a version shown of `origin` is still news: the store does not know the origin, or holds older.
    bool still_news(const std::string& origin, const Held& shown) const GLBD_REQUIRES(mu);
};

}  // namespace glbd::sync
