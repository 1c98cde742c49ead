// sync/transfer/beats — heartbeats over UDP (internal to sync/; the sync thread, but set_source): every
// syncInterval a signed NOTIFY to every member carrying this instance's version and heartbeat and as many live
// origins as fit; after a change, one at once and again every 200 ms to the members that have not acknowledged
// it; the peers' beats read from the DNS server's hand-off socket, their heartbeats merged, news pulled at once.
// Each side's next beat echoes the last one it received: the acknowledgement and the round-trip sample. Owns:
// the hand-off socket, the sending sockets, the beats' numbering, the last change's resends, our beats to each
// member and its echoes; each sender's link (its loss) is the core's (liveness reads it).
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resolver/base/fd.hpp"
#include "sync/core.hpp"

namespace glbd::sync {

class Beats {
public:
    Beats(Service::Impl& s, Core& core) : s_(s), core_(core) {}
    void set_source(int fd);  // the DNS server's hand-off socket, owned from here on; before start()
    void start();             // its poll and timer, on the core's loop
    void close();             // its handles and sending sockets
    uint64_t send_all();      // one beat to every member: its number
    // How a beat sent again is timed: its echo may answer either copy (maybe_heard: no round-trip sample from
    // it), the first went unheard (unheard: its echo times this copy), or the first was heard (heard: its echo
    // times the first).
    enum class Again : uint8_t { maybe_heard, unheard, heard };
    uint64_t send(uint64_t seq, const std::vector<SocketAddress>& to, Again again = Again::maybe_heard);
    // This instance changed: a beat at once and again every kChangeResendMs to the members that have not
    // acknowledged it (their beat echoes it, or they pulled since), until all have or the next round.
    void announce_change();
    // A peer's beat as the DNS server handed it over (tests and fuzzing call it on a service not started).
    void on_beat(const uint8_t* msg, size_t len, const SocketAddress& sender);
    void forget(const std::function<bool(const SocketAddress&)>& former);  // members that are no longer
    // The members of `unacked` that have not acknowledged our change (beat `seq`, made at `at_ms`): their beats
    // echo none as new (`echoed`: the newest of ours each echoed), and they have not pulled from us since
    // (`pulled_at`, by address). Pure.
    static std::vector<SocketAddress> still_unacked(const std::vector<SocketAddress>& unacked, uint64_t seq,
                                                    uint64_t at_ms,
                                                    const std::function<uint64_t(const SocketAddress&)>& echoed,
                                                    const std::map<Address, uint64_t>& pulled_at);

private:
    struct SentBeat {
        uint64_t seq = 0, at_ms = 0;
        bool again = false;  // sent more than once: its echo times no single trip
    };
    struct MemberBeats {            // our beats to one member, and its echoes of them
        std::deque<SentBeat> sent;  // lately
        uint64_t echo_sent = 0;     // the echo our last beat to it carried
        uint64_t echoed = 0;        // the newest of ours it echoed
    };
    struct News {
        std::map<std::string, Held> direct;   // the sender's own newer version or life
        std::map<std::string, Held> relayed;  // a newer version of an origin we know and do not hear lately, relayed
        // Relayed news that waits (take_relayed_news): an origin we do not know or its new life, or a newer version
        // of one whose own beats we hear (its own beat, and a pull from it, bring that).
        std::map<std::string, Held> relayed_later;
    };
    static constexpr size_t kBeatsRemembered = 64;  // our beats to a member kept, for their echoes
    static constexpr uint64_t kChangeResendMs = 200;
    static constexpr int kBeatsPerWake = 256;
    static constexpr size_t kTsigRoom = 100;  // a TSIG record but its key name

    void resend_change();
    void read();
    Core::BeatLink::Seen count(const Beat& beat) GLBD_REQUIRES(core_.mu);
    std::vector<SocketAddress> note(const Beat& beat, const SocketAddress& sender, bool& fresh) GLBD_EXCLUDES(core_.mu);
    News merge(Beat& beat) GLBD_EXCLUDES(core_.mu);
    [[nodiscard]] bool heard_lately(const std::string& origin) const GLBD_REQUIRES(core_.mu);

    Service::Impl& s_;
    Core& core_;
    Fd in_;  // the DNS server's hand-off socket (UDP NOTIFYs for `_glbd.`)
    uv_poll_t poll_{};
    uv_timer_t timer_{};     // the resends after a change
    uint64_t seq_ = 0;       // the last beat's number (from the clock at start, then +1 per beat)
    size_t relay_from_ = 0;  // where in the live origins the next beat's relays begin (send)
    struct {                 // this instance's last change, as announced by beats (announce_change)
        uint64_t seq = 0, at_ms = 0;
        std::vector<SocketAddress> unacked;
        int resends_left = 0;
    } change_;
    std::map<SocketAddress, MemberBeats> member_beats_;  // per member
};

}  // namespace glbd::sync
