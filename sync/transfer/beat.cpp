// Heartbeats over UDP (sync thread): every syncInterval, and again soon after this instance's own change to the
// members that have not acknowledged it, a signed NOTIFY to every member carrying this instance's version and heartbeat
// and those it relays (codec.hpp, `Beat`); the peers' beats, handed over by the DNS server's UDP threads, move
// liveness, show news (a pull follows at once) and measure each link's loss and round trip. Nothing answers a beat:
// each side's next beat echoes the last one it received, which is the acknowledgement and the round-trip sample.
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "resolver/base/clock.hpp"
#include "sync/service_impl.hpp"

namespace glbd::sync {

void Service::Impl::set_beat_source(int fd) { beat_in.reset(fd); }

void Service::Impl::start_beats() {
    // Numbered from the clock, so that a restarted instance's beats come after its last life's.
    beat_seq = std::max(beat_seq, now_ms());
    uv_timer_init(&loop, &beat_timer);
    beat_timer.data = this;
    if (!beat_in) return;
    uv_poll_init(&loop, &beat_poll, beat_in.get());
    beat_poll.data = this;
    uv_poll_start(&beat_poll, UV_READABLE, [](uv_poll_t* p, int status, int) {
        if (status == 0) static_cast<Impl*>(p->data)->read_beats();
    });
}

void Service::Impl::close_beat_sockets() { beat_out.clear(); }

// A socket to send beats from `source` (none: the kernel's choice for the family); -1 when none can be made.
int Service::Impl::beat_socket(const std::optional<Address>& source, int family) {
    auto key = std::make_pair(source, family);
    if (auto it = beat_out.find(key); it != beat_out.end()) return it->second.get();
    Fd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return -1;
    ::shutdown(fd.get(), SHUT_RD);  // nothing answers a beat
    if (source) {
        sockaddr_storage ss{};
        socklen_t len = SocketAddress{*source, 0}.to_sockaddr(ss);
        if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
            uint64_t left_out = 0;
            if (report_log.allow("bind " + source->str(), now_ms(), &left_out)) {
                spdlog::warn("sync: cannot send heartbeats from {}: {}; the kernel picks the source", source->str(),
                             std::strerror(errno));
            }
        }
    }
    return beat_out.emplace(key, std::move(fd)).first->second.get();
}

// One beat to every member: the same sequence number for all, each with its own echo. Returns its number.
uint64_t Service::Impl::send_beats() { return send_beat(++beat_seq, members); }

// Beat `seq` to `to`: a new one, or one sent again (then it keeps its number, so that a receiver that has it
// ignores it and one that lost it counts no loss).
uint64_t Service::Impl::send_beat(uint64_t seq, const std::vector<SocketAddress>& to, Again again) {
    if (to.empty() || closing) return seq;
    auto key = current_key();
    if (!key) return seq;
    const uint64_t now_mono = steady_ms();
    Beat header;
    header.seq = seq;
    std::vector<std::vector<std::string>> origins;
    struct Echo {
        uint64_t seq = 0, held_ms = 0;
    };
    std::map<SocketAddress, Echo> echo_to;  // the last beat each member's origin sent us, and how long ago
    {
        MutexLock lock(mu);
        header.from = own.origin();
        header.reach = own.reach;
        uint64_t now = now_ms();
        encode_report(own, now, 0, false, origins);
        // The others it relays, alive ones only (a dead one's age tells nobody anything), starting at a
        // different one each beat so that every origin travels when not all fit.
        std::vector<const Known*> relayed;
        for (const auto& [o, k] : store.known()) {
            if (o != own.origin() && store.alive(k, now, dead_after())) relayed.push_back(&k);
        }
        for (size_t i = 0; i < relayed.size(); ++i) {
            const Known& k = *relayed[(i + seq) % relayed.size()];
            encode_report(k.state, k.state.heartbeat, now > k.last_heard_ms ? now - k.last_heard_ms : 0, false,
                          origins);
        }
        for (const SocketAddress& m : to) {
            auto st = peer_status.find(m);
            if (st == peer_status.end()) continue;
            if (auto link = beat_links.find(st->second.origin); link != beat_links.end())
                echo_to[m] = Echo{link->second.last_seq, now_mono - link->second.last_mono_ms};
        }
    }
    for (const SocketAddress& m : to) {
        const Echo echo = echo_to[m];
        header.echo = echo.seq;
        header.held_ms = echo.seq ? echo.held_ms : 0;
        MemberBeats& beats = member_beats[m];
        beats.echo_sent = header.echo;
        uint16_t id = static_cast<uint16_t>(seq);
        std::vector<uint8_t> wire = beat_message(id, header, origins, kMaxBeatBytes - kTsigRoom - key->name.size());
        tsig::sign(wire, *key, "", false, static_cast<uint64_t>(std::time(nullptr)));
        int fd = beat_socket(source_for(m.address), m.address.family == 4 ? AF_INET : AF_INET6);
        sockaddr_storage ss{};
        socklen_t len = m.to_sockaddr(ss);
        if (fd < 0 || ::sendto(fd, wire.data(), wire.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&ss), len) < 0) {
            counters.beats_unsent.fetch_add(1);
            continue;
        }
        counters.beats_sent.fetch_add(1);
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
void Service::Impl::announce_by_beats() {
    change.seq = send_beats();
    change.at_ms = now_ms();
    change.unacked = members;
    const uint64_t interval = static_cast<uint64_t>(config.peers->sync_interval.count());
    change.resends_left = static_cast<int>(std::max<uint64_t>(1, interval / kChangeResendMs) - 1);
    uv_timer_start(
        &beat_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->resend_change(); }, kChangeResendMs,
        kChangeResendMs);
}

void Service::Impl::resend_change() {
    if (change.resends_left-- <= 0 || change.seq != beat_seq) {  // done, or a newer beat went out
        uv_timer_stop(&beat_timer);
        return;
    }
    {
        MutexLock lock(mu);
        std::vector<SocketAddress> still;
        for (const SocketAddress& m : change.unacked) {
            auto pulled = pulled_at.find(m.address);
            bool acked =
                member_beats[m].echoed >= change.seq || (pulled != pulled_at.end() && pulled->second >= change.at_ms);
            if (!acked) still.push_back(m);
        }
        change.unacked = std::move(still);
    }
    if (change.unacked.empty()) {
        uv_timer_stop(&beat_timer);
        return;
    }
    counters.beats_resent.fetch_add(change.unacked.size());
    send_beat(change.seq, change.unacked);
}

// The datagrams the UDP threads handed over: at most kBeatsPerWake at a time (the loop comes back for the rest).
void Service::Impl::read_beats() {
    std::array<uint8_t, sizeof(sockaddr_storage) + 4096> buf;
    for (int i = 0; i < kBeatsPerWake; ++i) {
        ssize_t n = ::recv(beat_in.get(), buf.data(), buf.size(), MSG_DONTWAIT);
        if (n < 0) return;
        if (static_cast<size_t>(n) <= sizeof(sockaddr_storage)) continue;
        sockaddr_storage from{};
        std::memcpy(&from, buf.data(), sizeof from);
        SocketAddress sender;
        if (!SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&from), sender)) continue;
        on_beat(buf.data() + sizeof from, static_cast<size_t>(n) - sizeof from, sender);
    }
}

void Service::Impl::on_beat(const uint8_t* msg, size_t len, const SocketAddress& sender) {
    auto key = current_key();
    if (!key) return;
    // No MAC is remembered (first_use): a beat sent again is older than the last one from its origin by its
    // number and is ignored below, and its heartbeats cannot move anything backwards.
    std::string mac;
    Auth a = verify(*key, msg, len, static_cast<uint64_t>(std::time(nullptr)), &mac);
    if (a != Auth::ok) {
        reject(a, "heartbeat", sender.address.str());
        return;
    }
    Beat beat;
    std::string error;
    if (!parse_beat(msg, len, beat, error)) {
        counters.beats_rejected.fetch_add(1);
        uint64_t left_out = 0;
        if (report_log.allow("beat " + sender.address.str(), now_ms(), &left_out)) {
            spdlog::warn("sync: rejected a heartbeat from {}: {}{}", sender.address.str(), printable(error),
                         left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
        }
        return;
    }
    counters.beats_received.fetch_add(1);
    bool fresh = false;
    std::vector<SocketAddress> senders = note_beat(beat, sender, fresh);  // a repeat's echo still times a trip
    if (!fresh) return;
    // First contact, a round sooner than the next beat: a member that has heard none of our beats (it started
    // after our last one) gets our last one again now; one whose beats ours have not echoed yet gets it again
    // with the echo. Each happens about once per life of either side.
    for (const SocketAddress& m : senders) {
        if (beat_seq == 0) break;
        if (beat.echo == 0) {
            send_beat(beat_seq, {m}, Again::unheard);
        } else if (member_beats[m].echo_sent == 0) {
            send_beat(beat_seq, {m}, Again::heard);
        }
    }
    BeatNews news = merge_beat(beat);
    if (senders.empty()) {  // an instance we do not pull (yet): pull where it says it is, once a minute at most
        for (const SocketAddress& to : first_contact(beat)) exchange(to, false), senders.push_back(to);
    }
    if (senders.empty()) senders = members;  // a member behind NAT or a wildcard listener: ask them all
    // News of an origin we do not know yet (or of its new life) that the sender only relays waits two rounds
    // (take_relayed_news): at a start, the pulls from the origins themselves bring it by then, and a fresh
    // node does not ask every relayer for everything at once. A newer version of an origin we know is pulled
    // at once, with everything the sender relays: around a lossy or cut link, that is how a change arrives.
    for (auto& [origin, held] : news.relayed_new) {
        if (senders.empty() || (relayed_news.size() >= ReportLimits::kMaxOrigins && !relayed_news.count(origin)))
            continue;
        auto [it, added] = relayed_news.try_emplace(origin, RelayedNews{held, senders.front(), rounds});
        if (!added) it->second.held = held;
    }
    if (!news.relayed.empty()) {
        for (const SocketAddress& m : senders) want_relay.insert(m);
        news.direct.merge(news.relayed);
    }
    if (news.direct.empty()) return;
    for (const SocketAddress& m : senders) want_pull(m, news.direct);
}

// At a round: relayed news of an origin we do not know (or of its new life) that is still news after
// kRelayedNewsRounds rounds makes the member that relayed it due for a pull of everything it relays
// (want_relay); news that is no longer news is dropped.
void Service::Impl::take_relayed_news() {
    MutexLock lock(mu);
    for (auto it = relayed_news.begin(); it != relayed_news.end();) {
        const RelayedNews& n = it->second;
        if (!still_news(it->first, n.held)) {
            it = relayed_news.erase(it);
        } else if (rounds - n.round >= kRelayedNewsRounds) {
            if (std::find(members.begin(), members.end(), n.from) != members.end()) want_relay.insert(n.from);
            it = relayed_news.erase(it);
        } else {
            ++it;
        }
    }
}

bool Service::Impl::still_news(const std::string& origin, const Held& shown) const {
    auto k = store.known().find(origin);
    return k == store.known().end() || is_newer(shown, k->second.state);
}

// Whether a version a beat showed is ahead of what is held: a later life, or a newer version in the same one.
bool Service::Impl::is_newer(const Held& shown, const InstanceState& held) {
    return shown.incarnation > held.incarnation ||
           (shown.incarnation == held.incarnation && shown.version > held.version);
}

// The link from the beat's sender: loss from the gaps in its numbers. False for a beat that came late or
// twice (nothing more is taken from it).
bool Service::Impl::count_beat(const Beat& beat) {
    auto it = beat_links.find(beat.from);
    if (it == beat_links.end() && beat_links.size() >= ReportLimits::kMaxOrigins) {
        // As many senders as origins may be known: the one silent longest makes room.
        beat_links.erase(std::min_element(beat_links.begin(), beat_links.end(), [](const auto& a, const auto& b) {
            return a.second.last_mono_ms < b.second.last_mono_ms;
        }));
    }
    BeatLink& link = it != beat_links.end() ? it->second : beat_links[beat.from];
    if (beat.seq <= link.last_seq && beat.seq + kBeatsRemembered > link.last_seq) return false;
    if (link.last_seq && beat.seq > link.last_seq) {  // (a first beat counts no loss)
        uint64_t missed = std::min<uint64_t>(beat.seq - link.last_seq - 1, kBeatsRemembered);
        link.lost += missed;
        for (uint64_t k = 0; k < missed; ++k) link.loss += (1.0 - link.loss) / kLossWindow;
    }
    link.loss -= link.loss / kLossWindow;
    link.received++;
    link.last_seq = beat.seq;
    link.last_mono_ms = steady_ms();
    return true;
}

// Which members sent it (the one whose pulls answered as its origin, else those at the sender's address),
// with the link's figures (`fresh`: count_beat's) and, from the echo of one of ours, a round-trip sample.
std::vector<SocketAddress> Service::Impl::note_beat(const Beat& beat, const SocketAddress& sender, bool& fresh) {
    const uint64_t now_mono = steady_ms();
    std::vector<SocketAddress> senders;
    MutexLock lock(mu);
    fresh = count_beat(beat);
    for (const SocketAddress& m : members) {
        auto st = peer_status.find(m);
        if (st != peer_status.end() && st->second.origin == beat.from) senders.push_back(m);
    }
    if (senders.empty()) {
        for (const SocketAddress& m : members) {
            if (m.address == sender.address) senders.push_back(m);
        }
    }
    for (const SocketAddress& m : senders) {
        PeerStatus& st = peer_status[m];
        st.address = m.str();
        if (st.origin.empty() && senders.size() == 1) st.origin = printable(beat.from);
        st.last_beat_ms = now_ms();
        learnt.heard(m, st.last_beat_ms);
        if (!beat.echo) continue;
        MemberBeats& beats = member_beats[m];
        beats.echoed = std::max(beats.echoed, beat.echo);
        for (const SentBeat& b : beats.sent) {
            if (b.seq != beat.echo || b.again || now_mono < b.at_ms + beat.held_ms) continue;
            auto sample = static_cast<double>(now_mono - b.at_ms - beat.held_ms);
            st.rtt_ms = st.rtt_samples++ == 0 ? sample : st.rtt_ms + (sample - st.rtt_ms) / 8;
        }
    }
    return senders;
}

// Liveness and news: the sender's own record and those it relays, checked like any report, moving
// heartbeats. Returns the versions it showed that we lack (origin -> version and life), by kind.
Service::Impl::BeatNews Service::Impl::merge_beat(Beat& beat) {
    BeatNews news;
    MutexLock lock(mu);
    uint64_t now = now_ms();
    for (auto& r : beat.reports) {
        CheckResult checked = check_report(r.state, now);
        if (!checked.error.empty()) {
            counters.rejected_reports.fetch_add(1);
            continue;
        }
        const std::string origin = r.state.origin();
        if (origin == own.origin()) {
            note_own_held(beat.from, r.state);
            refute(r.state);
            continue;
        }
        if (!store.merge_heartbeat(r.state, origin == beat.from ? 0 : r.age_ms, now, nullptr)) continue;
        Held shown{r.state.version, r.state.incarnation};
        if (origin == beat.from) {
            news.direct[origin] = shown;
        } else if (auto k = store.known().find(origin);
                   k != store.known().end() && k->second.state.incarnation == shown.incarnation) {
            news.relayed[origin] = shown;
        } else {
            news.relayed_new[origin] = shown;
        }
    }
    return news;
}

}  // namespace glbd::sync
