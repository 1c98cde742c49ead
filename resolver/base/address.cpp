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
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes.data(), buf, sizeof buf);
    return buf;
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
