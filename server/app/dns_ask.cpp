#include "server/app/dns_ask.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "resolver/base/fd.hpp"
#include "resolver/wire/query.hpp"

namespace glbd {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline` (0 once past it).
int left_ms(Clock::time_point deadline) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return ms > 0 ? static_cast<int>(ms) : 0;
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
    pollfd p{fd, events, 0};
    int left = left_ms(deadline);
    return left > 0 && ::poll(&p, 1, left) == 1 && (p.revents & events) != 0;
}

// Whether `msg` answers the query with this id.
bool answers(std::span<const uint8_t> msg, uint16_t id) {
    wire::Header h;
    return wire::read_header(msg.data(), msg.size(), h) && h.qr() && h.id == id;
}

Result<std::vector<uint8_t>> ask_udp(const SocketAddress& server, std::span<const uint8_t> query, int timeout_ms) {
    sockaddr_storage to{};
    socklen_t to_len = server.to_sockaddr(to);
    Fd fd(::socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd) return Err{std::string("cannot open a socket: ") + std::strerror(errno)};
    if (::sendto(fd.get(), query.data(), query.size(), 0, reinterpret_cast<const sockaddr*>(&to), to_len) < 0)
        return Err{std::string("cannot send: ") + std::strerror(errno)};
    const uint16_t id = wire::get16(query.data());
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::vector<uint8_t> answer(65535);
    while (wait_for(fd.get(), POLLIN, deadline)) {
        ssize_t n = ::recv(fd.get(), answer.data(), answer.size(), 0);
        if (n > 0 && answers({answer.data(), static_cast<size_t>(n)}, id)) {
            answer.resize(static_cast<size_t>(n));
            return answer;
        }
    }
    return Err{"no answer in " + std::to_string(timeout_ms) + " ms"};
}

// Reads exactly `n` bytes by the deadline.
bool read_all(int fd, uint8_t* out, size_t n, Clock::time_point deadline) {
    while (n > 0) {
        if (!wait_for(fd, POLLIN, deadline)) return false;
        ssize_t got = ::recv(fd, out, n, 0);
        if (got <= 0) return false;
        out += got, n -= static_cast<size_t>(got);
    }
    return true;
}

Result<std::vector<uint8_t>> ask_tcp(const SocketAddress& server, std::span<const uint8_t> query, int timeout_ms) {
    sockaddr_storage to{};
    socklen_t to_len = server.to_sockaddr(to);
    Fd fd(::socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return Err{std::string("cannot open a socket: ") + std::strerror(errno)};
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), to_len) != 0 && errno != EINPROGRESS)
        return Err{std::string("cannot connect over TCP: ") + std::strerror(errno)};
    int error = 0;
    socklen_t error_len = sizeof error;
    if (!wait_for(fd.get(), POLLOUT, deadline) ||
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &error_len) != 0 || error != 0)
        return Err{std::string("cannot connect over TCP: ") + (error ? std::strerror(error) : "timed out")};
    std::vector<uint8_t> framed{static_cast<uint8_t>(query.size() >> 8), static_cast<uint8_t>(query.size())};
    framed.insert(framed.end(), query.begin(), query.end());
    for (size_t sent = 0; sent < framed.size();) {
        if (!wait_for(fd.get(), POLLOUT, deadline)) return Err{"TCP: the query could not be sent in time"};
        ssize_t n = ::send(fd.get(), framed.data() + sent, framed.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return Err{std::string("TCP: ") + std::strerror(errno)};
        sent += static_cast<size_t>(n);
    }
    uint8_t length[2];
    if (!read_all(fd.get(), length, 2, deadline))
        return Err{"no answer over TCP in " + std::to_string(timeout_ms) + " ms"};
    std::vector<uint8_t> answer(wire::get16(length));
    if (!read_all(fd.get(), answer.data(), answer.size(), deadline)) return Err{"TCP: the answer was cut short"};
    if (!answers(answer, wire::get16(query.data()))) return Err{"TCP: the answer is not one to the query"};
    return answer;
}

}  // namespace

Result<std::vector<uint8_t>> dns_ask(const SocketAddress& server, std::span<const uint8_t> query, int timeout_ms) {
    if (query.size() < wire::kHeaderSize) return Err{"not a DNS query"};
    auto answer = ask_udp(server, query, timeout_ms);
    wire::Header h;
    if (!answer || !wire::read_header(answer->data(), answer->size(), h) || !h.tc()) return answer;
    return ask_tcp(server, query, timeout_ms);
}

Result<std::vector<uint8_t>> dns_ask_tcp(const SocketAddress& server, std::span<const uint8_t> query, int timeout_ms) {
    if (query.size() < wire::kHeaderSize) return Err{"not a DNS query"};
    return ask_tcp(server, query, timeout_ms);
}

}  // namespace glbd
