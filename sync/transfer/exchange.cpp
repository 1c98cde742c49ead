// sync/transfer/exchange — one TCP exchange with a peer (sync thread): a transfer of its `_glbd.` zone or a
// NOTIFY, and the merge of what it sent, report by report as the messages come.
#include <spdlog/spdlog.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ctime>
#include <span>

#include "resolver/model/names.hpp"
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

}  // namespace

// Whether the peer's answer, or the connection's opening, waits unread. A loop that turns late (a busy CPU, a
// long callback) runs its timers before it reads its sockets, so what came while it was away would be taken
// for the peer's silence; then the timeout waits one more period, and the reading in this turn goes on.
bool Pulls::waiting_unread(Exchange* x) {
    if (!x->stream) return opened(&x->tcp) || (x->spare_started && opened(&x->spare));
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(x->stream), &fd) != 0) return false;
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;  // bytes, or the end (which the read then finishes)
}

void Pulls::closed(uv_handle_t* h) {
    auto* e = static_cast<Exchange*>(h->data);
    if (--e->open == 0) e->pulls->exchanges_.erase(e);
}

void Pulls::exchange(const SocketAddress& peer, bool notify) {
    if (core_.closing || !core_.running) return;  // stopping, or not started (a test's, a fuzzer's service)
    if (in_flight_.count({peer, notify})) {
        if (!notify) wanted_[peer].again = true;
        return;
    }
    auto key = core_.current_key();
    if (!key) return;  // before anything is registered: an exchange that never begins must not stay "in flight"
    in_flight_.insert({peer, notify});
    // Default-initialised: the 64 KiB read buffer is left as it is (value-initialising zeroed it, a memset and
    // its page faults in every pull).
    auto owned = std::make_unique_for_overwrite<Exchange>();
    Exchange* x = owned.get();
    exchanges_.emplace(x, std::move(owned));
    x->pulls = this, x->peer = peer, x->notify = notify;
    x->decoder.skip_held([this](const InstanceState& s) {
        MutexLock lock(core_.mu);
        auto it = core_.store.known().find(s.origin());
        return it != core_.store.known().end() && it->second.state.incarnation == s.incarnation &&
               it->second.state.version == s.version;
    });
    x->decoder.share_names([this](const InstanceState& s) {
        MutexLock lock(core_.mu);
        return core_.store.names_for(s.origin());
    });
    x->relay = !notify && (peer == round_lead_ || want_relay_.count(peer));
    std::vector<uint8_t> wire =
        notify ? sync_request(true, 0, {}) : sync_request(false, last_generation_[peer], held_versions(), x->relay);
    x->key = key;
    x->mac = tsig::sign(wire, *key, "", false, static_cast<uint64_t>(std::time(nullptr)));
    x->out = {static_cast<uint8_t>(wire.size() >> 8), static_cast<uint8_t>(wire.size())};
    x->out.insert(x->out.end(), wire.begin(), wire.end());
    (notify ? core_.counters.notifies_sent : core_.counters.pulls).fetch_add(1);
    if (x->relay) core_.counters.relay_pulls.fetch_add(1);

    uv_timer_init(&core_.loop, &x->timer);
    uv_timer_init(&core_.loop, &x->hedge);
    x->timer.data = x->hedge.data = x->conn.data = x->spare_conn.data = x->write.data = x;
    auto timeout = std::max<uint64_t>(2000, static_cast<uint64_t>(core_.config.peers->sync_interval.count()) * 2);
    uv_timer_start(
        &x->timer,
        [](uv_timer_t* t) {
            auto* e = static_cast<Exchange*>(t->data);
            if (!waiting_unread(e)) finish(e, "timeout");
        },
        timeout, timeout);  // reset by each message (uv_timer_again); again after a turn that found bytes waiting
    x->began_ns = uv_hrtime();
    uv_timer_start(
        &x->hedge,
        [](uv_timer_t* t) {
            auto* e = static_cast<Exchange*>(t->data);
            if (e->done || e->stream || opened(&e->tcp)) return;
            ++e->open, e->spare_started = true;  // spare is a handle from here on
            e->spare_began_ns = uv_hrtime();
            {
                MutexLock lock(e->pulls->core_.mu);
                e->pulls->core_.peer_status[e->peer].second_connects++;
            }
            e->pulls->connect(e, &e->spare, &e->spare_conn);
        },
        hedge_ms(peer), 0);
    connect(x, &x->tcp, &x->conn);
}

uint64_t Pulls::hedge_ms(double connect_ms) {
    return std::clamp<uint64_t>(static_cast<uint64_t>(3 * connect_ms), 200,
                                static_cast<uint64_t>(kSynRetransmitMs) - 100);
}

uint64_t Pulls::hedge_ms(const SocketAddress& peer) const {
    double usual = 0;
    {
        MutexLock lock(core_.mu);
        if (auto it = core_.peer_status.find(peer); it != core_.peer_status.end()) usual = it->second.connect_ms;
    }
    return hedge_ms(usual);
}

void Pulls::connect(Exchange* x, uv_tcp_t* tcp, uv_connect_t* conn) {
    // From our listen address, so that the peer knows which member a NOTIFY came from (and pulls that one
    // alone) and a firewall sees the address it was told about.
    const Address& ip = x->peer.address;
    std::optional<Address> source = s_.membership.source_for(ip);
    if (uv_tcp_init_ex(&core_.loop, tcp, ip.family == 4 ? AF_INET : AF_INET6) != 0) {
        uv_tcp_init(&core_.loop, tcp);  // no socket (out of descriptors?): connect tries again and says why
    } else if (source) {
        if (int rc = bind_source(tcp, *source); rc != 0) {
            uint64_t left_out = 0;
            if (core_.report_log.allow("bind " + source->str(), core_.now(), &left_out)) {
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

void Pulls::connected(uv_connect_t* c, int status) {
    auto* ex = static_cast<Exchange*>(c->data);
    --ex->connecting;
    if (ex->done || ex->stream) return;  // over, or the other attempt opened first (this one is being closed)
    if (status != 0) {
        if (ex->connecting == 0) finish(ex, uv_strerror(status));  // else the other attempt may still open
        return;
    }
    ex->stream = reinterpret_cast<uv_tcp_t*>(c->handle);
    if (!ex->notify) ++ex->pulls->pulls_open_, ex->pulls->pull_heard_ms_ = ex->pulls->core_.mono();  // until finish()
    uv_timer_stop(&ex->hedge);
    uv_tcp_t* other = ex->stream == &ex->tcp ? &ex->spare : &ex->tcp;
    if ((other == &ex->tcp || ex->spare_started) && !uv_is_closing(reinterpret_cast<uv_handle_t*>(other))) {
        uv_close(reinterpret_cast<uv_handle_t*>(other), closed);
    }
    // The time this attempt took, unless its SYN was sent again (Linux waits a second for that): a round
    // trip, not a loss.
    uint64_t began = ex->stream == &ex->spare ? ex->spare_began_ns : ex->began_ns;
    if (double took = static_cast<double>(uv_hrtime() - began) / 1e6; took < kSynRetransmitMs) {
        MutexLock lock(ex->pulls->core_.mu);
        PeerStatus& st = ex->pulls->core_.peer_status[ex->peer];
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
            std::vector<char>& shared = static_cast<Exchange*>(h->data)->pulls->read_buffer_;
            *buf = uv_buf_init(shared.data(), static_cast<unsigned>(shared.size()));
        },
        on_read);
}

// A read into the shared buffer: its whole messages read where they lie, a message's start kept in the
// exchange's `in` (and read from there once the rest came), so that the buffer is free for the next read.
void Pulls::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
    auto* e = static_cast<Exchange*>(s->data);
    if (e->done || n == 0) return;
    if (n < 0) {
        finish(e, n == UV_EOF ? "connection closed before the end" : uv_strerror(static_cast<int>(n)));
        return;
    }
    const auto* got = reinterpret_cast<const uint8_t*>(buf->base);
    if (e->in.empty()) {
        size_t took = e->pulls->on_data(e, {got, static_cast<size_t>(n)});
        if (!e->done) e->in.assign(got + took, got + n);
    } else {
        e->in.insert(e->in.end(), got, got + n);
        size_t took = e->pulls->on_data(e, e->in);
        if (!e->done) e->in.erase(e->in.begin(), e->in.begin() + static_cast<long>(took));
    }
}

// What we hold, as "have=" strings for an IXFR request: at most one TXT record's worth, the rest come as data.
// Each string is written once into its own room (every pull asks with one per origin held).
std::vector<std::string> Pulls::held_versions() {
    std::vector<std::string> have;
    MutexLock lock(core_.mu);
    have.reserve(core_.store.known().size());
    size_t bytes = 0;
    for (const auto& [origin, k] : core_.store.known()) {
        constexpr size_t kDigits = 20;    // of a 64-bit number at most
        char numbers[2 * (1 + kDigits)];  // "@version/incarnation"
        char* end = numbers;
        *end++ = '@';
        end = std::to_chars(end, end + kDigits, k.state.version).ptr;
        *end++ = '/';
        end = std::to_chars(end, end + kDigits, k.state.incarnation).ptr;
        const size_t size = kHave.size() + origin.size() + static_cast<size_t>(end - numbers);
        if (size > wire::kMaxCharString) continue;
        if ((bytes += size + 1) > 60000) break;
        std::string& v = have.emplace_back();
        v.reserve(size);
        v.append(kHave).append(origin).append(numbers, end);
    }
    return have;
}

size_t Pulls::on_data(Exchange* x, std::span<const uint8_t> data) {
    size_t read = 0;  // bytes of `data` whose messages are done
    while (!x->done && data.size() - read >= 2) {
        const uint8_t* framed = data.data() + read;
        size_t len = static_cast<size_t>(framed[0] << 8 | framed[1]);
        if (data.size() - read < 2 + len) break;
        read += 2 + len;
        on_message(x, {framed + 2, len});
    }
    return read;
}

// Each message as it arrives: verified (TSIG, chained), its records read, and every origin's report the
// records complete merged at once. What is held is one message and one report, however large the view. The
// message is read where it came (views into it, not copies).
void Pulls::on_message(Exchange* x, std::span<const uint8_t> msg) {
    x->total += msg.size();
    wire::Header head;
    if (!wire::read_header(msg.data(), msg.size(), head)) return finish(x, "malformed response");
    if (uint8_t rcode = head.rcode(); rcode == wire::rcode::NOTAUTH) {
        x->key_mismatch = true;
        return finish(x,
                      "key mismatch: the peer refuses our signature (NOTAUTH): its peers.key (name or secret) "
                      "is not ours");
    } else if (rcode != wire::rcode::NOERROR) {
        return finish(x, "peer answered " + wire::rcode_name(rcode));
    }
    std::string mac;
    auto st = tsig::verify(msg.data(), msg.size(), *x->key, x->mac, x->messages > 0,
                           static_cast<uint64_t>(std::time(nullptr)), &mac);
    if (st == tsig::Status::badsig || st == tsig::Status::badkey) {
        x->key_mismatch = true;
        return finish(x, "key mismatch: the peer's answer is not signed with our peers.key");
    }
    if (st != tsig::Status::ok) return finish(x, "bad TSIG on the response");
    x->mac = mac;
    ++x->messages;
    if (x->notify) return finish(x, "");
    pull_heard_ms_ = core_.mono();
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
        if (x->decoder.over_limit()) core_.counters.oversized.fetch_add(1);
        return finish(x, "malformed state: " + x->decoder.error());
    }
    if (x->soas >= 2) return complete(x);
}

// Merges the reports a transfer has completed so far (each checked whole first; a bad one is dropped, the
// others still count).
void Pulls::accept(Exchange* x, std::vector<Report>& reports) {
    if (reports.empty()) return;
    MutexLock lock(core_.mu);
    Store& store = core_.store;
    SyncCounters& counters = core_.counters;
    LogThrottle& report_log = core_.report_log;
    uint64_t now = core_.now();
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
        if (r.state.origin() == core_.own.origin()) {
            if (x->decoder.from() == r.state.origin() && !core_.may_be_ours(r.state)) x->other_self = true;
            core_.note_own_held(x->decoder.from(), r.state);
            core_.refute(r.state, x->peer.str());
            continue;
        }
        // At most kMaxOrigins known: a new one takes the place of the one dead longest, never of a live one.
        std::string evicted;
        if (!store.make_room(r.state.origin(), ReportLimits::kMaxOrigins, now, core_.dead_after(), &evicted)) {
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
        hosts.erase(std::remove_if(hosts.begin(), hosts.end(), [&](const HostEntry& h) { return !core_.servable(h); }),
                    hosts.end());
        if (hosts.size() != before &&
            core_.warned.insert(r.state.origin() + "@" + std::to_string(r.state.version)).second) {
            spdlog::warn("sync: ignored {} host(s) of {} outside our zones (or at a zone apex with a host name)",
                         before - hosts.size(), r.state.origin());
        }
        if (!r.has_data || (r.outside_only && !with_held_rest(r))) {  // (then the next pull asks for all)
            accept_heartbeat(x, r, now);
            continue;
        }
        store.share_names(r.state);
        auto m = store.merge(r.state, r.age_ms, now);
        if (m.data_changed) {
            x->changed = true;
            spdlog::debug("sync: {} version {} from {}", r.state.origin(), r.state.version, x->peer.str());
        }
    }
    // Relayed news is not announced: each origin announces its own changes, and what travels around a cut
    // link goes with the next pull (one syncInterval).
    if (x->changed) core_.request_save();
    reports.clear();
}

bool Pulls::with_held_rest(Report& r) {
    auto it = core_.store.known().find(r.state.origin());
    if (it == core_.store.known().end()) return false;
    const InstanceState& held = it->second.state;
    if (held.incarnation != r.state.incarnation || held.version < r.state.base_version ||
        held.version >= r.state.version)
        return false;
    InstanceState whole = held;  // (its hosts and records shared, copy on write)
    whole.outside = std::move(r.state.outside);
    whole.version = r.state.version, whole.heartbeat = r.state.heartbeat, whole.base_version = r.state.base_version;
    r.state = std::move(whole);
    r.outside_only = false;
    core_.counters.outside_parts.fetch_add(1);
    return true;
}

// A report without data: nothing new from this origin since our last pull, unless the peer holds a newer
// version than we do (learnt elsewhere, and we missed it): then the next pull asks for everything. An origin
// we do not know yet (or its new life) waits two rounds first, as a beat's news of it does
// (take_relayed_news): at a start, its own member's pull brings it by then, and every peer's relay not at once.
void Pulls::accept_heartbeat(Exchange* x, const Report& r, uint64_t now) {
    Store& store = core_.store;
    auto known = store.known().find(r.state.origin());
    bool new_to_us = known == store.known().end() || r.state.incarnation > known->second.state.incarnation;
    if (!store.merge_heartbeat(r.state, r.age_ms, now, nullptr)) return;
    if (!new_to_us) {
        x->need_full = true;
    } else {
        note_relayed(r.state.origin(), Held{r.state.version, r.state.incarnation}, x->peer);
    }
}

void Pulls::complete(Exchange* x) {
    const std::string& from = x->decoder.from();
    bool self = false;
    {
        MutexLock lock(core_.mu);
        core_.peer_status[x->peer].origin = printable(from);
        core_.learnt.answered(x->peer, core_.now());  // a signed transfer from it: a member now, if learnt
        if (from == core_.own.origin() && x->other_self) {
            core_.conflict(x->peer.str());  // another glbd under our name answered there: not us
        } else if (from == core_.own.origin()) {
            core_.learnt.erase(x->peer);
            core_.self_addresses.insert(x->peer);
            self = true;
        }
    }
    if (self) s_.membership.drop(x->peer);
    // The serial a pull of everything ended at is where the next asks from; one of the peer's own origin only
    // ("relay=0") says nothing of the others' data, which may have changed before it without our taking it.
    if (x->need_full) {
        last_generation_[x->peer] = 0;
    } else if (x->relay) {
        last_generation_[x->peer] = x->serial;
    }
    if (x->need_full) {
        want_relay_.insert(x->peer);
    } else if (x->relay) {
        want_relay_.erase(x->peer);
    }
    finish(x, "");
}

void Pulls::finish(Exchange* x, const std::string& error) {
    if (x->done) return;
    x->done = true;
    Pulls* pulls = x->pulls;
    Core& core = pulls->core_;
    if (!x->notify && x->stream) --pulls->pulls_open_;
    if (x->changed) {  // what a transfer merged counts, even when it was cut short afterwards
        pulls->s_.state_dir.schedule_save();
        uv_async_send(&core.wake);
        if (core.on_change) core.on_change();
    }
    pulls->in_flight_.erase({x->peer, x->notify});
    {
        MutexLock lock(core.mu);
        PeerStatus& st = core.peer_status[x->peer];
        st.address = x->peer.str();
        st.exchanges++;
        st.key_mismatch = x->key_mismatch;
        if (error.empty()) {
            if (!st.reachable) spdlog::info("sync: peer {} up", st.address);
            st.reachable = true;
            st.last_error.clear();
            st.last_ok_ms = core.now();
        } else {
            if (st.reachable || st.failures == 0)
                spdlog::warn("sync: peer {} down: {} failed: {}", st.address, x->notify ? "notify" : "pull",
                             printable(error));
            st.reachable = false;
            st.failures++;
            st.last_error = printable(error);  // it may hold a peer's bytes (a decoder's error)
            if (!x->notify) core.counters.pull_failures.fetch_add(1);
        }
    }
    // A NOTIFY came during the pull, or a beat showed news that it may not have brought.
    if (!x->notify && pulls->take_wanted(x->peer) && error.empty()) pulls->exchange(x->peer, false);
    if (!x->notify && x->peer == pulls->round_lead_) pulls->pull_rest();  // what it brought, the others need not send
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
