// sync/transfer/datagrams — how heartbeats leave (the sync thread): a datagram to a member from a source address.
// The service's is UdpDatagrams (a socket per source address and family, never read: nothing answers a beat); a
// test gives its own (a recorder that hands the bytes to another service, dropping some), with its clock
// (Service::Seams).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>

#include "resolver/base/address.hpp"
#include "resolver/base/fd.hpp"
#include "resolver/base/log_throttle.hpp"

namespace glbd::sync {

class Datagrams {
public:
    virtual ~Datagrams() = default;
    // `bytes` to `to` from `source` (none: the kernel's choice); false when it could not be sent.
    virtual bool send(const std::optional<Address>& source, const SocketAddress& to,
                      std::span<const uint8_t> bytes) = 0;
    virtual void close() {}  // a stop: what it holds open
};

class UdpDatagrams final : public Datagrams {
public:
    bool send(const std::optional<Address>& source, const SocketAddress& to, std::span<const uint8_t> bytes) override;
    void close() override { sockets_.clear(); }

private:
    int socket_for(const std::optional<Address>& source, int family);  // -1 when none can be made
    std::map<std::pair<std::optional<Address>, int>, Fd> sockets_;     // by source address and family
    LogThrottle bind_log_{1, 60'000};                                  // a source that cannot be bound
};

}  // namespace glbd::sync
