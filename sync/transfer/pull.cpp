// The pulling side of sync (sync thread): one TCP exchange with a peer, a transfer of its `_glbd.` zone or
// a NOTIFY, and the merge of what it sent.
#include <spdlog/spdlog.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "conf/names.hpp"
#include "resolver/wire/query.hpp"
#include "sync/service_impl.hpp"

namespace glbd::sync {

namespace {

// Binds `tcp` (initialised for the family) to `source` with no port: the port is chosen at connect time
// with the 4-tuple (IP_BIND_ADDRESS_NO_PORT), so that bound exchanges do not use up the ephemeral ports.
int bind_source(uv_tcp_t* tcp, const Address& source) {
    uv_os_fd_t fd;
    if (int rc = uv_fileno(reinterpret_cast<uv_handle_t*>(tcp), &fd)) return rc;
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);  // an old kernel without it still binds
    sockaddr_storage ss{};
    source.to_sockaddr(0, ss);
    return uv_tcp_bind(tcp, reinterpret_cast<const sockaddr*>(&ss), 0);
}

constexpr double kSynRetransmitMs = 1000;  // Linux's first SYN retransmission (TCP_TIMEOUT_INIT)

// Whether a connection under way has opened, before the loop has said so: a loop that turns late (a busy
// CPU) runs the timer that would start a second attempt before it reads the first one's completion.
bool opened(uv_tcp_t* tcp) {
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(tcp), &fd) != 0) return false;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    return getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0;
}

// An exchange's handle closed: the exchange goes with its last.
void closed(uv_handle_t* h) {
    auto* e = static_cast<Service::Impl::Exchange*>(h->data);
    if (--e->open == 0) e->impl->exchanges.erase(e);
}

}  // namespace

std::optional<Address> Service::Impl::source_for(const Address& to) const {
    for (const SocketAddress& l : config.listen.dns) {
        const Address& a = l.address;
        if (a.family != to.family || a.is_loopback() != to.is_loopback() || a.is_unspecified()) continue;
        return a;
    }
    return std::nullopt;
}

void Service::Impl::want_pull(const SocketAddress& peer, const std::map<std::string, Held>& versions) {
    // While a round's lead pull is out, the others wait for it (pull_rest()): it brings what its member
    // relays, and a fresh node would otherwise fetch the same origins from their own members too.
    const bool lead_out = round_lead && in_flight.count({*round_lead, false});
    if (!lead_out && !in_flight.count({peer, false})) {
        exchange(peer, false);
        return;
    }
    Wanted& w = wanted[peer];
    if (versions.empty()) w.again = true;
    for (const auto& [origin, held] : versions) {
        if (w.versions.size() < ReportLimits::kMaxOrigins) w.versions[origin] = held;
    }
}

// Whether a pull of `peer` is still wanted (and forgets the wish): asked for again, or a version shown
// that is still newer than the store's.
bool Service::Impl::take_wanted(const SocketAddress& peer) {
    auto it = wanted.find(peer);
    if (it == wanted.end()) return false;
    Wanted w = std::move(it->second);
    wanted.erase(it);
    if (w.again) return true;
    MutexLock lock(mu);
    for (const auto& [origin, held] : w.versions) {
        if (still_news(origin, held)) return true;
    }
    return false;
}

void Service::Impl::exchange(const SocketAddress& peer, bool notify) {
    if (closing) return;
    if (in_flight.count({peer, notify})) {
        if (!notify) wanted[peer].again = true;
        return;
    }
    auto key = current_key();
    if (!key) return;  // before anything is registered: an exchange that never begins must not stay "in flight"
    in_flight.insert({peer, notify});
    // Default-initialised: the 64 KiB read buffer is left as it is (value-initialising zeroed it, a memset and
    // its page faults in every pull).
    auto owned = std::make_unique_for_overwrite<Exchange>();
    Exchange* x = owned.get();
    exchanges.emplace(x, std::move(owned));
    x->impl = this, x->peer = peer, x->notify = notify;
    x->decoder.skip_held([this](const InstanceState& s) {
        MutexLock lock(mu);
        auto it = store.known().find(s.origin());
        return it != store.known().end() && it->second.state.incarnation == s.incarnation &&
               it->second.state.version == s.version;
    });
    x->relay = !notify && (peer == round_lead || want_relay.count(peer));
    std::vector<uint8_t> wire =
        notify ? sync_request(true, 0, {}) : sync_request(false, last_generation[peer], held_versions(), x->relay);
    x->key = key;
    x->mac = tsig::sign(wire, *key, "", false, static_cast<uint64_t>(std::time(nullptr)));
    x->out = {static_cast<uint8_t>(wire.size() >> 8), static_cast<uint8_t>(wire.size())};
    x->out.insert(x->out.end(), wire.begin(), wire.end());
    (notify ? counters.notifies_sent : counters.pulls).fetch_add(1);
    if (x->relay) counters.relay_pulls.fetch_add(1);

    uv_timer_init(&loop, &x->timer);
    uv_timer_init(&loop, &x->hedge);
    x->timer.data = x->hedge.data = x->conn.data = x->spare_conn.data = x->write.data = x;
    auto timeout = std::max<uint64_t>(2000, static_cast<uint64_t>(config.peers->sync_interval.count()) * 2);
    uv_timer_start(
        &x->timer, [](uv_timer_t* t) { finish(static_cast<Exchange*>(t->data), "timeout"); }, timeout,
        timeout);  // reset by each message (uv_timer_again)
    x->began_ns = uv_hrtime();
    uv_timer_start(
        &x->hedge,
        [](uv_timer_t* t) {
            auto* e = static_cast<Exchange*>(t->data);
            if (e->done || e->stream || opened(&e->tcp)) return;
            ++e->open, e->spare_started = true;  // spare is a handle from here on
            e->spare_began_ns = uv_hrtime();
            {
                MutexLock lock(e->impl->mu);
                e->impl->peer_status[e->peer].second_connects++;
            }
            e->impl->connect(e, &e->spare, &e->spare_conn);
        },
        hedge_ms(peer), 0);
    connect(x, &x->tcp, &x->conn);
}

// A connection to open a second time after three times what it usually takes, at least 200 ms (a peer across
// the world answers a SYN in 300 ms) and at most 900 ms: Linux sends a lost SYN again after a second.
uint64_t Service::Impl::hedge_ms(const SocketAddress& peer) const {
    double usual = 0;
    {
        MutexLock lock(mu);
        if (auto it = peer_status.find(peer); it != peer_status.end()) usual = it->second.connect_ms;
    }
    return std::clamp<uint64_t>(static_cast<uint64_t>(3 * usual), 200, static_cast<uint64_t>(kSynRetransmitMs) - 100);
}

void Service::Impl::connect(Exchange* x, uv_tcp_t* tcp, uv_connect_t* conn) {
    // From our listen address, so that the peer knows which member a NOTIFY came from (and pulls that one
    // alone) and a firewall sees the address it was told about.
    const Address& ip = x->peer.address;
    std::optional<Address> source = source_for(ip);
    if (uv_tcp_init_ex(&loop, tcp, ip.family == 4 ? AF_INET : AF_INET6) != 0) {
        uv_tcp_init(&loop, tcp);  // no socket (out of descriptors?): connect tries again and says why
    } else if (source) {
        if (int rc = bind_source(tcp, *source); rc != 0) {
            uint64_t left_out = 0;
            if (report_log.allow("bind " + source->str(), now_ms(), &left_out)) {
                spdlog::warn("sync: cannot send from {}: {}; the kernel picks the source", source->str(),
                             uv_strerror(rc));
            }
        }
    }
    tcp->data = x;
    sockaddr_storage ss{};
    x->peer.to_sockaddr(ss);
    ++x->connecting;
    if (int rc = uv_tcp_connect(conn, tcp, reinterpret_cast<sockaddr*>(&ss), connected); rc != 0) {
        --x->connecting;
        if (x->connecting == 0 && !x->stream) finish(x, uv_strerror(rc));
    }
}

void Service::Impl::connected(uv_connect_t* c, int status) {
    auto* ex = static_cast<Exchange*>(c->data);
    --ex->connecting;
    if (ex->done || ex->stream) return;  // over, or the other attempt opened first (this one is being closed)
    if (status != 0) {
        if (ex->connecting == 0) finish(ex, uv_strerror(status));  // else the other attempt may still open
        return;
    }
    ex->stream = reinterpret_cast<uv_tcp_t*>(c->handle);
    if (!ex->notify) ++ex->impl->pulls_open, ex->impl->pull_heard_ms = steady_ms();  // until finish()
    uv_timer_stop(&ex->hedge);
    uv_tcp_t* other = ex->stream == &ex->tcp ? &ex->spare : &ex->tcp;
    if ((other == &ex->tcp || ex->spare_started) && !uv_is_closing(reinterpret_cast<uv_handle_t*>(other))) {
        uv_close(reinterpret_cast<uv_handle_t*>(other), closed);
    }
    // The time this attempt took, unless its SYN was sent again (Linux waits a second for that): a round
    // trip, not a loss.
    uint64_t began = ex->stream == &ex->spare ? ex->spare_began_ns : ex->began_ns;
    if (double took = static_cast<double>(uv_hrtime() - began) / 1e6; took < kSynRetransmitMs) {
        MutexLock lock(ex->impl->mu);
        PeerStatus& st = ex->impl->peer_status[ex->peer];
        st.connect_ms = st.connects++ == 0 ? took : st.connect_ms + (took - st.connect_ms) / 8;
    }
    uv_buf_t b = uv_buf_init(reinterpret_cast<char*>(ex->out.data()), static_cast<unsigned>(ex->out.size()));
    uv_write(&ex->write, reinterpret_cast<uv_stream_t*>(ex->stream), &b, 1, [](uv_write_t* w, int st) {
        auto* e = static_cast<Exchange*>(w->data);
        if (st != 0 && !e->done) finish(e, uv_strerror(st));
    });
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(ex->stream),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
            auto* e = static_cast<Exchange*>(h->data);
            buf->base = e->read_buffer.data();
            buf->len = e->read_buffer.size();
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
            auto* e = static_cast<Exchange*>(s->data);
            if (n > 0 && !e->done) {
                e->in.insert(e->in.end(), buf->base, buf->base + n);
                e->impl->on_data(e);
            } else if (n < 0 && !e->done) {
                finish(e, n == UV_EOF ? "connection closed before the end" : uv_strerror(static_cast<int>(n)));
            }
        });
}

// What we hold, as "have=" strings for an IXFR request: at most one TXT record's worth, the rest come as data.
std::vector<std::string> Service::Impl::held_versions() {
    std::vector<std::string> have;
    MutexLock lock(mu);
    size_t bytes = 0;
    for (const auto& [origin, k] : store.known()) {
        std::string v =
            "have=" + origin + "@" + std::to_string(k.state.version) + "/" + std::to_string(k.state.incarnation);
        if (v.size() > wire::kMaxCharString) continue;
        if ((bytes += v.size() + 1) > 60000) break;
        have.push_back(std::move(v));
    }
    return have;
}

// Each message as it arrives: verified (TSIG, chained), its records read, and every origin's report the
// records complete merged at once. What is held is one message and one report, however large the view.
void Service::Impl::on_data(Exchange* x) {
    while (!x->done && x->in.size() >= 2) {
        size_t len = static_cast<size_t>(x->in[0] << 8 | x->in[1]);
        if (x->in.size() < 2 + len) break;
        x->total += len;
        std::vector<uint8_t> msg(x->in.begin() + 2, x->in.begin() + 2 + static_cast<long>(len));
        x->in.erase(x->in.begin(), x->in.begin() + 2 + static_cast<long>(len));
        wire::Header head;
        if (!wire::read_header(msg.data(), msg.size(), head)) return finish(x, "malformed response");
        if (uint8_t rcode = head.rcode(); rcode != wire::rcode::NOERROR) {
            return finish(x, "peer answered " + wire::rcode_name(rcode) +
                                 (rcode == wire::rcode::NOTAUTH ? " (key mismatch?)" : ""));
        }
        std::string mac;
        auto st = tsig::verify(msg.data(), msg.size(), *x->key, x->mac, x->messages > 0,
                               static_cast<uint64_t>(std::time(nullptr)), &mac);
        if (st != tsig::Status::ok) return finish(x, "bad TSIG on the response");
        x->mac = mac;
        ++x->messages;
        if (x->notify) return finish(x, "");
        pull_heard_ms = steady_ms();
        uv_timer_again(&x->timer);  // the timeout is for a silent peer, not for a large view
        x->records.clear();
        if (!parse_transfer_answers(msg.data(), msg.size(), x->records, x->soas, x->serial))
            return finish(x, "malformed response");
        std::vector<Report> ready;
        for (size_t i = 0; i < x->records.size(); ++i) {
            if (!x->decoder.add(x->records[i], ready)) break;
        }
        x->records.clear();  // views into `msg`
        if (x->decoder.error().empty() && x->soas >= 2) x->decoder.finish(ready);
        accept(x, ready);
        if (!x->decoder.error().empty()) {
            if (x->decoder.over_limit()) counters.oversized.fetch_add(1);
            return finish(x, "malformed state: " + x->decoder.error());
        }
        if (x->soas >= 2) return complete(x);
    }
}

bool Service::Impl::in_our_zones(const std::string& host) const {
    std::string h = host.rfind("*.", 0) == 0 ? host.substr(2) : host;
    return std::any_of(config.zones.begin(), config.zones.end(),
                       [&](const conf::Zone& z) { return conf::is_subdomain(h, z.origin); });
}

// A peer's entry we can serve: in our zones, and at a zone apex with addresses only (a host name there would be
// answered as a CNAME beside the SOA and NS: conf::kApexCname).
bool Service::Impl::servable(const HostEntry& h) const {
    if (!in_our_zones(h.host)) return false;
    bool apex =
        std::any_of(config.zones.begin(), config.zones.end(), [&](const conf::Zone& z) { return z.origin == h.host; });
    return !apex || std::all_of(h.endpoints.begin(), h.endpoints.end(),
                                [](const EndpointState& ep) { return Address::is_ip(ep.target); });
}

// A peer holds this instance's origin from a life at least as new as ours (we restarted without
// stateDir, perhaps with the clock set back): begin a newer life at once, so that peers take it.
void Service::Impl::refute(const InstanceState& heard) {
    if (heard.incarnation < own.incarnation || (heard.incarnation == own.incarnation && heard.version <= own.version))
        return;
    spdlog::info("sync: peers hold this instance at incarnation {} version {}; taking incarnation {}",
                 heard.incarnation, heard.version, heard.incarnation + 1);
    own.incarnation = heard.incarnation + 1;
    own.version = 0;
    bump_own();
}

void Service::Impl::note_own_held(const std::string& peer, const InstanceState& ours) {
    if (peer.empty() || peer == own.origin() || ours.incarnation != own.incarnation) return;
    Held& h = own_held[peer];
    if (h.incarnation != ours.incarnation || h.version < ours.version) h = Held{ours.version, ours.incarnation};
    const auto& known = store.known();
    if (own_held.size() > known.size() + 16) {  // peers forgotten since
        std::erase_if(own_held, [&known](const auto& e) { return !known.contains(e.first); });
    }
}

// Merges the reports a transfer has completed so far (each checked whole first; a bad one is dropped, the
// others still count).
void Service::Impl::accept(Exchange* x, std::vector<Report>& reports) {
    if (reports.empty()) return;
    MutexLock lock(mu);
    uint64_t now = now_ms();
    for (auto& r : reports) {
        if (r.has_data || r.skipped) counters.reports_received.fetch_add(1);
        if (r.skipped) counters.reports_skipped.fetch_add(1);
        CheckResult checked = check_report(r.state, now);
        if (!checked.error.empty()) {
            counters.rejected_reports.fetch_add(1);
            uint64_t left_out = 0;
            if (report_log.allow(x->peer.str() + " " + r.state.origin(), now, &left_out)) {
                spdlog::warn("sync: rejected the report of {} from {}: {}{}", printable(r.state.origin()),
                             x->peer.str(), printable(checked.error),
                             left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
            }
            continue;
        }
        if (checked.dropped) {
            counters.rejected_hosts.fetch_add(checked.dropped);
            uint64_t left_out = 0;
            if (report_log.allow(x->peer.str() + " hosts " + r.state.origin(), now, &left_out)) {
                spdlog::warn("sync: left out {} host(s) or record(s) of {} from {}: {}{}", checked.dropped,
                             printable(r.state.origin()), x->peer.str(), printable(checked.dropped_why),
                             left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
            }
        }
        if (r.state.origin() == own.origin()) {
            note_own_held(x->decoder.from(), r.state);
            refute(r.state);
            continue;
        }
        // At most kMaxOrigins known: a new one takes the place of the one dead longest, never of a live one.
        std::string evicted;
        if (!store.make_room(r.state.origin(), ReportLimits::kMaxOrigins, now, dead_after(), &evicted)) {
            counters.rejected_reports.fetch_add(1);
            uint64_t left_out = 0;
            if (report_log.allow("full", now, &left_out)) {
                spdlog::warn("sync: not taking {} from {}: {} instances known already, none dead",
                             printable(r.state.origin()), x->peer.str(), ReportLimits::kMaxOrigins);
            }
            continue;
        }
        if (!evicted.empty()) {
            uint64_t left_out = 0;
            if (report_log.allow("evicted", now, &left_out)) {
                spdlog::info("sync: forgot {} (dead) to make room for {}{}", printable(evicted),
                             printable(r.state.origin()),
                             left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
            }
        }
        auto& hosts = r.state.hosts;
        size_t before = hosts.size();
        hosts.erase(std::remove_if(hosts.begin(), hosts.end(), [&](const HostEntry& h) { return !servable(h); }),
                    hosts.end());
        if (hosts.size() != before && warned.insert(r.state.origin() + "@" + std::to_string(r.state.version)).second) {
            spdlog::warn("sync: ignored {} host(s) of {} outside our zones (or at a zone apex with a host name)",
                         before - hosts.size(), r.state.origin());
        }
        if (!r.has_data) {
            accept_heartbeat(x, r, now);
            continue;
        }
        auto m = store.merge(r.state, r.age_ms, now);
        if (m.data_changed) {
            x->changed = true;
            spdlog::debug("sync: {} version {} from {}", r.state.origin(), r.state.version, x->peer.str());
        }
    }
    // Relayed news is not announced: each origin announces its own changes, and what travels around a cut
    // link goes with the next pull (one syncInterval).
    if (x->changed) request_save();
    reports.clear();
}

// A report without data: nothing new from this origin since our last pull, unless the peer holds a newer
// version than we do (learnt elsewhere, and we missed it): then the next pull asks for everything. An origin
// we do not know yet (or its new life) waits two rounds first, as a beat's news of it does
// (take_relayed_news): at a start, its own member's pull brings it by then, and every peer's relay not at once.
void Service::Impl::accept_heartbeat(Exchange* x, const Report& r, uint64_t now) {
    auto known = store.known().find(r.state.origin());
    bool new_to_us = known == store.known().end() || r.state.incarnation > known->second.state.incarnation;
    if (!store.merge_heartbeat(r.state, r.age_ms, now, nullptr)) return;
    if (!new_to_us) {
        x->need_full = true;
    } else if (relayed_news.size() < ReportLimits::kMaxOrigins || relayed_news.count(r.state.origin())) {
        Held shown{r.state.version, r.state.incarnation};
        auto [it, added] = relayed_news.try_emplace(r.state.origin(), RelayedNews{shown, x->peer, rounds});
        if (!added) it->second.held = shown;
    }
}

void Service::Impl::complete(Exchange* x) {
    const std::string& from = x->decoder.from();
    {
        MutexLock lock(mu);
        peer_status[x->peer].origin = printable(from);
        learnt.answered(x->peer, now_ms());  // a signed transfer from it: a member now, if learnt
        if (from == own.origin()) {
            learnt.erase(x->peer);
            self_addresses.insert(x->peer);
            members.erase(std::remove(members.begin(), members.end(), x->peer), members.end());
        }
    }
    // The serial a pull of everything ended at is where the next asks from; one of the peer's own origin only
    // ("relay=0") says nothing of the others' data, which may have changed before it without our taking it.
    if (x->need_full) {
        last_generation[x->peer] = 0;
    } else if (x->relay) {
        last_generation[x->peer] = x->serial;
    }
    if (x->need_full) {
        want_relay.insert(x->peer);
    } else if (x->relay) {
        want_relay.erase(x->peer);
    }
    finish(x, "");
}

void Service::Impl::finish(Exchange* x, const std::string& error) {
    if (x->done) return;
    x->done = true;
    Impl* impl = x->impl;
    if (!x->notify && x->stream) --impl->pulls_open;
    if (x->changed) {  // what a transfer merged counts, even when it was cut short afterwards
        impl->schedule_save();
        uv_async_send(&impl->wake);
        if (impl->on_change) impl->on_change();
    }
    impl->in_flight.erase({x->peer, x->notify});
    {
        MutexLock lock(impl->mu);
        PeerStatus& st = impl->peer_status[x->peer];
        st.address = x->peer.str();
        st.exchanges++;
        if (error.empty()) {
            if (!st.reachable) spdlog::info("sync: peer {} up", st.address);
            st.reachable = true;
            st.last_error.clear();
            st.last_ok_ms = now_ms();
        } else {
            if (st.reachable || st.failures == 0)
                spdlog::warn("sync: peer {} down: {} failed: {}", st.address, x->notify ? "notify" : "pull",
                             printable(error));
            st.reachable = false;
            st.failures++;
            st.last_error = printable(error);  // it may hold a peer's bytes (a decoder's error)
            if (!x->notify) impl->counters.pull_failures.fetch_add(1);
        }
    }
    // A NOTIFY came during the pull, or a beat showed news that it may not have brought.
    if (!x->notify && impl->take_wanted(x->peer) && error.empty()) impl->exchange(x->peer, false);
    if (!x->notify && x->peer == impl->round_lead) impl->pull_rest();  // what it brought, the others need not send
    uv_timer_stop(&x->timer);
    uv_timer_stop(&x->hedge);
    for (auto* h : {reinterpret_cast<uv_handle_t*>(&x->timer), reinterpret_cast<uv_handle_t*>(&x->hedge),
                    reinterpret_cast<uv_handle_t*>(&x->tcp)}) {
        if (!uv_is_closing(h)) uv_close(h, closed);
    }
    if (x->spare_started && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&x->spare))) {
        uv_close(reinterpret_cast<uv_handle_t*>(&x->spare), closed);
    }
}

}  // namespace glbd::sync
