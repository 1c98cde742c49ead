// sync/transfer/pulls — asking peers (internal to sync/; the sync thread): each round (every syncInterval) the
// members due a pull (a lead first, a different one each round, the others after it), NOTIFYs of this instance's
// changes, pulls a beat or a NOTIFY asked for; each exchange one TCP connection (a second attempt when the first
// is slow to open), its messages read and each origin's report merged as soon as it is complete. Owns: the
// exchanges under way, the pulls wanted while one was out, the round's lead and rest, the members due a pull of
// everything they relay, relayed news waiting its rounds, the serial last received from each peer, the pull timer.
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "sync/core.hpp"

namespace glbd::sync {

class Pulls {
public:
    Pulls(Service::Impl& s, Core& core) : s_(s), core_(core) {}
    void start();  // the round timer, on the core's loop (before the loop runs)
    void stop();   // the exchanges under way end (the loop closes their handles)
    // Service::pulling(): a pull under way on an open connection, and pulls heard from within kPullQuietMs.
    [[nodiscard]] bool pulling() const;
    // Every syncInterval: resolve the members again, then pull from each.
    void round();
    // This instance changed: a beat to every member, and a NOTIFY over TCP to those not heard by beats lately.
    void announce();
    void exchange(const SocketAddress& peer, bool notify);
    // A pull of `peer` now, or when the pull under way (its own or the round's lead) ends, if still wanted
    // then: `versions` (shown by a beat) newer than the store's, or any (none given).
    void want_pull(const SocketAddress& peer, const std::map<std::string, Held>& versions);
    // A beat relayed news: `from`'s next pull asks for everything it relays.
    void want_relay(const SocketAddress& from) { want_relay_.insert(from); }
    [[nodiscard]] bool relay_wanted(const SocketAddress& from) const { return want_relay_.count(from) > 0; }
    // A beat (or a pull) showed an origin we do not know, or its new life, relayed by `from`: news that waits
    // kRelayedNewsRounds rounds (take_relayed_news).
    void note_relayed(const std::string& origin, const Held& held, const SocketAddress& from);
    void forget(const std::function<bool(const SocketAddress&)>& former);  // members that are no longer
    // Where the first round's lead is in the list of members (a hash of this instance's origin).
    void set_first_lead(size_t lead) { leads_ = lead; }

    // The members a round pulls, and the one that goes first (`leads`: the rounds that pulled so far, counted on).
    // A member whose beats come shows its news by them (and a pull follows at once), so a round pulls it only
    // when its beats have not come for two rounds (lost, an older glbd, a path without UDP), when it has relayed
    // news for us (`want_relay`), or when kPullAtLeastEvery rounds have passed since its last pull (for what no
    // beat carries: the origins beyond a beat's room, a peer's new serial). Pure.
    struct RoundPlan {
        std::optional<SocketAddress> lead;
        std::vector<SocketAddress> rest;
    };
    static RoundPlan plan_round(const std::vector<SocketAddress>& members,
                                const std::map<SocketAddress, PeerStatus>& status,
                                const std::set<SocketAddress>& want_relay, uint64_t now, uint64_t interval,
                                size_t& leads);
    static constexpr uint64_t kPullAtLeastEvery = 10;  // rounds
    // How long an exchange's second connection attempt waits, from the usual time to open one to the peer
    // (`connect_ms`, smoothed): three times that, at least 200 ms (a peer across the world answers a SYN in
    // 300 ms) and at most 900 ms (Linux sends a lost SYN again after a second). Pure.
    static uint64_t hedge_ms(double connect_ms);

private:
    // One TCP exchange with a peer: a transfer of its `_glbd.` zone, or a NOTIFY.
    struct Exchange {
        Pulls* pulls = nullptr;
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
        std::vector<uint8_t> out;
        std::vector<uint8_t> in;               // the start of a message that the last read ended within
        std::shared_ptr<const tsig::Key> key;  // the key the request was signed with
        std::string mac;                       // the request's, then the previous message's
        int messages = 0, soas = 0, open = 3;  // handles not yet closed: tcp, timer, hedge (and spare)
        uint32_t serial = 0;
        size_t total = 0;
        bool done = false;
        bool changed = false, need_full = false;  // what the reports merged so far did
        bool key_mismatch = false;                // it failed on the key: the peer's is not ours
        bool other_self = false;                  // it answered as this instance, with a life that is not ours
        TxtViews records;                         // of the message being read (views into it)
        Decoder decoder;
    };
    // Pulls wanted while one from the same peer (or the round's lead) was under way: a NOTIFY during a long
    // transfer (`again`), or versions a beat showed. Looked at when that pull ends (take_wanted): pulled again
    // if still wanted, so that a change made during a transfer waits for no syncInterval, and a beat repeated
    // during a pull costs no second one.
    struct Wanted {
        bool again = false;
        std::map<std::string, Held> versions;  // origin -> the version and life shown
    };
    struct RelayedNews {
        Held held;           // the newest version shown
        SocketAddress from;  // the member that relayed it first
        size_t round = 0;    // `rounds` when it was first shown
    };
    static constexpr size_t kRelayedNewsRounds = 2;
    static constexpr uint64_t kPullQuietMs = 250;

    // The rest of a round, now (its lead's pull ended, or is still out when the next round begins).
    void pull_rest();
    void notify_still_unheard();
    bool take_wanted(const SocketAddress& peer) GLBD_EXCLUDES(core_.mu);
    void take_relayed_news() GLBD_EXCLUDES(core_.mu);
    // Whether a version shown of `origin` is still news: the store does not know the origin, or holds older.
    [[nodiscard]] bool still_news(const std::string& origin, const Held& shown) const GLBD_REQUIRES(core_.mu);
    std::vector<std::string> held_versions();
    // An exchange's TCP connection: each attempt (`tcp` from a fresh socket bound to the source), the one
    // that opened first taking the exchange on.
    void connect(Exchange* x, uv_tcp_t* tcp, uv_connect_t* conn);
    static void connected(uv_connect_t* c, int status);
    [[nodiscard]] uint64_t hedge_ms(const SocketAddress& peer) const GLBD_EXCLUDES(core_.mu);  // its peer's
    // Reads the messages `data` holds whole, until the exchange ends; returns the bytes they took (the rest is
    // a message's start).
    size_t on_data(Exchange* x, std::span<const uint8_t> data);
    void on_message(Exchange* x, std::span<const uint8_t> msg);
    static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
    void accept(Exchange* x, std::vector<Report>& reports);
    void accept_heartbeat(Exchange* x, const Report& r, uint64_t now) GLBD_REQUIRES(core_.mu);
    // A report of outside verdicts alone made whole with what is held of its origin (the same life, at the
    // report's base version or later, and older than it); false when that is not held.
    bool with_held_rest(Report& r) GLBD_REQUIRES(core_.mu);
    void complete(Exchange* x);
    static void finish(Exchange* x, const std::string& error);
    static bool waiting_unread(Exchange* x);  // at its timeout: an answer (or the opening) not read yet
    static void closed(uv_handle_t* h);       // one of an exchange's handles: the exchange goes with its last

    Service::Impl& s_;
    Core& core_;
    uv_timer_t timer_{};
    // What libuv reads into, for every exchange in turn (the loop reads one stream at a time, and each read is
    // taken before the next): a buffer of each exchange's own was 64 KiB of fresh pages for every pull.
    std::vector<char> read_buffer_ = std::vector<char>(size_t{64} << 10);
    // Service::pulling(): the pulls whose connection opened and that have not ended, and when one last
    // opened or read a message (steady_ms): a peer that stopped answering holds no build.
    std::atomic<int> pulls_open_{0};
    std::atomic<uint64_t> pull_heard_ms_{0};
    std::set<std::pair<SocketAddress, bool>> in_flight_;  // (peer, notify) of the exchanges under way
    std::map<SocketAddress, Wanted> wanted_;
    std::map<Exchange*, std::unique_ptr<Exchange>> exchanges_;  // until its handles have closed
    // A round pulls one member first (its lead, a different one each round) and the others when that pull
    // ends, so that they ask with what the lead brought: a fresh node learns each origin once, not once from
    // every peer that holds it. The others (and pulls a NOTIFY sets off) ask for the peer's own origin only
    // ("relay=0"), with heartbeats of the rest; a heartbeat newer than what we hold puts the peer in
    // want_relay_, whose next pull asks for everything (how news crosses a cut link).
    std::optional<SocketAddress> round_lead_;
    std::vector<SocketAddress> round_rest_;
    size_t rounds_ = 0;  // every round so far (relayed news waits for them)
    // The rounds that pulled: the next lead is the next member due. It starts at a hash of our origin, so that
    // a fleet started together does not ask its first member for everything at once, each server in turn.
    size_t leads_ = 0;
    std::set<SocketAddress> want_relay_;
    std::map<SocketAddress, uint32_t> last_generation_;  // per peer: the serial last received
    std::map<std::string, RelayedNews> relayed_news_;    // of origins we do not know (or of new lives), by origin
    bool notify_unheard_ = false;                        // announce() held a NOTIFY back from members never heard
};

}  // namespace glbd::sync
