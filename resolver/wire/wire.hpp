// resolver/wire/wire — DNS message bytes: a bounds-checked reader and a writer with name compression.
// Both work on caller-owned buffers and never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "resolver/wire/consts.hpp"

namespace glbd::wire {

// ASCII lower case, for DNS names (RFC 4343); no locale, inlined.
inline uint8_t lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c | 0x20) : c; }

// Lower-cases the ASCII letters of eight bytes at once (a byte's top bit means "not ASCII").
inline uint64_t lower8(uint64_t w) {
    constexpr uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t low7 = w & ~high;
    uint64_t ge_a = low7 + (0x80 - 'A') * ones;  // top bit set where the byte >= 'A'
    uint64_t gt_z = low7 + (0x7f - 'Z') * ones;  // top bit set where the byte > 'Z'
    uint64_t upper = (ge_a ^ gt_z) & ~w & high;
    return w | (upper >> 2);
}

// A case-insensitive hash of a wire name, eight bytes at a time (a length byte is at most 63, never
// a letter, so lower-casing whole words is safe). Keys the snapshot's name index.
inline uint64_t name_hash(std::string_view s) noexcept {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
    const char* p = s.data();
    size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        h = (h ^ lower8(w)) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    if (n > 0 && s.size() >= 8) {  // the last eight bytes, without those already hashed (little-endian)
        std::memcpy(&w, p + n - 8, 8);
        w >>= 8 * (8 - n);
    } else {
        for (size_t i = 0; i < n; ++i) w |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    }
    h = (h ^ lower8(w)) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

// Equality of two byte ranges of the same length, eight bytes at a time (names are short; no call).
inline bool same_bytes(const char* a, const char* b, size_t n) {
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x, y;
        std::memcpy(&x, a, 8);
        std::memcpy(&y, b, 8);
        if (x != y) return false;
    }
    for (; n > 0; ++a, ++b, --n) {
        if (*a != *b) return false;
    }
    return true;
}

inline uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t get32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
           p[3];
}

// Reads an uncompressed name at `pos` into `out` (lower-cased wire form). Returns the length of the
// name in the message, or 0 when malformed (a pointer, a bad label, past the end, longer than 255).
// `labels`, when given, receives the number of labels (the root has 0).
size_t read_plain_name(const uint8_t* msg, size_t len, size_t pos, uint8_t* out, size_t* out_len,
                       unsigned* labels = nullptr);
// Skips a possibly compressed name; returns the position after it, or 0 when malformed.
size_t skip_name(const uint8_t* msg, size_t len, size_t pos);
// Number of labels in an uncompressed wire name (the root has 0).
unsigned label_count(std::string_view wire);
// The length of the uncompressed wire name at `at` in `w` (known good: stored data, not a message), its root
// label included.
inline size_t name_length(std::string_view w, size_t at) {
    size_t i = at;
    while (i < w.size() && w[i] != 0) i += static_cast<uint8_t>(w[i]) + 1;
    return i + 1 - at;
}
// Offset of the suffix of `wire` that drops the first `drop` labels.
size_t suffix_offset(std::string_view wire, unsigned drop);

// Skips `count` questions from `pos`: the position after them, or 0 when one is malformed.
size_t skip_questions(const uint8_t* msg, size_t len, size_t pos, unsigned count);

// One resource record where it stands in a message: offsets of its owner name and its RDATA.
struct Record {
    size_t owner = 0;
    uint16_t type = 0, klass = 0;
    uint32_t ttl = 0;
    size_t rdata = 0, rdlen = 0;
    [[nodiscard]] size_t end() const { return rdata + rdlen; }
};

// Walks the records of a message from `pos` (the end of the question), one section after another; every
// offset it gives is inside the message. Never allocates.
class Records {
public:
    Records(const uint8_t* msg, size_t len, size_t pos) : msg_(msg), len_(len), pos_(pos) {}
    // The next record; false when it is malformed (a bad name, or running past the end).
    bool next(Record& r) {
        size_t p = pos_ ? skip_name(msg_, len_, pos_) : 0;
        if (p == 0 || p + 10 > len_) return false;
        r.owner = pos_;
        r.type = get16(msg_ + p), r.klass = get16(msg_ + p + 2), r.ttl = get32(msg_ + p + 4);
        r.rdlen = get16(msg_ + p + 8), r.rdata = p + 10;
        if (r.end() > len_) return false;
        pos_ = r.end();
        return true;
    }
    [[nodiscard]] size_t pos() const { return pos_; }

private:
    const uint8_t* msg_;
    size_t len_, pos_;
};

class Writer {
public:
    Writer(uint8_t* buf, size_t cap) : buf_(buf), cap_(cap) {}

    // Room for `n` more bytes: where to write them (the position moves past them), or null once the
    // message is full. Fixed-size pieces go through one check and plain stores.
    uint8_t* reserve(size_t n) {
        if (overflow_ || pos_ + n > cap_) {
            overflow_ = true;
            return nullptr;
        }
        uint8_t* p = buf_ + pos_;
        pos_ += n;
        return p;
    }
    static void put16(uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v >> 8), p[1] = static_cast<uint8_t>(v); }
    static void put32(uint8_t* p, uint32_t v) {
        put16(p, static_cast<uint16_t>(v >> 16)), put16(p + 2, static_cast<uint16_t>(v));
    }

    void u8(uint8_t v) {
        if (uint8_t* p = reserve(1)) *p = v;
    }
    void u16(uint16_t v) {
        if (uint8_t* p = reserve(2)) put16(p, v);
    }
    void u32(uint32_t v) {
        if (uint8_t* p = reserve(4)) put32(p, v);
    }
    void bytes(const void* p, size_t n);
    // Writes an uncompressed wire name, compressing against names already in the message.
    void name(std::string_view wire);
    // A pointer to a name already in the message (e.g. the question name at 12).
    void pointer(uint16_t offset) { u16(static_cast<uint16_t>(kCompressionPointer | offset)); }
    // Records the labels of a name written by other means (the copied question) for compression.
    // The walk is deferred to the first name() that could use it: most answers never compress.
    void remember_name(size_t offset) {
        if (pending_) remember_pending();
        pending_ = offset;
    }

    [[nodiscard]] size_t pos() const { return pos_; }
    [[nodiscard]] bool overflow() const { return overflow_; }
    void set_cap(size_t cap) { cap_ = cap; }
    // Returns to an earlier position (a record that did not fit); forgets names written after it.
    void rewind(size_t pos);
    void patch16(size_t at, uint16_t v) {
        buf_[at] = static_cast<uint8_t>(v >> 8), buf_[at + 1] = static_cast<uint8_t>(v);
    }
    uint8_t* data() { return buf_; }

private:
    bool matches(size_t offset, std::string_view suffix) const;
    void remember_pending();
    void add_target(size_t offset) {
        if (offset <= kMaxPointerOffset && nptrs_ < kMaxPtrs) ptrs_[nptrs_++] = static_cast<uint16_t>(offset);
    }

    static constexpr int kMaxPtrs = 96;
    uint8_t* buf_;
    size_t cap_;
    size_t pos_ = 0;
    bool overflow_ = false;
    uint16_t ptrs_[kMaxPtrs];  // offsets of label starts usable as compression targets
    int nptrs_ = 0;
    size_t pending_ = 0;  // a name remembered but not yet walked (0: none; names start after the header)
};

}  // namespace glbd::wire
