// resolver/wire/opt — EDNS on the answer path (RFC 6891): a query's OPT record read into `Edns` (the payload
// size, version, DO, and the two options glbd acts on: Client Subnet, RFC 7871, and COOKIE, RFC 7873), and a
// response's OPT record written back (the payload size offered, the upper bits of an extended rcode, DO, ECS
// with the scope answered for, a COOKIE with the server's). Inline and without allocation: the answer path
// calls each once per query.
#pragma once

#include <cstdint>
#include <cstring>

#include "resolver/wire/consts.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::wire {

struct Edns {
    bool present = false, do_bit = false;
    bool co_bit = false;  // Compact Answers OK (RFC 9824): NXDOMAIN wanted with a compact denial
    uint8_t version = 0;
    uint16_t payload = kMaxUdpNoEdns;  // at least 512 (RFC 6891 6.2.5)
    // Client Subnet: family, source prefix, and its ceil(source / 8) address bytes.
    bool ecs = false;
    uint16_t ecs_family = 0;
    uint8_t ecs_source = 0;
    uint8_t ecs_addr[16] = {};
    uint8_t ecs_addr_len = 0;
    // COOKIE: the client's 8 bytes, and the server cookie it sent back, if any (a view into the query).
    bool cookie = false;
    uint8_t client_cookie[edns::kClientCookieLen] = {};
    const uint8_t* server_cookie = nullptr;
    uint8_t server_cookie_len = 0;
};

// Reads the OPT record whose RDATA is at msg[rdata, rdata + rdlen) (inside the message, as `Records` gives
// it), its CLASS `payload` and TTL `ttl`. False: a malformed option (FORMERR).
inline bool read_opt(const uint8_t* msg, size_t rdata, size_t rdlen, uint16_t payload, uint32_t ttl, Edns& e) {
    e.present = true;
    e.payload = payload > kMaxUdpNoEdns ? payload : kMaxUdpNoEdns;
    e.version = static_cast<uint8_t>(ttl >> 16);
    e.do_bit = (ttl & edns::kDoBit) != 0;
    e.co_bit = (ttl & edns::kCoBit) != 0;
    size_t p = rdata, end = rdata + rdlen;
    while (p < end) {
        if (p + 4 > end) return false;
        uint16_t code = get16(msg + p), olen = get16(msg + p + 2);
        p += 4;
        if (p + olen > end) return false;
        if (code == edns::kOptionEcs) {
            // RFC 7871 6: family, source prefix, scope prefix, then exactly ceil(source/8) address bytes
            // with every bit beyond the source prefix zero.
            if (e.ecs || olen < 4) return false;
            uint16_t family = get16(msg + p);
            uint8_t source = msg[p + 2];
            unsigned max_bits = family == edns::kFamilyIpv4 ? 32 : family == edns::kFamilyIpv6 ? 128 : 0;
            if (max_bits == 0 || source > max_bits) return false;
            size_t addr_len = (source + 7u) / 8u;
            if (olen != 4 + addr_len) return false;
            const uint8_t* a = msg + p + 4;
            if (addr_len > 0 && (source % 8) != 0 && (a[addr_len - 1] & (0xff >> (source % 8))) != 0) return false;
            e.ecs = true;
            e.ecs_family = family;
            e.ecs_source = source;
            e.ecs_addr_len = static_cast<uint8_t>(addr_len);
            std::memcpy(e.ecs_addr, a, addr_len);
        }
        if (code == edns::kOptionCookie) {
            // RFC 7873 5.2.2: a client cookie of 8 bytes, alone or with a server cookie of 8..32.
            if (e.cookie || !(olen == edns::kClientCookieLen || (olen >= 16 && olen <= 40))) return false;
            e.cookie = true;
            std::memcpy(e.client_cookie, msg + p, edns::kClientCookieLen);
            e.server_cookie = msg + p + edns::kClientCookieLen;
            e.server_cookie_len = static_cast<uint8_t>(olen - edns::kClientCookieLen);
        }
        p += olen;  // other options are ignored and not echoed
    }
    return true;
}

// The size of the OPT record written for a query's `e` (write_opt, with a server cookie of `server_cookie_len`).
inline size_t opt_size(const Edns& e, size_t server_cookie_len) {
    return 11 + (e.ecs ? 8u + e.ecs_addr_len : 0u) + (e.cookie ? 4u + edns::kClientCookieLen + server_cookie_len : 0u);
}

// Appends the response's OPT record for a query's `e`: the payload size offered, `ext_rcode` (its upper 8
// bits), DO echoed, ECS echoed with `scope` (0 for a source prefix of 0), and with a cookie, the client's and
// `server_cookie`; CO when `compact` (the answer is a compact denial the client asked NXDOMAIN for). False
// when it did not fit (the writer then overflows).
inline bool write_opt(Writer& w, const Edns& e, uint16_t payload, uint16_t ext_rcode, uint8_t scope,
                      const uint8_t* server_cookie, size_t server_cookie_len, bool compact = false) {
    const size_t ecs_len = e.ecs ? 8u + e.ecs_addr_len : 0u;
    const size_t cookie_len = e.cookie ? 4u + edns::kClientCookieLen + server_cookie_len : 0u;
    // Root owner, OPT, payload size, extended rcode, version 0, DO, then the options' length.
    uint8_t* p = w.reserve(11 + ecs_len + cookie_len);
    if (!p) return false;
    p[0] = 0;
    Writer::put16(p + 1, type::OPT);
    Writer::put16(p + 3, payload);
    p[5] = static_cast<uint8_t>(ext_rcode >> 4);
    p[6] = 0;
    Writer::put16(p + 7, static_cast<uint16_t>((e.do_bit ? edns::kDoBit : 0) | (compact ? edns::kCoBit : 0)));
    Writer::put16(p + 9, static_cast<uint16_t>(ecs_len + cookie_len));
    if (e.ecs) {
        Writer::put16(p + 11, edns::kOptionEcs);
        Writer::put16(p + 13, static_cast<uint16_t>(4 + e.ecs_addr_len));
        Writer::put16(p + 15, e.ecs_family);
        p[17] = e.ecs_source;
        p[18] = e.ecs_source == 0 ? 0 : scope;
        std::memcpy(p + 19, e.ecs_addr, e.ecs_addr_len);
    }
    if (e.cookie) {
        uint8_t* c = p + 11 + ecs_len;
        Writer::put16(c, edns::kOptionCookie);
        Writer::put16(c + 2, static_cast<uint16_t>(edns::kClientCookieLen + server_cookie_len));
        std::memcpy(c + 4, e.client_cookie, edns::kClientCookieLen);
        std::memcpy(c + 4 + edns::kClientCookieLen, server_cookie, server_cookie_len);
    }
    return true;
}

}  // namespace glbd::wire
