// The TCP thread of the DNS server: see tcp.hpp for the limits it keeps.
#include "server/net/tcp.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

#include "resolver/base/thread_name.hpp"
#include "resolver/explain.hpp"
#include "resolver/wire/query.hpp"

namespace glbd {

using net::bump;

bool net::question_is(const uint8_t* msg, size_t len, const std::string& name) {
    if (name.empty() || len < 12 + name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
        if (std::tolower(msg[12 + i]) != static_cast<uint8_t>(name[i])) return false;
    }
    return true;
}

void DnsServer::TcpWorker::start() {
    uv_loop_init(&loop);
    listeners.resize(fds.size());
    for (size_t i = 0; i < fds.size(); ++i) {
        uv_tcp_init(&loop, &listeners[i]);
        uv_tcp_open(&listeners[i], fds[i].release());  // libuv's from here: uv_close closes it
        listeners[i].data = this;
        int rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listeners[i]), 1024, [](uv_stream_t* s, int status) {
            if (status == 0) static_cast<TcpWorker*>(s->data)->accept(s);
        });
        if (rc != 0) throw std::runtime_error(std::string("cannot listen on TCP: ") + uv_strerror(rc));
    }
    uv_async_init(&loop, &wake, [](uv_async_t* a) {
        auto* worker = static_cast<TcpWorker*>(a->data);
        for (auto& l : worker->listeners) uv_close(reinterpret_cast<uv_handle_t*>(&l), nullptr);
        std::vector<Conn*> all;
        for (const auto& c : worker->conns) all.push_back(c.get());
        for (auto* c : all) worker->close(c);
        uv_close(reinterpret_cast<uv_handle_t*>(&worker->let_go), nullptr);
        uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
    });
    wake.data = this;
    uv_timer_init(&loop, &let_go);
    let_go.data = this;
    uv_timer_start(
        &let_go, [](uv_timer_t* t) { static_cast<TcpWorker*>(t->data)->reader.get(); }, kLetGoMs, kLetGoMs);
    thread = std::thread([this] {
        name_this_thread("glbd-tcp");
        uv_run(&loop, UV_RUN_DEFAULT);
    });
}

void DnsServer::TcpWorker::join() {
    thread.join();
    uv_loop_close(&loop);
}

DnsServer::TcpWorker::SourceKey DnsServer::TcpWorker::source_key(const Address& a) {
    SourceKey k{};
    k[0] = a.family;
    std::memcpy(k.data() + 1, a.bytes.data(), a.family == 4 ? 4 : 8);
    return k;
}

void DnsServer::TcpWorker::accept(uv_stream_t* listener) {
    Conn* c = conns.emplace_back(std::make_unique<Conn>()).get();  // freed by maybe_free()
    c->worker = this;
    uv_tcp_init(&loop, &c->handle);
    uv_timer_init(&loop, &c->idle);
    c->handle.data = c;
    c->idle.data = c;
    ++open;
    if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(&c->handle)) != 0) {
        close(c);
        return;
    }
    sockaddr_storage ss{};
    int len = sizeof ss;
    uv_tcp_getpeername(&c->handle, reinterpret_cast<sockaddr*>(&ss), &len);
    c->peer = net::client_address(ss);
    if (tap) {
        SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&ss), c->client);
        sockaddr_storage local{};
        int local_len = sizeof local;
        if (uv_tcp_getsockname(&c->handle, reinterpret_cast<sockaddr*>(&local), &local_len) == 0)
            SocketAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&local), c->local);
    }
    unsigned& from_source = per_source[source_key(c->peer)];
    if (from_source >= server.options_.tcp_max_per_source) {
        bump(counters.tcp_source_refused);
        close(c);
        return;
    }
    ++from_source;
    c->counted = true;
    c->trusted = is_trusted(source_key(c->peer));
    if (open > server.options_.tcp_max_connections) {
        if (evict_one(c)) {
            bump(counters.tcp_evicted);
        } else if (!c->trusted) {
            bump(counters.tcp_refused);
            close(c);
            return;
        }
    }
    bump(counters.tcp_connections);
    uv_tcp_nodelay(&c->handle, 1);
    touch(c);
    set_reading(c, true);
}

bool DnsServer::TcpWorker::is_trusted(const SourceKey& k) {
    auto it = trusted.find(k);
    if (it == trusted.end()) return false;
    if (uv_now(&loop) - it->second <= kTrustMs) return true;
    trusted.erase(it);
    return false;
}

void DnsServer::TcpWorker::trust(const Address& a) {
    uint64_t now = uv_now(&loop);
    if (trusted.size() >= kMaxTrusted && !trusted.count(source_key(a))) {
        std::erase_if(trusted, [&](const auto& t) { return now - t.second > kTrustMs; });
        if (trusted.size() >= kMaxTrusted) return;
    }
    trusted[source_key(a)] = now;
}

bool DnsServer::TcpWorker::evict_one(const Conn* keep) {
    // A trusted peer's connection is kept while its trust lasts (checked again now), kMaxTrustedKept of them.
    Conn* oldest = nullptr;
    size_t kept = 0;
    for (const auto& owned : conns) {
        Conn* c = owned.get();
        if (c == keep || c->closing) continue;
        if (c->trusted && is_trusted(source_key(c->peer)) && kept < kMaxTrustedKept) {
            ++kept;
            continue;
        }
        if (!oldest ||
            std::pair(c->answered_any, c->last_active) < std::pair(oldest->answered_any, oldest->last_active))
            oldest = c;
    }
    if (oldest) close(oldest);
    return oldest != nullptr;
}

void DnsServer::TcpWorker::touch(Conn* c) {
    c->last_active = uv_now(&loop);
    auto ms = static_cast<uint64_t>(server.options_.tcp_idle_timeout.count());
    uv_timer_start(
        &c->idle,
        [](uv_timer_t* t) {
            auto* conn = static_cast<Conn*>(t->data);
            bump(conn->worker->counters.tcp_idle_closed);
            conn->worker->close(conn);
        },
        ms, 0);
}

void DnsServer::TcpWorker::set_reading(Conn* c, bool on) {
    if (on == c->reading) return;
    c->reading = on;
    auto* stream = reinterpret_cast<uv_stream_t*>(&c->handle);
    if (!on) {
        uv_read_stop(stream);
        return;
    }
    uv_read_start(
        stream,
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
            auto* w = static_cast<Conn*>(h->data)->worker;
            *buf = uv_buf_init(reinterpret_cast<char*>(w->read_buf), sizeof w->read_buf);
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
            auto* conn = static_cast<Conn*>(s->data);
            if (n < 0) {
                conn->worker->close(conn);
            } else if (n > 0) {
                conn->in.insert(conn->in.end(), buf->base, buf->base + n);
                conn->worker->process(conn);
            }
        });
}

bool DnsServer::TcpWorker::backed_up(const Conn* c) const {
    const auto max = server.options_.tcp_max_inflight;
    return c->pending >= max || c->queued_bytes >= size_t{max} * 1024;
}

void DnsServer::TcpWorker::process(Conn* c) {
    size_t off = 0;
    bool answered = false;
    pump(c);  // a long answer under way goes first: its messages must not mix with other answers
    while (!c->more && !c->closing && !c->close_when_written && !backed_up(c) && c->in.size() - off >= 2) {
        size_t len = static_cast<size_t>(c->in[off] << 8 | c->in[off + 1]);
        if (c->in.size() - off - 2 < len) break;
        const uint8_t* msg = c->in.data() + off + 2;
        off += 2 + len;
        answered |= handle_one(c, msg, len);
    }
    if (c->closing) return;
    c->in.erase(c->in.begin(), c->in.begin() + static_cast<long>(off));
    if (answered) c->answered_any = true, touch(c);
    // While backed up (or writing a long answer), nothing more is read: c->in holds at most one read's bytes
    // beyond a message.
    set_reading(c, !c->close_when_written && !backed_up(c) && !c->more);
    if (c->close_when_written && c->pending == 0) close(c);
}

bool DnsServer::TcpWorker::handle_one(Conn* c, const uint8_t* msg, size_t len) {
    if (server.tcp_hook_ && net::question_is(msg, len, server.tcp_hook_name_)) {
        std::vector<std::vector<uint8_t>> replies;
        MoreMessages more;
        HookVerdict v = server.tcp_hook_(msg, len, c->peer, replies, more);
        if (v != HookVerdict::pass) {
            for (const auto& r : replies) {
                if (!r.empty() && r.size() <= net::kTcpMax) send(c, r.data(), r.size());
            }
            if (v == HookVerdict::answered_member) {  // a member's signed exchange, a transfer too
                trust(c->peer);
                c->trusted = true;
            }
            if (v != HookVerdict::rejected && more) {
                c->more = std::move(more);
                pump(c);
                return true;
            }
            if (v == HookVerdict::rejected) {
                bump(counters.tcp_rejected_closed);
                c->close_when_written = true;
                return false;
            }
            return !replies.empty();
        }
    }
    QueryInfo qi;
    size_t out_len = 0;
    const bool logged = tap && tap->sampled();
    dnstap::Exchange x;
    if (logged) clock_gettime(CLOCK_REALTIME, &x.query_time);
    const Snapshot* snap = reader.get();
    if (!c->signing) c->signing = std::make_unique<ConnectionSigningBudget>(signing);
    c->signing->set_second(static_cast<uint32_t>(uv_now(&loop) / 1000));
    if (snap) {
        out_len = answer(*snap, msg, len, Client{c->peer, Transport::tcp, c->signing.get()}, answer_buf,
                         sizeof answer_buf, &qi);
        if (out_len > 0 && qi.over_signing_budget) {  // never unsigned: refused, the resolver asks elsewhere
            bump(counters.over_signing_budget[1]);
            out_len = wire::refuse_to_question(answer_buf, out_len);
        }
    }
    counters.count(qi, Transport::tcp, out_len > 0, snap);
    if (logged) {
        x.tcp = true, x.client = c->client, x.server = c->local;
        x.query = msg, x.query_len = len;
        char extra[512];
        if (out_len > 0) {
            x.response = answer_buf, x.response_len = out_len;
            clock_gettime(CLOCK_REALTIME, &x.response_time);
            if (snap) x.extra = std::string_view(extra, describe_answer(*snap, qi, extra, sizeof extra));
        }
        tap->log(x);
    }
    if (out_len > 0) send(c, answer_buf, out_len);
    return out_len > 0;
}

// The next messages of a long answer, while the client takes them (back-pressure as for any answer).
void DnsServer::TcpWorker::pump(Conn* c) {
    while (c->more && !c->closing && !backed_up(c)) {
        std::vector<uint8_t> next;
        bool again = c->more(next);
        if (!again) c->more = nullptr;
        if (!next.empty() && next.size() <= net::kTcpMax) send(c, next.data(), next.size());
    }
}

void DnsServer::TcpWorker::send(Conn* c, const uint8_t* data, size_t len) {
    auto w = std::make_unique<Write>();  // libuv's until its callback: on_written() takes it back
    w->conn = c;
    w->len = len + 2;
    w->buf.reset(new uint8_t[len + 2]);
    w->buf[0] = static_cast<uint8_t>(len >> 8);
    w->buf[1] = static_cast<uint8_t>(len);
    std::memcpy(w->buf.get() + 2, data, len);
    uv_buf_t b = uv_buf_init(reinterpret_cast<char*>(w->buf.get()), static_cast<unsigned>(len + 2));
    w->req.data = w.get();
    ++c->pending;
    c->queued_bytes += w->len;
    int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->handle), &b, 1, [](uv_write_t* req, int status) {
        auto* wr = static_cast<Write*>(req->data);
        wr->conn->worker->on_written(std::unique_ptr<Write>(wr), status);
    });
    if (rc != 0) {
        --c->pending;
        c->queued_bytes -= w->len;
        close(c);
        return;
    }
    static_cast<void>(w.release());  // the write's callback owns it now
}

void DnsServer::TcpWorker::on_written(std::unique_ptr<Write> w, int status) {
    Conn* conn = w->conn;
    --conn->pending;
    conn->queued_bytes -= w->len;
    w.reset();
    if (status < 0) {
        close(conn);
    } else if (!conn->closing) {
        touch(conn);  // the client is taking its answers
        process(conn);
    }
    maybe_free(conn);
}

void DnsServer::TcpWorker::close(Conn* c) {
    if (c->closing) return;
    c->closing = true;
    --open;
    if (c->counted) {
        auto it = per_source.find(source_key(c->peer));
        if (it != per_source.end() && --it->second == 0) per_source.erase(it);
        c->counted = false;
    }
    auto done = [](uv_handle_t* h) {
        auto* conn = static_cast<Conn*>(h->data);
        --conn->open_handles;
        conn->worker->maybe_free(conn);
    };
    uv_timer_stop(&c->idle);
    uv_close(reinterpret_cast<uv_handle_t*>(&c->idle), done);
    uv_close(reinterpret_cast<uv_handle_t*>(&c->handle), done);
}

void DnsServer::TcpWorker::maybe_free(Conn* c) {
    if (!c->closing || c->open_handles > 0 || c->pending > 0) return;
    conns.erase(std::find_if(conns.begin(), conns.end(), [c](const auto& owned) { return owned.get() == c; }));
}

}  // namespace glbd
