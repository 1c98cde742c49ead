// tests/tools/dnsclient's pieces shared by its modes: sockets to the server under test, framed queries and
// answers, and the modes that play a sync peer (dnsclient_sync.cpp).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/dns_util.hpp"

namespace glbd::dnsclient {

using glbd::test::make_query;
using glbd::test::parse;
using glbd::test::QueryOpts;

inline sockaddr_storage target(const char* host, int port, socklen_t& len) {
    sockaddr_storage ss{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET, v4->sin_port = htons(static_cast<uint16_t>(port)), len = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6, v6->sin6_port = htons(static_cast<uint16_t>(port)), len = sizeof *v6;
    } else {
        std::fprintf(stderr, "bad address %s\n", host);
        std::exit(2);
    }
    return ss;
}

inline int tcp_connect(const char* host, int port) {
    socklen_t len;
    auto ss = target(host, port, len);
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

inline bool read_full(int fd, uint8_t* buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) return false;
        got += static_cast<size_t>(r);
    }
    return true;
}

inline void frame(std::vector<uint8_t>& out, const std::vector<uint8_t>& msg) {
    out.push_back(static_cast<uint8_t>(msg.size() >> 8));
    out.push_back(static_cast<uint8_t>(msg.size()));
    out.insert(out.end(), msg.begin(), msg.end());
}

// One well-formed query over UDP; true when a NOERROR answer with data comes back.
inline bool udp_ok(const char* host, int port, const std::string& name) {
    socklen_t len;
    auto ss = target(host, port, len);
    int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
    auto q = make_query(name, 1, QueryOpts{});
    for (int attempt = 0; attempt < 5; ++attempt) {
        sendto(fd, q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&ss), len);
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 1000) == 1) {
            uint8_t buf[4096];
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            auto r = parse(buf, static_cast<size_t>(n));
            if (r.tc) {  // rate limited (slipped): wait for the next second, as a client would retry
                usleep(1100000);
                continue;
            }
            close(fd);
            return r.ok && r.id == 0x1234 && r.rcode == 0 && !r.answer.empty();
        }
    }
    close(fd);
    return false;
}

inline bool tcp_ok(const char* host, int port, const std::string& name) {
    int fd = tcp_connect(host, port);
    if (fd < 0) return false;
    std::vector<uint8_t> out;
    frame(out, make_query(name, 1, QueryOpts{}));
    bool ok = write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size());
    uint8_t lenb[2], buf[65535];
    ok = ok && read_full(fd, lenb, 2);
    size_t n = static_cast<size_t>(lenb[0] << 8 | lenb[1]);
    ok = ok && read_full(fd, buf, n);
    close(fd);
    if (!ok) return false;
    auto r = parse(buf, n);
    return r.ok && r.rcode == 0 && !r.answer.empty();
}

// Writes N framed queries for NAME at once, IDs from `first_id`; `qtype` 0 alternates A and AAAA.
inline bool write_queries(int fd, int n, const std::string& name, uint16_t qtype, int first_id) {
    std::vector<uint8_t> out;
    for (int i = 0; i < n; ++i) {
        QueryOpts o;
        o.id = static_cast<uint16_t>(first_id + i);
        frame(out, make_query(name, qtype ? qtype : (i % 2 ? 28 : 1), o));
    }
    return write(fd, out.data(), out.size()) == static_cast<ssize_t>(out.size());
}

// Reads one framed answer from a TCP connection and parses it; false when the connection ends first.
inline bool read_answer(int fd, glbd::test::Parsed& out) {
    uint8_t lenb[2], buf[65535];
    if (!read_full(fd, lenb, 2)) return false;
    size_t len = static_cast<size_t>(lenb[0] << 8 | lenb[1]);
    if (!read_full(fd, buf, len)) return false;
    out = parse(buf, len);
    return true;
}

// Connects to ADDR:PORT from `source` (any when null); non-blocking once connected. -1 on failure.
inline int connect_from(const char* host, int port, const char* source) {
    socklen_t len;
    auto ss = target(host, port, len);
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (source) {
        socklen_t slen;
        auto src = target(source, 0, slen);
        if (bind(fd, reinterpret_cast<sockaddr*>(&src), slen) != 0) return close(fd), -1;
    }
    if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) return close(fd), -1;
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

// The modes that play a sync peer (dnsclient_sync.cpp).
int fake_peer(const char* host, int port, int n, const char* key, const char* secret, const char* file);
int catch_requests(const char* host, int port, int n, const char* key, const char* secret);
int syncflood(const char* host, int port, int seconds);

}  // namespace glbd::dnsclient
