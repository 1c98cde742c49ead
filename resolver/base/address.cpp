#include "resolver/base/address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace glbd {
namespace {
constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
}  // namespace

void Address::unmap(uint8_t* prefix) {
    if (family != 6 || std::memcmp(bytes.data(), kMapped, 12) != 0) return;
    if (prefix && *prefix < 96) return;  // a short prefix covers more than the mapped range
    std::memmove(bytes.data(), bytes.data() + 12, 4);
    std::memset(bytes.data() + 4, 0, 12);
    family = 4;
    if (prefix) *prefix = static_cast<uint8_t>(*prefix - 96);
}

bool Address::parse(std::string_view text, Address& out) {
    char buf[64];
    if (text.size() >= sizeof buf) return false;
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = 0;
    out = Address{};
    if (inet_pton(AF_INET, buf, out.bytes.data()) == 1) {
        out.family = 4;
        return true;
    }
    if (inet_pton(AF_INET6, buf, out.bytes.data()) == 1) {
        out.family = 6;
        return true;
    }
    return false;
}

std::string Address::str() const {
    std::string out;
    append_to(out);
    return out;
}

namespace {
void append_ipv4(std::string& out, const uint8_t* b) {
    for (size_t i = 0; i < 4; ++i) {
        const uint8_t v = b[i];
        if (i) out += '.';
        if (v >= 100) out += static_cast<char>('0' + v / 100);
        if (v >= 10) out += static_cast<char>('0' + v / 10 % 10);
        out += static_cast<char>('0' + v % 10);
    }
}
}  // namespace

// inet_ntop's text, made without it (its locale-proof printf is most of its cost, and a peer's report carries
// thousands of addresses): IPv4 dotted; IPv6 as glibc writes it (RFC 5952: the longest run of two or more zero
// words as "::", the first of equal ones; lower-case hex without leading zeros; an IPv4-compatible or -mapped
// address with its last 32 bits dotted). tests/base_test.cpp compares it with inet_ntop.
void Address::append_to(std::string& out) const {
    out.reserve(out.size() + (family == 4 ? 15 : 39));
    if (family == 4) return append_ipv4(out, bytes.data());
    uint16_t words[8];
    for (size_t i = 0; i < 8; ++i) words[i] = static_cast<uint16_t>(bytes[2 * i] << 8 | bytes[2 * i + 1]);
    int best = -1, best_len = 0;
    for (int i = 0; i < 8;) {
        if (words[i]) {
            ++i;
            continue;
        }
        int j = i;
        while (j < 8 && !words[j]) ++j;
        if (j - i > best_len) best = i, best_len = j - i;
        i = j;
    }
    if (best_len < 2) best = -1;
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 8; ++i) {
        if (best >= 0 && i >= best && i < best + best_len) {
            if (i == best) out += ':';
            continue;
        }
        if (i) out += ':';
        if (i == 6 && best == 0 &&
            (best_len == 6 || (best_len == 7 && words[7] != 1) || (best_len == 5 && words[5] == 0xffff))) {
            append_ipv4(out, bytes.data() + 12);
            return;
        }
        bool digits = false;
        for (int shift = 12; shift >= 0; shift -= 4) {
            const unsigned d = (words[i] >> shift) % 16;  // a hex digit
            if (d || digits || shift == 0) out += kHex[d], digits = true;
        }
    }
    if (best >= 0 && best + best_len == 8) out += ':';
}

bool Address::is_loopback() const {
    if (family == 4) return bytes[0] == 127;
    static constexpr std::array<uint8_t, 16> kOne{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return bytes == kOne;
}

bool Address::is_unspecified() const { return bytes == std::array<uint8_t, 16>{}; }

socklen_t Address::to_sockaddr(uint16_t port, sockaddr_storage& out) const {
    out = sockaddr_storage{};
    if (family == 4) {
        auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        std::memcpy(&v4->sin_addr, bytes.data(), 4);
        return sizeof(sockaddr_in);
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    std::memcpy(&v6->sin6_addr, bytes.data(), 16);
    return sizeof(sockaddr_in6);
}

bool Address::from_sockaddr(const sockaddr* sa, Address& out, uint16_t* port) {
    out = Address{};
    if (sa->sa_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(sa);
        out.family = 4;
        std::memcpy(out.bytes.data(), &v4->sin_addr, 4);
        if (port) *port = ntohs(v4->sin_port);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(sa);
        out.family = 6;
        std::memcpy(out.bytes.data(), &v6->sin6_addr, 16);
        if (port) *port = ntohs(v6->sin6_port);
        return true;
    }
    return false;
}

bool Prefix::parse(std::string_view text, Prefix& out, bool strict) {
    size_t slash = text.find('/');
    if (slash == std::string_view::npos) return false;
    std::string_view len = text.substr(slash + 1);
    if (len.empty() || len.size() > 3) return false;
    unsigned value = 0;
    for (char c : len) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    Prefix p;
    if (!Address::parse(text.substr(0, slash), p.address) || value > p.address.bits()) return false;
    p.length = static_cast<uint8_t>(value);
    for (unsigned bit = value; strict && bit < p.address.bits(); ++bit) {
        if (p.address.bytes[bit / 8] & (0x80 >> (bit % 8))) return false;
    }
    out = p;
    return true;
}

bool SocketAddress::parse(std::string_view text, SocketAddress& out) {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == text.size() || text.size() - colon - 1 > 5) return false;
    std::string_view host = text.substr(0, colon), port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
        if (host.find(':') == std::string_view::npos) return false;  // brackets hold IPv6 only
    } else if (host.find(':') != std::string_view::npos) {
        return false;  // IPv6 needs brackets
    }
    unsigned value = 0;
    for (char c : port) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 65535 || !Address::parse(host, out.address)) return false;
    out.port = static_cast<uint16_t>(value);
    return true;
}

std::string SocketAddress::str() const {
    std::string ip = address.str();
    return (address.family == 6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

}  // namespace glbd
