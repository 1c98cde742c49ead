#include "sync/transfer/datagrams.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "resolver/base/clock.hpp"

namespace glbd::sync {

bool UdpDatagrams::send(const std::optional<Address>& source, const SocketAddress& to, std::span<const uint8_t> bytes) {
    int fd = socket_for(source, to.address.family == 4 ? AF_INET : AF_INET6);
    sockaddr_storage ss{};
    socklen_t len = to.to_sockaddr(ss);
    return fd >= 0 &&
           ::sendto(fd, bytes.data(), bytes.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&ss), len) >= 0;
}

int UdpDatagrams::socket_for(const std::optional<Address>& source, int family) {
    auto key = std::make_pair(source, family);
    if (auto it = sockets_.find(key); it != sockets_.end()) return it->second.get();
    Fd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return -1;
    ::shutdown(fd.get(), SHUT_RD);  // nothing answers a beat
    if (source) {
        sockaddr_storage ss{};
        socklen_t len = SocketAddress{*source, 0}.to_sockaddr(ss);
        if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
            uint64_t left_out = 0;
            if (bind_log_.allow("bind " + source->str(), steady_ms(), &left_out)) {
                spdlog::warn("sync: cannot send heartbeats from {}: {}; the kernel picks the source", source->str(),
                             std::strerror(errno));
            }
        }
    }
    return sockets_.emplace(key, std::move(fd)).first->second.get();
}

}  // namespace glbd::sync
