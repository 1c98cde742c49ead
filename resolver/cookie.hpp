// resolver/cookie — DNS Cookies (RFC 7873) with the interoperable server cookie of RFC 9018: version 1,
// three reserved bytes, a 32-bit timestamp, and SipHash-2-4 over (client cookie | version | reserved |
// timestamp | client address) keyed with a 128-bit server secret. A client that returns a server cookie we
// made for its address within the last hour is proven not to spoof that address: UDP answers to it skip
// response rate limiting. Pure functions on the query path: no allocation, no lock.
//
// SipHash is written here rather than taken from OpenSSL: OpenSSL offers it only through EVP_MAC, which
// allocates a context per use (or shares one across threads) and costs more than the hash on this path.
// Checked against the reference test vectors (tests/resolver_test.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "resolver/base/address.hpp"
#include "resolver/wire/consts.hpp"

namespace glbd::cookie {

using Secret = std::array<uint8_t, 16>;

// SipHash-2-4 of `len` bytes with a 128-bit key (the reference implementation's byte order).
uint64_t siphash24(const Secret& key, const uint8_t* data, size_t len) noexcept;

constexpr size_t kClientLen = wire::edns::kClientCookieLen;
constexpr size_t kServerLen = 16;     // RFC 9018
constexpr uint32_t kMaxAgeS = 3600;   // a server cookie older than an hour is not accepted
constexpr uint32_t kMaxAheadS = 300;  // nor one from more than five minutes in the future

// Writes the 16-byte server cookie for `client_cookie` and `client` at `now_s` into `out`.
void make_server_cookie(const Secret& secret, const uint8_t* client_cookie, const Address& client, uint32_t now_s,
                        uint8_t* out) noexcept;
// Whether `server_cookie` (`len` bytes) is one we made for this client cookie and address, recently.
bool valid_server_cookie(const Secret& secret, const uint8_t* client_cookie, const uint8_t* server_cookie, size_t len,
                         const Address& client, uint32_t now_s) noexcept;
// The same, made with `secret` or, after a rotation (RFC 9018 section 5), with `previous`.
bool valid_server_cookie(const Secret& secret, const std::optional<Secret>& previous, const uint8_t* client_cookie,
                         const uint8_t* server_cookie, size_t len, const Address& client, uint32_t now_s) noexcept;

// 128 random bits from the kernel (getrandom), for a cookie secret or any keyed hash (the RRL tables').
Secret random_secret();

}  // namespace glbd::cookie
