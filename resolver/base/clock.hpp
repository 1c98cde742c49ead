// resolver/base/clock — the two clocks glbd reads, in milliseconds: the wall clock (what peers compare:
// versions, heartbeats, override times) and the steady clock (intervals on one machine); and the same as an
// object (`Clock`), which the parts that keep time (the sync service, the health checker) are given, so that a
// test can give them a clock it moves itself (tests/fake_clock.hpp).
#pragma once

#include <chrono>
#include <cstdint>

namespace glbd {

inline uint64_t wall_ms() {
    using namespace std::chrono;
    return static_cast<uint64_t>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

inline uint64_t steady_ms() {
    using namespace std::chrono;
    return static_cast<uint64_t>(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

class Clock {
public:
    virtual ~Clock() = default;
    [[nodiscard]] virtual uint64_t wall_ms() const = 0;
    [[nodiscard]] virtual uint64_t steady_ms() const = 0;
};

// The real clocks (the functions above).
inline const Clock& system_clock() {
    struct System final : Clock {
        [[nodiscard]] uint64_t wall_ms() const override { return glbd::wall_ms(); }
        [[nodiscard]] uint64_t steady_ms() const override { return glbd::steady_ms(); }
    };
    static const System clock;
    return clock;
}

}  // namespace glbd
