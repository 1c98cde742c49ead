#include "sync/health/checker.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/base/clock.hpp"
#include "resolver/base/lookup.hpp"
#include "resolver/base/mutex.hpp"
#include "resolver/base/thread_name.hpp"
#include "sync/health/http_probe.hpp"
#include "sync/health/probes.hpp"
#include "sync/health/schedule.hpp"
#include "sync/health/tcp_probe.hpp"

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

namespace {}  // namespace

struct Checker::Impl {
    struct Target;

    // One probe, shared by every host that names the same endpoint with the same check (and, for HTTP(S),
    // the same Host name): its result is each of those hosts' result for the endpoint.
    struct Target {
        Impl* impl = nullptr;
        std::vector<Key> keys;  // (config host name, endpoint) of every host it stands for
        Endpoint endpoint;      // probed: the address, or each address the name resolves to
        std::string url_host;   // Host header and SNI
        model::HealthCheck hc;
        Hysteresis hysteresis;
        size_t pool = 0;  // HTTP(S): the pool of connections its probes use (HttpProber)
        uv_timer_t timer{};
        uv_getaddrinfo_t* lookup = nullptr;  // a host name endpoint being resolved
        uint64_t last_round_ms = 0;          // steady clock; from the checker before this one, then each round's
        std::optional<Schedule> schedule;    // when its rounds begin (start())
        // the round in progress
        bool busy = false;
        int outstanding = 0;
        bool any_ok = false;
        std::string reason;
    };

    std::function<void()> on_change;
    const Clock& clock;
    uv_loop_t loop{};
    uint64_t started_ms = 0;  // loop time (uv_now) at start: the schedules count from it
    uv_async_t wake{};
    ProbesFactory make_probes;
    std::unique_ptr<Probes> probes;  // made with the loop (start())
    std::thread thread;
    std::vector<std::unique_ptr<Target>> targets;
    bool stopping = false;
    bool started = false;
    CheckerRole role;

    mutable Mutex mu;
    States states GLBD_GUARDED_BY(mu);  // published copy
    size_t unknown = 0;
    std::atomic<bool> first_round{false};
    std::atomic<uint64_t> changes{0};  // health_changes()

    Impl(const conf::Config& config, std::function<void()> cb, const States& previous, CheckerSeams seams)
        : on_change(std::move(cb)),
          clock(seams.clock ? *seams.clock : system_clock()),
          make_probes(seams.probes ? std::move(seams.probes)
                                   : ProbesFactory([source = config.health.source_address](uv_loop_t* on) {
                                         return network_probes(on, source);
                                     })) {
        std::map<std::pair<Endpoint, std::string>, std::vector<Target*>> by_probe;  // endpoint, Host name
        for (const auto& h : config.hosts) {
            if (!h.health_check) continue;
            for (const auto& ep : h.endpoints) {
                // The Host header and SNI matter to HTTP(S) probes only.
                std::string url_host = h.health_check->protocol == model::Protocol::tcp ? "" : probe_host_name(h.name);
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
        probes = make_probes(&loop);
        for (auto& t : targets) {
            if (t->hc.protocol != model::Protocol::tcp) t->pool = probes->assign_pool();
        }
        std::mt19937 rng(std::random_device{}());
        // 10,000 first probes in one second left thousands unanswered by a busy target (timeouts, each a false
        // "unhealthy"); 10,000 endpoints every 5 s on the grid wake the loop 100 times a second, not 2,000.
        const uint64_t span = role.spread_first_round ? UINT64_MAX : Schedule::first_span(targets.size());
        const uint64_t now = clock.steady_ms();
        uv_update_time(&loop);
        started_ms = uv_now(&loop);
        for (auto& t : targets) {
            uv_timer_init(&loop, &t->timer);
            t->timer.data = t.get();
            // An endpoint the checker before this one knew (a reload, a DNSRecord event) goes on at its own
            // pace: its next round when it is due, not all of them again in the first second.
            const uint64_t last = t->hysteresis.known ? t->last_round_ms : 0;
            t->schedule.emplace(static_cast<uint64_t>(t->hc.interval.count()), span, last, now, rng);
            uv_timer_start(&t->timer, on_timer, t->schedule->first_ms(), 0);
        }
        started = true;
        thread = std::thread([this] {
            name_this_thread(role.thread);
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
        probes->stop();
        for (auto& t : targets) cancel_lookup(t->lookup);  // a name still being resolved
        uv_walk(
            &loop,
            [](uv_handle_t* h, void*) {
                if (!uv_is_closing(h)) uv_close(h, nullptr);
            },
            nullptr);
    }

    // ---- rounds
    // A round is due: the next one's time from the schedule (schedule.hpp: every interval from when the last was
    // due, not from when the loop woke), then this one.
    static void on_timer(uv_timer_t* timer) {
        auto* t = static_cast<Target*>(timer->data);
        uint64_t now = uv_now(timer->loop);
        uint64_t next = t->schedule->next(t->impl->started_ms, now);
        uv_timer_start(timer, on_timer, next - now, 0);
        t->impl->begin_round(t);
    }

    void begin_round(Target* t) {
        if (t->busy || stopping) return;
        t->busy = true;
        t->last_round_ms = clock.steady_ms();
        t->outstanding = 0;
        t->any_ok = false;
        t->reason.clear();
        if (t->endpoint.is_address()) {
            probe(t, t->endpoint.address());
            return;
        }
        // A hostname endpoint: resolve, then probe every address.
        t->lookup = lookup(&loop, t->endpoint.name(), [this, t](int status, const std::vector<Address>& addrs) {
            t->lookup = nullptr;
            if (stopping) return;
            if (addrs.empty()) {
                t->reason = std::string("cannot resolve: ") + (status ? uv_strerror(status) : "no address");
                finish_round(t);
                return;
            }
            t->outstanding = static_cast<int>(addrs.size());
            for (const auto& a : addrs) probe(t, a, false);
        });
    }

    void probe(Target* t, const Address& ip, bool count = true) {
        if (count) ++t->outstanding;
        auto done = [this, t](bool ok, const std::string& reason) { probe_done(t, ok, reason); };
        if (t->hc.protocol == model::Protocol::tcp) {
            probes->tcp(ip, t->hc.port, t->hc.timeout, done);
            return;
        }
        HttpRequest r;
        r.https = t->hc.protocol == model::Protocol::https;
        r.host = t->url_host;
        r.port = t->hc.port;
        r.path = t->hc.path;
        r.headers = t->hc.headers;
        r.expected_status = t->hc.expected_status;
        r.insecure_skip_verify = t->hc.insecure_skip_verify;
        r.timeout = t->hc.timeout;
        probes->http(t->pool, r, ip, done);
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
                spdlog::warn("{}: {} {} {} -> {} ({})", role.log, who, t->endpoint.str(),
                             before ? "healthy" : "unhealthy", t->hysteresis.healthy ? "healthy" : "unhealthy",
                             ok ? "ok" : t->reason);
            } else {
                spdlog::info("{}: {} {} first result: {} ({})", role.log, who, t->endpoint.str(),
                             t->hysteresis.healthy ? "healthy" : "unhealthy", ok ? "ok" : t->reason);
            }
        }
        if (round_complete) {
            first_round = true;
            spdlog::info("{}: first round complete ({} probe(s) for {} host endpoint(s))", role.log, targets.size(),
                         keyed);
        }
        if ((flipped || round_complete) && on_change) on_change();
    }
};

Checker::Checker(const conf::Config& config, std::function<void()> on_change, const States& previous,
                 CheckerSeams seams, CheckerRole role)
    : impl_(std::make_unique<Impl>(config, std::move(on_change), previous, std::move(seams))) {
    impl_->role = role;
}
Checker::~Checker() { stop(); }
void Checker::start() { impl_->start(); }
void Checker::stop() { impl_->stop(); }
States Checker::states() const {
    MutexLock lock(impl_->mu);
    return impl_->states;
}
States Checker::states_of(const std::vector<std::string>& hosts) const {
    MutexLock lock(impl_->mu);
    States out;
    for (const auto& host : hosts) {
        // From the least endpoint (Endpoint{}: 0.0.0.0) of the host.
        for (auto it = impl_->states.lower_bound({host, Endpoint{}});
             it != impl_->states.end() && it->first.first == host; ++it) {
            out.insert(*it);
        }
    }
    return out;
}
bool Checker::first_round_done() const { return impl_->first_round.load(); }
uint64_t Checker::health_changes() const { return impl_->changes.load(std::memory_order_acquire); }
size_t Checker::targets() const { return impl_->targets.size(); }

}  // namespace glbd::health
