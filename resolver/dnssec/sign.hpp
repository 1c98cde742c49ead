// resolver/dnssec/sign — an RRset's RRSIG (RFC 4034 section 3), made with a zone's key (README.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/dnssec/keys.hpp"

namespace glbd::dnssec {

// The RRset to sign: names in uncompressed, lower-cased wire form (RFC 4034 6.2's canonical form; glbd's own
// RDATA already has its names lower-cased), class IN.
struct RRset {
    std::string_view owner;
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::vector<std::string_view> rdatas;  // in any order; put in canonical order (6.3) and deduplicated
};

// The RRSIG RDATA (wire) over `set` by `key` for the zone `signer` (wire), valid from `inception` to
// `expiration` (seconds since the epoch, taken modulo 2^32 as RFC 4034 3.1.5 says); "" when the key cannot
// sign. Allocates: for the control and signer threads, never the query path.
std::string sign(const Key& key, std::string_view signer, const RRset& set, uint32_t inception, uint32_t expiration);

}  // namespace glbd::dnssec
