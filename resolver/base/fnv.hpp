// resolver/base/fnv — FNV-1a (64 bit), fed in pieces: the same value on every platform and build, where
// servers must agree (the outside vantages' rank) or one must notice a change cheaply (a fingerprint).
#pragma once

#include <cstdint>
#include <string_view>

namespace glbd {

class Fnv1a {
public:
    Fnv1a& add(std::string_view s) {
        for (unsigned char c : s) add_byte(c);
        return *this;
    }
    // One byte, e.g. a separator between pieces, so that ("ab", "c") and ("a", "bc") hash apart.
    Fnv1a& add_byte(uint8_t b) {
        h_ = (h_ ^ b) * 0x100000001b3ULL;
        return *this;
    }
    [[nodiscard]] uint64_t value() const { return h_; }

private:
    uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace glbd
