// The admin endpoint's server (server/app/admin) on its own thread: a request the daemon answers later (the
// control thread busy, say with a snapshot build) keeps no other request waiting, and a reply after the
// server stopped is dropped. Real sockets on 127.0.80.1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
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

}  // namespace
