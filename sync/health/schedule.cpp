#include "sync/health/schedule.hpp"

#include <algorithm>

namespace glbd::health {

uint64_t Schedule::first_span(size_t targets) {
    return std::max<uint64_t>(1000, static_cast<uint64_t>(targets) * 1000 / kFirstRoundPerSecond);
}

Schedule::Schedule(uint64_t interval_ms, uint64_t span_ms, uint64_t last_round_ms, uint64_t now_ms, std::mt19937& rng)
    : interval_ms_(std::max<uint64_t>(1, interval_ms)) {
    if (last_round_ms && last_round_ms + interval_ms_ > now_ms) {
        first_ms_ = last_round_ms + interval_ms_ - now_ms;
        phase_ms_ = first_ms_;  // the later rounds every interval from this one
        return;
    }
    auto slot = [&rng](uint64_t span) {
        return std::uniform_int_distribution<uint64_t>(0, (std::max<uint64_t>(span, 1) - 1) / kSlotMs)(rng) * kSlotMs;
    };
    first_ms_ = slot(std::min(interval_ms_, span_ms));
    phase_ms_ = slot(interval_ms_);
}

uint64_t Schedule::next(uint64_t start, uint64_t now) {
    uint64_t next = phased_ ? due_ms_ + interval_ms_ : start + phase_ms_ + interval_ms_;
    phased_ = true;
    if (next <= now) next += ((now - next) / interval_ms_ + 1) * interval_ms_;
    due_ms_ = next;
    return next;
}

}  // namespace glbd::health
