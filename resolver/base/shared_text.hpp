// resolver/base/shared_text — an immutable string in 8 bytes: what the view keeps of each entry's short, often
// repeated texts (a geo code, an entry's upstream name). Up to 7 bytes are held inline (a geo code: "IE",
// "GEO-EU"); a longer text is one heap block that every copy shares (an atomic count, as shared_ptr's). Empty is
// all zero. A std::string is 32 bytes and, past 15 characters, a heap chunk of its own per copy: at 10,000 hosts x
// 20 clusters an entry's two such fields cost 64 bytes more than these, 12 MB in all.
// Copies may be made and dropped on any threads; one object is one thread's at a time, like a std::string.
#pragma once

#include <atomic>
#include <bit>
#include <compare>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace glbd {

class SharedText {
public:
    SharedText() noexcept = default;
    SharedText(std::string_view s) { assign(s); }                          // NOLINT: implicit, as std::string's
    SharedText(const std::string& s) : SharedText(std::string_view(s)) {}  // NOLINT
    SharedText(const char* s) : SharedText(std::string_view(s)) {}         // NOLINT
    SharedText(const SharedText& o) noexcept : bits_(o.bits_) {
        if (const Block* b = o.block()) b->refs.fetch_add(1, std::memory_order_relaxed);
    }
    SharedText(SharedText&& o) noexcept : bits_(o.bits_) { o.bits_ = 0; }
    SharedText& operator=(const SharedText& o) noexcept {
        SharedText(o).swap(*this);
        return *this;
    }
    SharedText& operator=(SharedText&& o) noexcept {
        SharedText(std::move(o)).swap(*this);
        return *this;
    }
    ~SharedText() { release(); }
    void swap(SharedText& o) noexcept { std::swap(bits_, o.bits_); }

    [[nodiscard]] std::string_view view() const noexcept {
        if (bits_ & kInline) return {reinterpret_cast<const char*>(&bits_) + 1, (bits_ >> 1) & 7};
        if (const Block* b = block()) return {b->chars(), b->size};
        return {};
    }
    operator std::string_view() const noexcept { return view(); }  // NOLINT: implicit, for readers
    [[nodiscard]] std::string str() const { return std::string(view()); }
    [[nodiscard]] bool empty() const noexcept { return bits_ == 0; }
    [[nodiscard]] size_t size() const noexcept { return view().size(); }
    [[nodiscard]] const char* data() const noexcept { return view().data(); }
    // Whether the two share one heap block (equal without looking; inline texts are compared).
    [[nodiscard]] bool same_block(const SharedText& o) const noexcept { return bits_ == o.bits_; }

    friend bool operator==(const SharedText& a, const SharedText& b) noexcept {
        return a.bits_ == b.bits_ || a.view() == b.view();
    }
    friend std::strong_ordering operator<=>(const SharedText& a, const SharedText& b) noexcept {
        return a.view() <=> b.view();
    }
    // With any text (a literal, a std::string): an exact match, so no SharedText is made to compare.
    template <class T>
    requires(std::is_convertible_v<const T&, std::string_view> && !std::is_same_v<T, SharedText>) friend bool
    operator==(const SharedText& a, const T& b) noexcept {
        return a.view() == std::string_view(b);
    }
    template <class T>
    requires(std::is_convertible_v<const T&, std::string_view> &&
             !std::is_same_v<T, SharedText>) friend std::strong_ordering
    operator<=>(const SharedText& a, const T& b) noexcept {
        return a.view() <=> std::string_view(b);
    }

    friend std::string operator+(std::string a, const SharedText& b) { return a.append(b.view()); }
    friend std::ostream& operator<<(std::ostream& out, const SharedText& t) { return out << t.view(); }
    friend std::string operator+(const SharedText& a, std::string_view b) { return a.str().append(b); }

private:
    static_assert(std::endian::native == std::endian::little, "inline text starts after the tag byte");
    static constexpr uintptr_t kInline = 1;  // low bit: inline (a block is 8-aligned, its low bit 0)
    static constexpr size_t kMaxInline = sizeof(uintptr_t) - 1;

    struct Block {
        mutable std::atomic<uint32_t> refs;
        uint32_t size;
        [[nodiscard]] const char* chars() const noexcept { return reinterpret_cast<const char*>(this + 1); }
    };
    static_assert(alignof(Block) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

    [[nodiscard]] const Block* block() const noexcept {
        return (bits_ & kInline) ? nullptr : reinterpret_cast<const Block*>(bits_);  // NOLINT: the tagged word
    }
    void assign(std::string_view s) {
        if (s.empty()) return;
        if (s.size() <= kMaxInline) {
            bits_ = kInline | (s.size() << 1);
            std::memcpy(reinterpret_cast<char*>(&bits_) + 1, s.data(), s.size());
            return;
        }
        if (s.size() > UINT32_MAX) throw std::length_error("SharedText: text too long");
        void* at = ::operator new(sizeof(Block) + s.size());
        auto* b = new (at) Block{{1}, static_cast<uint32_t>(s.size())};
        std::memcpy(const_cast<char*>(b->chars()), s.data(), s.size());
        bits_ = reinterpret_cast<uintptr_t>(b);  // NOLINT: the tagged word
    }
    void release() noexcept {
        const Block* b = block();
        if (b && b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            b->~Block();
            ::operator delete(const_cast<Block*>(b));
        }
        bits_ = 0;
    }
    uintptr_t bits_ = 0;
};
static_assert(sizeof(SharedText) == 8);

}  // namespace glbd

template <>
struct std::hash<glbd::SharedText> {
    size_t operator()(const glbd::SharedText& t) const noexcept { return std::hash<std::string_view>{}(t.view()); }
};
