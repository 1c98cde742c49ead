#include "server/app/udp_ask.hpp"

#include <poll.h>
#include <unistd.h>

#include <chrono>

#include "resolver/wire/wire.hpp"

namespace glbd {

std::vector<uint8_t> udp_ask(const sockaddr_storage& to, socklen_t to_len, std::span<const uint8_t> query,
                             int timeout_ms, std::string& error) {
    if (query.size() < wire::kHeaderSize) {
        error = "not a DNS query";
        return {};
    }
    int fd = ::socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = "cannot open a socket";
        return {};
    }
    std::vector<uint8_t> answer(4096);
    ssize_t len = -1;
    if (::sendto(fd, query.data(), query.size(), 0, reinterpret_cast<const sockaddr*>(&to), to_len) >= 0) {
        const uint16_t id = wire::get16(query.data());
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (len < 0) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{fd, POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) break;
            len = ::recv(fd, answer.data(), answer.size(), 0);
            if (len < static_cast<ssize_t>(wire::kHeaderSize) || wire::get16(answer.data()) != id) len = -1;
        }
    }
    ::close(fd);
    if (len < 0) {
        error = "no answer in " + std::to_string(timeout_ms) + " ms";
        return {};
    }
    answer.resize(static_cast<size_t>(len));
    return answer;
}

}  // namespace glbd
