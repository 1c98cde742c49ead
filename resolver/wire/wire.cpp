#include "resolver/wire/wire.hpp"

#include <cctype>
#include <cstring>

namespace glbd::wire {

size_t read_plain_name(const uint8_t* msg, size_t len, size_t pos, uint8_t* out, size_t* out_len, unsigned* labels) {
    // Check the label structure, then copy the whole name lower-casing eight bytes at a time: a
    // length byte is at most 63, never an upper-case letter, so it passes through unchanged.
    const size_t start = pos;
    unsigned count = 0;
    while (true) {
        if (pos >= len) return 0;
        uint8_t l = msg[pos];
        if (l == 0) break;
        if (l > 63) return 0;  // pointers and extended label types
        pos += 1 + static_cast<size_t>(l);
        ++count;
        if (pos - start + 1 > kMaxName) return 0;
    }
    const size_t n = pos + 1 - start;
    const uint8_t* src = msg + start;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, src + i, 8);
        w = lower8(w);
        std::memcpy(out + i, &w, 8);
    }
    for (; i < n; ++i) out[i] = lower(src[i]);
    *out_len = n;
    if (labels) *labels = count;
    return n;
}

size_t skip_name(const uint8_t* msg, size_t len, size_t pos) {
    size_t total = 0;
    while (true) {
        if (pos >= len) return 0;
        uint8_t l = msg[pos];
        if (l == 0) return pos + 1;
        if ((l & 0xc0) == 0xc0) return pos + 2 <= len ? pos + 2 : 0;
        if (l > 63) return 0;
        total += l + 1;
        if (total > kMaxName) return 0;
        pos += 1 + l;
    }
}

unsigned label_count(std::string_view w) {
    unsigned n = 0;
    for (size_t i = 0; i < w.size() && w[i] != 0; i += static_cast<uint8_t>(w[i]) + 1) ++n;
    return n;
}

size_t suffix_offset(std::string_view w, unsigned drop) {
    size_t i = 0;
    while (drop-- > 0 && i < w.size() && w[i] != 0) i += static_cast<uint8_t>(w[i]) + 1;
    return i;
}

void Writer::bytes(const void* p, size_t n) {
    if (uint8_t* to = reserve(n)) std::memcpy(to, p, n);
}

bool Writer::matches(size_t off, std::string_view s) const {
    size_t i = 0;
    int hops = 0;
    while (true) {
        if (off >= pos_) return false;
        uint8_t l = buf_[off];
        if ((l & 0xc0) == 0xc0) {
            if (off + 1 >= pos_ || ++hops > 32) return false;
            off = static_cast<size_t>((l & 0x3f) << 8 | buf_[off + 1]);
            continue;
        }
        if (i >= s.size() || static_cast<uint8_t>(s[i]) != l) return false;
        if (l == 0) return true;
        for (size_t k = 1; k <= l; ++k) {
            if (off + k >= pos_) return false;
            if (lower(buf_[off + k]) != lower(static_cast<uint8_t>(s[i + k]))) return false;
        }
        off += l + 1;
        i += l + 1;
    }
}

void Writer::name(std::string_view w) {
    if (pending_) remember_pending();
    // Find the longest suffix already in the message (most candidates differ in their first byte).
    size_t at = 0;
    int target = -1;
    while (at < w.size() && w[at] != 0) {
        std::string_view suffix = w.substr(at);
        for (int k = 0; k < nptrs_; ++k) {
            if (matches(ptrs_[k], suffix)) {
                target = ptrs_[k];
                break;
            }
        }
        if (target >= 0) break;
        at += static_cast<uint8_t>(w[at]) + 1;
    }
    // Write the labels before it, remembering each as a future target.
    size_t i = 0;
    while (i < at) {
        add_target(pos_);
        size_t l = static_cast<uint8_t>(w[i]);
        bytes(w.data() + i, l + 1);
        i += l + 1;
    }
    if (target >= 0) {
        pointer(static_cast<uint16_t>(target));
    } else {
        u8(0);
    }
}

void Writer::remember_pending() {
    size_t off = pending_;
    pending_ = 0;
    while (off < pos_ && buf_[off] != 0 && (buf_[off] & 0xc0) == 0) {
        add_target(off);
        off += buf_[off] + 1u;
    }
}

size_t skip_questions(const uint8_t* msg, size_t len, size_t pos, unsigned count) {
    for (unsigned i = 0; i < count && pos != 0; ++i) {
        pos = skip_name(msg, len, pos);
        pos = (pos != 0 && pos + 4 <= len) ? pos + 4 : 0;
    }
    return pos;
}

void Writer::rewind(size_t pos) {
    pos_ = pos;
    overflow_ = false;
    if (pending_ >= pos) pending_ = 0;
    while (nptrs_ > 0 && ptrs_[nptrs_ - 1] >= pos) --nptrs_;
}

}  // namespace glbd::wire
