// sync/state_dir — the sync service's stateDir (internal to sync/): loaded at start (this instance's overrides
// and active groups too, and a life above the saved one), written after changes on the sync thread, at most
// every max(1 s, 4 x the last write's cost): at 10,000 hosts x 20 clusters one write is about a second of work.
// The known states are copied under the core's lock; serializing and writing happen outside it; a stop writes
// what is pending (without peers there is no sync thread, and Core::request_save writes at once). Owns its timer
// and the last write's time and cost.
#pragma once

#include <uv.h>

#include <cstdint>
#include <optional>
#include <string>

#include "sync/core.hpp"
#include "sync/state_file.hpp"

namespace glbd::sync {

class StateDir {
public:
    explicit StateDir(Core& core) : core_(core) {}
    [[nodiscard]] std::string path() const;
    // The constructor's: `read` when the file was read ahead (StateReadAhead), else it is read now.
    void load(uint64_t now, std::optional<StateFileRead> read) GLBD_EXCLUDES(core_.mu);
    // Its timer, on the core's loop (before the loop runs). What changed before the loop ran is written a second later,
    // as if a write had just been made.
    void start();
    void schedule_save();  // a write is pending (Core::request_save): when the gap since the last has passed
    void save_now();       // the pending write, now (the timer's, and a stop's)

private:
    Core& core_;
    uv_timer_t timer_{};
    uint64_t last_save_ms_ = 0, last_save_cost_ms_ = 0;
};

}  // namespace glbd::sync
