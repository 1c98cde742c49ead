// dnsclient — the system tests' own client for what dig cannot do:
//   dnsclient pipeline ADDR PORT N NAME      N queries written at once on one TCP connection
//   dnsclient garbage ADDR PORT COUNT SEED   COUNT malformed packets over UDP and TCP, then a real query
//   dnsclient burst ADDR PORT SOURCE N NAME [cookie|cookie-from=ADDR2]  N UDP queries from SOURCE: counts
//                                            full, truncated, missing; with "cookie" they carry the server
//                                            cookie ADDR gave (from ADDR2's on the same port: a replica's)
//   dnsclient slowread ADDR PORT N NAME T MS N queries at once, nothing read for MS ms, then read slowly
//   dnsclient catch ADDR PORT N KEY SECRET    a peer that verifies glbd's NOTIFY and transfer requests with ldns
//   dnsclient idle ADDR PORT N READY MS      N idle TCP connections: closed at once (< MS), and when the rest close
//   dnsclient peer ADDR PORT N KEY SECRET FILE  a peer serving the `_glbd.` records of FILE, signed, N times
//   dnsclient syncflood ADDR PORT SECONDS    unsigned `_glbd.` SOA queries written as fast as TCP takes them,
//                                            never reading, reconnecting when closed
//   dnsclient squat ADDR PORT N PER SECONDS RECONNECT  N TCP connections, PER from each source 127.0.9.x,
//                                            each sending empty frames every 300 ms; how long each lasted
// Traffic goes only to the address given (the tests use 127.0.0.x). Exit 0 on success.
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
#include "tests/tools/dnsclient.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

using glbd::test::make_query;
using glbd::test::parse;
using glbd::test::QueryOpts;

namespace {

using namespace glbd::dnsclient;

int pipeline(const char* host, int port, int n, const std::string& name) {
    int fd = tcp_connect(host, port);
    if (fd < 0) return std::perror("connect"), 1;
    if (!write_queries(fd, n, name, 0, 1000)) return std::perror("write"), 1;
    std::set<uint16_t> ids;
    for (int i = 0; i < n; ++i) {
        glbd::test::Parsed r;
        if (!read_answer(fd, r)) return std::fprintf(stderr, "only %d of %d answers\n", i, n), 1;
        if (!r.ok || r.rcode != 0 || !r.aa) return std::fprintf(stderr, "bad answer %d\n", i), 1;
        ids.insert(r.id);
    }
    close(fd);
    for (int i = 0; i < n; ++i) {
        if (!ids.count(static_cast<uint16_t>(1000 + i)))
            return std::fprintf(stderr, "no answer for id %d\n", 1000 + i), 1;
    }
    std::printf("pipeline: %d queries on one connection, %zu distinct answers\n", n, ids.size());
    return 0;
}

// N queries for NAME TYPE written at once on one TCP connection, then nothing read for PAUSE_MS (the
// server must stop reading and hold its answers: back-pressure), then every answer read slowly, one
// millisecond each: all must come, in order, complete.
int slowread(const char* host, int port, int n, const std::string& name, uint16_t qtype, int pause_ms) {
    int fd = tcp_connect(host, port);
    if (fd < 0) return std::perror("connect"), 1;
    if (!write_queries(fd, n, name, qtype, 2000)) return std::perror("write"), 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    size_t records = 0;
    for (int i = 0; i < n; ++i) {
        glbd::test::Parsed r;
        if (!read_answer(fd, r)) return std::fprintf(stderr, "only %d of %d answers\n", i, n), 1;
        if (!r.ok || r.rcode != 0 || r.answer.empty() || r.tc) return std::fprintf(stderr, "bad answer %d\n", i), 1;
        if (r.id != 2000 + i) return std::fprintf(stderr, "answer %d has id %d: out of order\n", i, r.id), 1;
        if (i == 0) records = r.answer.size();
        if (r.answer.size() != records)
            return std::fprintf(stderr, "answer %d has %zu records\n", i, r.answer.size()), 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    close(fd);
    std::printf("slowread: %d answers of %zu records, in order\n", n, records);
    return 0;
}

// The kinds of hostile packets, each built from a valid query and broken in one way.
std::vector<uint8_t> hostile(std::mt19937& rng, int kind) {
    auto base = make_query("www.example.test", 1, QueryOpts{});
    std::uniform_int_distribution<int> byte(0, 255);
    switch (kind) {
        case 0: {  // random bytes of random length
            std::vector<uint8_t> v(static_cast<size_t>(rng() % 600));
            for (auto& b : v) b = static_cast<uint8_t>(byte(rng));
            return v;
        }
        case 1:  // truncated anywhere, headers included
            base.resize(rng() % base.size());
            return base;
        case 2: {  // compression pointer loops in the question and in the additional section
            std::vector<uint8_t> v(base.begin(), base.begin() + 12);
            v.insert(v.end(), {0xc0, 0x0c, 0, 1, 0, 1});
            if (rng() % 2) v = base, v[v.size() - 11] = 0xc0, v.insert(v.end() - 10, 0x0c);
            return v;
        }
        case 3: {  // label overflow: labels of 64+ and names over 255 bytes
            std::vector<uint8_t> v(base.begin(), base.begin() + 12);
            int labels = 2 + static_cast<int>(rng() % 8);
            for (int i = 0; i < labels; ++i) {
                uint8_t l = static_cast<uint8_t>(60 + rng() % 8);
                v.push_back(l);
                for (int k = 0; k < (l & 0x3f); ++k) v.push_back('a');
            }
            v.insert(v.end(), {0, 0, 1, 0, 1});
            return v;
        }
        case 4: {  // bad OPT: rdlength past the end, broken option lengths, ECS garbage
            auto v = base;
            size_t opt = v.size() - 11;
            switch (rng() % 4) {
                case 0: v[opt + 9] = 0xff, v[opt + 10] = 0xff; break;
                case 1: v[opt + 10] = 4, v.insert(v.end(), {0, 8, 0xff, 0xff}); break;
                case 2: v[opt + 10] = 8, v.insert(v.end(), {0, 8, 0, 4, 0, 1, 64, 0}); break;
                default: v[opt] = 3, v.insert(v.begin() + static_cast<long>(opt) + 1, {'a', 'b', 'c'}); break;
            }
            return v;
        }
        case 5: {  // random bit flips in a valid query
            for (int i = 0; i < 1 + static_cast<int>(rng() % 4); ++i)
                base[rng() % base.size()] ^= static_cast<uint8_t>(1 << (rng() % 8));
            return base;
        }
        default: {  // impossible counts
            base[6] = 0xff, base[7] = 0xff, base[10] = 0xff;
            return base;
        }
    }
}

int garbage(const char* host, int port, int count, unsigned seed) {
    std::mt19937 rng(seed);
    socklen_t len;
    auto ss = target(host, port, len);
    int udp = socket(ss.ss_family, SOCK_DGRAM, 0);
    int udp_count = count / 2, tcp_count = count - udp_count;
    for (int i = 0; i < udp_count; ++i) {
        auto p = hostile(rng, i % 7);
        sendto(udp, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&ss), len);
        if (i % 200 == 199) usleep(2000);  // keep within the socket buffer: the server must see them
    }
    close(udp);
    // TCP: hostile messages framed on 20 connections; some end with a frame longer than the data.
    int per = tcp_count / 20, sent = 0;
    for (int c = 0; c < 20; ++c) {
        int fd = tcp_connect(host, port);
        if (fd < 0) return std::perror("connect"), 1;
        std::vector<uint8_t> out;
        for (int i = 0; i < per; ++i, ++sent) frame(out, hostile(rng, i % 7));
        if (c % 3 == 0) out.insert(out.end(), {0xff, 0xff, 1, 2, 3});  // announces 65535, sends 3
        if (write(fd, out.data(), out.size()) < 0) std::perror("write");
        // Read whatever comes back until the server has answered what it could.
        shutdown(fd, SHUT_WR);
        uint8_t buf[65536];
        while (read(fd, buf, sizeof buf) > 0) {
        }
        close(fd);
    }
    bool u = udp_ok(host, port, "www.example.test"), t = tcp_ok(host, port, "www.example.test");
    std::printf("garbage: %d over UDP, %d over TCP; afterwards UDP %s, TCP %s\n", udp_count, sent, u ? "ok" : "FAILED",
                t ? "ok" : "FAILED");
    return u && t ? 0 : 1;
}

// N queries over UDP from SOURCE as fast as the socket takes them, then 1 s of reading answers.
// With `cookie`, a first query with a client cookie fetches the server's cookie, and every query of the
// burst then carries both (RFC 7873).
int burst(const char* host, int port, const char* source, int n, const std::string& name, bool cookie,
          const char* cookie_from = nullptr) {
    socklen_t len;
    auto ss = target(host, port, len);
    int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
    socklen_t slen;
    auto src = target(source, 0, slen);
    if (bind(fd, reinterpret_cast<sockaddr*>(&src), slen) != 0) return std::perror("bind"), 2;
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    std::optional<std::vector<uint8_t>> cookies;
    if (cookie) {
        QueryOpts o;
        o.cookie = std::vector<uint8_t>{0xc0, 0x0c, 0x1e, 0x5, 6, 7, 8, 9};
        auto q = make_query(name, 1, o);
        socklen_t flen = len;
        auto from = cookie_from ? target(cookie_from, port, flen) : ss;
        sendto(fd, q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
        pollfd p{fd, POLLIN, 0};
        uint8_t buf[4096];
        ssize_t r = poll(&p, 1, 2000) == 1 ? recv(fd, buf, sizeof buf, 0) : -1;
        auto a = r > 12 ? parse(buf, static_cast<size_t>(r)) : glbd::test::Parsed{};
        if (a.cookie.size() != 24) return std::fprintf(stderr, "no server cookie in the answer\n"), 1;
        cookies = a.cookie;
    }
    time_t first = time(nullptr);
    for (int i = 0; i < n; ++i) {
        QueryOpts o;
        o.cookie = cookies;
        o.id = static_cast<uint16_t>(i);
        auto q = make_query(name, 1, o);
        sendto(fd, q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&ss), len);
        if (i % 20 == 19) usleep(1000);  // stay within the server's socket buffer: it must see every query
    }
    long seconds = static_cast<long>(time(nullptr) - first) + 1;  // how many rate-limit seconds the burst spans
    int full = 0, truncated = 0;
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, 1000) == 1) {
        uint8_t buf[4096];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r < 12) continue;
        auto a = parse(buf, static_cast<size_t>(r));
        if (a.tc)
            ++truncated;
        else if (a.rcode == 0 && !a.answer.empty())
            ++full;
    }
    close(fd);
    std::printf("full=%d truncated=%d none=%d seconds=%ld\n", full, truncated, n - full - truncated, seconds);
    return 0;
}

// Opens N TCP connections (from sources 127.0.7.x) and keeps them idle; once all are connected, creates READY (so the
// test can act while they are open). Reports how many the server closed "at once" (sooner than AT_ONCE_MS after all
// were connected: over its cap) and when the last of the others closed (its idle timeout), counted from
// the same moment.
int idle(const char* host, int port, int n, const char* ready, long at_once_ms) {
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) {
        // 8 connections from each source 127.0.7.x, under glbd's default per-source cap.
        std::string source = "127.0.7." + std::to_string(1 + i / 8);
        int fd = connect_from(host, port, source.c_str());
        if (fd < 0) return std::fprintf(stderr, "connect %d failed\n", i), 2;
        fds.push_back(fd);
    }
    auto t0 = std::chrono::steady_clock::now();
    if (FILE* f = std::fopen(ready, "w")) std::fclose(f);
    std::vector<pollfd> ps;
    for (int fd : fds) ps.push_back(pollfd{fd, POLLIN, 0});
    int open = n, closed_at_once = 0;
    long last_ms = 0;
    while (open > 0) {
        int k = poll(ps.data(), ps.size(), 20000);
        if (k <= 0) break;
        long ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
        for (auto& p : ps) {
            if (p.fd >= 0 && p.revents) {
                --open;
                p.fd = -p.fd - 1;  // ignored by poll from now on
                if (ms < at_once_ms)
                    ++closed_at_once;
                else
                    last_ms = ms;
            }
        }
    }
    for (int fd : fds) close(fd);
    std::printf("opened=%d closed_at_once=%d still_open=%d last_closed_ms=%ld\n", n, closed_at_once, open, last_ms);
    return 0;
}

// N connections, PER of them from each source 127.0.9.1, .2, ...; each writes an empty frame (a zero
// length: no DNS message) every 300 ms. With RECONNECT a connection the server closes is opened again.
// A closed connection is opened again 50 ms later. Reports how many the server closed, how many of those
// within 100 ms of opening, and the longest life of a connection the server closed or that was still open
// at the end (ms).
int squat(const char* host, int port, int n, int per, int seconds, bool reconnect) {
    struct Slot {
        int fd = -1;
        std::string source;
        std::chrono::steady_clock::time_point opened, reopen;
    };
    using clock = std::chrono::steady_clock;
    std::vector<Slot> slots(static_cast<size_t>(n));
    auto open_slot = [&](Slot& s) {
        s.fd = connect_from(host, port, s.source.c_str());
        s.opened = clock::now();
    };
    for (int i = 0; i < n; ++i) {
        slots[static_cast<size_t>(i)].source = "127.0.9." + std::to_string(1 + i / per);
        open_slot(slots[static_cast<size_t>(i)]);
        if (slots[static_cast<size_t>(i)].fd < 0) return std::fprintf(stderr, "connect %d failed\n", i), 2;
    }
    long closed = 0, closed_fast = 0, longest = 0;
    auto life = [&](const Slot& s) {
        return static_cast<long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - s.opened).count());
    };
    auto end = clock::now() + std::chrono::seconds(seconds), next_write = clock::now();
    while (clock::now() < end) {
        if (clock::now() >= next_write) {
            static const uint8_t empty[2] = {0, 0};
            for (auto& s : slots) {
                if (s.fd >= 0) (void)::send(s.fd, empty, 2, MSG_NOSIGNAL | MSG_DONTWAIT);
            }
            next_write += std::chrono::milliseconds(300);
        }
        std::vector<pollfd> ps;
        for (auto& s : slots) ps.push_back(pollfd{s.fd, POLLIN, 0});
        if (poll(ps.data(), ps.size(), 50) < 0) break;
        for (size_t i = 0; i < ps.size(); ++i) {
            if (ps[i].fd < 0 || !ps[i].revents) continue;
            uint8_t buf[512];
            if (read(ps[i].fd, buf, sizeof buf) > 0) continue;  // nothing is answered to an empty frame
            Slot& s = slots[i];
            long ms = life(s);
            ++closed;
            if (ms < 100) ++closed_fast;
            longest = std::max(longest, ms);
            close(s.fd);
            s.fd = -1;
            // Taken again 50 ms later: a client holding slots, not a connection-rate flood (that one is the
            // kernel's and a firewall's to limit, see docs/security.md).
            if (reconnect) s.reopen = clock::now() + std::chrono::milliseconds(50);
        }
        for (auto& s : slots) {
            if (reconnect && s.fd < 0 && clock::now() >= s.reopen) open_slot(s);
        }
    }
    for (auto& s : slots) {
        if (s.fd >= 0) longest = std::max(longest, life(s)), close(s.fd);
    }
    std::printf("closed=%ld closed_fast=%ld longest_ms=%ld\n", closed, closed_fast, longest);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "pipeline" && argc == 6) return pipeline(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argv[5]);
    if (cmd == "garbage" && argc == 6) {
        return garbage(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), static_cast<unsigned>(std::atoi(argv[5])));
    }
    if (cmd == "burst" && (argc == 7 || argc == 8)) {
        std::string mode = argc == 8 ? argv[7] : "";
        bool from_other = mode.rfind("cookie-from=", 0) == 0;
        return burst(argv[2], std::atoi(argv[3]), argv[4], std::atoi(argv[5]), argv[6], mode == "cookie" || from_other,
                     from_other ? argv[7] + 12 : nullptr);
    }
    if (cmd == "slowread" && argc == 8) {
        return slowread(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argv[5],
                        static_cast<uint16_t>(std::atoi(argv[6])), std::atoi(argv[7]));
    }
    using namespace glbd::dnsclient;
    if (cmd == "catch" && argc == 7)
        return catch_requests(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argv[5], argv[6]);
    if (cmd == "idle" && argc == 7)
        return idle(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argv[5], std::atol(argv[6]));
    if (cmd == "peer" && argc == 8)
        return fake_peer(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), argv[5], argv[6], argv[7]);
    if (cmd == "syncflood" && argc == 5) return syncflood(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    if (cmd == "squat" && argc == 8) {
        return squat(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]),
                     std::string(argv[7]) == "1");
    }
    std::fprintf(stderr,
                 "usage: dnsclient pipeline ADDR PORT N NAME | garbage ADDR PORT COUNT SEED |\n"
                 "       burst ADDR PORT SOURCE N NAME [cookie] | idle ADDR PORT N READY AT_ONCE_MS |\n"
                 "       slowread ADDR PORT N NAME QTYPE PAUSE_MS | catch ADDR PORT N KEY SECRET |\n"
                 "       peer ADDR PORT N KEY SECRET FILE | syncflood ADDR PORT SECONDS | squat ADDR PORT N PER "
                 "SECONDS RECONNECT\n");
    return 2;
}
