// server/dnstap: messages encode and decode as dnstap; the sink writes every frame that query threads hand
// it to a Frame Streams file (read back with libfstrm's reader), and counts what it cannot write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "server/dnstap/dnstap.hpp"

namespace glbd::dnstap {
namespace {

Exchange exchange(const std::vector<uint8_t>& query, const std::vector<uint8_t>& response, const char* client) {
    Exchange x;
    EXPECT_TRUE(SocketAddress::parse(client, x.client));
    EXPECT_TRUE(SocketAddress::parse(x.client.address.family == 4 ? "192.0.2.53:53" : "[2001:db8::53]:53", x.server));
    x.query = query.data(), x.query_len = query.size();
    x.query_time = {1700000000, 123456789};
    x.response = response.data(), x.response_len = response.size();
    x.response_time = {1700000000, 223456789};
    x.extra = "host=shop.example.test cluster=eu";
    return x;
}

std::string temp_path(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/glbd-dnstap-" + std::to_string(getpid()) + "-" + name;
}

TEST(Dnstap, QueryAndResponseRoundTrip) {
    std::vector<uint8_t> q = {1, 2, 3, 4, 5}, r = {9, 8, 7};
    Options o;
    o.identity = "ns1", o.version = "glbd test";
    for (const char* client : {"198.51.100.7:4242", "[2001:db8::7]:4242"}) {
        Exchange x = exchange(q, r, client);
        x.tcp = client[0] == '[';
        Decoded d;
        auto query = encode(o, x, false);
        ASSERT_TRUE(decode(query.data(), query.size(), d));
        EXPECT_FALSE(d.response);
        EXPECT_EQ(d.tcp, x.tcp);
        EXPECT_EQ(d.client, x.client);
        EXPECT_EQ(d.server, x.server);
        EXPECT_EQ(d.message, q);
        EXPECT_EQ(d.time_sec, 1700000000u);
        EXPECT_EQ(d.time_nsec, 123456789u);
        EXPECT_EQ(d.identity, "ns1");
        EXPECT_EQ(d.extra, "");  // the reason goes with the response
        Decoded e;
        auto response = encode(o, x, true);
        ASSERT_TRUE(decode(response.data(), response.size(), e));
        EXPECT_TRUE(e.response);
        EXPECT_EQ(e.message, r);
        EXPECT_EQ(e.time_nsec, 223456789u);
        EXPECT_EQ(e.extra, "host=shop.example.test cluster=eu");
    }
    Decoded bad;
    std::vector<uint8_t> junk = {0xff, 0xff, 0xff, 0x01};
    EXPECT_FALSE(decode(junk.data(), junk.size(), bad));
}

// Two query threads hand over 2 x 700 exchanges; every query and response is in the file, in each thread's
// order, and nothing is dropped.
TEST(Dnstap, SinkWritesEveryFrameToAFile) {
    Options o;
    o.path = temp_path("file.fstrm");
    o.identity = "ns1";
    Sink sink(o, 2);
    sink.start();
    std::vector<uint8_t> r = {0xaa};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 2; ++t) {
        threads.emplace_back([&sink, &r, t] {
            for (uint16_t i = 0; i < 700; ++i) {
                std::vector<uint8_t> q = {static_cast<uint8_t>(t), static_cast<uint8_t>(i >> 8),
                                          static_cast<uint8_t>(i)};
                sink.producer(t).log(exchange(q, r, "198.51.100.7:4242"));
                if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        });
    }
    for (auto& t : threads) t.join();
    sink.stop();
    EXPECT_EQ(sink.written(), 2800u);
    EXPECT_EQ(sink.dropped(), 0u);
    std::vector<int> next(2, 0);
    size_t queries = 0, responses = 0;
    std::string error;
    ASSERT_TRUE(read_file(
        o.path,
        [&](const uint8_t* data, size_t len) {
            Decoded d;
            ASSERT_TRUE(decode(data, len, d));
            if (d.response) return void(++responses);
            ++queries;
            ASSERT_EQ(d.message.size(), 3u);
            int i = d.message[1] << 8 | d.message[2];
            EXPECT_EQ(i, next[d.message[0]]++);  // each thread's queries in its order
        },
        error))
        << error;
    EXPECT_EQ(queries, 1400u);
    EXPECT_EQ(responses, 1400u);
    unlink(o.path.c_str());
}

// No reader at the socket: what is logged is dropped and counted (memory stays bounded), and stopping does
// not wait for a reader.
TEST(Dnstap, SinkWithoutReaderDropsAndCounts) {
    Options o;
    o.unix_socket = true;
    o.path = temp_path("nobody.sock");
    Sink sink(o, 1);
    sink.start();
    std::vector<uint8_t> q = {1}, r = {2};
    for (int i = 0; i < 10; ++i) sink.producer(0).log(exchange(q, r, "198.51.100.7:4242"));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (sink.dropped() < 20 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(sink.dropped(), 20u);
    EXPECT_EQ(sink.written(), 0u);
    EXPECT_FALSE(sink.connected());
    sink.stop();
}

TEST(Dnstap, SampleLogsOneExchangeInN) {
    Options o;
    o.path = temp_path("sample.fstrm");
    o.sample = 4;
    Sink sink(o, 1);
    int sampled = 0;
    for (int i = 0; i < 100; ++i) sampled += sink.producer(0).sampled() ? 1 : 0;
    EXPECT_EQ(sampled, 25);
}

TEST(Dnstap, SocketPathTooLongIsRefused) {
    Options o;
    o.unix_socket = true;
    o.path = "/" + std::string(200, 'x');
    EXPECT_THROW(Sink(o, 1), std::runtime_error);
}

}  // namespace
}  // namespace glbd::dnstap
