// sync/transfer/beats — heartbeats over UDP (sync thread): every syncInterval, and again soon after this instance's own
// change to the members that have not acknowledged it, a signed NOTIFY to every member carrying this instance's version
// and heartbeat and those it relays (codec.hpp, `Beat`); the peers' beats, handed over by the DNS server's UDP threads,
// move liveness, show news (a pull follows at once) and measure each link's loss and round trip. Nothing answers a
// beat: each side's next beat echoes the last one it received, which is the acknowledgement and the round-trip sample.
#include "sync/transfer/beats.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "resolver/base/clock.hpp"
#include "sync/service_impl.hpp"

namespace glbd::sync {

void Beats::set_source(int fd) { in_.reset(fd); }

void Beats::start() {
    // Numbered from the clock at this life's first start, so that a restarted instance's beats come after its
    // last life's; a restart of the loop by a reload keeps counting (a jump would read as beats lost).
    if (seq_ == 0) seq_ = core_.now();
    uv_timer_init(&core_.loop, &timer_);
    timer_.data = this;
    if (!in_) return;
    uv_poll_init(&core_.loop, &poll_, in_.get());
    poll_.data = this;
    uv_poll_start(&poll_, UV_READABLE, [](uv_poll_t* p, int status, int) {
        if (status == 0) static_cast<Beats*>(p->data)->read();
    });
}

void Beats::close() { core_.datagrams->close(); }

void Beats::forget(const std::function<bool(const SocketAddress&)>& former) {
    std::erase_if(member_beats_, [&](const auto& kv) { return former(kv.first); });
}

// One beat to every member: the same sequence number for all, each with its own echo. Returns its number.
uint64_t Beats::send_all() { return send(++seq_, s_.membership.members()); }

// Beat `seq` to `to`: a new one, or one sent again (then it keeps its number, so that a receiver that has it
// ignores it and one that lost it counts no loss).
uint64_t Beats::send(uint64_t seq, const std::vector<SocketAddress>& to, Again again) {
    if (to.empty() || core_.closing) return seq;
    auto key = core_.current_key();
    if (!key) return seq;
    const uint64_t now_mono = core_.mono();
    const size_t budget = kMaxBeatBytes - kTsigRoom - key->name.size();
    Beat header;
    header.seq = seq;
    std::vector<std::vector<std::string>> origins;
    struct Echo {
        uint64_t seq = 0, held_ms = 0;
    };
    std::map<SocketAddress, Echo> echo_to;  // the last beat each member's origin sent us, and how long ago
    {
        MutexLock lock(core_.mu);
        header.from = core_.own.origin();
        header.reach = core_.own.reach;
        uint64_t now = core_.now();
        encode_report(core_.own, now, 0, false, origins);
        // The others it relays, alive ones only (a dead one's age tells nobody anything), as many as fit in a beat
        // whatever its echo (the header at its longest), taken in turn: each beat goes on from where the last one's
        // ended, so that every origin travels within ceil(origins / per beat) beats. (A window moved on by one
        // each beat took 43 beats to carry all 49 others of a fleet of 50; and encoding all of them, for a beat to
        // one member, a first contact's or a change's again, encoded 49 for 7.)
        std::vector<const Known*> relayed;
        for (const auto& [o, k] : core_.store.known()) {
            if (o != core_.own.origin() && core_.store.alive(k, now, core_.dead_after())) relayed.push_back(&k);
        }
        Beat longest = header;
        longest.echo = longest.held_ms = UINT64_MAX;
        size_t used = beat_message(0, longest, {}, budget).size() + beat_record_bytes(origins.front());
        size_t taken = 0;
        for (; taken < relayed.size(); ++taken) {
            const Known& k = *relayed[(relay_from_ + taken) % relayed.size()];
            encode_report(k.state, k.state.heartbeat, now > k.last_heard_ms ? now - k.last_heard_ms : 0, false,
                          origins);
            used += beat_record_bytes(origins.back());
            if (used > budget) {
                origins.pop_back();
                break;
            }
        }
        if (!relayed.empty()) relay_from_ = (relay_from_ + taken) % relayed.size();
        for (const SocketAddress& m : to) {
            auto st = core_.peer_status.find(m);
            if (st == core_.peer_status.end()) continue;
            if (auto link = core_.beat_links.find(st->second.origin); link != core_.beat_links.end())
                echo_to[m] = Echo{link->second.last_seq, now_mono - link->second.last_mono_ms};
        }
    }
    for (const SocketAddress& m : to) {
        const Echo echo = echo_to[m];
        header.echo = echo.seq;
        header.held_ms = echo.seq ? echo.held_ms : 0;
        MemberBeats& beats = member_beats_[m];
        beats.echo_sent = header.echo;
        uint16_t id = static_cast<uint16_t>(seq);
        std::vector<uint8_t> wire = beat_message(id, header, origins, budget);
        tsig::sign(wire, *key, "", false, static_cast<uint64_t>(std::time(nullptr)));
        if (!core_.datagrams->send(s_.membership.source_for(m.address), m, wire)) {
            core_.counters.beats_unsent.fetch_add(1);
            continue;
        }
        core_.counters.beats_sent.fetch_add(1);
        auto& sent = beats.sent;
        if (!sent.empty() && sent.back().seq == seq) {
            if (again == Again::unheard) sent.back().at_ms = now_mono;  // the echo will time this one
            if (again == Again::maybe_heard) sent.back().again = true;  // its echo times no single trip
            continue;
        }
        sent.push_back(SentBeat{seq, now_mono, false});
        while (sent.size() > kBeatsRemembered) sent.pop_front();
    }
    return seq;
}

// This instance's own change: a beat now, sent again every kChangeResendMs to each member that has not
// acknowledged it (its beat echoes this one or a later one, or it pulled from us since), until all have or
// the next round's beat goes out.
void Beats::announce_change() {
    change_.seq = send_all();
    change_.at_ms = core_.now();
    change_.unacked = s_.membership.members();
    const uint64_t interval = static_cast<uint64_t>(core_.config.peers->sync_interval.count());
    change_.resends_left = static_cast<int>(std::max<uint64_t>(1, interval / kChangeResendMs) - 1);
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<Beats*>(t->data)->resend_change(); }, kChangeResendMs,
        kChangeResendMs);
}

void Beats::resend_change() {
    if (change_.resends_left-- <= 0 || change_.seq != seq_) {  // done, or a newer beat went out
        uv_timer_stop(&timer_);
        return;
    }
    {
        MutexLock lock(core_.mu);
        auto echoed = [this](const SocketAddress& m) {
            auto it = member_beats_.find(m);
            return it == member_beats_.end() ? uint64_t{0} : it->second.echoed;
        };
        change_.unacked = still_unacked(change_.unacked, change_.seq, change_.at_ms, echoed, core_.pulled_at);
    }
    if (change_.unacked.empty()) {
        uv_timer_stop(&timer_);
        return;
    }
    core_.counters.beats_resent.fetch_add(change_.unacked.size());
    send(change_.seq, change_.unacked);
}

// The datagrams the UDP threads handed over: at most kBeatsPerWake at a time (the loop comes back for the rest).
std::vector<SocketAddress> Beats::still_unacked(const std::vector<SocketAddress>& unacked, uint64_t seq, uint64_t at_ms,
                                                const std::function<uint64_t(const SocketAddress&)>& echoed,
                                                const std::map<Address, uint64_t>& pulled_at) {
    std::vector<SocketAddress> still;
    for (const SocketAddress& m : unacked) {
        auto pulled = pulled_at.find(m.address);
        bool acked = echoed(m) >= seq || (pulled != pulled_at.end() && pulled->second >= at_ms);
        if (!acked) still.push_back(m);
    }
    return still;
}

void Beats::read() {
    std::array<uint8_t, sizeof(sockaddr_storage) + 4096> buf;
    for (int i = 0; i < kBeatsPerWake; ++i) {
        ssize_t n = ::recv(in_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
        if (n < 0) return;
        if (static_cast<size_t>(n) <= sizeof(sockaddr_storage)) continue;
        sockaddr_storage from{};
        std::memcpy(&from, buf.data(), sizeof from);
        SocketAddress sender;
        if (!SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&from), sender)) continue;
        on_beat(buf.data() + sizeof from, static_cast<size_t>(n) - sizeof from, sender);
    }
}

void Beats::on_beat(const uint8_t* msg, size_t len, const SocketAddress& sender) {
    auto key = core_.current_key();
    if (!key) return;
    // No MAC is remembered (first_use): a beat sent again is older than the last one from its origin by its
    // number and is ignored below, and its heartbeats cannot move anything backwards.
    std::string mac;
    Service::Auth a = Serving::verify(*key, msg, len, static_cast<uint64_t>(std::time(nullptr)), &mac);
    if (a != Service::Auth::ok) {
        s_.serving.reject(a, "heartbeat", sender.address.str());
        return;
    }
    Beat beat;
    std::string error;
    if (!parse_beat(msg, len, beat, error)) {
        core_.counters.beats_rejected.fetch_add(1);
        uint64_t left_out = 0;
        if (core_.report_log.allow("beat " + sender.address.str(), core_.now(), &left_out)) {
            spdlog::warn("sync: rejected a heartbeat from {}: {}{}", sender.address.str(), printable(error),
                         left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
        }
        return;
    }
    core_.counters.beats_received.fetch_add(1);
    {
        // A beat of our own origin: ours come back (a member that is this instance), or another glbd runs as
        // this one, which its own record tells (another life, or a version we never had).
        MutexLock lock(core_.mu);
        if (beat.from == core_.own.origin()) {
            for (const auto& r : beat.reports) {
                // (its address: a beat leaves from any port)
                if (r.state.origin() == beat.from && !core_.may_be_ours(r.state)) core_.conflict(sender.address.str());
            }
            return;
        }
    }
    bool fresh = false;
    std::vector<SocketAddress> senders = note(beat, sender, fresh);  // a repeat's echo still times a trip
    if (!fresh) return;
    // First contact, a round sooner than the next beat: a member that has heard none of our beats (it started
    // after our last one) gets our last one again now; one whose beats ours have not echoed yet gets it again
    // with the echo. Each happens about once per life of either side.
    for (const SocketAddress& m : senders) {
        if (seq_ == 0) break;
        if (beat.echo == 0) {
            send(seq_, {m}, Again::unheard);
        } else if (member_beats_[m].echo_sent == 0) {
            send(seq_, {m}, Again::heard);
        }
    }
    News news = merge(beat);
    if (senders.empty()) {  // an instance we do not pull (yet): pull where it says it is, once a minute at most
        for (const SocketAddress& to : s_.membership.first_contact(beat))
            s_.pulls.exchange(to, false), senders.push_back(to);
    }
    if (senders.empty()) senders = s_.membership.members();  // a member behind NAT or a wildcard listener: ask them all
    // News of an origin we do not know yet (or of its new life) that the sender only relays waits two rounds
    // (take_relayed_news): at a start, the pulls from the origins themselves bring it by then, and a fresh
    // node does not ask every relayer for everything at once. So does a newer version of an origin whose own
    // beats we hear: they bring it, and a pull from it follows (at a fleet's start, when versions move everywhere,
    // pulling from every relayer as well was every member pulling every member each round: 100 servers on two
    // cores made 330,814 pulls, now 95,243). A newer version of an origin we do not hear directly is pulled at once,
    // with everything the sender relays: around a lossy or cut link, that is how a change arrives.
    if (!senders.empty()) {
        for (auto& [origin, held] : news.relayed_later) s_.pulls.note_relayed(origin, held, senders.front());
    }
    if (!news.relayed.empty()) {
        for (const SocketAddress& m : senders) s_.pulls.want_relay(m);
        news.direct.merge(news.relayed);
    }
    if (news.direct.empty()) return;
    for (const SocketAddress& m : senders) s_.pulls.want_pull(m, news.direct);
}

// The link from the beat's sender: loss from the gaps in its numbers, within the life its own record names.
// Only a fresh beat is taken further; a replay is counted (glbd_sync_rejected_total{reason="replay"}).
Core::BeatLink::Seen Beats::count(const Beat& beat) {
    auto& beat_links = core_.beat_links;
    auto it = beat_links.find(beat.from);
    if (it == beat_links.end() && beat_links.size() >= ReportLimits::kMaxOrigins) {
        // As many senders as origins may be known: the one silent longest makes room.
        beat_links.erase(std::min_element(beat_links.begin(), beat_links.end(), [](const auto& a, const auto& b) {
            return a.second.last_mono_ms < b.second.last_mono_ms;
        }));
    }
    Core::BeatLink& link = it != beat_links.end() ? it->second : beat_links[beat.from];
    uint64_t life = 0;
    for (const auto& r : beat.reports) {
        if (r.state.origin() == beat.from) life = r.state.incarnation;
    }
    const auto seen = link.count(beat.seq, core_.mono(), life);
    if (seen == Core::BeatLink::Seen::replay) core_.counters.rejected_replay.fetch_add(1);
    return seen;
}

// Which members sent it (the one whose pulls answered as its origin, else those at the sender's address),
// with the link's figures (`fresh`: count_beat's) and, from the echo of one of ours, a round-trip sample.
std::vector<SocketAddress> Beats::note(const Beat& beat, const SocketAddress& sender, bool& fresh) {
    const uint64_t now_mono = core_.mono();
    std::vector<SocketAddress> senders;
    const std::vector<SocketAddress>& members = s_.membership.members();
    MutexLock lock(core_.mu);
    const auto seen = count(beat);
    fresh = seen == Core::BeatLink::Seen::fresh;
    if (seen == Core::BeatLink::Seen::replay) return senders;  // nothing from it: not heard, no echo timed
    for (const SocketAddress& m : members) {
        auto st = core_.peer_status.find(m);
        if (st != core_.peer_status.end() && st->second.origin == beat.from) senders.push_back(m);
    }
    if (senders.empty()) {
        for (const SocketAddress& m : members) {
            if (m.address == sender.address) senders.push_back(m);
        }
    }
    for (const SocketAddress& m : senders) {
        PeerStatus& st = core_.peer_status[m];
        st.address = m.str();
        if (st.origin.empty() && senders.size() == 1) st.origin = printable(beat.from);
        if (fresh) {  // only a new beat says the sender is alive now (one sent again may have waited)
            st.last_beat_ms = core_.now();
            core_.learnt.heard(m, st.last_beat_ms);
        }
        if (!beat.echo) continue;
        MemberBeats& beats = member_beats_[m];
        beats.echoed = std::max(beats.echoed, beat.echo);
        for (const SentBeat& b : beats.sent) {
            if (b.seq != beat.echo || b.again || now_mono < b.at_ms + beat.held_ms) continue;
            auto sample = static_cast<double>(now_mono - b.at_ms - beat.held_ms);
            st.rtt_ms = st.rtt_samples++ == 0 ? sample : st.rtt_ms + (sample - st.rtt_ms) / 8;
        }
    }
    return senders;
}

// Whether `origin`'s own beats reach us: one within the last two rounds.
bool Beats::heard_lately(const std::string& origin) const {
    auto link = core_.beat_links.find(origin);
    const uint64_t interval = static_cast<uint64_t>(core_.config.peers->sync_interval.count());
    return link != core_.beat_links.end() && link->second.last_mono_ms + 2 * interval >= core_.mono();
}

// Liveness and news: the sender's own record and those it relays, checked like any report, moving
// heartbeats. Returns the versions it showed that we lack (origin -> version and life), by kind.
Beats::News Beats::merge(Beat& beat) {
    News news;
    MutexLock lock(core_.mu);
    Store& store = core_.store;
    uint64_t now = core_.now();
    for (auto& r : beat.reports) {
        CheckResult checked = check_report(r.state, now);
        if (!checked.error.empty()) {
            core_.counters.rejected_reports.fetch_add(1);
            continue;
        }
        const std::string origin = r.state.origin();
        if (origin == core_.own.origin()) {
            core_.note_own_held(beat.from, r.state);
            core_.refute(r.state, printable(beat.from));
            continue;
        }
        if (!store.merge_heartbeat(r.state, origin == beat.from ? 0 : r.age_ms, now, nullptr)) continue;
        Held shown{r.state.version, r.state.incarnation};
        if (origin == beat.from) {
            news.direct[origin] = shown;
        } else if (auto k = store.known().find(origin); k != store.known().end() &&
                                                        k->second.state.incarnation == shown.incarnation &&
                                                        !heard_lately(origin)) {
            news.relayed[origin] = shown;
        } else {
            news.relayed_later[origin] = shown;
        }
    }
    return news;
}

}  // namespace glbd::sync
