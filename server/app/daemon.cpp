#include "server/app/daemon.hpp"

#include "sync/transfer/tsig.hpp"

#include <malloc.h>

#include <algorithm>
#include <optional>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "resolver/model/global_view.hpp"
#include "server/app/options.hpp"
#include "sync/local_view.hpp"

namespace glbd {

void setup_logging(const std::string& level, const std::string& format) {
    auto logger = spdlog::stderr_logger_mt("glbd");
    spdlog::set_default_logger(logger);
    if (format == "json") {
        // One JSON object per line; the message is escaped by nlohmann-json (flag %*). A message may carry
        // bytes from a file or a peer that are not UTF-8: they become U+FFFD rather than an exception.
        class JsonMessage : public spdlog::custom_flag_formatter {
        public:
            void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
                std::string s = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                dest.append(s.data(), s.data() + s.size());
            }
            std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessage>(); }
        };
        auto f = std::make_unique<spdlog::pattern_formatter>();
        f->add_flag<JsonMessage>('*').set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":%*})");
        spdlog::set_formatter(std::move(f));
    } else {
        spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
    }
    spdlog::set_level(spdlog::level::from_str(level));
}

Daemon::Daemon(conf::Config config, std::string path, sync::StateReadAhead state_read)
    : config_(std::move(config)), path_(std::move(path)), state_read_(std::move(state_read)) {}

Daemon::~Daemon() {
    if (checker_) checker_->stop();
    outside_.stop();
    if (sync_) sync_->stop();
}

uint32_t Daemon::next_serial(uint32_t of_view) {
    // From the global view, so that every server holding it gives the same serial (sync::Service::view).
    // Never backwards here (forgetting an instance lowers the sum): then the last serial stays.
    if (serial_ == 0 || sync::newer(of_view, serial_)) serial_ = of_view;
    return serial_;
}

void Daemon::start_checker(const health::States& previous) {
    if (checker_) checker_->stop();
    // Runs on the checker's thread: only wake the control loop.
    checker_ = std::make_unique<health::Checker>(
        config_, [this] { uv_async_send(&changed_); }, previous);
    ++checker_generation_;
    if (checker_->targets() > 0) {
        spdlog::info("health: probing {} endpoint(s)", checker_->targets());
        checker_->start();
    }
}

namespace {

// The calling thread's CPU time so far (µs).
uint64_t thread_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

}  // namespace

void Daemon::request_rebuild() {
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(&rebuild_timer_))) return;  // one is already due
    uint64_t now = uv_now(loop_);
    // At least kMinRebuild apart, and never more than a third of the control thread's time spent building.
    auto min_gap = std::max(static_cast<uint64_t>(kMinRebuild.count()), 2 * last_build_cpu_us_ / 1000);
    uint64_t delay = last_build_ms_ + min_gap > now ? last_build_ms_ + min_gap - now : 0;
    uv_timer_start(&rebuild_timer_, on_rebuild_timer, delay, 0);
}

// A build that is due waits while a pull is under way with a peer that answers (Service::pulling): its end
// changes the view again. At a fleet's cold start pulls overlap for seconds, and each build, every host built
// again, took hundreds of ms of wall time waiting for a core (50 servers on 2 cores: 8 builds a server, 3 with
// the wait). It waits at most kHoldForPulls from when it was first due, and never when this cluster's own
// hosts or health changed: a failover here is answered at once.
void Daemon::due_rebuild() {
    constexpr uint64_t kPollMs = 20;
    uint64_t now = uv_now(loop_);
    if (due_since_ == 0) due_since_ = now;
    if (sync_ && sync_->pulling() && own_view_now() == own_made_for_ &&
        now - due_since_ + kPollMs <= static_cast<uint64_t>(kHoldForPulls.count())) {
        uv_timer_start(&rebuild_timer_, on_rebuild_timer, kPollMs, 0);
        return;
    }
    if (now > due_since_) ++builds_held_;
    due_since_ = 0;
    rebuild();
}

Daemon::OwnViewMadeFor Daemon::own_view_now() const {
    return {hosts_generation_, checker_generation_, checker_->health_changes()};
}

// A signed zone's signatures are made again (a full build) when the first is due: the timer wakes at that
// time, or within the hour (a clock that jumps is caught up with then).
void Daemon::schedule_resign(uint32_t at) {
    uv_timer_stop(&resign_timer_);
    if (at == 0) return;
    auto now = static_cast<uint32_t>(std::time(nullptr));
    uint64_t delay_ms = at > now ? std::min<uint64_t>(uint64_t{at - now} * 1000, kResignCheckMs) : 0;
    uv_timer_start(
        &resign_timer_, [](uv_timer_t* t) { static_cast<Daemon*>(t->data)->request_rebuild(); }, delay_ms, 0);
}

// This instance's hosts with their health go to the sync store; the snapshot is built from the merge.
void Daemon::rebuild() {
    try {
        uint64_t start = uv_hrtime(), cpu_start = thread_cpu_us();
        // This cluster's view again only when its hosts or their health changed. The count is read before
        // the states: a change between the two is in the states, and makes the next rebuild do it again.
        OwnViewMadeFor now = own_view_now();
        std::optional<health::States> states;
        if (now != own_made_for_) {
            states = checker_->states();
            std::vector<sync::SharedCheck> checks;
            HostList hosts = local_view(config_, *states, &checks).hosts;
            sync_->set_own_hosts(std::move(hosts), kube_ ? kube_->records() : RecordList{}, std::move(checks));
            own_made_for_ = now;
        }
        // A dead cluster's entries kept by its vantages go when keepDead ends, and outside verdicts wait to go
        // out in batches: a rebuild then.
        if (uint64_t ends_in = outside_.update(config_, *sync_)) {
            uv_timer_start(
                &outside_timer_, [](uv_timer_t* t) { static_cast<Daemon*>(t->data)->request_rebuild(); }, ends_in + 1,
                0);
        }
        uint32_t serial = 0;
        auto view = outside_.apply(sync_->shared_view(&serial));
        auto snap = builder_.build(
            config_, view, geo_, next_serial(serial),
            [this](std::string_view host, std::span<const std::string_view> clusters, std::span<uint32_t> ids) {
                counter_ids_->ids(host, clusters, ids);
            },
            served_records());
        snap->cookie_secret = cookies_.current();
        snap->cookie_previous = cookies_.previous();
        publisher_.publish(snap);
        schedule_resign(snap->resign_at);
        keys_.log_mismatches(*sync_);
        log_groups();
        update_kube_statuses(states ? &*states : nullptr);
        uv_update_time(loop_);
        last_build_ms_ = uv_now(loop_);
        last_build_cost_us_ = (uv_hrtime() - start) / 1000;
        last_build_cpu_us_ = thread_cpu_us() - cpu_start;
        ++builds_, build_cpu_us_ += last_build_cpu_us_;
        const auto& built = builder_.last();
        spdlog::debug(
            "snapshot rebuilt: serial {}, {} of {} host(s) built{}, {} RRset(s) signed, {} kept, {} host(s) "
            "left to sign, in {:.1f} ms ({:.1f} ms CPU)",
            snap->serial, built.built, built.hosts, built.full ? " (full)" : "", built.signed_sets.made,
            built.signed_sets.kept, built.signed_sets.deferred, static_cast<double>(last_build_cost_us_) / 1000,
            static_cast<double>(last_build_cpu_us_) / 1000);
        // A full build (and, at start, parsing the state file) frees far more than it keeps; give the free
        // pages back, or a large view leaves the process holding several times what it uses.
        if (built.full || built.built > 1000) malloc_trim(0);
    } catch (const std::exception& e) {
        spdlog::error("cannot rebuild the snapshot: {}", e.what());
    }
}

// The statuses controller and delegate mode write, once the sync service holds this cluster's report as made from
// the records collected last (a deletion is judged by the report version that withdrew it). While a deletion waits
// for the peers to hold that report, again every kDeletionPollMs.
void Daemon::update_kube_statuses(const health::States* states) {
    if (!kube_ || !kube_->writes_status() || own_view_now() != own_made_for_) return;
    kube::Source::Fleet fleet;
    fleet.own_version = sync_->own_version();
    fleet.not_holding = [this](uint64_t version) { return sync_->not_holding(version); };
    fleet.max_wait_ms = config_.peers ? static_cast<uint64_t>(config_.peers->dead_after.count()) : 0;
    kube_->update_statuses(states ? *states : checker_->states(), fleet);
}

// Records changed: merged, the probes restarted with what they knew, a rebuild.
void Daemon::apply_kubernetes() {
    if (!kube_ || !checker_) return;
    try {
        kube_->merge(config_, *sync_);
        ++hosts_generation_;
        start_checker(checker_->states());
        request_rebuild();
    } catch (const std::exception& e) {
        spdlog::error("kubernetes: cannot apply the records: {}", e.what());
    }
}

Status Daemon::set_override(const std::string& target, const std::string& state) {
    if (auto set = sync_->set_override(target, state); !set) return set;
    spdlog::info("override: {} -> {}", target, state);
    rebuild();
    return ok();
}

Status Daemon::forget_instance(const std::string& origin) {
    if (auto done = sync_->forget_instance(origin); !done) return done;
    rebuild();
    return ok();
}

bool Daemon::drop_privileges() {
    if (config_.user.empty() || geteuid() != 0) return true;
    passwd* pw = getpwnam(config_.user.c_str());
    if (!pw) {
        spdlog::error("cannot drop privileges: no user {}", config_.user);
        return false;
    }
    if (!config_.state_dir.empty()) {
        // The state directory is the one place the server writes: it must belong to the user it runs as.
        std::error_code ec;
        bool made = std::filesystem::create_directories(config_.state_dir, ec);
        if (ec) {
            spdlog::error("stateDir {}: {}", config_.state_dir, ec.message());
            return false;
        }
        if (made && chown(config_.state_dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
            spdlog::error("stateDir {}: cannot give it to user {}: {}", config_.state_dir, config_.user,
                          std::strerror(errno));
            return false;
        }
    }
    if (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
        spdlog::error("cannot drop privileges to user {}: {}", config_.user, std::strerror(errno));
        return false;
    }
    spdlog::info("running as user {} (uid {}, gid {})", config_.user, pw->pw_uid, pw->pw_gid);
    if (!config_.state_dir.empty() && access(config_.state_dir.c_str(), W_OK | X_OK) != 0) {
        spdlog::warn("stateDir {} is not writable by user {}: state will not be saved", config_.state_dir,
                     config_.user);
    }
    return true;
}

// Start-up in the order privileges need: the loop, the sources of data, the sockets (as root), then the
// drop, then every thread; then the loop runs until a signal stops it.
int Daemon::run(const std::string& banner) {
    init_loop();
    if (config_.peers && !tsig::hmac_works()) {
        spdlog::error(
            "HMAC-SHA256 does not work in this OpenSSL (check OPENSSL_CONF and its providers): peers cannot be "
            "authenticated, refusing to start");
        return 2;
    }
    if (int rc = make_sources()) return rc;
    if (int rc = keys_.restore(config_, *sync_)) return rc;
    if (int rc = open_sockets()) return rc;
    if (!drop_privileges()) return 2;
    if (int rc = start_serving()) return rc;
    keys_.note_published(config_);
    if (!banner.empty()) fputs(banner.c_str(), stdout), fflush(stdout);
    wait_for_signal();
    shut_down();
    return 0;
}

void Daemon::init_loop() {
    loop_ = uv_default_loop();
    uv_async_init(loop_, &changed_, [](uv_async_t* a) { static_cast<Daemon*>(a->data)->request_rebuild(); });
    changed_.data = this;
    init_reloads();
    uv_timer_init(loop_, &rebuild_timer_);
    rebuild_timer_.data = this;
    uv_timer_init(loop_, &resign_timer_);
    resign_timer_.data = this;
    uv_timer_init(loop_, &outside_timer_);
    outside_timer_.data = this;
    // The first build signs no host: the server answers after it, signing each answer of a signed zone as
    // it gives it, and the resign timer starts the build that signs every host at once (SnapshotBuilder).
    builder_.defer_first_signing(true);
    cookies_.start(loop_, config_.listen.cookie_secret, [this] { request_rebuild(); });
    // Snapshots the query threads let go of are freed here, not on their threads.
    uv_timer_init(loop_, &reclaim_timer_);
    reclaim_timer_.data = this;
    uv_timer_start(
        &reclaim_timer_, [](uv_timer_t* t) { static_cast<Daemon*>(t->data)->publisher_.reclaim(); }, kLetGoMs,
        kLetGoMs);
}

// The geo database, the sync service and the Kubernetes source (seeded from stateDir).
int Daemon::make_sources() {
    try {
        geo_ = open_geo(config_);
        sync_ = std::make_unique<sync::Service>(
            config_, [this] { uv_async_send(&changed_); }, sync::Service::Seams{}, state_read_.take(config_.state_dir));
        if (config_.kubernetes) {
            kube_ = std::make_unique<KubeFeed>(
                config_, loop_, [this] { apply_kubernetes(); }, [this] { update_kube_statuses(nullptr); });
            auto hosts = sync_->saved_own_hosts();
            auto records = sync_->saved_own_records();
            if (!hosts.empty() || !records.empty()) {
                kube_->seed(std::move(hosts), std::move(records));
                kube_->merge(config_, *sync_);
                ++hosts_generation_;
            }
        }
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
    return 0;
}

int Daemon::open_sockets() {
    // Everything that needs root (sockets, the state directory) happens first; then privileges are
    // dropped, and only then does any thread start or any file get written.
    server_ = std::make_unique<DnsServer>(publisher_, server_options(config_));
    server_->set_tcp_hook(sync::sync_zone_wire(), [this](const uint8_t* msg, size_t len, const geo::Address& from,
                                                         std::vector<std::vector<uint8_t>>& out, MoreMessages& more) {
        switch (sync_->handle(msg, len, from, out, more)) {
            case sync::Service::Handled::answered: return HookVerdict::answered;
            case sync::Service::Handled::answered_member: return HookVerdict::answered_member;
            case sync::Service::Handled::rejected: return HookVerdict::rejected;
            case sync::Service::Handled::not_ours: break;
        }
        return HookVerdict::pass;
    });
    if (config_.peers) {
        if (int fd = server_->hand_off_udp_notify(sync::sync_zone_wire()); fd >= 0) {
            sync_->set_beat_source(fd);
        } else {
            spdlog::warn("sync: no socket for heartbeats over UDP ({}); peers are heard through transfers only",
                         std::strerror(errno));
        }
    }
    try {
        server_->bind();
        if (config_.admin.listen) {
            admin_.open(loop_, *config_.admin.listen, config_.admin.token);
            spdlog::info("admin endpoint on http://{}", config_.admin.listen->str());
        }
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    return 0;
}

int Daemon::start_serving() {
    try {
        start_checker({});
        rebuild();
        if (!publisher_.current()) return 1;
        server_->start();
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    sync_->start();
    if (kube_) kube_->start();
    admin_.run();
    serving_ = true;
    std::string addrs;
    for (const auto& a : config_.listen.dns) addrs += (addrs.empty() ? "" : ", ") + a.str();
    spdlog::info("glbd serving {} zone(s) for cluster {} (instance {}) on {} (UDP and TCP), serial {}",
                 config_.zones.size(), config_.cluster.id, config_.cluster.instance, addrs,
                 publisher_.current()->serial);
    if (config_.peers) {
        spdlog::info("sync: {} member(s), every {} ms, dead after {} ms", config_.peers->members.size(),
                     config_.peers->sync_interval.count(), config_.peers->dead_after.count());
    }
    for (const auto& z : config_.zones) {
        if (z.dnssec)
            spdlog::info("zone {}: signed online (DNSSEC keys: {})", z.origin, dnssec::describe_keys(z.dnssec->keys));
    }
    notifier_.start(loop_);
    notifier_.ready();
    return 0;
}

// For `systemctl status`: what a person checks first.
std::string Daemon::service_status() const {
    auto snap = publisher_.current();
    size_t up = 0, peers = 0;
    if (sync_) {
        for (const auto& p : sync_->peers()) ++peers, up += p.reachable ? 1 : 0;
    }
    return fmt::format("cluster {}, serial {}, {} load-balanced host(s), peers {} of {} up{}", config_.cluster.id,
                       snap ? snap->serial : 0, snap ? snap->hosts.size() : 0, up, peers,
                       ready() ? "" : ", waiting for the first health checks");
}

// The signal handles are members: they are closed here, but their close completes in shut_down()'s last turn
// of the loop.
void Daemon::wait_for_signal() {
    uv_signal_t& hup = signals_[0];
    uv_signal_t& term = signals_[1];
    uv_signal_t& intr = signals_[2];
    for (auto* s : {&hup, &term, &intr}) {
        uv_signal_init(loop_, s);
        s->data = this;
    }
    uv_signal_start(
        &hup,
        [](uv_signal_t* s, int) {
            auto* self = static_cast<Daemon*>(s->data);
            self->notifier_.reloading();
            if (self->reload() != Daemon::Reload::pending) self->notifier_.ready();  // else when it concludes
        },
        SIGHUP);
    auto stop = [](uv_signal_t* s, int signum) {
        spdlog::info("signal {}: stopping", signum);
        uv_stop(s->loop);
    };
    uv_signal_start(&term, stop, SIGTERM);
    uv_signal_start(&intr, stop, SIGINT);
    uv_run(loop_, UV_RUN_DEFAULT);
    for (auto* s : {&hup, &term, &intr}) uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
}

void Daemon::shut_down() {
    notifier_.stopping();
    notifier_.stop();
    close_reloads();
    if (kube_) kube_->stop();
    uv_close(reinterpret_cast<uv_handle_t*>(&changed_), nullptr);
    if (kube_) kube_->close();
    uv_close(reinterpret_cast<uv_handle_t*>(&rebuild_timer_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&resign_timer_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&outside_timer_), nullptr);
    cookies_.close();
    uv_close(reinterpret_cast<uv_handle_t*>(&reclaim_timer_), nullptr);
    admin_.close();
    checker_->stop();
    outside_.stop();
    sync_->stop();
    uv_run(loop_, UV_RUN_NOWAIT);
    server_->stop();
    spdlog::info("stopped");
}

}  // namespace glbd
