// server/net/rrl — response rate limiting for UDP, as NSD and Knot do it: per client prefix (/24 IPv4, /56
// IPv6 by default) and kind of response, at most `rate` responses a second; of the limited ones every
// `slip`-th is sent truncated (TC=1: a real client retries over TCP), the others are dropped. One table
// per UDP worker (no sharing, no locks) of fixed size. A key's slot is found with SipHash-2-4 under a random
// secret of the table (as Knot does), so no one can compute offline which prefix shares a victim's slot; a
// key takes a free or stale slot of its window of kWindow and never resets another key's count this second
// (when every slot of the window is busy, it counts in its first slot beside that key: coarser, never
// looser).
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>

#include "geo/geo.hpp"
#include "resolver/cookie.hpp"
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
    // `secret`: the hash key (tests give one; by default a random one from the kernel).
    explicit RateLimiter(RrlOptions o, std::optional<cookie::Secret> secret = std::nullopt);
    [[nodiscard]] bool enabled() const { return opt_.rate > 0; }
    Action check(const geo::Address& client, Outcome kind, uint32_t now_s);

    static constexpr size_t kSlots = 1 << 16;
    static constexpr size_t kWindow = 8;  // the slots a key may take, from its hash's slot on

private:
    struct Slot {
        uint64_t key = 0;
        uint32_t second = 0;
        uint32_t count = 0;
        uint32_t limited = 0;
    };
    Slot& slot_of(uint64_t key, uint32_t now_s);
    RrlOptions opt_;
    cookie::Secret secret_;
    struct Free {
        void operator()(Slot* p) const { std::free(p); }
    };
    // kSlots zeroed slots (key 0: free) from calloc, whose fresh pages the kernel zeroes as they are first
    // touched: a table a quiet server never fills costs it no memset and no resident memory.
    std::unique_ptr<Slot[], Free> table_;
};

// Cuts a response down to its header and question, with TC=1 (for a slipped response).
size_t truncate_response(uint8_t* msg, size_t len);

}  // namespace glbd
