// sync/liveness — which known instances are alive (deadAfter, stretched for a lossy path within deadAfterMax),
// which members are suspect, the log lines with what was heard (internal to sync/; the sync thread). Owns its
// timer.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "sync/core.hpp"

namespace glbd::sync {

class Liveness {
public:
    Liveness(Service::Impl& s, Core& core) : s_(s), core_(core) {}
    void start();  // its timer, on the core's loop (before the loop runs)
    void check();  // every few hundred ms, and when a beat or a pull may have changed it
    // The most deadAfter may grow by for a lossy path: peers.deadAfterMax - deadAfter (a tenth of deadAfter
    // when unset).
    [[nodiscard]] uint64_t max_grace() const;
    // How much of the time from `from_ms` to `now_ms` (wall clock) this loop was away: turns later than
    // kOnTimeMs after the one before (a busy CPU, a long callback), in which nothing could be heard.
    [[nodiscard]] uint64_t away_since(uint64_t from_ms, uint64_t now_ms) const GLBD_REQUIRES(core_.mu);

    static constexpr uint64_t kTurnMs = 100;    // the timer's period
    static constexpr uint64_t kOnTimeMs = 200;  // a turn later than this after the last one was away the rest
    static constexpr size_t kAwayKept = 64;     // the latest spells away remembered (older ones count nothing)

private:
    void note_away(uint64_t now, uint64_t mono) GLBD_REQUIRES(core_.mu);
    void judge_members(uint64_t now) GLBD_REQUIRES(core_.mu);
    void drop(const std::string& origin) GLBD_REQUIRES(core_.mu);
    [[nodiscard]] std::string evidence(const std::string& origin, const Known& k, uint64_t now) const
        GLBD_REQUIRES(core_.mu);

    Service::Impl& s_;
    Core& core_;
    uv_timer_t timer_{};
    std::map<std::string, bool> last_alive_ GLBD_GUARDED_BY(core_.mu);  // each origin as last judged
    struct Away {
        uint64_t back_ms = 0, ms = 0;  // when the loop turned again (wall clock), how long it was away
    };
    std::deque<Away> away_ GLBD_GUARDED_BY(core_.mu);  // the latest kAwayKept, oldest first
    uint64_t last_turn_mono_ GLBD_GUARDED_BY(core_.mu) = 0;
};

}  // namespace glbd::sync
