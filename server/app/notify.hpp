// server/app/notify — the service manager's view (sd_notify(3), libsystemd): READY once glbd serves,
// RELOADING/READY around a reload, STOPPING, a STATUS line, and the watchdog's heartbeat from the control
// thread, so that a control loop that hangs is restarted (WatchdogSec= in the unit).
// Without NOTIFY_SOCKET (not started by systemd) every call does nothing. Control thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>

#include "resolver/base/log_throttle.hpp"

namespace glbd {

class Notifier {
public:
    // `status` makes the STATUS= line (peers, hosts, serial); it is called on the control thread.
    explicit Notifier(std::function<std::string()> status) : status_(std::move(status)) {}
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;

    // Starts the watchdog's heartbeat on `loop` when the service manager asked for one (WATCHDOG_USEC), at
    // half its interval, and refreshes STATUS= with it (at most every few seconds).
    void start(uv_loop_t* loop);
    void stop();  // closes the timer; the loop's next turn completes it

    void ready();      // READY=1 with STATUS=
    void reloading();  // RELOADING=1 with MONOTONIC_USEC=
    void stopping();   // STOPPING=1

private:
    void send(const std::string& state);
    void beat();

    std::function<std::string()> status_;
    uv_timer_t timer_{};
    bool timer_started_ = false;
    bool enabled_ = false;  // NOTIFY_SOCKET is set
    uint64_t beats_ = 0;
    uint64_t interval_ms_ = 0;
    LogThrottle throttle_{1, 60000};  // a manager that went away is logged once a minute
};

}  // namespace glbd
