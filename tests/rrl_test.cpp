// Response rate limiting as a unit: the rate per (prefix, kind) and second, slip 0 / 1 / N, separate
// buckets per kind of response, IPv4 /24 and IPv6 /56 grouping, and the shape of a slipped response.
#include <gtest/gtest.h>

#include "resolver/snapshot/snapshot.hpp"
#include "server/net/rrl.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;
using namespace glbd::test;

namespace {

using Action = RateLimiter::Action;

struct Tally {
    int send = 0, slip = 0, drop = 0;
};

Tally flood(RateLimiter& rl, const char* client, int n, uint32_t second = 100, Outcome kind = Outcome::answer) {
    Tally t;
    for (int i = 0; i < n; ++i) {
        switch (rl.check(address_of(client), kind, second)) {
            case Action::send: ++t.send; break;
            case Action::slip: ++t.slip; break;
            case Action::drop: ++t.drop; break;
        }
    }
    return t;
}

TEST(Rrl, OffSendsEverything) {
    RateLimiter rl(RrlOptions{0, 2, 24, 56});
    EXPECT_FALSE(rl.enabled());
}

TEST(Rrl, RateThenSlipEverySecondOneDropped) {
    RateLimiter rl(RrlOptions{5, 2, 24, 56});
    auto t = flood(rl, "192.0.2.1", 25);
    EXPECT_EQ(t.send, 5);
    EXPECT_EQ(t.slip, 10);
    EXPECT_EQ(t.drop, 10);
}

TEST(Rrl, SlipZeroDropsEveryLimitedResponse) {
    RateLimiter rl(RrlOptions{5, 0, 24, 56});
    auto t = flood(rl, "192.0.2.1", 25);
    EXPECT_EQ(t.send, 5);
    EXPECT_EQ(t.slip, 0);
    EXPECT_EQ(t.drop, 20);
}

TEST(Rrl, SlipOneTruncatesEveryLimitedResponse) {
    RateLimiter rl(RrlOptions{5, 1, 24, 56});
    auto t = flood(rl, "192.0.2.1", 25);
    EXPECT_EQ(t.send, 5);
    EXPECT_EQ(t.slip, 20);
    EXPECT_EQ(t.drop, 0);
}

TEST(Rrl, SlipThreeTruncatesEveryThird) {
    RateLimiter rl(RrlOptions{5, 3, 24, 56});
    auto t = flood(rl, "192.0.2.1", 35);
    EXPECT_EQ(t.send, 5);
    EXPECT_EQ(t.slip, 10);
    EXPECT_EQ(t.drop, 20);
}

TEST(Rrl, ANewSecondSendsAgain) {
    RateLimiter rl(RrlOptions{5, 2, 24, 56});
    EXPECT_EQ(flood(rl, "192.0.2.1", 10, 100).send, 5);
    EXPECT_EQ(flood(rl, "192.0.2.1", 10, 101).send, 5);
}

TEST(Rrl, EachKindOfResponseHasItsOwnBucket) {
    RateLimiter rl(RrlOptions{5, 2, 24, 56});
    EXPECT_EQ(flood(rl, "192.0.2.1", 50, 100, Outcome::nxdomain).send, 5);
    // A flood of NXDOMAIN from the prefix leaves its ordinary answers alone.
    EXPECT_EQ(flood(rl, "192.0.2.1", 5, 100, Outcome::answer).send, 5);
    EXPECT_EQ(flood(rl, "192.0.2.1", 5, 100, Outcome::refused).send, 5);
}

TEST(Rrl, Ipv4ClientsShareTheirSlash24) {
    RateLimiter rl(RrlOptions{5, 2, 24, 56});
    EXPECT_EQ(flood(rl, "192.0.2.1", 3).send, 3);
    EXPECT_EQ(flood(rl, "192.0.2.254", 5).send, 2);  // the same /24: 2 left
    EXPECT_EQ(flood(rl, "192.0.3.1", 5).send, 5);    // the next /24: its own
}

TEST(Rrl, Ipv6ClientsShareTheirSlash56) {
    RateLimiter rl(RrlOptions{5, 2, 24, 56});
    EXPECT_EQ(flood(rl, "2001:db8:0:100::1", 3).send, 3);
    EXPECT_EQ(flood(rl, "2001:db8:0:1ff:ffff::9", 5).send, 2);  // same first 56 bits
    EXPECT_EQ(flood(rl, "2001:db8:0:200::1", 5).send, 5);       // bit 55 differs
}

TEST(Rrl, ConfiguredPrefixLengthsApply) {
    RateLimiter rl(RrlOptions{5, 2, 20, 48});
    EXPECT_EQ(flood(rl, "192.0.0.1", 3).send, 3);
    EXPECT_EQ(flood(rl, "192.0.15.1", 5).send, 2);  // inside the same /20
    EXPECT_EQ(flood(rl, "192.0.16.1", 5).send, 5);
    EXPECT_EQ(flood(rl, "2001:db8:1::1", 3).send, 3);
    EXPECT_EQ(flood(rl, "2001:db8:1:ffff::1", 5).send, 2);  // inside the same /48
}

// A slipped response is the header and question with TC=1: no records, no OPT, the same ID.
TEST(Rrl, SlippedResponseIsHeaderAndQuestionWithTc) {
    auto c = config_from(kGlbTestConfig);
    auto snap = build_snapshot(c, {local_cluster_view(c)}, nullptr, 1);
    QueryOpts o;
    o.id = 0xbeef;
    auto q = make_query("static.glb.test", 1, o);
    Client client;
    client.address = address_of("192.0.2.9");
    uint8_t out[1232];
    size_t n = answer(*snap, q.data(), q.size(), client, out, sizeof out);
    ASSERT_GT(n, 0u);
    ASSERT_EQ(parse(out, n).answer.size(), 1u);
    size_t cut = truncate_response(out, n);
    EXPECT_EQ(cut, 12 + 17 + 4);  // header, "static.glb.test" in wire form, type and class
    auto p = parse(out, cut);
    ASSERT_TRUE(p.ok);
    EXPECT_TRUE(p.tc);
    EXPECT_TRUE(p.qr);
    EXPECT_EQ(p.id, 0xbeef);
    EXPECT_EQ(p.question.rfind("static.glb.test.", 0), 0u);
    EXPECT_TRUE(p.answer.empty());
    EXPECT_TRUE(p.authority.empty());
    EXPECT_TRUE(p.additional.empty());
    EXPECT_FALSE(p.edns);
}

}  // namespace
