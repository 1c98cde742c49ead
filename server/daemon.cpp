#include "server/daemon.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <uv.h>

#include <ctime>

#include "geo/geo.hpp"
#include "resolver/view.hpp"

namespace glbd {

void setup_logging(const std::string& level, const std::string& format) {
    auto logger = spdlog::stderr_logger_mt("glbd");
    spdlog::set_default_logger(logger);
    if (format == "json") {
        spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":"%v"})");
    } else {
        spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
    }
    spdlog::set_level(spdlog::level::from_str(level));
}

Daemon::Daemon(conf::Config config, std::string path) : config_(std::move(config)), path_(std::move(path)) {}

Daemon::~Daemon() {
    if (checker_) checker_->stop();
}

void Daemon::start_checker(const health::States& previous) {
    if (checker_) checker_->stop();
    // Runs on the checker's thread: only wake the control loop.
    checker_ = std::make_unique<health::Checker>(config_, [this] { uv_async_send(&changed_); }, previous);
    if (checker_->targets() > 0) {
        spdlog::info("health: probing {} endpoint(s)", checker_->targets());
        checker_->start();
    }
}

void Daemon::request_rebuild() {
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(&rebuild_timer_))) return;  // one is already due
    uint64_t now = uv_now(loop_);
    auto min_gap = static_cast<uint64_t>(kMinRebuild.count());
    uint64_t delay = last_build_ms_ + min_gap > now ? last_build_ms_ + min_gap - now : 0;
    uv_timer_start(&rebuild_timer_, [](uv_timer_t* t) { static_cast<Daemon*>(t->data)->rebuild(); }, delay, 0);
}

void Daemon::rebuild() {
    try {
        auto snap = build(config_, next_serial());
        publisher_.publish(snap);
        last_build_ms_ = uv_now(loop_);
        spdlog::debug("snapshot rebuilt: serial {}", snap->serial);
    } catch (const std::exception& e) {
        spdlog::error("cannot rebuild the snapshot: {}", e.what());
    }
}

std::string Daemon::set_override(const std::string& target, const std::string& state) {
    Overrides next = overrides_;
    if (auto err = next.set(target, state); !err.empty()) return err;
    overrides_ = std::move(next);
    spdlog::info("override: {} -> {}", target, state);
    rebuild();
    return "";
}

uint32_t Daemon::next_serial() {
    // Unix time keeps serials rising across restarts; +1 keeps them rising within a second.
    auto now = static_cast<uint32_t>(std::time(nullptr));
    serial_ = std::max(serial_ + 1, now);
    return serial_;
}

std::shared_ptr<const Snapshot> Daemon::build(const conf::Config& c, uint32_t serial) {
    auto geo = std::make_shared<const geo::GeoDb>(c.geoip_database, c.geoip_networks);
    GlobalView view{local_view(c, checker_ ? checker_->states() : health::States{}, overrides_)};
    return build_snapshot(c, view, geo, serial);
}

bool Daemon::reload() {
    if (path_.empty()) {
        spdlog::warn("reload: the embedded config cannot be reloaded");
        return false;
    }
    auto result = conf::load_file(path_);
    if (!result.config) {
        for (const auto& e : result.errors) spdlog::error("reload rejected: {}", e.str());
        spdlog::error("reload failed: {} error(s); still serving the previous config", result.errors.size());
        return false;
    }
    try {
        // Validate what can fail (the geo database, the zones) before touching the running state.
        build(*result.config, serial_);
        auto previous = checker_ ? checker_->states() : health::States{};
        if (result.config->listen.size() != config_.listen.size() ||
            !std::equal(config_.listen.begin(), config_.listen.end(), result.config->listen.begin(),
                        [](const auto& a, const auto& b) { return a.str() == b.str(); })) {
            spdlog::warn("reload: listen addresses changed; they take effect at the next restart");
        }
        config_ = std::move(*result.config);
        start_checker(previous);
        auto snap = build(config_, next_serial());
        publisher_.publish(snap);
        last_build_ms_ = uv_now(loop_);
        spdlog::info("reloaded {}: serial {}, {} zone(s), {} host(s)", path_, snap->serial, snap->zones.size(),
                     snap->hosts.size());
        return true;
    } catch (const std::exception& e) {
        spdlog::error("reload failed: {}; still serving the previous config", e.what());
        return false;
    }
}

int Daemon::run(const std::string& banner) {
    loop_ = uv_default_loop();
    uv_async_init(loop_, &changed_, [](uv_async_t* a) { static_cast<Daemon*>(a->data)->request_rebuild(); });
    changed_.data = this;
    uv_timer_init(loop_, &rebuild_timer_);
    rebuild_timer_.data = this;
    try {
        start_checker({});
        publisher_.publish(build(config_, next_serial()));
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
    server_ = std::make_unique<DnsServer>(publisher_, ServerOptions::from(config_));
    try {
        server_->start();
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    std::string addrs;
    for (const auto& a : config_.listen) addrs += (addrs.empty() ? "" : ", ") + a.str();
    spdlog::info("glbd serving {} zone(s) for cluster {} on {} (UDP and TCP), serial {}", config_.zones.size(),
                 config_.cluster_id, addrs, publisher_.current()->serial);
    if (!banner.empty()) fputs(banner.c_str(), stdout), fflush(stdout);

    uv_loop_t* loop = loop_;
    uv_signal_t hup, term, intr;
    for (auto* s : {&hup, &term, &intr}) {
        uv_signal_init(loop, s);
        s->data = this;
    }
    uv_signal_start(&hup, [](uv_signal_t* s, int) { static_cast<Daemon*>(s->data)->reload(); }, SIGHUP);
    auto stop = [](uv_signal_t* s, int signum) {
        spdlog::info("signal {}: stopping", signum);
        uv_stop(s->loop);
    };
    uv_signal_start(&term, stop, SIGTERM);
    uv_signal_start(&intr, stop, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
    for (auto* s : {&hup, &term, &intr}) uv_close(reinterpret_cast<uv_handle_t*>(s), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&changed_), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&rebuild_timer_), nullptr);
    if (checker_) checker_->stop();
    uv_run(loop, UV_RUN_NOWAIT);
    server_->stop();
    spdlog::info("stopped");
    return 0;
}

}  // namespace glbd
