#include "sync/health/http_probe.hpp"

#include <algorithm>
#include <mutex>

#include "resolver/base/curl.hpp"

namespace glbd::health {
namespace {

std::once_flag curl_once;

}  // namespace

// A libcurl multi handle and its timer, with the sockets libcurl asked to watch. HTTP(S) targets are spread
// over several, each with at most kTargetsPerMulti: libcurl walks a multi's whole connection pool each time
// a transfer that left its connection open is removed (7.88: looking for connect-only connections), which
// over one pool of 10,000 kept-alive connections took most of probing's CPU.
struct HttpProber::Multi {
    struct Socket {
        uv_poll_t poll{};
        curl_socket_t fd = -1;
        Multi* multi = nullptr;
        bool closing = false;
    };
    HttpProber* prober = nullptr;
    CURLM* handle = nullptr;
    uv_timer_t timer{};
    std::map<Socket*, std::unique_ptr<Socket>> sockets;  // until their poll handle has closed
};

// One probe of one address. Finished probes keep their libcurl handle (some 20 KB with its buffer) for the
// next probe of any target, up to kIdleProbes: a new handle per probe was a third of probing's CPU in
// malloc, and one kept by each target 5 KB an endpoint.
struct HttpProber::Probe {
    curl::Easy easy = curl::easy();
    curl::Slist headers, connect_to;
    curl::Url url;
    Multi* multi = nullptr;
    ProbeDone done;
    std::vector<int> expected;
    char error[CURL_ERROR_SIZE] = {};
};

HttpProber::HttpProber(uv_loop_t* loop, std::optional<Address> source) : loop_(loop) {
    // "host!": an address, never an interface name, and never looked up (numeric).
    if (source) interface_ = "host!" + source->str(), source_family_ = source->family;
}

HttpProber::~HttpProber() = default;

size_t HttpProber::assign_pool() {
    // Probes keep their connection for the next round (keep-alive, as Envoy's health checks do), sparing both
    // sides a TCP connection (and a TLS handshake) per probe. A multi's pool holds a connection for each of
    // its targets' addresses (twice as many as targets: a hostname endpoint may have several); libcurl's
    // default (4 per transfer in progress) would close nearly all of them between rounds. A failed or
    // timed-out exchange closes its connection, so the next probe connects anew.
    if (in_last_ == kTargetsPerMulti) {
        // libcurl is loaded here, by the first HTTP target (resolver/base/curl.cpp), not by every start.
        std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
        auto m = std::make_unique<Multi>();
        m->prober = this;
        uv_timer_init(loop_, &m->timer);
        m->timer.data = m.get();
        m->handle = curl_multi_init();
        curl_multi_setopt(m->handle, CURLMOPT_SOCKETFUNCTION, &HttpProber::socket_cb);
        curl_multi_setopt(m->handle, CURLMOPT_SOCKETDATA, m.get());
        curl_multi_setopt(m->handle, CURLMOPT_TIMERFUNCTION, &HttpProber::timer_cb);
        curl_multi_setopt(m->handle, CURLMOPT_TIMERDATA, m.get());
        curl_multi_setopt(m->handle, CURLMOPT_MAXCONNECTS, static_cast<long>(2 * kTargetsPerMulti));
        multis_.push_back(std::move(m));
        in_last_ = 0;
    }
    ++in_last_;
    return multis_.size() - 1;
}

void HttpProber::probe(size_t pool, const HttpRequest& r, const Address& address, ProbeDone done) {
    std::unique_ptr<Probe> owned;
    if (!idle_.empty()) {
        owned = std::move(idle_.back());
        idle_.pop_back();
    } else {
        owned = std::make_unique<Probe>();
    }
    Probe* p = owned.get();
    p->multi = multis_.at(pool).get();
    p->done = std::move(done);
    p->expected = r.expected_status;
    std::string port = std::to_string(r.port), ip = address.str();
    // Built part by part: the path (a DNSRecord author's text) can never name another host or port.
    // (model::is_probe_path checked the path; a URL libcurl still refuses makes the probe fail, through
    // libcurl like any failure, never synchronously inside probe().)
    p->url = curl::url(r.https, r.host, r.port, r.path);
    curl::append(p->connect_to, r.host + ":" + port + ":" + (address.family == 6 ? "[" + ip + "]" : ip) + ":" + port);
    for (const auto& [k, v] : r.headers) curl::append(p->headers, k + ": " + v);
    curl::append(p->headers, "User-Agent: glbd-health");
    CURL* e = p->easy.get();
    if (p->url) {
        curl_easy_setopt(e, CURLOPT_CURLU, p->url.get());
    } else {
        curl_easy_setopt(e, CURLOPT_URL, "glbd-unbuildable-probe-url:");  // fails: unsupported protocol
    }
    curl_easy_setopt(e, CURLOPT_CONNECT_TO, p->connect_to.get());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->headers.get());
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(
        e, CURLOPT_SOCKOPTFUNCTION, +[](void*, curl_socket_t fd, curlsocktype) {
            close_with_reset(fd);
            return static_cast<int>(CURL_SOCKOPT_OK);
        });
    // No DNS cache: every probe connects to an address we give (CONNECT_TO), and libcurl walks its whole
    // cache after each transfer to prune it: with thousands of endpoints cached that walk was nearly all
    // of the probing's CPU (10,000 endpoints every 5 s took a whole core; bench/health-load.sh).
    curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // never through a proxy from the environment
    if (address.family == source_family_) curl_easy_setopt(e, CURLOPT_INTERFACE, interface_.c_str());
    curl_easy_setopt(
        e, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, p->error);
    curl_easy_setopt(e, CURLOPT_PRIVATE, p);
    if (r.insecure_skip_verify) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    running_.emplace(p, std::move(owned));
    curl_multi_add_handle(p->multi->handle, e);
}

// A finished probe's handle is kept for the next one (options reset; the multi keeps the connection).
void HttpProber::release(Probe* p) {
    auto node = running_.extract(p);
    std::unique_ptr<Probe> owned = std::move(node.mapped());
    if (idle_.size() >= kIdleProbes) return;
    curl_easy_reset(p->easy.get());
    p->headers.reset(), p->connect_to.reset(), p->url.reset();
    p->multi = nullptr;
    p->done = nullptr;
    p->error[0] = 0;
    idle_.push_back(std::move(owned));
}

void HttpProber::stop() {
    for (auto& [raw, p] : running_) curl_multi_remove_handle(p->multi->handle, p->easy.get());
    running_.clear();
    idle_.clear();
    for (auto& m : multis_) {
        curl_multi_cleanup(m->handle);  // closes its connections (their sockets' watchers close below)
        m->handle = nullptr;
        for (auto& [raw, socket] : m->sockets) {
            if (socket->closing) continue;
            socket->closing = true;
            uv_close(reinterpret_cast<uv_handle_t*>(&socket->poll), [](uv_handle_t* h) {
                auto* s = static_cast<Multi::Socket*>(h->data);
                s->multi->sockets.erase(s);
            });
        }
        uv_close(reinterpret_cast<uv_handle_t*>(&m->timer), nullptr);
    }
}

void HttpProber::check(Multi* multi) {
    int pending = 0;
    while (CURLMsg* m = curl_multi_info_read(multi->handle, &pending)) {
        if (m->msg != CURLMSG_DONE) continue;
        Probe* p = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
        long status = 0;
        curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        CURLcode rc = m->data.result;
        bool ok = false;
        std::string reason;
        if (rc == CURLE_OK) {
            ok = std::find(p->expected.begin(), p->expected.end(), static_cast<int>(status)) != p->expected.end();
            reason = "status " + std::to_string(status);
        } else if (rc == CURLE_OPERATION_TIMEDOUT) {
            reason = "timeout";
        } else if (rc == CURLE_COULDNT_CONNECT) {
            reason = "connection refused";
        } else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR ||
                   rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM) {
            reason = std::string("TLS error: ") + (p->error[0] ? p->error : curl_easy_strerror(rc));
        } else {
            reason = p->error[0] ? p->error : curl_easy_strerror(rc);
        }
        ProbeDone done = std::move(p->done);
        curl_multi_remove_handle(multi->handle, p->easy.get());
        release(p);
        done(ok, reason);
    }
}

int HttpProber::socket_cb(CURL*, curl_socket_t s, int what, void* userp, void* socketp) {
    auto* multi = static_cast<Multi*>(userp);
    auto* socket = static_cast<Multi::Socket*>(socketp);
    if (what == CURL_POLL_REMOVE) {
        if (socket && !socket->closing) {
            socket->closing = true;
            uv_poll_stop(&socket->poll);
            uv_close(reinterpret_cast<uv_handle_t*>(&socket->poll), [](uv_handle_t* h) {
                auto* closed = static_cast<Multi::Socket*>(h->data);
                closed->multi->sockets.erase(closed);
            });
            curl_multi_assign(multi->handle, s, nullptr);
        }
        return 0;
    }
    if (!socket) {
        auto owned = std::make_unique<Multi::Socket>();
        socket = owned.get();
        socket->fd = s;
        socket->multi = multi;
        uv_poll_init_socket(multi->prober->loop_, &socket->poll, s);
        socket->poll.data = socket;
        multi->sockets.emplace(socket, std::move(owned));
        curl_multi_assign(multi->handle, s, socket);
    }
    int events = ((what & CURL_POLL_IN) ? UV_READABLE : 0) | ((what & CURL_POLL_OUT) ? UV_WRITABLE : 0);
    uv_poll_start(&socket->poll, events, [](uv_poll_t* h, int status, int ev) {
        auto* c = static_cast<Multi::Socket*>(h->data);
        int flags = 0;
        if (status < 0) flags |= CURL_CSELECT_ERR;
        if (ev & UV_READABLE) flags |= CURL_CSELECT_IN;
        if (ev & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
        int running = 0;
        Multi* m = c->multi;
        curl_multi_socket_action(m->handle, c->fd, flags, &running);
        m->prober->check(m);
    });
    return 0;
}

int HttpProber::timer_cb(CURLM*, long timeout_ms, void* userp) {
    auto* multi = static_cast<Multi*>(userp);
    if (timeout_ms < 0) {
        uv_timer_stop(&multi->timer);
    } else {
        uv_timer_start(
            &multi->timer,
            [](uv_timer_t* t) {
                auto* m = static_cast<Multi*>(t->data);
                int running = 0;
                curl_multi_socket_action(m->handle, CURL_SOCKET_TIMEOUT, 0, &running);
                m->prober->check(m);
            },
            static_cast<uint64_t>(timeout_ms), 0);
    }
    return 0;
}

}  // namespace glbd::health
