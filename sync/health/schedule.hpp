// sync/health/schedule — when each target's rounds begin (pure; the checker's thread). The first round soon
// (readiness waits for it) and spread: over a second, or at most kFirstRoundPerSecond a second when there are
// more; the later ones at the target's own point of the interval, on a kSlotMs grid, so that thousands of
// endpoints are probed evenly and the loop wakes once per slot. A target the previous checker knew goes on at its
// own pace. Each next round is due an interval after the last was due (not after the loop woke for it): rounds a
// stall delays run when it ends, then go back to their own points; a round missed entirely is skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace glbd::health {

class Schedule {
public:
    static constexpr uint64_t kSlotMs = 10;                 // the grid of the rounds' points
    static constexpr uint64_t kFirstRoundPerSecond = 2000;  // first probes a second at most

    // For `targets` targets: the span their first rounds are spread over (ms).
    static uint64_t first_span(size_t targets);
    // One target's first round and phase, `interval` ms apart, at `now_ms` (steady clock): a target whose last
    // round (`last_round_ms`, 0: none) was less than an interval ago goes on from it; else its first round is a
    // random slot of the first span (at most the interval) and its phase a random slot of the interval.
    Schedule(uint64_t interval_ms, uint64_t span_ms, uint64_t last_round_ms, uint64_t now_ms, std::mt19937& rng);
    // How long after the start the first round is due.
    [[nodiscard]] uint64_t first_ms() const { return first_ms_; }
    [[nodiscard]] uint64_t phase_ms() const { return phase_ms_; }
    // A round fell due (it was due at due_ms(), the first one at start + first_ms()) and the loop runs it at
    // `now`: the time the next is due (after `now`), which due_ms() then returns. `start` is the loop time the
    // schedule began at.
    uint64_t next(uint64_t start, uint64_t now);
    [[nodiscard]] uint64_t due_ms(uint64_t start) const { return phased_ ? due_ms_ : start + first_ms_; }

private:
    uint64_t interval_ms_;
    uint64_t first_ms_ = 0, phase_ms_ = 0;
    uint64_t due_ms_ = 0;
    bool phased_ = false;  // the first round has begun: the later ones are at the phase
};

}  // namespace glbd::health
