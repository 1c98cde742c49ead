// server/net/rrl — response rate limiting for UDP, as NSD and Knot do it: per client prefix (/24 IPv4, /56
// IPv6 by default) and kind of response, at most `rate` responses a second; of the limited ones every
// `slip`-th is sent truncated (TC=1: a real client retries over TCP), the others are dropped. One table
// per UDP worker (no sharing, no locks); a fixed-size table whose collisions only make limiting coarser.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "geo/geo.hpp"
#include "resolver/resolver.hpp"

namespace glbd {

struct RrlOptions {
    unsigned rate = 0;  // responses per second per (prefix, kind); 0 = off
    unsigned slip = 2;  // 0: drop every limited response; 1: truncate every one; N: every Nth
    uint8_t ipv4_prefix = 24;
    uint8_t ipv6_prefix = 56;
};

class RateLimiter {
public:
    enum class Action { send, slip, drop };
    explicit RateLimiter(RrlOptions o) : opt_(o), table_(opt_.rate ? kSlots : 0) {}
    [[nodiscard]] bool enabled() const { return opt_.rate > 0; }
    Action check(const geo::Address& client, Outcome kind, uint32_t now_s);

private:
    static constexpr size_t kSlots = 1 << 16;
    struct Slot {
        uint64_t key = 0;
        uint32_t second = 0;
        uint32_t count = 0;
        uint32_t limited = 0;
    };
    RrlOptions opt_;
    std::vector<Slot> table_;
};

// Cuts a response down to its header and question, with TC=1 (for a slipped response).
size_t truncate_response(uint8_t* msg, size_t len);

}  // namespace glbd
