// Response rate limiting as a unit: the rate per (prefix, kind) and second, slip 0 / 1 / N, separate
// buckets per kind of response, IPv4 /24 and IPv6 /56 grouping, and the shape of a slipped response.
#include <gtest/gtest.h>

#include "resolver/snapshot/snapshot.hpp"
#include "server/net/rrl.hpp"
#include "server/net/signing_budget.hpp"
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
// The slot the old table gave a /24 (unkeyed FNV-1a over family, kind and the prefix): anyone could compute
// it offline.
size_t fnv_slot(const std::string& prefix24, Outcome kind) {
    geo::Address a = address_of(prefix24);
    uint64_t h = 1469598103934665603ull ^ (uint64_t{4} << 8 | static_cast<uint64_t>(kind));
    for (int i = 0; i < 3; ++i) h = (h ^ a.bytes[i]) * 1099511628211ull;
    return (h | 1) & 0xffff;
}

// A victim's 3,000 queries in one second at 100/s, slip 0, with another prefix's queries mixed in: the victim
// gets its 100 whatever shares its slot. On the old code a /24 that FNV put in the victim's slot reset it at
// each packet: 2,999 of 3,000 were answered.
TEST(Rrl, APrefixThatSharedTheVictimsSlotNoLongerResetsIt) {
    const std::string victim = "198.51.100.1";
    size_t target = fnv_slot(victim, Outcome::answer);
    std::string other;
    for (uint32_t i = 0; i < (1u << 24) && other.empty(); ++i) {
        std::string p =
            std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." + std::to_string(i & 255) + ".1";
        if (p != victim && fnv_slot(p, Outcome::answer) == target) other = p;
    }
    ASSERT_FALSE(other.empty());
    RateLimiter rl(RrlOptions{100, 0, 24, 56});
    int sent = 0;
    for (int i = 0; i < 3000; ++i) {
        sent += rl.check(address_of(victim), Outcome::answer, 100) == Action::send;
        if (i % 50 == 0) (void)rl.check(address_of(other), Outcome::answer, 100);
    }
    EXPECT_EQ(sent, 100) << "colliding prefix " << other;
}

// Under a known secret, prefixes that share a window: each keeps its own count while the window has room,
// and once it is full a newcomer shares a slot (limited sooner), never resets one.
TEST(Rrl, KeysInOneWindowKeepTheirCountsAndANewcomerNeverResetsOne) {
    cookie::Secret secret{};
    secret[0] = 42;
    // Prefixes whose slot lands at the same home, found with the secret (as only the table could).
    std::vector<std::string> same;
    uint64_t home = 0;
    for (uint32_t i = 0; i < (1u << 24) && same.size() < RateLimiter::kWindow + 2; ++i) {
        uint8_t buf[5] = {4, static_cast<uint8_t>(Outcome::answer), static_cast<uint8_t>(i >> 16),
                          static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        uint64_t h = (cookie::siphash24(secret, buf, sizeof buf) | 1) & 0xffff;
        if (same.empty()) home = h;
        if (h == home)
            same.push_back(std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
                           std::to_string(i & 255) + ".7");
    }
    ASSERT_EQ(same.size(), RateLimiter::kWindow + 2);
    RateLimiter rl(RrlOptions{10, 0, 24, 56}, secret);
    // The first kWindow prefixes each send 10 in the second, interleaved: every one gets its own 10.
    for (int round = 0; round < 20; ++round) {
        for (size_t k = 0; k < RateLimiter::kWindow; ++k) (void)rl.check(address_of(same[k]), Outcome::answer, 100);
    }
    for (size_t k = 0; k < RateLimiter::kWindow; ++k) {
        EXPECT_EQ(rl.check(address_of(same[k]), Outcome::answer, 100), Action::drop) << k;
    }
    // Two newcomers in the same second find the window full: limited at once (they share a busy slot), and
    // the first prefix is still limited (its count was not reset by them).
    EXPECT_EQ(rl.check(address_of(same[RateLimiter::kWindow]), Outcome::answer, 100), Action::drop);
    EXPECT_EQ(rl.check(address_of(same[RateLimiter::kWindow + 1]), Outcome::answer, 100), Action::drop);
    EXPECT_EQ(rl.check(address_of(same[0]), Outcome::answer, 100), Action::drop);
    // The next second, stale slots are free again: a newcomer gets its own.
    Tally t = flood(rl, same[RateLimiter::kWindow].c_str(), 15, 101);
    EXPECT_EQ(t.send, 10);
}

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

// The signing budget, a second: a client prefix gets kPerSource signatures (kPerCookieSource with a valid cookie),
// another prefix its own, the thread at most kPerThread in all; a TCP connection kPerConnection within its
// thread's, and within its prefix's; each anew the next second.
TEST(SigningBudget, PerSourceCookieThreadAndConnection) {
    ThreadSigningBudget thread;
    thread.set_second(7);
    auto takes = [](SigningBudget& b, const char* client, bool cookie, unsigned n) {
        unsigned took = 0;
        for (unsigned i = 0; i < n; ++i) took += b.take(address_of(client), cookie) ? 1 : 0;
        return took;
    };
    EXPECT_EQ(takes(thread, "192.0.2.1", false, 500), ThreadSigningBudget::kPerSource);
    EXPECT_EQ(takes(thread, "192.0.2.77", false, 10), 0u) << "the same /24";
    EXPECT_EQ(takes(thread, "198.51.100.1", false, 500), ThreadSigningBudget::kPerSource) << "another /24";
    EXPECT_EQ(takes(thread, "203.0.113.1", true, 5000), ThreadSigningBudget::kPerCookieSource) << "a cookie";
    unsigned all = 2 * ThreadSigningBudget::kPerSource + ThreadSigningBudget::kPerCookieSource;
    for (unsigned net = 0; net < 100 && all < ThreadSigningBudget::kPerThread; ++net) {
        all += takes(thread, ("10.0." + std::to_string(net) + ".1").c_str(), false, 500);
    }
    EXPECT_EQ(all, ThreadSigningBudget::kPerThread);
    EXPECT_FALSE(thread.take(address_of("10.200.0.1"), true)) << "over the thread's budget";
    thread.set_second(8);
    EXPECT_TRUE(thread.take(address_of("192.0.2.1"), false)) << "a new second";

    ThreadSigningBudget tcp;
    ConnectionSigningBudget conn(tcp), other(tcp);
    conn.set_second(9);
    other.set_second(9);
    EXPECT_EQ(takes(conn, "203.0.113.9", true, 1000), ConnectionSigningBudget::kPerConnection);
    EXPECT_EQ(takes(other, "203.0.113.9", true, 1000), ConnectionSigningBudget::kPerConnection)
        << "another connection from that prefix: its own share, of the prefix's";
    ConnectionSigningBudget third(tcp);
    third.set_second(9);
    EXPECT_EQ(takes(third, "198.51.100.9", false, 1000), ThreadSigningBudget::kPerSource) << "a prefix's budget first";
}

}  // namespace
