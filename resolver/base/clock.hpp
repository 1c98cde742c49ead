// resolver/base/clock — the two clocks glbd reads, in milliseconds: the wall clock (what peers compare:
// versions, heartbeats, override times) and the steady clock (intervals on one machine).
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

}  // namespace glbd
