// The admin endpoint's server (server/app/admin) on its own thread: a request the daemon answers later (the
// control thread busy, say with a snapshot build) keeps no other request waiting, and a reply after the
// server stopped is dropped. Real sockets on 127.0.80.1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/app/admin.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

// GET `path` over a fresh connection; the response's status line and body ("" when no answer within
// `timeout_ms`).
std::string get(uint16_t port, const std::string& path, int timeout_ms = 5000) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.80.1", &a.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return "";
    }
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.80.1\r\n\r\n";
    (void)!write(fd, req.data(), req.size());
    std::string out;
    char buf[4096];
    pollfd p{fd, POLLIN, 0};
    while (poll(&p, 1, timeout_ms) == 1) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return out;
}

TEST(AdminServer, ARequestAnsweredLaterKeepsNoOtherWaiting) {
    std::mutex mu;
    std::vector<admin::Reply> held;  // the slow route's replies, answered when the test says
    admin::Server server(SocketAddress{test::address_of("127.0.80.1"), 9480}, "",
                         [&](const admin::Request& req, admin::Reply reply) {
                             admin::Response r;
                             if (req.path == "/slow") {
                                 std::lock_guard<std::mutex> lock(mu);
                                 held.push_back(std::move(reply));
                                 return;
                             }
                             r.body = "fast\n";
                             reply(std::move(r));
                         });
    server.start();
    server.run();
    std::string slow;
    std::thread waiting([&] { slow = get(9480, "/slow"); });
    for (int i = 0; i < 200; ++i) {  // until the slow request is held (at most 2 s)
        {
            std::lock_guard<std::mutex> lock(mu);
            if (!held.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // While it is held, other requests are answered (from the admin thread, or from this one).
    for (int i = 0; i < 5; ++i) {
        std::string r = get(9480, "/healthz");
        EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
        EXPECT_NE(r.find("fast"), std::string::npos);
    }
    {
        std::lock_guard<std::mutex> lock(mu);
        ASSERT_EQ(held.size(), 1u);
        admin::Response r;
        r.body = "late\n";
        held[0](std::move(r));  // from this thread, not the admin thread
    }
    waiting.join();
    EXPECT_EQ(slow.rfind("HTTP/1.1 200", 0), 0u) << slow;
    EXPECT_NE(slow.find("late"), std::string::npos);

    // A reply that comes after the server stopped is dropped, harmlessly.
    std::thread again([&] { (void)get(9480, "/slow", 2000); });
    for (int i = 0; i < 200; ++i) {
        {
            std::lock_guard<std::mutex> lock(mu);
            if (held.size() == 2) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    server.stop();
    again.join();
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(held.size(), 2u);
    held[1](admin::Response{});
}

// The body of a chunked response (RFC 9112 section 7.1); nullopt when the chunks are malformed or the last
// (zero-size) chunk is missing.
std::optional<std::string> dechunk(const std::string& response) {
    size_t at = response.find("\r\n\r\n");
    if (at == std::string::npos) return std::nullopt;
    at += 4;
    std::string body;
    for (;;) {
        size_t eol = response.find("\r\n", at);
        if (eol == std::string::npos) return std::nullopt;
        size_t n = std::stoul(response.substr(at, eol - at), nullptr, 16);
        at = eol + 2;
        if (n == 0) return response.compare(at, 2, "\r\n") == 0 ? std::optional(body) : std::nullopt;
        if (at + n + 2 > response.size() || response.compare(at + n, 2, "\r\n") != 0) return std::nullopt;
        body.append(response, at, n);
        at += n + 2;
    }
}

// A stream of `pieces` pieces of 10 KB, each filled with its number's letter; counts its calls and says
// when it is let go of.
struct Pieces {
    std::atomic<int> made{0};
    std::atomic<bool> released{false};
};
admin::Response streamed(const std::shared_ptr<Pieces>& p, int pieces) {
    struct Release {
        std::shared_ptr<Pieces> p;
        ~Release() { p->released = true; }
    };
    auto hold = std::make_shared<Release>(Release{p});
    admin::Response r;
    r.content_type = "text/plain";
    r.stream = [hold, pieces](std::string& out) {
        int i = hold->p->made++;
        out.assign(10240, static_cast<char>('a' + i % 26));
        return i + 1 < pieces;
    };
    return r;
}

TEST(AdminServer, AStreamedBodyIsChunkedWhole) {
    auto p = std::make_shared<Pieces>();
    admin::Server server(SocketAddress{test::address_of("127.0.80.1"), 9481}, "",
                         [&](const admin::Request&, const admin::Reply& reply) { reply(streamed(p, 100)); });
    server.start();
    server.run();
    std::string r = get(9481, "/stream");
    EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r.substr(0, 200);
    EXPECT_NE(r.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
    EXPECT_EQ(r.find("Content-Length"), std::string::npos);
    auto body = dechunk(r);
    ASSERT_TRUE(body.has_value());
    ASSERT_EQ(body->size(), 100u * 10240);
    for (int i = 0; i < 100; ++i) EXPECT_EQ((*body)[static_cast<size_t>(i) * 10240], 'a' + i % 26);
    EXPECT_EQ(p->made, 100);
    for (int i = 0; i < 200 && !p->released; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(p->released);
    server.stop();
}

// A client that does not read holds the stream at what the socket buffers take: the rest is never made,
// other requests are answered meanwhile, and the stream is let go of when the client leaves.
TEST(AdminServer, AStreamWaitsForItsReaderAndEndsWithIt) {
    auto p = std::make_shared<Pieces>();
    constexpr int kPieces = 20000;  // 200 MB, far beyond what loopback's buffers hold
    admin::Server server(SocketAddress{test::address_of("127.0.80.1"), 9482}, "",
                         [&](const admin::Request& req, const admin::Reply& reply) {
                             if (req.path != "/stream") {
                                 admin::Response r;
                                 r.body = "ok\n";
                                 return reply(std::move(r));
                             }
                             reply(streamed(p, kPieces));
                         });
    server.start();
    server.run();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(9482);
    inet_pton(AF_INET, "127.0.80.1", &a.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    std::string req = "GET /stream HTTP/1.1\r\nHost: 127.0.80.1\r\n\r\n";
    ASSERT_EQ(write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
    // Until the pieces made stop growing (the buffers are full), at most 5 s.
    int before = -1;
    for (int i = 0; i < 50 && p->made != before; ++i) {
        before = p->made;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GT(p->made, 0);
    EXPECT_LT(p->made, kPieces / 4) << "the stream ran ahead of its reader";
    std::string r = get(9482, "/healthz");
    EXPECT_NE(r.find("ok"), std::string::npos) << r;
    close(fd);
    for (int i = 0; i < 500 && !p->released; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(p->released) << "the stream outlived its client";
    EXPECT_LT(p->made, kPieces);
    server.stop();
}

}  // namespace
