// sync/liveness — which known instances are alive (deadAfter, stretched for a lossy path within deadAfterMax),
// which members are suspect, the log lines with what was heard (internal to sync/; the sync thread). Owns its
// timer.
#pragma once

#include <uv.h>

#include <cstdint>
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

private:
    void judge_members(uint64_t now) GLBD_REQUIRES(core_.mu);
    void drop(const std::string& origin) GLBD_REQUIRES(core_.mu);
    [[nodiscard]] std::string evidence(const std::string& origin, const Known& k, uint64_t now) const
        GLBD_REQUIRES(core_.mu);

    Service::Impl& s_;
    Core& core_;
    uv_timer_t timer_{};
    std::map<std::string, bool> last_alive_ GLBD_GUARDED_BY(core_.mu);  // each origin as last judged
};

}  // namespace glbd::sync
