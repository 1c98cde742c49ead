#include "sync/health.hpp"

#include "resolver/base/address.hpp"
#include "resolver/base/mutex.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace glbd::health {

using glbd::Address;

bool Hysteresis::record(bool ok) {
    bool before = healthy;
    if (!known) {
        known = true;
        healthy = ok;
        failures = ok ? 0 : 1;
        successes = ok ? 1 : 0;
        return healthy != before;
    }
    if (ok) {
        failures = 0;
        if (++successes >= success_threshold) healthy = true;
    } else {
        successes = 0;
        if (++failures >= failure_threshold) healthy = false;
    }
    return healthy != before;
}

std::string probe_host_name(const std::string& host) { return host.rfind("*.", 0) == 0 ? host.substr(2) : host; }

namespace {

bool is_ip(const std::string& s, bool* v6 = nullptr) {
    Address a;
    if (!Address::parse(s, a)) return false;
    if (v6) *v6 = a.family == 6;
    return true;
}

std::once_flag curl_once;

uint64_t steady_ms() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

}  // namespace

struct Checker::Impl {
    struct Target;

    // One probe of one address; reports to its target's round. Finished probes keep their libcurl handle
    // (some 20 KB with its buffer) for the next probe of any target, up to kIdleProbes: a new handle per probe
    // was a third of probing's CPU in malloc, and one kept by each target 5 KB an endpoint.
    struct HttpProbe {
        CURL* easy = nullptr;
        curl_slist* headers = nullptr;
        curl_slist* connect_to = nullptr;
        Target* target = nullptr;
        char error[CURL_ERROR_SIZE] = {};
    };
    static constexpr size_t kIdleProbes = 64;
    static constexpr uint64_t kSlotMs = 10;
    struct TcpProbe {
        uv_tcp_t tcp{};
        uv_connect_t req{};
        uv_timer_t timer{};
        Target* target = nullptr;
        bool done = false;
        int open = 2;
    };
    // A libcurl multi handle and its timer. HTTP(S) targets are spread over several, each with at most
    // kTargetsPerMulti: libcurl walks a multi's whole connection pool each time a transfer that left its
    // connection open is removed (7.88: looking for connect-only connections), which over one pool of
    // 10,000 kept-alive connections took most of probing's CPU.
    struct Multi {
        Impl* impl = nullptr;
        CURLM* handle = nullptr;
        uv_timer_t timer{};
    };
    struct SocketCtx {
        uv_poll_t poll{};
        curl_socket_t fd = -1;
        Multi* multi = nullptr;
    };

    // One probe, shared by every host that names the same endpoint with the same check (and, for HTTP(S),
    // the same Host name): its result is each of those hosts' result for the endpoint.
    struct Target {
        Impl* impl = nullptr;
        std::vector<Key> keys;  // (config host name, endpoint) of every host it stands for
        std::string endpoint;   // config endpoint (key)
        std::string url_host;   // Host header and SNI
        conf::HealthCheck hc;
        Hysteresis hysteresis;
        Multi* multi = nullptr;  // HTTP(S): the multi handle its probes run in
        uv_timer_t timer{};
        uv_getaddrinfo_t resolver{};
        uint64_t first_ms = 0;       // when the first round begins (from start): within a second, or when due
        uint64_t last_round_ms = 0;  // steady clock; from the checker before this one, then each round's
        uint64_t phase_ms = 0;       // where in each interval the later rounds begin: anywhere in it
        bool phased = false;         // the later rounds are scheduled
        // the round in progress
        bool busy = false;
        int outstanding = 0;
        bool any_ok = false;
        std::string reason;
    };

    std::function<void()> on_change;
    uv_loop_t loop{};
    uv_async_t wake{};
    std::vector<std::unique_ptr<Multi>> multis;
    std::thread thread;
    std::vector<std::unique_ptr<Target>> targets;
    std::set<HttpProbe*> http_probes;
    std::vector<HttpProbe*> idle_probes;  // finished, their handle reset, for the next probe
    std::set<TcpProbe*> tcp_probes;
    bool stopping = false;
    bool started = false;

    mutable Mutex mu;
    States states GLBD_GUARDED_BY(mu);  // published copy
    size_t unknown = 0;
    std::atomic<bool> first_round{false};
    std::atomic<uint64_t> changes{0};  // health_changes()

    Impl(const conf::Config& config, std::function<void()> cb, const States& previous) : on_change(std::move(cb)) {
        std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
        std::map<std::pair<std::string, std::string>, std::vector<Target*>> by_probe;  // endpoint, Host name
        for (const auto& h : config.hosts) {
            if (!h.health_check) continue;
            for (const auto& ep : h.endpoints) {
                // The Host header and SNI matter to HTTP(S) probes only.
                std::string url_host = h.health_check->protocol == conf::Protocol::tcp ? "" : probe_host_name(h.name);
                auto& same_place = by_probe[{ep, url_host}];
                auto found = std::find_if(same_place.begin(), same_place.end(),
                                          [&](Target* t) { return t->hc == *h.health_check; });
                Target* shared = found != same_place.end() ? *found : nullptr;
                EndpointHealth st;
                if (auto it = previous.find({h.name, ep}); it != previous.end())
                    st = it->second;  // a reload keeps what was learnt
                if (!shared) {
                    auto t = std::make_unique<Target>();
                    t->impl = this;
                    t->endpoint = ep;
                    t->url_host = url_host;
                    t->hc = *h.health_check;
                    t->hysteresis.failure_threshold = t->hc.failure_threshold;
                    t->hysteresis.success_threshold = t->hc.success_threshold;
                    t->hysteresis.known = st.known;
                    t->hysteresis.healthy = st.healthy;
                    t->hysteresis.failures = st.failures_in_a_row;
                    t->hysteresis.successes = st.successes_in_a_row;
                    t->last_round_ms = st.last_round_ms;
                    shared = t.get();
                    same_place.push_back(shared);
                    targets.push_back(std::move(t));
                } else if (shared->hysteresis.known) {
                    st.known = true, st.healthy = shared->hysteresis.healthy;  // what the shared probe knows
                }
                shared->keys.emplace_back(h.name, ep);
                if (!st.known) ++unknown;
                states[{h.name, ep}] = st;
            }
        }
        first_round = unknown == 0;
    }

    void start() {
        uv_loop_init(&loop);
        uv_async_init(&loop, &wake, [](uv_async_t* a) { static_cast<Impl*>(a->data)->shutdown(); });
        wake.data = this;
        // HTTP(S) probes keep their connection for the next round (keep-alive, as Envoy's health checks do),
        // sparing both sides a TCP connection (and a TLS handshake) per probe. A multi's
        // pool holds a connection for each of its targets' addresses (twice as many as targets: a hostname
        // endpoint may have several); libcurl's default (4 per transfer in progress) would close nearly all
        // of them between rounds. A failed or timed-out exchange closes its connection, so the next probe
        // connects anew.
        size_t in_multi = kTargetsPerMulti;
        for (auto& t : targets) {
            if (t->hc.protocol == conf::Protocol::tcp) continue;
            if (in_multi == kTargetsPerMulti) {
                auto m = std::make_unique<Multi>();
                m->impl = this;
                uv_timer_init(&loop, &m->timer);
                m->timer.data = m.get();
                m->handle = curl_multi_init();
                curl_multi_setopt(m->handle, CURLMOPT_SOCKETFUNCTION, &Impl::socket_cb);
                curl_multi_setopt(m->handle, CURLMOPT_SOCKETDATA, m.get());
                curl_multi_setopt(m->handle, CURLMOPT_TIMERFUNCTION, &Impl::timer_cb);
                curl_multi_setopt(m->handle, CURLMOPT_TIMERDATA, m.get());
                curl_multi_setopt(m->handle, CURLMOPT_MAXCONNECTS, static_cast<long>(2 * kTargetsPerMulti));
                multis.push_back(std::move(m));
                in_multi = 0;
            }
            t->multi = multis.back().get();
            ++in_multi;
        }
        std::mt19937 rng(std::random_device{}());
        // The first round over a second, or longer for more than kFirstRoundPerSecond targets: 10,000 probes
        // in one second left thousands unanswered by a busy target (timeouts, each a false "unhealthy").
        uint64_t first_span = std::max<uint64_t>(1000, targets.size() * 1000 / kFirstRoundPerSecond);
        for (auto& t : targets) {
            uv_timer_init(&loop, &t->timer);
            t->timer.data = t.get();
            // The first round soon (readiness waits for it), spread over a second (first_span); the later ones
            // each at its own point of the interval, so that many endpoints are probed evenly, not in a burst
            // per interval.
            // An endpoint the checker before this one knew (a reload, a DNSRecord event) goes on at its own
            // pace: its next round when it is due, not all of them again in the first second.
            auto interval = static_cast<uint64_t>(t->hc.interval.count());
            uint64_t now = steady_ms();
            if (t->hysteresis.known && t->last_round_ms && t->last_round_ms + interval > now) {
                t->first_ms = t->last_round_ms + interval - now;
                t->phase_ms = t->first_ms;  // the later rounds every interval from this one
            } else {
                // Points on a 10 ms grid (kSlotMs): the loop wakes once for the probes of a slot, not once
                // for each (10,000 endpoints every 5 s: 100 wake-ups a second instead of 2,000, 20 probes each).
                auto slot = [&](uint64_t span) {
                    return std::uniform_int_distribution<uint64_t>(0, (span - 1) / kSlotMs)(rng) * kSlotMs;
                };
                t->first_ms = slot(std::min<uint64_t>(interval, first_span));
                t->phase_ms = slot(interval);
            }
            uv_timer_start(
                &t->timer,
                [](uv_timer_t* tm) { static_cast<Target*>(tm->data)->impl->on_timer(static_cast<Target*>(tm->data)); },
                t->first_ms, 0);
        }
        started = true;
        thread = std::thread([this] {
            // Probing yields to answering: at a lower priority than the DNS threads, a core they share
            // serves queries first (a hint; failing to set it changes nothing else).
            setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kProbeNice);
            uv_run(&loop, UV_RUN_DEFAULT);
        });
    }

    void stop() {
        if (!started) return;
        uv_async_send(&wake);
        thread.join();
        uv_loop_close(&loop);
        started = false;
    }

    void shutdown() {
        stopping = true;
        for (HttpProbe* p : http_probes) {
            curl_multi_remove_handle(p->target->multi->handle, p->easy);
            free_http(p);
        }
        http_probes.clear();
        for (HttpProbe* p : idle_probes) free_http(p);
        idle_probes.clear();
        auto tcp = tcp_probes;
        for (TcpProbe* p : tcp) finish_tcp(p, false, "stopping");
        for (auto& t : targets) {  // a name still being resolved
            if (t->busy && t->outstanding == 0 && !is_ip(t->endpoint))
                uv_cancel(reinterpret_cast<uv_req_t*>(&t->resolver));
        }
        for (auto& m : multis) {
            curl_multi_cleanup(m->handle);
            m->handle = nullptr;
        }
        uv_walk(
            &loop,
            [](uv_handle_t* h, void*) {
                if (uv_is_closing(h)) return;
                if (uv_handle_get_type(h) == UV_POLL) {  // a curl socket's watcher
                    uv_close(h, [](uv_handle_t* x) { delete static_cast<SocketCtx*>(x->data); });
                } else {
                    uv_close(h, nullptr);
                }
            },
            nullptr);
    }

    // ---- rounds
    void on_timer(Target* t) {
        if (!t->phased) {  // after the first round: every interval, from the target's phase on
            t->phased = true;
            auto interval = static_cast<uint64_t>(t->hc.interval.count());
            uv_timer_start(
                &t->timer,
                [](uv_timer_t* tm) { static_cast<Target*>(tm->data)->impl->on_timer(static_cast<Target*>(tm->data)); },
                t->phase_ms + interval - t->first_ms, interval);
        }
        begin_round(t);
    }

    void begin_round(Target* t) {
        if (t->busy || stopping) return;
        t->busy = true;
        t->last_round_ms = steady_ms();
        t->outstanding = 0;
        t->any_ok = false;
        t->reason.clear();
        bool v6 = false;
        if (is_ip(t->endpoint, &v6)) {
            probe(t, t->endpoint, v6);
            return;
        }
        // A hostname endpoint: resolve, then probe every address.
        t->resolver.data = t;
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        int rc = uv_getaddrinfo(
            &loop, &t->resolver,
            [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
                auto* tg = static_cast<Target*>(req->data);
                if (tg->impl->stopping) {
                    uv_freeaddrinfo(res);
                    return;
                }
                std::set<std::string> addrs;
                for (addrinfo* ai = status == 0 ? res : nullptr; ai; ai = ai->ai_next) {
                    if (Address a; Address::from_sockaddr(ai->ai_addr, a)) addrs.insert(a.str());
                }
                uv_freeaddrinfo(res);
                if (addrs.empty()) {
                    tg->reason = std::string("cannot resolve: ") + (status ? uv_strerror(status) : "no address");
                    tg->impl->finish_round(tg);
                    return;
                }
                tg->outstanding = static_cast<int>(addrs.size());
                for (const auto& a : addrs) tg->impl->probe(tg, a, a.find(':') != std::string::npos, false);
            },
            t->endpoint.c_str(), nullptr, &hints);
        if (rc != 0) {
            t->reason = std::string("cannot resolve: ") + uv_strerror(rc);
            finish_round(t);
        }
    }

    void probe(Target* t, const std::string& addr, bool v6, bool count = true) {
        if (count) ++t->outstanding;
        if (t->hc.protocol == conf::Protocol::tcp) {
            probe_tcp(t, addr);
        } else {
            probe_http(t, addr, v6);
        }
    }

    void probe_done(Target* t, bool ok, const std::string& reason) {
        if (ok) {
            t->any_ok = true;
        } else if (t->reason.empty()) {
            t->reason = reason;
        }
        if (--t->outstanding == 0) finish_round(t);
    }

    void finish_round(Target* t) {
        t->busy = false;
        bool ok = t->any_ok;
        bool was_known = t->hysteresis.known;
        bool before = t->hysteresis.healthy;
        bool flipped = t->hysteresis.record(ok);
        bool round_complete = false;
        size_t keyed = 0;
        {
            MutexLock lock(mu);
            keyed = states.size();
            for (const auto& key : t->keys) {
                EndpointHealth& st = states[key];
                bool st_known = st.known;
                bool changed = !st_known || st.healthy != t->hysteresis.healthy;
                if (changed) changes.fetch_add(1, std::memory_order_release);
                st.probes++;
                if (!ok) st.failures++;
                st.reason = ok ? "ok" : t->reason;
                st.known = true;
                st.healthy = t->hysteresis.healthy;
                st.failures_in_a_row = t->hysteresis.failures;
                st.successes_in_a_row = t->hysteresis.successes;
                st.last_round_ms = t->last_round_ms;
                if (flipped) st.transitions++;
                if (!st_known && --unknown == 0) round_complete = true;
            }
        }
        if (flipped || !was_known) {
            size_t more = t->keys.size() - 1;
            std::string who = t->keys.front().first;
            if (more) who += " (and " + std::to_string(more) + " more hosts)";
            if (flipped) {
                spdlog::warn("health: {} {} {} -> {} ({})", who, t->endpoint, before ? "healthy" : "unhealthy",
                             t->hysteresis.healthy ? "healthy" : "unhealthy", ok ? "ok" : t->reason);
            } else {
                spdlog::info("health: {} {} first result: {} ({})", who, t->endpoint,
                             t->hysteresis.healthy ? "healthy" : "unhealthy", ok ? "ok" : t->reason);
            }
        }
        if (round_complete) {
            first_round = true;
            spdlog::info("health: first round complete ({} probe(s) for {} host endpoint(s))", targets.size(), keyed);
        }
        if ((flipped || round_complete) && on_change) on_change();
    }

    // ---- TCP
    void probe_tcp(Target* t, const std::string& addr) {
        auto* p = new TcpProbe;
        p->target = t;
        tcp_probes.insert(p);
        sockaddr_storage ss{};
        Address ip;
        if (Address::parse(addr, ip)) ip.to_sockaddr(t->hc.port, ss);
        uv_tcp_init(&loop, &p->tcp);
        uv_timer_init(&loop, &p->timer);
        p->tcp.data = p->timer.data = p->req.data = p;
        uv_timer_start(
            &p->timer, [](uv_timer_t* tm) { finish_tcp(static_cast<TcpProbe*>(tm->data), false, "timeout"); },
            static_cast<uint64_t>(t->hc.timeout.count()), 0);
        int rc = uv_tcp_connect(&p->req, &p->tcp, reinterpret_cast<sockaddr*>(&ss), [](uv_connect_t* req, int status) {
            auto* pr = static_cast<TcpProbe*>(req->data);
            finish_tcp(pr, status == 0,
                       status == UV_ECONNREFUSED ? "connection refused"
                       : status == 0             ? "ok"
                                                 : uv_strerror(status));
        });
        if (rc != 0) finish_tcp(p, false, uv_strerror(rc));
    }

    // A probe's connection ends with a reset when closed (SO_LINGER 0), as HAProxy's health checks do: no FIN
    // exchange, and no socket left in TIME_WAIT for a minute per probe (10,000 endpoints every 5 s would
    // keep some 120,000). A hint: if it cannot be set, the close is an orderly one.
    static void close_with_reset(int fd) {
        linger l{1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }

    static void finish_tcp(TcpProbe* p, bool ok, const std::string& reason) {
        if (p->done) return;
        p->done = true;
        Target* t = p->target;
        t->impl->tcp_probes.erase(p);
        auto closed = [](uv_handle_t* h) {
            auto* pr = static_cast<TcpProbe*>(h->data);
            if (--pr->open == 0) delete pr;
        };
        uv_timer_stop(&p->timer);
        uv_os_fd_t fd;
        if (uv_fileno(reinterpret_cast<uv_handle_t*>(&p->tcp), &fd) == 0) close_with_reset(fd);
        uv_close(reinterpret_cast<uv_handle_t*>(&p->timer), closed);
        uv_close(reinterpret_cast<uv_handle_t*>(&p->tcp), closed);
        if (!t->impl->stopping) t->impl->probe_done(t, ok, reason);
    }

    // ---- HTTP(S) through libcurl multi
    void probe_http(Target* t, const std::string& addr, bool v6) {
        HttpProbe* p = nullptr;
        if (!idle_probes.empty()) {
            p = idle_probes.back();
            idle_probes.pop_back();
        } else {
            p = new HttpProbe;
            p->easy = curl_easy_init();
        }
        p->target = t;
        bool https = t->hc.protocol == conf::Protocol::https;
        std::string port = std::to_string(t->hc.port);
        std::string url = std::string(https ? "https" : "http") + "://" + t->url_host + ":" + port + t->hc.path;
        std::string to = t->url_host + ":" + port + ":" + (v6 ? "[" + addr + "]" : addr) + ":" + port;
        p->connect_to = curl_slist_append(nullptr, to.c_str());
        for (const auto& [k, v] : t->hc.headers) p->headers = curl_slist_append(p->headers, (k + ": " + v).c_str());
        p->headers = curl_slist_append(p->headers, "User-Agent: glbd-health");
        CURL* e = p->easy;
        curl_easy_setopt(e, CURLOPT_URL, url.c_str());
        curl_easy_setopt(e, CURLOPT_CONNECT_TO, p->connect_to);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->headers);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(t->hc.timeout.count()));
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
        curl_easy_setopt(
            e, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, p->error);
        curl_easy_setopt(e, CURLOPT_PRIVATE, p);
        if (t->hc.insecure_skip_verify) {
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        http_probes.insert(p);
        curl_multi_add_handle(t->multi->handle, e);
    }

    void release_http(HttpProbe* p) {
        if (idle_probes.size() >= kIdleProbes) return free_http(p);
        curl_easy_reset(p->easy);  // options only: the multi keeps the connection
        curl_slist_free_all(p->headers);
        curl_slist_free_all(p->connect_to);
        p->headers = p->connect_to = nullptr;
        p->target = nullptr;
        p->error[0] = 0;
        idle_probes.push_back(p);
    }

    static void free_http(HttpProbe* p) {
        curl_easy_cleanup(p->easy);
        curl_slist_free_all(p->headers);
        curl_slist_free_all(p->connect_to);
        delete p;
    }

    void check_multi(Multi* multi) {
        int pending = 0;
        while (CURLMsg* m = curl_multi_info_read(multi->handle, &pending)) {
            if (m->msg != CURLMSG_DONE) continue;
            HttpProbe* p = nullptr;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
            long status = 0;
            curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            CURLcode rc = m->data.result;
            bool ok = false;
            std::string reason;
            if (rc == CURLE_OK) {
                const auto& want = p->target->hc.expected_status;
                ok = std::find(want.begin(), want.end(), static_cast<int>(status)) != want.end();
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
            Target* t = p->target;
            curl_multi_remove_handle(multi->handle, p->easy);
            http_probes.erase(p);
            release_http(p);
            probe_done(t, ok, reason);
        }
    }

    static int socket_cb(CURL*, curl_socket_t s, int what, void* userp, void* socketp) {
        auto* multi = static_cast<Multi*>(userp);
        auto* ctx = static_cast<SocketCtx*>(socketp);
        if (what == CURL_POLL_REMOVE) {
            if (ctx) {
                uv_poll_stop(&ctx->poll);
                uv_close(reinterpret_cast<uv_handle_t*>(&ctx->poll),
                         [](uv_handle_t* h) { delete static_cast<SocketCtx*>(h->data); });
                curl_multi_assign(multi->handle, s, nullptr);
            }
            return 0;
        }
        if (!ctx) {
            ctx = new SocketCtx;
            ctx->fd = s;
            ctx->multi = multi;
            uv_poll_init_socket(&multi->impl->loop, &ctx->poll, s);
            ctx->poll.data = ctx;
            curl_multi_assign(multi->handle, s, ctx);
        }
        int events = ((what & CURL_POLL_IN) ? UV_READABLE : 0) | ((what & CURL_POLL_OUT) ? UV_WRITABLE : 0);
        uv_poll_start(&ctx->poll, events, [](uv_poll_t* h, int status, int ev) {
            auto* c = static_cast<SocketCtx*>(h->data);
            int flags = 0;
            if (status < 0) flags |= CURL_CSELECT_ERR;
            if (ev & UV_READABLE) flags |= CURL_CSELECT_IN;
            if (ev & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
            int running = 0;
            Multi* m = c->multi;
            curl_multi_socket_action(m->handle, c->fd, flags, &running);
            m->impl->check_multi(m);
        });
        return 0;
    }

    static int timer_cb(CURLM*, long timeout_ms, void* userp) {
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
                    m->impl->check_multi(m);
                },
                static_cast<uint64_t>(timeout_ms), 0);
        }
        return 0;
    }
};

Checker::Checker(const conf::Config& config, std::function<void()> on_change, const States& previous)
    : impl_(std::make_unique<Impl>(config, std::move(on_change), previous)) {}
Checker::~Checker() { stop(); }
void Checker::start() { impl_->start(); }
void Checker::stop() { impl_->stop(); }
States Checker::states() const {
    MutexLock lock(impl_->mu);
    return impl_->states;
}
bool Checker::first_round_done() const { return impl_->first_round.load(); }
uint64_t Checker::health_changes() const { return impl_->changes.load(std::memory_order_acquire); }
size_t Checker::targets() const { return impl_->targets.size(); }

}  // namespace glbd::health
