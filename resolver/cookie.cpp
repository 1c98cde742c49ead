#include "resolver/cookie.hpp"

#include <sys/random.h>

#include <cstring>
#include <random>

namespace glbd::cookie {
namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
inline uint64_t load64_le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
inline void round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
    v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
    v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
}

// The bytes the hash covers (RFC 9018 4.4); returns their length.
size_t hash_input(const uint8_t* client_cookie, const uint8_t* head, const Address& client, uint8_t* buf) {
    std::memcpy(buf, client_cookie, kClientLen);
    std::memcpy(buf + kClientLen, head, 8);  // version, reserved, timestamp
    size_t alen = client.family == 4 ? 4 : 16;
    std::memcpy(buf + 16, client.bytes.data(), alen);
    return 16 + alen;
}

}  // namespace

uint64_t siphash24(const Secret& key, const uint8_t* data, size_t len) noexcept {
    const uint64_t k0 = load64_le(key.data()), k1 = load64_le(key.data() + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    const size_t full = len - len % 8;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = load64_le(data + i);
        v3 ^= m;
        round(v0, v1, v2, v3), round(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t b = static_cast<uint64_t>(len) << 56;
    for (size_t i = 0; i < len % 8; ++i) b |= static_cast<uint64_t>(data[full + i]) << (8 * i);
    v3 ^= b;
    round(v0, v1, v2, v3), round(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) round(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

void make_server_cookie(const Secret& secret, const uint8_t* client_cookie, const Address& client, uint32_t now_s,
                        uint8_t* out) noexcept {
    out[0] = 1, out[1] = out[2] = out[3] = 0;
    out[4] = static_cast<uint8_t>(now_s >> 24), out[5] = static_cast<uint8_t>(now_s >> 16);
    out[6] = static_cast<uint8_t>(now_s >> 8), out[7] = static_cast<uint8_t>(now_s);
    uint8_t buf[32];
    uint64_t h = siphash24(secret, buf, hash_input(client_cookie, out, client, buf));
    for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<uint8_t>(h >> (8 * i));
}

bool valid_server_cookie(const Secret& secret, const uint8_t* client_cookie, const uint8_t* server_cookie, size_t len,
                         const Address& client, uint32_t now_s) noexcept {
    if (len != kServerLen || server_cookie[0] != 1) return false;
    uint32_t ts = static_cast<uint32_t>(server_cookie[4]) << 24 | static_cast<uint32_t>(server_cookie[5]) << 16 |
                  static_cast<uint32_t>(server_cookie[6]) << 8 | server_cookie[7];
    auto age = static_cast<int32_t>(now_s - ts);  // serial arithmetic (RFC 1982), as RFC 9018 asks
    if (age > static_cast<int32_t>(kMaxAgeS) || age < -static_cast<int32_t>(kMaxAheadS)) return false;
    uint8_t expect[kServerLen];
    make_server_cookie(secret, client_cookie, client, ts, expect);
    uint8_t diff = 0;
    for (size_t i = 8; i < kServerLen; ++i) diff |= static_cast<uint8_t>(expect[i] ^ server_cookie[i]);
    return diff == 0 && std::memcmp(expect, server_cookie, 4) == 0;
}

bool valid_server_cookie(const Secret& secret, const std::optional<Secret>& previous, const uint8_t* client_cookie,
                         const uint8_t* server_cookie, size_t len, const Address& client, uint32_t now_s) noexcept {
    return valid_server_cookie(secret, client_cookie, server_cookie, len, client, now_s) ||
           (previous && valid_server_cookie(*previous, client_cookie, server_cookie, len, client, now_s));
}

Secret random_secret() {
    Secret s{};
    if (::getrandom(s.data(), s.size(), 0) != static_cast<ssize_t>(s.size())) {
        std::random_device rd;  // the kernel's generator too, by another path
        for (auto& b : s) b = static_cast<uint8_t>(rd());
    }
    return s;
}

}  // namespace glbd::cookie
