#include "server/app/notify.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "resolver/base/clock.hpp"
#include "resolver/base/shared_library.hpp"

namespace glbd {

namespace {
constexpr uint64_t kStatusEveryMs = 5000;  // STATUS= is refreshed with the heartbeat at most this often

// libsystemd is opened only under a service manager (NOTIFY_SOCKET set): elsewhere it and its six libraries
// would cost every start 1.1 ms for nothing. Missing, every notification fails as sd_notify's would.
SharedLibrary& libsystemd() {
    static SharedLibrary lib("libsystemd.so.0");
    return lib;
}
int watchdog_enabled(uint64_t* usec) {
    static auto* const f = libsystemd().function<decltype(sd_watchdog_enabled)>("sd_watchdog_enabled");
    return f ? f(0, usec) : -ENOSYS;
}
int notify(const char* state) {
    static auto* const f = libsystemd().function<decltype(sd_notify)>("sd_notify");
    return f ? f(0, state) : -ENOSYS;
}
}  // namespace

void Notifier::start(uv_loop_t* loop) {
    const char* socket = std::getenv("NOTIFY_SOCKET");
    enabled_ = socket && *socket;
    if (!enabled_) return;
    uint64_t usec = 0;
    if (watchdog_enabled(&usec) <= 0 || usec == 0) return;
    interval_ms_ = usec / 2000 ? usec / 2000 : 1;
    uv_timer_init(loop, &timer_);
    timer_.data = this;
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<Notifier*>(t->data)->beat(); }, interval_ms_, interval_ms_);
    timer_started_ = true;
    spdlog::info("systemd watchdog: a heartbeat every {} ms", interval_ms_);
}

void Notifier::stop() {
    if (timer_started_) uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
    timer_started_ = false;
}

void Notifier::beat() {
    ++beats_;
    bool with_status = beats_ * interval_ms_ >= kStatusEveryMs;
    if (with_status) beats_ = 0;
    send(with_status ? "WATCHDOG=1\nSTATUS=" + status_() : "WATCHDOG=1");
}

void Notifier::ready() {
    if (enabled_) send("READY=1\nSTATUS=" + status_());
}

void Notifier::reloading() {
    if (!enabled_) return;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t usec = static_cast<uint64_t>(now.tv_sec) * 1000000 + static_cast<uint64_t>(now.tv_nsec) / 1000;
    send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void Notifier::stopping() {
    if (enabled_) send("STOPPING=1");
}

void Notifier::send(const std::string& state) {
    if (!enabled_) return;
    int rc = notify(state.c_str());
    uint64_t left_out = 0;
    if (rc < 0 && throttle_.allow("sd_notify", steady_ms(), &left_out)) {
        spdlog::warn("sd_notify: {} ({} more not logged)", std::strerror(-rc), left_out);
    }
}

}  // namespace glbd
