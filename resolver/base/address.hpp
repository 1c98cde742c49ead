// resolver/base/address — the one IP address type every layer shares: parsed from text
// once (inet_pton), printed (inet_ntop), and converted to and from socket addresses. Binary, so that the
// query path never handles addresses as strings.
#pragma once

#include <sys/socket.h>

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace glbd {

// An IPv4 or IPv6 address in network byte order; IPv4 uses bytes[0..3].
struct Address {
    std::array<uint8_t, 16> bytes{};
    uint8_t family = 4;  // 4 or 6
    [[nodiscard]] unsigned bits() const { return family == 4 ? 32 : 128; }
    // An IPv6 ::ffff:a.b.c.d address becomes IPv4; `prefix` (if given) is adjusted to the IPv4 length.
    void unmap(uint8_t* prefix = nullptr);
    // Numeric IPv4 or IPv6 text (no brackets, no port); false for anything else.
    static bool parse(std::string_view text, Address& out);
    static bool is_ip(std::string_view text) {
        Address a;
        return parse(text, a);
    }
    // "192.0.2.1", "2001:db8::1".
    [[nodiscard]] std::string str() const;
    void append_to(std::string& out) const;  // the same at the end of `out` (IPv4 without inet_ntop's cost)
    // 127.0.0.0/8 or ::1.
    [[nodiscard]] bool is_loopback() const;
    // 0.0.0.0 or ::.
    [[nodiscard]] bool is_unspecified() const;
    // This address and `port` as a socket address; returns its length.
    socklen_t to_sockaddr(uint16_t port, sockaddr_storage& out) const;
    // The address (and port) of an AF_INET or AF_INET6 socket address; false for another family.
    static bool from_sockaddr(const sockaddr* sa, Address& out, uint16_t* port = nullptr);
    auto operator<=>(const Address&) const = default;  // NOLINT(modernize-use-nullptr): clang-tidy 14 on <=>
};

// A network: an address and a prefix length ("10.1.0.0/16", "2001:db8::/32").
struct Prefix {
    Address address;
    uint8_t length = 0;
    // "address/length"; with `strict`, no bit beyond the length may be set (a network, not a host in it).
    static bool parse(std::string_view text, Prefix& out, bool strict = true);
    [[nodiscard]] std::string str() const { return address.str() + "/" + std::to_string(length); }
    // Whether `a` (of the same family) lies in it.
    [[nodiscard]] bool contains(const Address& a) const {
        if (a.family != address.family) return false;
        for (unsigned bit = 0; bit < length; ++bit) {
            if ((a.bytes[bit / 8] ^ address.bytes[bit / 8]) & (0x80 >> (bit % 8))) return false;
        }
        return true;
    }
    auto operator<=>(const Prefix&) const = default;
};

// An address and a port: where a socket listens or a peer is reached. Binary, compared as such; printed
// and read as "192.0.2.1:53" or "[2001:db8::1]:53".
struct SocketAddress {
    Address address;
    uint16_t port = 0;
    // "192.0.2.1:53" or "[2001:db8::1]:53" (a numeric address and a port 0..65535); false for anything else.
    static bool parse(std::string_view text, SocketAddress& out);
    [[nodiscard]] std::string str() const;
    socklen_t to_sockaddr(sockaddr_storage& out) const { return address.to_sockaddr(port, out); }
    static bool from_sockaddr(const sockaddr* sa, SocketAddress& out) {
        return Address::from_sockaddr(sa, out.address, &out.port);
    }
    // Whether another host could send to it: a port, and an address neither unspecified nor multicast
    // (sync's advertised addresses: the config checks them with this, and so do the peers that read them).
    [[nodiscard]] bool reachable() const {
        return port != 0 && !address.is_unspecified() &&
               !(address.family == 4 ? address.bytes[0] >= 224 : address.bytes[0] == 0xff);
    }
    auto operator<=>(const SocketAddress&) const = default;  // NOLINT(modernize-use-nullptr): as above
};

}  // namespace glbd
