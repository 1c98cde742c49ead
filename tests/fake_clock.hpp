// tests/fake_clock — a Clock a test moves itself: both clocks start where the test says and move only by
// advance(), so that what depends on time (beats' round trips, loss, probe schedules) is exact.
#pragma once

#include <atomic>
#include <cstdint>

#include "resolver/base/clock.hpp"

namespace glbd::test {

class FakeClock final : public Clock {
public:
    explicit FakeClock(uint64_t wall_ms = 1'700'000'000'000, uint64_t steady_ms = 1'000'000)
        : wall_(wall_ms), steady_(steady_ms) {}
    [[nodiscard]] uint64_t wall_ms() const override { return wall_.load(); }
    [[nodiscard]] uint64_t steady_ms() const override { return steady_.load(); }
    void advance(uint64_t ms) {
        wall_ += ms;
        steady_ += ms;
    }

private:
    std::atomic<uint64_t> wall_, steady_;
};

}  // namespace glbd::test
