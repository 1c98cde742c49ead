// The probe schedule (sync/health/schedule.hpp) with times the test gives: where first rounds and later rounds
// fall, what a stall or a restart does. Exact, no waiting: the checker runs the same Schedule on its loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "sync/health/schedule.hpp"

namespace glbd {
namespace {

using health::Schedule;

// `n` targets' schedules, each `interval` ms, begun at loop time `start` with nothing known before.
std::vector<Schedule> schedules(size_t n, uint64_t interval, uint64_t seed = 1) {
    std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
    std::vector<Schedule> out;
    for (size_t i = 0; i < n; ++i) out.emplace_back(interval, Schedule::first_span(n), 0, 50'000, rng);
    return out;
}

// The loop as the checker runs it, on time: every round each schedule gives, until `until`.
std::vector<uint64_t> rounds(Schedule s, uint64_t start, uint64_t until) {
    std::vector<uint64_t> at;
    for (uint64_t due = start + s.first_ms(); due < until; due = s.next(start, due)) at.push_back(due);
    return at;
}

TEST(ProbeSchedule, FirstRoundsWithinASecondAndLaterOnesAnywhereInTheInterval) {
    auto all = schedules(1000, 2000);
    size_t second_half = 0;
    for (const Schedule& s : all) {
        EXPECT_LT(s.first_ms(), 1000u);
        EXPECT_EQ(s.first_ms() % Schedule::kSlotMs, 0u);
        EXPECT_LT(s.phase_ms(), 2000u);
        EXPECT_EQ(s.phase_ms() % Schedule::kSlotMs, 0u);
        if (s.phase_ms() >= 1000) ++second_half;
    }
    // Later rounds are spread over the whole interval, not the second the first round used (about 500 of 1000).
    EXPECT_GT(second_half, 400u);
    EXPECT_LT(second_half, 600u);
}

TEST(ProbeSchedule, LaterRoundsComeEveryIntervalAtTheTargetsPoint) {
    const uint64_t start = 7'000;
    for (const Schedule& s : schedules(24, 2000)) {
        std::vector<uint64_t> at = rounds(s, start, start + 9'000);
        ASSERT_GE(at.size(), 4u);
        EXPECT_EQ(at[0], start + s.first_ms());
        for (size_t i = 1; i < at.size(); ++i) {
            EXPECT_EQ(at[i], start + s.phase_ms() + i * 2000) << "round " << i;
        }
    }
}

// 2,500 targets: at most about kFirstRoundPerSecond first probes in any second, all of them within the span.
TEST(ProbeSchedule, AFirstRoundOfManyIsPaced) {
    constexpr size_t kTargets = 2500;
    EXPECT_EQ(Schedule::first_span(kTargets), 1250u);
    EXPECT_EQ(Schedule::first_span(10), 1000u);
    auto all = schedules(kTargets, 20'000);
    std::map<uint64_t, size_t> per_second;
    for (const Schedule& s : all) {
        EXPECT_LT(s.first_ms(), 1250u);
        ++per_second[s.first_ms() / 1000];
    }
    EXPECT_LE(per_second[0], 2100u);  // 2,000 expected (binomial, sd 20)
    EXPECT_GE(per_second[1], 400u);
    // An interval shorter than the span bounds the first round too.
    for (const Schedule& s : schedules(kTargets, 500)) EXPECT_LT(s.first_ms(), 500u);
}

// A stall of the loop (a busy CPU) from 0.5 s to 3.2 s of a 1 s interval: the rounds that fell due run when it
// ends, then each goes back to its own point, not every interval from the moment the loop woke (one burst per
// interval for good); the rounds missed entirely are skipped.
TEST(ProbeSchedule, AfterAStallEachGoesBackToItsPoint) {
    const uint64_t start = 0, woke = 3'200;
    auto all = schedules(24, 1000, 7);
    std::vector<uint64_t> after;
    for (Schedule& s : all) {
        uint64_t due = start + s.first_ms();
        while (due < 500) due = s.next(start, due);  // on time before the stall
        uint64_t next = s.next(start, std::max(due, woke));
        EXPECT_GT(next, woke);
        EXPECT_LE(next, woke + 1000);
        EXPECT_EQ((next - start) % 1000, s.phase_ms() % 1000) << "not at its point";
        after.push_back(next);
    }
    std::sort(after.begin(), after.end());
    size_t together = 0;  // the most rounds within 50 ms of each other
    for (size_t i = 0, j = 0; j < after.size(); ++j) {
        while (after[j] - after[i] > 50) ++i;
        together = std::max(together, j - i + 1);
    }
    EXPECT_LE(together, 12u) << "the rounds after a stall came together";
}

// A checker started again (a reload, a DNSRecord event) with a target's last round 1.5 s into a 4 s interval:
// its next round when it is due (2.5 s from now), then every interval from there; one whose last round is an
// interval old or more, or that has none, starts over within the first span.
TEST(ProbeSchedule, StartedAgainATargetGoesOnFromItsLastRound) {
    std::mt19937 rng(3);
    const uint64_t now = 100'000;
    Schedule again(4000, 1000, now - 1500, now, rng);
    EXPECT_EQ(again.first_ms(), 2500u);
    EXPECT_EQ(again.phase_ms(), 2500u);
    std::vector<uint64_t> at = rounds(again, 0, 11'000);
    EXPECT_EQ(at, (std::vector<uint64_t>{2500, 6500, 10500}));
    for (uint64_t last : {now - 4000, now - 9000, uint64_t{0}}) {
        Schedule fresh(4000, 1000, last, now, rng);
        EXPECT_LT(fresh.first_ms(), 1000u) << "last round at " << last;
    }
}

}  // namespace
}  // namespace glbd
