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

uint32_t Daemon::next_serial() {
    // Unix time keeps serials rising across restarts; +1 keeps them rising within a second.
    auto now = static_cast<uint32_t>(std::time(nullptr));
    serial_ = std::max(serial_ + 1, now);
    return serial_;
}

std::shared_ptr<const Snapshot> Daemon::build(const conf::Config& c, uint32_t serial) {
    auto geo = std::make_shared<const geo::GeoDb>(c.geoip_database, c.geoip_networks);
    GlobalView view{local_cluster_view(c)};
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
        auto snap = build(*result.config, next_serial());
        if (result.config->listen.size() != config_.listen.size() ||
            !std::equal(config_.listen.begin(), config_.listen.end(), result.config->listen.begin(),
                        [](const auto& a, const auto& b) { return a.str() == b.str(); })) {
            spdlog::warn("reload: listen addresses changed; they take effect at the next restart");
        }
        publisher_.publish(snap);
        config_ = std::move(*result.config);
        spdlog::info("reloaded {}: serial {}, {} zone(s), {} host(s)", path_, snap->serial, snap->zones.size(),
                     snap->hosts.size());
        return true;
    } catch (const std::exception& e) {
        spdlog::error("reload failed: {}; still serving the previous config", e.what());
        return false;
    }
}

int Daemon::run(const std::string& banner) {
    try {
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

    uv_loop_t* loop = uv_default_loop();
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
    uv_run(loop, UV_RUN_NOWAIT);
    server_->stop();
    spdlog::info("stopped");
    return 0;
}

}  // namespace glbd
