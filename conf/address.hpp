// conf/address — the one IP address type every layer shares (conf is the bottom layer): parsed from text
// once (inet_pton), printed (inet_ntop), and converted to and from socket addresses. Binary, so that the
// query path never handles addresses as strings.
#pragma once

#include <sys/socket.h>

#include <array>
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
    // This address and `port` as a socket address; returns its length.
    socklen_t to_sockaddr(uint16_t port, sockaddr_storage& out) const;
    // The address (and port) of an AF_INET or AF_INET6 socket address; false for another family.
    static bool from_sockaddr(const sockaddr* sa, Address& out, uint16_t* port = nullptr);
};

}  // namespace glbd
