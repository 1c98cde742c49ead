// resolver/wire — DNS message bytes: a bounds-checked reader and a writer with name compression.
// Both work on caller-owned buffers and never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace glbd::wire {

namespace type {
constexpr uint16_t A = 1, NS = 2, CNAME = 5, SOA = 6, PTR = 12, MX = 15, TXT = 16, AAAA = 28, SRV = 33,
                   DNAME = 39, OPT = 41, DS = 43, IXFR = 251, AXFR = 252, MAILB = 253, MAILA = 254, ANY = 255;
}
namespace rcode {
constexpr uint8_t NOERROR = 0, FORMERR = 1, SERVFAIL = 2, NXDOMAIN = 3, NOTIMP = 4, REFUSED = 5, NOTAUTH = 9;
constexpr uint16_t BADVERS = 16;
}
constexpr uint16_t kClassIn = 1;
constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxName = 255;

// ASCII lower case, for DNS names (RFC 4343); no locale, inlined.
inline uint8_t lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c | 0x20) : c; }

inline uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t get32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 | p[3];
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
// Offset of the suffix of `wire` that drops the first `drop` labels.
size_t suffix_offset(std::string_view wire, unsigned drop);

class Writer {
public:
    Writer(uint8_t* buf, size_t cap) : buf_(buf), cap_(cap) {}

    void u8(uint8_t v) { if (room(1)) buf_[pos_++] = v; }
    void u16(uint16_t v) { if (room(2)) buf_[pos_++] = static_cast<uint8_t>(v >> 8), buf_[pos_++] = static_cast<uint8_t>(v); }
    void u32(uint32_t v) { u16(static_cast<uint16_t>(v >> 16)), u16(static_cast<uint16_t>(v)); }
    void bytes(const void* p, size_t n);
    // Writes an uncompressed wire name, compressing against names already in the message.
    void name(std::string_view wire);
    // A pointer to a name already in the message (e.g. the question name at 12).
    void pointer(uint16_t offset) { u16(static_cast<uint16_t>(0xc000 | offset)); }
    // Records the labels of a name written by other means (the copied question) for compression.
    // The walk is deferred to the first name() that could use it: most answers never compress.
    void remember_name(size_t offset) {
        if (pending_) remember_pending();
        pending_ = offset;
    }

    [[nodiscard]] size_t pos() const { return pos_; }
    [[nodiscard]] bool overflow() const { return overflow_; }
    [[nodiscard]] size_t cap() const { return cap_; }
    void set_cap(size_t cap) { cap_ = cap; }
    // Returns to an earlier position (a record that did not fit); forgets names written after it.
    void rewind(size_t pos);
    void patch16(size_t at, uint16_t v) { buf_[at] = static_cast<uint8_t>(v >> 8), buf_[at + 1] = static_cast<uint8_t>(v); }
    uint8_t* data() { return buf_; }

private:
    bool room(size_t n) {
        if (overflow_ || pos_ + n > cap_) return overflow_ = true, false;
        return true;
    }
    bool matches(size_t offset, std::string_view suffix) const;
    void remember_pending();

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
