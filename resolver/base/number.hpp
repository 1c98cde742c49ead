// resolver/base/number — a strict reading of an unsigned decimal number from a peer's or a file's text: the
// whole text and nothing else (no sign, space or other byte; not empty; no overflow), within [lo, hi].
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>

namespace glbd {

inline bool parse_unsigned(std::string_view s, uint64_t& out, uint64_t lo = 0,
                           uint64_t hi = std::numeric_limits<uint64_t>::max()) {
    uint64_t n = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || n < lo || n > hi) return false;
    out = n;
    return true;
}

}  // namespace glbd
