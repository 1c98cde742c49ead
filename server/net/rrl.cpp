#include "server/net/rrl.hpp"

#include "resolver/wire/wire.hpp"

namespace glbd {

RateLimiter::Action RateLimiter::check(const geo::Address& a, Outcome kind, uint32_t now_s) {
    // The key: the client's prefix, its family and the kind of response.
    uint8_t bits = a.family == 4 ? opt_.ipv4_prefix : opt_.ipv6_prefix;
    uint64_t h = 1469598103934665603ull ^ (static_cast<uint64_t>(a.family) << 8 | static_cast<uint64_t>(kind));
    for (unsigned i = 0; i < (bits + 7u) / 8u; ++i) {
        uint8_t b = a.bytes[i];
        if (i == bits / 8u) b = static_cast<uint8_t>(b & (0xff << (8 - bits % 8)));
        h = (h ^ b) * 1099511628211ull;
    }
    h |= 1;  // never 0, the empty slot's key
    Slot& s = table_[h & (kSlots - 1)];
    if (s.key != h || s.second != now_s) {
        if (s.key != h) s.limited = 0;
        s.key = h, s.second = now_s, s.count = 0;
    }
    if (++s.count <= opt_.rate) return Action::send;
    if (opt_.slip == 0) return Action::drop;
    return (++s.limited % opt_.slip == 0) ? Action::slip : Action::drop;
}

size_t truncate_response(uint8_t* msg, size_t len) {
    if (len < wire::kHeaderSize) return len;
    size_t end = wire::kHeaderSize;
    if (wire::get16(msg + 4) == 1) {
        end = wire::skip_name(msg, len, wire::kHeaderSize);
        if (end == 0 || end + 4 > len) return len;
        end += 4;
    }
    msg[2] |= 0x02;  // TC
    for (int i = 6; i < 12; ++i) msg[i] = 0;
    return end;
}

}  // namespace glbd
