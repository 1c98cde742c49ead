#include "server/net/rrl.hpp"

#include <new>

#include "resolver/wire/query.hpp"

namespace glbd {

RateLimiter::RateLimiter(RrlOptions o, std::optional<cookie::Secret> secret)
    : opt_(o), secret_(secret ? *secret : cookie::random_secret()) {
    if (!opt_.rate) return;
    table_.reset(static_cast<Slot*>(std::calloc(kSlots, sizeof(Slot))));
    if (!table_) throw std::bad_alloc();
}

// The key's slot: the first of its window that holds it, else the first free or stale one (a key not seen
// this second: its count would start again anyway), else its first slot, shared.
RateLimiter::Slot& RateLimiter::slot_of(uint64_t key, uint32_t now_s) {
    size_t home = key & (kSlots - 1);
    Slot* fresh = nullptr;
    for (size_t i = 0; i < kWindow; ++i) {
        Slot& s = table_[(home + i) & (kSlots - 1)];
        if (s.key == key) return s;
        if (!fresh && (s.key == 0 || s.second != now_s)) fresh = &s;
    }
    if (!fresh) return table_[home];
    *fresh = Slot{key, now_s, 0, 0};
    return *fresh;
}

RateLimiter::Action RateLimiter::check(const geo::Address& a, Outcome kind, uint32_t now_s) {
    // The key: the client's prefix, its family and the kind of response, hashed with the table's secret.
    uint8_t bits = a.family == 4 ? opt_.ipv4_prefix : opt_.ipv6_prefix;
    uint8_t buf[2 + 16] = {static_cast<uint8_t>(a.family), static_cast<uint8_t>(kind)};
    size_t n = (bits + 7u) / 8u;
    for (size_t i = 0; i < n; ++i) {
        uint8_t b = a.bytes[i];
        if (i == bits / 8u) b = static_cast<uint8_t>(b & (0xff << (8 - bits % 8)));
        buf[2 + i] = b;
    }
    uint64_t key = cookie::siphash24(secret_, buf, 2 + n) | 1;  // never 0, the empty slot's key
    Slot& s = slot_of(key, now_s);
    if (s.second != now_s) s.second = now_s, s.count = 0;
    if (++s.count <= opt_.rate) return Action::send;
    if (opt_.slip == 0) return Action::drop;
    return (++s.limited % opt_.slip == 0) ? Action::slip : Action::drop;
}

size_t truncate_response(uint8_t* msg, size_t len) { return wire::truncate_to_question(msg, len); }

}  // namespace glbd
