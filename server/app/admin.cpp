#include "server/app/admin.hpp"

#include "resolver/base/address.hpp"
#include "resolver/base/mutex.hpp"
#include "resolver/base/thread_name.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <http_parser.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

namespace glbd::admin {
namespace {

constexpr size_t kMaxHeaderBytes = size_t{16} << 10;
constexpr size_t kMaxBody = size_t{64} << 10;
constexpr uint64_t kHeaderTimeoutMs = 2000;    // a request's headers, from the connection's start
constexpr uint64_t kRequestTimeoutMs = 10000;  // the whole exchange
constexpr size_t kMaxConnections = 64;
constexpr size_t kLoopbackReserve = 8;          // of them, only for loopback clients (the kubelet's exec probes)
constexpr size_t kMaxConnectionsPerSource = 4;  // one client address cannot hold many slots

const char* reason(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 413: return "Payload Too Large";
        case 421: return "Misdirected Request";
        case 431: return "Request Header Fields Too Large";
        case 503: return "Service Unavailable";
        default: return "Error";
    }
}

// Incremental request parsing: one per connection.
struct Parser {
    http_parser parser{};
    http_parser_settings settings{};
    Request req;
    std::string field, value;
    bool in_value = false;
    size_t header_bytes = 0;
    bool headers_done = false;
    bool complete = false;
    int error_status = 0;

    Parser() {
        http_parser_init(&parser, HTTP_REQUEST);
        parser.data = this;
        settings.on_url = [](http_parser* p, const char* at, size_t n) {
            auto* self = static_cast<Parser*>(p->data);
            self->req.path.append(at, n);
            return self->grow(n);
        };
        settings.on_header_field = [](http_parser* p, const char* at, size_t n) {
            auto* self = static_cast<Parser*>(p->data);
            if (self->in_value) self->flush_header();
            self->field.append(at, n);
            return self->grow(n);
        };
        settings.on_header_value = [](http_parser* p, const char* at, size_t n) {
            auto* self = static_cast<Parser*>(p->data);
            self->in_value = true;
            self->value.append(at, n);
            return self->grow(n);
        };
        settings.on_headers_complete = [](http_parser* p) {
            auto* self = static_cast<Parser*>(p->data);
            if (self->in_value) self->flush_header();
            self->headers_done = true;
            self->req.method = http_method_str(static_cast<http_method>(p->method));
            auto q = self->req.path.find('?');
            if (q != std::string::npos) self->req.query = self->req.path.substr(q + 1), self->req.path.resize(q);
            if (p->content_length != ULLONG_MAX && p->content_length > kMaxBody) {
                self->error_status = 413;
                return -1;
            }
            return 0;
        };
        settings.on_body = [](http_parser* p, const char* at, size_t n) {
            auto* self = static_cast<Parser*>(p->data);
            if (self->req.body.size() + n > kMaxBody) {
                self->error_status = 413;
                return -1;
            }
            self->req.body.append(at, n);
            return 0;
        };
        settings.on_message_complete = [](http_parser* p) {
            static_cast<Parser*>(p->data)->complete = true;
            http_parser_pause(p, 1);  // one request per connection
            return 0;
        };
    }
    int grow(size_t n) {
        header_bytes += n;
        if (header_bytes > kMaxHeaderBytes) {
            error_status = 431;
            return -1;
        }
        return 0;
    }
    void flush_header() {
        std::string name = field;
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        req.headers[name] = value;
        field.clear(), value.clear();
        in_value = false;
    }
    // Feeds bytes; returns false once the request is complete or broken.
    bool feed(const char* data, size_t n) {
        if (complete || error_status) return false;
        http_parser_execute(&parser, &settings, data, n);
        if (!complete && !error_status && HTTP_PARSER_ERRNO(&parser) != HPE_OK &&
            HTTP_PARSER_ERRNO(&parser) != HPE_PAUSED) {
            error_status = 400;
        }
        return !complete && !error_status;
    }
};

}  // namespace

ParseResult parse_request(const std::string& bytes) {
    Parser p;
    p.feed(bytes.data(), bytes.size());
    return ParseResult{p.complete, p.error_status, p.req};
}

struct Server::Impl {
    struct Conn {
        std::string source;  // the client's address
        uint64_t id = 0;     // what a reply names it by
        bool loopback = false;
        uint64_t accepted_ms = 0;
        uv_tcp_t tcp{};
        uv_timer_t timer{};
        Impl* impl = nullptr;
        Parser parser;
        std::string out;
        uv_write_t write{};
        int open = 2;
        bool closing = false;
        bool answered = false;
        std::function<bool(std::string&)> stream;  // a streamed body's next pieces (Response::stream)
    };

    // Replies, from any thread, for the admin loop to write (`wake`); `wake` is null once it stopped.
    struct Mailbox {
        Mutex mu;
        std::vector<std::pair<uint64_t, Response>> replies GLBD_GUARDED_BY(mu);
        uv_async_t* wake GLBD_GUARDED_BY(mu) = nullptr;
    };

    SocketAddress listen;
    std::string token;
    Handler handler;
    uv_loop_t own_loop{};
    uv_loop_t* loop = &own_loop;
    uv_tcp_t server{};
    uv_async_t wake{}, quit{};
    bool started = false, running = false;
    std::thread thread;
    std::set<Conn*> conns;  // the open ones
    std::map<uint64_t, Conn*> by_id;
    std::map<Conn*, std::unique_ptr<Conn>> owned;  // every one until both its handles have closed (closing too)
    uint64_t next_id = 1;
    std::shared_ptr<Mailbox> mailbox = std::make_shared<Mailbox>();

    Impl(const SocketAddress& l, std::string t, Handler h) : listen(l), token(std::move(t)), handler(std::move(h)) {}

    void start() {
        sockaddr_storage ss{};
        listen.to_sockaddr(ss);
        uv_loop_init(loop);
        uv_tcp_init(loop, &server);
        server.data = this;
        int rc = uv_tcp_bind(&server, reinterpret_cast<sockaddr*>(&ss), 0);
        if (rc == 0) {
            rc = uv_listen(reinterpret_cast<uv_stream_t*>(&server), 64, [](uv_stream_t* s, int status) {
                if (status == 0) static_cast<Impl*>(s->data)->accept();
            });
        }
        if (rc != 0) {
            uv_close(reinterpret_cast<uv_handle_t*>(&server), nullptr);
            uv_run(loop, UV_RUN_DEFAULT);
            uv_loop_close(loop);
            throw std::runtime_error("cannot listen on admin " + listen.str() + ": " + uv_strerror(rc));
        }
        uv_async_init(loop, &wake, [](uv_async_t* a) { static_cast<Impl*>(a->data)->deliver(); });
        uv_async_init(loop, &quit, [](uv_async_t* a) { static_cast<Impl*>(a->data)->close_all(); });
        wake.data = quit.data = this;
        {
            MutexLock lock(mailbox->mu);
            mailbox->wake = &wake;
        }
        started = true;
    }

    // The admin thread: the loop runs until stop().
    void run() {
        if (!started || running) return;
        running = true;
        thread = std::thread([this] {
            name_this_thread("glbd-admin");
            uv_run(loop, UV_RUN_DEFAULT);
        });
    }

    void stop() {
        if (!started) return;
        started = false;
        if (running) {
            uv_async_send(&quit);
            thread.join();
            running = false;
        } else {
            close_all();
            uv_run(loop, UV_RUN_DEFAULT);
        }
        uv_loop_close(loop);
    }

    // On the admin loop: no more replies; every handle closed, so that the loop ends.
    void close_all() {
        {
            MutexLock lock(mailbox->mu);
            mailbox->wake = nullptr;
        }
        auto all = conns;
        for (Conn* c : all) close(c);
        uv_close(reinterpret_cast<uv_handle_t*>(&server), nullptr);
        uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
        uv_close(reinterpret_cast<uv_handle_t*>(&quit), nullptr);
    }

    // On the admin loop: the replies that came, each written to its connection if it is still open.
    void deliver() {
        std::vector<std::pair<uint64_t, Response>> replies;
        {
            MutexLock lock(mailbox->mu);
            replies.swap(mailbox->replies);
        }
        for (auto& [id, r] : replies) {
            auto it = by_id.find(id);
            if (it != by_id.end()) write(it->second, r);
        }
    }

    void accept() {
        auto owner = std::make_unique<Conn>();
        Conn* c = owned.emplace(owner.get(), std::move(owner)).first->first;
        c->impl = this;
        uv_tcp_init(loop, &c->tcp);
        uv_timer_init(loop, &c->timer);
        c->tcp.data = c->timer.data = c->write.data = c;
        c->id = next_id++;
        conns.insert(c);
        by_id[c->id] = c;
        if (uv_accept(reinterpret_cast<uv_stream_t*>(&server), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
            close(c);
            return;
        }
        sockaddr_storage peer{};
        int len = sizeof peer;
        Address from;
        if (uv_tcp_getpeername(&c->tcp, reinterpret_cast<sockaddr*>(&peer), &len) == 0 &&
            Address::from_sockaddr(reinterpret_cast<sockaddr*>(&peer), from)) {
            c->source = from.str();
            c->loopback = from.is_loopback();
        }
        c->accepted_ms = uv_now(loop);
        if (!room_for_source(c) || !make_room(c)) {
            close(c);
            return;
        }
        // A slow or silent client has kHeaderTimeoutMs for its headers and kRequestTimeoutMs in all.
        uv_timer_start(
            &c->timer,
            [](uv_timer_t* t) {
                auto* conn = static_cast<Conn*>(t->data);
                if (!conn->parser.headers_done) return conn->impl->close(conn);
                uv_timer_start(
                    t, [](uv_timer_t* t2) { static_cast<Conn*>(t2->data)->impl->close(static_cast<Conn*>(t2->data)); },
                    kRequestTimeoutMs - kHeaderTimeoutMs, 0);
            },
            kHeaderTimeoutMs, 0);
        uv_read_start(
            reinterpret_cast<uv_stream_t*>(&c->tcp),
            [](uv_handle_t*, size_t, uv_buf_t* buf) {
                static char scratch[16384];
                *buf = uv_buf_init(scratch, sizeof scratch);
            },
            [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
                auto* conn = static_cast<Conn*>(s->data);
                if (n < 0) return conn->impl->close(conn);
                if (n > 0 && !conn->parser.feed(buf->base, static_cast<size_t>(n))) conn->impl->respond(conn);
            });
    }

    // At most kMaxConnectionsPerSource from `c`'s address: beyond, its oldest connection still sending its
    // headers is closed for `c` (a client's new request outranks its stalled ones). False when none can go.
    bool room_for_source(Conn* c) {
        size_t same = 0;
        Conn* oldest = nullptr;
        for (Conn* o : conns) {
            if (o->source != c->source) continue;
            ++same;
            if (o != c && !o->parser.headers_done && (!oldest || o->accepted_ms < oldest->accepted_ms)) oldest = o;
        }
        if (same <= kMaxConnectionsPerSource) return true;
        if (!oldest) return false;
        close(oldest);
        return true;
    }

    // Room for `c` (already counted): at most kMaxConnections, kLoopbackReserve of them for loopback clients.
    // When full, a connection still sending its headers is closed for it (a remote one, or for a loopback
    // newcomer any): one of the address holding the most slots, its oldest, so that a churning crowd evicts
    // its own and a lone client's probe survives. False when none can go.
    bool make_room(Conn* c) {
        auto over = [&] {
            size_t remote = 0;
            for (const Conn* o : conns) remote += o->loopback ? 0 : 1;
            return conns.size() > kMaxConnections || (!c->loopback && remote > kMaxConnections - kLoopbackReserve);
        };
        while (over()) {
            std::map<std::string_view, size_t> held;
            for (const Conn* o : conns) ++held[o->source];
            Conn* victim = nullptr;
            for (Conn* o : conns) {
                if (o == c || o->parser.headers_done || (o->loopback && !c->loopback)) continue;
                if (!victim || held[o->source] > held[victim->source] ||
                    (held[o->source] == held[victim->source] && o->accepted_ms < victim->accepted_ms)) {
                    victim = o;
                }
            }
            if (!victim) return false;
            close(victim);
        }
        return true;
    }

    void respond(Conn* c) {
        uv_read_stop(reinterpret_cast<uv_stream_t*>(&c->tcp));
        Response r;
        if (c->parser.error_status) {
            r.status = c->parser.error_status;
            r.body = std::string(reason(r.status)) + "\n";
        } else if (!is_public(c->parser.req) && !authorized(c->parser.req, token)) {
            r.status = 401;
            r.body = "a bearer token is required\n";
        } else if (token.empty() && !host_allowed(c->parser.req)) {
            // Without a token only loopback is listened on; a page in a browser could still reach it by a DNS
            // name that resolves to loopback (DNS rebinding): such names are refused.
            r.status = 421;
            r.body = "the Host header must be an IP address or localhost\n";
        } else {
            // The handler replies now or later, from this thread or another: through the mailbox.
            Reply reply = [mb = mailbox, id = c->id](Response resp) {
                MutexLock lock(mb->mu);
                if (!mb->wake) return;
                mb->replies.emplace_back(id, std::move(resp));
                uv_async_send(mb->wake);
            };
            try {
                handler(c->parser.req, std::move(reply));
            } catch (const std::exception& e) {
                r.status = 500;
                r.body = std::string("internal error: ") + e.what() + "\n";
                write(c, r);
            }
            return;
        }
        write(c, r);
    }

    void write(Conn* c, Response& r) {
        if (c->closing || c->answered) return;  // closed meanwhile, or answered already
        c->answered = true;
        const bool head = c->parser.req.method == "HEAD";
        c->out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) +
                 "\r\nContent-Type: " + r.content_type +
                 (r.stream ? std::string("\r\nTransfer-Encoding: chunked")
                           : "\r\nContent-Length: " + std::to_string(r.body.size())) +
                 "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n";
        for (const auto& [name, value] : r.headers) c->out += name + ": " + value + "\r\n";
        c->out += "Connection: close\r\n\r\n";
        if (r.stream && !head) {
            c->stream = std::move(r.stream);
        } else if (!head) {
            c->out += r.body;
        }
        send(c);
    }

    // Writes c->out; then the stream's next piece, or the end.
    void send(Conn* c) {
        uv_buf_t b = uv_buf_init(c->out.data(), static_cast<unsigned>(c->out.size()));
        if (uv_write(&c->write, reinterpret_cast<uv_stream_t*>(&c->tcp), &b, 1, [](uv_write_t* w, int status) {
                auto* conn = static_cast<Conn*>(w->data);
                if (status == 0 && conn->stream) return conn->impl->next_piece(conn);
                conn->impl->close(conn);
            }) != 0) {
            close(c);
        }
    }

    // A streamed body's next chunk. A client that reads nothing for kRequestTimeoutMs is cut off; a stream
    // that throws ends without the last chunk, which tells the client the body is incomplete.
    void next_piece(Conn* c) {
        std::string piece;
        bool more = false;
        try {
            more = c->stream(piece);
        } catch (const std::exception& e) {
            spdlog::warn("admin: a streamed reply to {} ended early: {}", c->source, e.what());
            return close(c);
        }
        c->out.clear();
        if (!piece.empty()) {
            char size[24];
            std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
            c->out.append(size).append(piece).append("\r\n");
        }
        if (!more) {
            c->out += "0\r\n\r\n";
            c->stream = nullptr;  // lets go of what it held
        }
        uv_timer_start(
            &c->timer, [](uv_timer_t* t) { static_cast<Conn*>(t->data)->impl->close(static_cast<Conn*>(t->data)); },
            kRequestTimeoutMs, 0);
        send(c);
    }

    void close(Conn* c) {
        if (c->closing) return;
        c->closing = true;
        c->stream = nullptr;
        conns.erase(c);
        by_id.erase(c->id);
        auto done = [](uv_handle_t* h) {
            auto* conn = static_cast<Conn*>(h->data);
            if (--conn->open == 0) conn->impl->owned.erase(conn);  // frees it
        };
        uv_timer_stop(&c->timer);
        uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), done);
        uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), done);
    }
};

Server::Server(const SocketAddress& listen, std::string token, Handler handler)
    : impl_(std::make_unique<Impl>(listen, std::move(token), std::move(handler))) {}
Server::~Server() { impl_->stop(); }
void Server::start() { impl_->start(); }
void Server::run() { impl_->run(); }
void Server::stop() { impl_->stop(); }

bool host_allowed(const Request& request) {
    auto it = request.headers.find("host");
    if (it == request.headers.end()) return true;  // HTTP/1.0 without Host: not a browser
    std::string host = it->second;
    if (!host.empty() && host.front() == '[') {
        auto end = host.find(']');
        host = end == std::string::npos ? host : host.substr(1, end - 1);
    } else if (auto colon = host.rfind(':'); colon != std::string::npos && host.find(':') == colon) {
        host = host.substr(0, colon);
    }
    for (auto& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return Address::is_ip(host) || host == "localhost";
}

bool is_public(const Request& request) {
    return request.path == "/" && (request.method == "GET" || request.method == "HEAD");
}

bool authorized(const Request& request, const std::string& token) {
    if (token.empty()) return true;
    auto it = request.headers.find("authorization");
    if (it == request.headers.end()) return false;
    const std::string want = "Bearer " + token;
    const std::string& got = it->second;
    // Constant time in the content: every byte of the expected value is compared.
    unsigned char diff = got.size() == want.size() ? 0 : 1;
    for (size_t i = 0; i < want.size(); ++i) {
        diff |= static_cast<unsigned char>(want[i] ^ (i < got.size() ? got[i] : 0));
    }
    return diff == 0;
}

std::optional<OverrideRequest> parse_override(const std::string& body) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("target") || !j.contains("state") ||
        !j["target"].is_string() || !j["state"].is_string() || (j.contains("force") && !j["force"].is_boolean())) {
        return std::nullopt;
    }
    return OverrideRequest{j["target"].get<std::string>(), j["state"].get<std::string>(), j.value("force", false)};
}

std::optional<std::string> query_param(const std::string& query, const std::string& key) {
    size_t start = 0;
    while (start <= query.size()) {
        size_t end = query.find('&', start);
        if (end == std::string::npos) end = query.size();
        std::string_view pair(query.data() + start, end - start);
        size_t eq = pair.find('=');
        if (pair.substr(0, eq) == key) {
            std::string out;
            std::string_view v = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
            for (size_t i = 0; i < v.size(); ++i) {
                if (v[i] == '+') {
                    out += ' ';
                } else if (v[i] != '%') {
                    out += v[i];
                } else if (i + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[i + 1])) &&
                           std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
                    out += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
                    i += 2;
                } else {
                    return std::nullopt;
                }
            }
            return out;
        }
        start = end + 1;
    }
    return std::nullopt;
}

}  // namespace glbd::admin
