// Publisher: readers see each published snapshot, and the one they let go of is freed by reclaim() on
// the publishing thread, never by the reader.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "server/net/publisher.hpp"
#include "server/net/server.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

std::shared_ptr<const Snapshot> snapshot(uint32_t serial) {
    auto s = std::make_shared<Snapshot>();
    s->serial = serial;
    return s;
}

}  // namespace

TEST(Publisher, ReaderSeesEachSnapshot) {
    Publisher pub;
    Publisher::Reader reader(pub);
    EXPECT_EQ(reader.get(), nullptr);
    pub.publish(snapshot(1));
    ASSERT_NE(reader.get(), nullptr);
    EXPECT_EQ(reader.get()->serial, 1u);
    pub.publish(snapshot(2));
    EXPECT_EQ(reader.get()->serial, 2u);
    EXPECT_EQ(reader.generation(), pub.generation());
}

TEST(Publisher, ReaderNeverFreesWhatItLetsGoOf) {
    Publisher pub;
    auto first = snapshot(1);
    std::weak_ptr<const Snapshot> watch = first;
    pub.publish(std::move(first));
    std::thread([&] {
        Publisher::Reader reader(pub);
        EXPECT_EQ(reader.get()->serial, 1u);
        pub.publish(snapshot(2));  // the publisher lets go; the reader still holds 1
        EXPECT_FALSE(watch.expired());
        EXPECT_EQ(reader.get()->serial, 2u);  // the reader lets go of 1 ...
        EXPECT_FALSE(watch.expired());        // ... without freeing it on its thread
    }).join();
    EXPECT_FALSE(watch.expired());
    pub.reclaim();  // the publishing thread frees it
    EXPECT_TRUE(watch.expired());
}

TEST(Publisher, PublishReclaimsToo) {
    Publisher pub;
    Publisher::Reader reader(pub);
    auto first = snapshot(1);
    std::weak_ptr<const Snapshot> watch = first;
    pub.publish(std::move(first));
    reader.get();
    pub.publish(snapshot(2));
    reader.get();
    EXPECT_FALSE(watch.expired());
    pub.publish(snapshot(3));
    EXPECT_TRUE(watch.expired());
}

namespace {

// Sends one query to 127.0.80.1:18080 over UDP or TCP and waits (2 s at most) for its answer.
bool query_once(int type) {
    int fd = socket(AF_INET, type, 0);
    if (fd < 0) return false;
    timeval tv{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(18080);
    inet_pton(AF_INET, "127.0.80.1", &to.sin_addr);
    auto q = test::make_query("x.example.", 1);
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
    if (ok && type == SOCK_STREAM) {
        uint8_t len[2] = {static_cast<uint8_t>(q.size() >> 8), static_cast<uint8_t>(q.size())};
        ok = send(fd, len, 2, 0) == 2;
    }
    ok = ok && send(fd, q.data(), q.size(), 0) == static_cast<ssize_t>(q.size());
    uint8_t buf[512];
    ok = ok && recv(fd, buf, sizeof buf, 0) > 0;
    close(fd);
    return ok;
}

}  // namespace

// A query thread holds the snapshot it last answered from. Once it is replaced, the UDP and the TCP thread
// must let go of it without waiting for another query, or an idle thread keeps a whole view's snapshot
// (tens of MB at scale) alive beside the current one until some client happens to ask again.
TEST(Publisher, IdleQueryThreadsLetGoOfAReplacedSnapshot) {
    Publisher pub;
    auto first = snapshot(1);
    std::weak_ptr<const Snapshot> weak = first;
    pub.publish(std::move(first));
    ServerOptions o;
    o.listen = {SocketAddress{test::address_of("127.0.80.1"), 18080}};
    DnsServer server(pub, o);
    server.bind();
    server.start();
    ASSERT_TRUE(query_once(SOCK_DGRAM));
    ASSERT_TRUE(query_once(SOCK_STREAM));  // both threads have read the first snapshot
    pub.publish(snapshot(2));
    test::wait_for([&] {
        pub.reclaim();
        return weak.expired();
    });
    EXPECT_TRUE(weak.expired()) << "a query thread still holds the replaced snapshot";
    server.stop();
}
