// The fleet's verdict (sync/health/outside/fleet): who probes an endpoint from outside, which vantages are cut
// off, and when the vantages withdraw an endpoint or keep a dead cluster's.
#include "sync/health/outside/fleet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

using namespace glbd::health::outside;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> clusters(int n) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i) v.push_back("c" + std::to_string(i));
    return v;
}
std::string endpoint(int i) { return "198.51." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1); }

}  // namespace

// Every server must rank alike: the hash is pinned (a second implementation, in Python, gave these).
TEST(Fleet, RankIsFixedEverywhere) {
    EXPECT_EQ(rank("192.0.2.10", "eu-1"), 0xb345c2f0937eba09ULL);
    EXPECT_EQ(rank("", ""), 0x25fc6dd36ce04b20ULL);
    EXPECT_NE(rank("ab", "c"), rank("a", "bc"));
}

TEST(Fleet, VantagesAreTheSameInAnyOrderAndNeverTheOwnCluster) {
    auto all = clusters(8);
    auto first = vantages("192.0.2.10", "c3", all, 3);
    ASSERT_EQ(first.size(), 3u);
    EXPECT_EQ(std::count(first.begin(), first.end(), "c3"), 0);
    EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), 3u);
    std::mt19937 rng(7);
    for (int i = 0; i < 20; ++i) {
        std::shuffle(all.begin(), all.end(), rng);
        EXPECT_EQ(vantages("192.0.2.10", "c3", all, 3), first);
    }
    auto twice = all;
    twice.insert(twice.end(), all.begin(), all.end());
    EXPECT_EQ(vantages("192.0.2.10", "c3", twice, 3), first);  // a cluster listed twice counts once
    EXPECT_EQ(vantages("192.0.2.10", "c0", {"c0", "c1"}, 3), std::vector<std::string>{"c1"});
    EXPECT_TRUE(vantages("192.0.2.10", "c0", {"c0"}, 3).empty());
}

// Rendezvous hashing: a cluster leaving moves only the endpoints it probed (each gains one vantage in its
// place, the others stay); one joining takes a place only where it ranks among the first; shares are even.
TEST(Fleet, AClusterComingOrGoingMovesOnlyItsShare) {
    const auto all = clusters(10);
    auto without = all;
    without.erase(std::find(without.begin(), without.end(), "c4"));
    std::map<std::string, int> share;
    int moved = 0;
    for (int i = 0; i < 2000; ++i) {
        const std::string ep = endpoint(i), own = all[i % 10];
        auto before = vantages(ep, own, all, 3);
        for (const auto& v : before) ++share[v];
        auto after = vantages(ep, own, without, 3);
        bool had = std::count(before.begin(), before.end(), "c4") > 0;
        std::set<std::string> b(before.begin(), before.end()), a(after.begin(), after.end());
        std::vector<std::string> kept;
        std::set_intersection(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(kept));
        EXPECT_EQ(kept.size(), had ? 2u : 3u) << ep;
        if (had) ++moved;
        // and back: c4 joining again gives the first choice back exactly
        EXPECT_EQ(vantages(ep, own, all, 3), before);
        for (const auto& c : all) {  // the quick question agrees with the list
            EXPECT_EQ(is_vantage(ep, own, c, all, 3), std::count(before.begin(), before.end(), c) > 0) << ep << c;
        }
    }
    EXPECT_EQ(share["c4"], moved);
    for (const auto& [c, n] : share) {  // 2000 x 3 / 10 = 600 each
        EXPECT_GT(n, 480) << c;
        EXPECT_LT(n, 720) << c;
    }
}

TEST(Fleet, ReplicasSplitTheirClustersShare) {
    EXPECT_FALSE(prober("192.0.2.10", {}));
    EXPECT_EQ(prober("192.0.2.10", {"eu-0"}), "eu-0");
    std::map<std::string, int> n;
    for (int i = 0; i < 1000; ++i) {
        auto p = prober(endpoint(i), {"eu-0", "eu-1"});
        ASSERT_TRUE(p);
        EXPECT_EQ(p, prober(endpoint(i), {"eu-1", "eu-0"}));
        ++n[*p];
    }
    EXPECT_GT(n["eu-0"], 400);
    EXPECT_GT(n["eu-1"], 400);
}

TEST(Fleet, AVantageFailingNearlyEverythingInTwoClustersIsCutOff) {
    EXPECT_FALSE(cut_off({}));
    EXPECT_FALSE(cut_off({{"a", {5, 5}}}));                    // one cluster's outage is that cluster's
    EXPECT_TRUE(cut_off({{"a", {5, 5}}, {"b", {5, 4}}}));      // 9 of 10 in two clusters
    EXPECT_FALSE(cut_off({{"a", {5, 4}}, {"b", {5, 4}}}));     // 8 of 10: below 90 %
    EXPECT_FALSE(cut_off({{"a", {1, 1}}, {"b", {1, 1}}}));     // 2: fewer than 3
    EXPECT_TRUE(cut_off({{"a", {2, 2}}, {"b", {1, 1}}}));      // 3 of 3 in two
    EXPECT_FALSE(cut_off({{"a", {10, 10}}, {"b", {10, 0}}}));  // half
    EXPECT_TRUE(cut_off({{"a", {18, 18}}, {"b", {2, 0}}, {"c", {1, 1}}}));
    EXPECT_FALSE(cut_off({{"a", {1, 5}}, {"b", {1, 5}}}));  // a count beyond the endpoints is clamped
}

TEST(Fleet, TheQuorumWithdrawsNeverOneVantageAlone) {
    auto v = [](Seen a, Seen b, Seen c) { return std::vector<Vantage>{{"a", a}, {"b", b}, {"c", c}}; };
    const Seen R = Seen::reaches, F = Seen::fails, N = Seen::none;
    EXPECT_TRUE(decide(true, v(R, R, R), 0).healthy);
    EXPECT_TRUE(decide(true, v(F, R, R), 0).healthy);  // one vantage cannot reach it: it stays
    Verdict two = decide(true, v(F, F, R), 0);
    EXPECT_FALSE(two.healthy);
    EXPECT_TRUE(two.withdrawn);
    EXPECT_EQ(two.counted, 3u);
    EXPECT_EQ(two.failing, 2u);
    EXPECT_EQ(two.needed, 2u);
    EXPECT_TRUE(decide(true, v(F, N, N), 0).healthy);  // one vantage alone, even as the whole majority
    EXPECT_TRUE(decide(true, v(F, N, N), 1).healthy);  // and even with quorum 1
    EXPECT_FALSE(decide(true, v(F, F, N), 0).healthy);
    EXPECT_TRUE(decide(true, v(F, F, R), 3).healthy);  // quorum 3: two are not enough
    EXPECT_FALSE(decide(true, v(F, F, F), 3).healthy);
    EXPECT_FALSE(decide(false, v(R, R, R), 0).healthy);  // its own cluster's failure is not overruled
    EXPECT_FALSE(decide(false, v(R, R, R), 0).withdrawn);
    EXPECT_TRUE(decide(true, {}, 0).healthy);  // no vantages: as before
    // Vantages that do not count: dead, cut off.
    auto dead = v(F, F, R);
    dead[0].alive = false;
    EXPECT_TRUE(decide(true, dead, 0).healthy);
    auto cut = v(F, F, F);
    cut[0].cut_off = true;
    cut[1].cut_off = true;
    EXPECT_TRUE(decide(true, cut, 0).healthy);
    EXPECT_EQ(decide(true, cut, 0).counted, 1u);
    // Five vantages, a majority: three.
    std::vector<Vantage> five{{"a", F}, {"b", F}, {"c", R}, {"d", R}, {"e", R}};
    EXPECT_TRUE(decide(true, five, 0).healthy);
    five[2].seen = F;
    EXPECT_FALSE(decide(true, five, 0).healthy);
    EXPECT_EQ(needed(0, 5), 3u);
    EXPECT_EQ(needed(0, 1), 2u);
    EXPECT_EQ(needed(1, 5), 2u);
    EXPECT_EQ(needed(4, 5), 4u);
}

TEST(Fleet, ADeadClustersEndpointStaysWhileAQuorumReachesItWithinKeepDead) {
    const Seen R = Seen::reaches, F = Seen::fails, N = Seen::none;
    std::vector<Vantage> reach{{"a", R}, {"b", R}, {"c", F}};
    EXPECT_TRUE(keep_dead(reach, 0, 1s, 600s));
    EXPECT_FALSE(keep_dead(reach, 0, 600s, 600s));  // the time is up
    EXPECT_FALSE(keep_dead(reach, 0, 0s, 0s));      // keepDead 0: off
    EXPECT_FALSE(keep_dead({{"a", R}, {"b", F}, {"c", F}}, 0, 1s, 600s));
    EXPECT_TRUE(keep_dead({{"a", R}, {"b", N}, {"c", N}}, 0, 1s, 600s));  // the only one with a verdict
    EXPECT_FALSE(keep_dead({{"a", N}, {"b", N}}, 0, 1s, 600s));           // nobody reaches it
    EXPECT_FALSE(keep_dead(reach, 3, 1s, 600s));
    auto cut = reach;
    cut[0].cut_off = cut[1].cut_off = true;
    EXPECT_FALSE(keep_dead(cut, 0, 1s, 600s));
}

TEST(Fleet, TheCapStretchesEveryInterval) {
    EXPECT_DOUBLE_EQ(stretch(50, 100), 1.0);
    EXPECT_DOUBLE_EQ(stretch(100, 100), 1.0);
    EXPECT_DOUBLE_EQ(stretch(400, 100), 4.0);
    EXPECT_DOUBLE_EQ(stretch(400, 0), 1.0);
}
