// resolver/wire/builder — a growable message for the control paths (sync transfers, TSIG records, requests):
// big-endian integers, wire names and bytes appended to a vector. The answer path uses wire::Writer on a
// fixed buffer instead; this one allocates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace glbd::wire {

class Builder {
public:
    void u8(uint8_t v) { b_.push_back(v); }
    void u16(uint16_t v) { u8(static_cast<uint8_t>(v >> 8)), u8(static_cast<uint8_t>(v)); }
    void u32(uint32_t v) { u16(static_cast<uint16_t>(v >> 16)), u16(static_cast<uint16_t>(v)); }
    void u48(uint64_t v) { u16(static_cast<uint16_t>(v >> 32)), u32(static_cast<uint32_t>(v)); }
    void bytes(std::string_view s) { b_.insert(b_.end(), s.begin(), s.end()); }
    void reserve(size_t n) { b_.reserve(n); }  // room for a message of about n bytes, grown into without copies
    // A character-string (RFC 1035 3.3): a length byte and at most 255 bytes of `s`.
    void text(std::string_view s) {
        size_t n = s.size() < 255 ? s.size() : 255;
        u8(static_cast<uint8_t>(n)), bytes(s.substr(0, n));
    }
    // Starts an RDATA whose length is written by end_rdata().
    size_t begin_rdata() {
        u16(0);
        return b_.size();
    }
    void end_rdata(size_t start) { patch16(start - 2, static_cast<uint16_t>(b_.size() - start)); }
    void patch16(size_t at, uint16_t v) { b_[at] = static_cast<uint8_t>(v >> 8), b_[at + 1] = static_cast<uint8_t>(v); }

    [[nodiscard]] size_t size() const { return b_.size(); }
    [[nodiscard]] std::string_view view() const { return {reinterpret_cast<const char*>(b_.data()), b_.size()}; }
    std::vector<uint8_t>& vec() { return b_; }

private:
    std::vector<uint8_t> b_;
};

}  // namespace glbd::wire
