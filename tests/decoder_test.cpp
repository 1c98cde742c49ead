// The report decoder on its own (Decoder): reports handed on as each origin ends, a report held already read as a
// heartbeat, its limits (a report's bytes, a transfer's origins), and the host names it shares with a list held.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/sync_util.hpp"

using namespace glbd;
using namespace glbd::sync;
using test::inst;

namespace {

TEST(Decoder, HandsOnEachReportWhenTheNextOriginBegins) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    auto b = inst("us-1", "pod-b", 7, 8);
    auto records = encode("eu-1/pod-a", {{a, 0}, {b, 0}});
    Decoder d;
    std::vector<Report> done;
    ASSERT_TRUE(d.add(records[0], done));  // the header
    ASSERT_TRUE(d.add(records[1], done));  // a's origin record
    ASSERT_TRUE(d.add(records[2], done));  // a's host
    EXPECT_TRUE(done.empty()) << "a's report is not complete until b's origin record";
    ASSERT_TRUE(d.add(records[3], done));
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].state.origin(), "eu-1/pod-a");
    EXPECT_EQ(done[0].state.hosts.size(), 1u);
    ASSERT_TRUE(d.add(records[4], done));
    d.finish(done);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[1].state.origin(), "us-1/pod-b");
    EXPECT_EQ(d.from(), "eu-1/pod-a");
}

// A report the puller holds at its incarnation and version comes out as a heartbeat, its data records
// skipped; another version of the same origin, or another origin, is read whole.
TEST(Decoder, AReportHeldAtItsVersionIsReadAsAHeartbeat) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    auto b = inst("us-1", "pod-b", 7, 8);
    b.hosts.push_back(b.hosts[0]);
    b.hosts[1].host = "api.glb.test";
    auto records = encode("eu-1/pod-a", {{a, 0}, {b, 250}});
    std::vector<std::string> asked;
    auto decode_held = [&](uint64_t held_version) {
        Decoder d;
        d.skip_held([&](const InstanceState& s) {
            asked.push_back(s.origin());
            return s.origin() == "us-1/pod-b" && s.incarnation == b.incarnation && s.version == held_version;
        });
        std::vector<Report> done;
        for (const auto& r : records) EXPECT_TRUE(d.add(r, done)) << d.error();
        d.finish(done);
        return done;
    };
    auto done = decode_held(7);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_TRUE(done[0].has_data);
    EXPECT_FALSE(done[0].skipped);
    EXPECT_EQ(done[0].state.hosts.size(), 1u);
    EXPECT_FALSE(done[1].has_data);
    EXPECT_TRUE(done[1].skipped);
    EXPECT_TRUE(done[1].state.hosts.empty()) << "a held report's hosts are not read";
    EXPECT_EQ(done[1].state.version, 7u);
    EXPECT_EQ(done[1].state.heartbeat, 8u);
    EXPECT_EQ(done[1].age_ms, 250u);
    EXPECT_EQ(asked, (std::vector<std::string>{"eu-1/pod-a", "us-1/pod-b"}));
    done = decode_held(6);  // an older version held: the report is news, read whole
    ASSERT_EQ(done.size(), 2u);
    EXPECT_TRUE(done[1].has_data);
    EXPECT_FALSE(done[1].skipped);
    EXPECT_EQ(done[1].state.hosts.size(), 2u);
}

TEST(Decoder, AReportOverItsLimitIsCutOffAndTheOnesBeforeItCount) {
    // Override records for one target overwrite each other: the reader keeps little while the report's
    // bytes grow past 64 MiB.
    Decoder d;
    std::vector<Report> done;
    ASSERT_TRUE(d.add({"origin=eu/a", "version=1"}, done));
    ASSERT_TRUE(d.add({"origin=us/b", "version=1"}, done));
    std::vector<std::string> big{"override=us/" + std::string(7000, 'x'), "state=down", "at=1"};
    bool cut = false;
    for (size_t i = 0; i < Decoder::kMaxReportBytes / 7000 + 2 && !cut; ++i) cut = !d.add(big, done);
    ASSERT_TRUE(cut);
    EXPECT_TRUE(d.over_limit());
    EXPECT_NE(d.error().find("the report of us/b is larger than 64 MiB"), std::string::npos) << d.error();
    d.finish(done);
    ASSERT_EQ(done.size(), 1u);  // eu/a, complete before the limit; us/b is not handed on
    EXPECT_EQ(done[0].state.origin(), "eu/a");
    EXPECT_FALSE(d.add({"origin=fr/c"}, done)) << "nothing more is read after an error";
}

TEST(Decoder, MoreOriginsThanTheLimitInOneTransferAreCutOff) {
    Decoder d;
    std::vector<Report> done;
    for (size_t i = 0; i < ReportLimits::kMaxOrigins; ++i)
        ASSERT_TRUE(d.add({"origin=c" + std::to_string(i) + "/a"}, done));
    EXPECT_FALSE(d.add({"origin=one-too-many/a"}, done));
    EXPECT_TRUE(d.over_limit());
    EXPECT_EQ(done.size(), ReportLimits::kMaxOrigins - 1);
    Decoder m;
    EXPECT_FALSE(m.add({"host=x.glb.test"}, done));
    EXPECT_FALSE(m.over_limit()) << "a malformed record is no limit";
}

// The host names of a report read take the texts of the list the puller names for its origin (a name it lacks
// is a text of its own), every value as sent; without such a list every name is its own.
TEST(Decoder, HostNamesShareTheTextsOfTheListGivenForTheirOrigin) {
    auto a = test::inst("eu-1", "pod-a", 5, 6);
    a.hosts.push_back(a.hosts[0]), a.hosts.push_back(a.hosts[0]);  // shop, and two more
    a.hosts[1].host = "api.glb.test", a.hosts[2].host = "zzz-new.glb.test";
    HostList held = std::vector<HostEntry>{test::inst("eu-1", "pod-a", 1, 1).hosts[0]};  // shop.glb.test
    held.push_back(HostEntry{"api.glb.test", 60, std::nullopt, {}});
    order_entries(held);
    order_entries(a.hosts);
    auto records = encode("eu-1/pod-a", {{a, 0}});
    for (bool with_names : {true, false}) {
        Decoder d;
        std::vector<std::string> asked;
        if (with_names) {
            d.share_names([&](const InstanceState& s) {
                asked.push_back(s.origin());
                return held;
            });
        }
        std::vector<Report> done;
        for (const auto& r : records) ASSERT_TRUE(d.add(r, done)) << d.error();
        d.finish(done);
        ASSERT_EQ(done.size(), 1u);
        const HostList& got = done[0].state.hosts;
        ASSERT_EQ(got.size(), 3u);
        EXPECT_EQ(got.vec(), a.hosts.vec());
        EXPECT_EQ(got[0].host.same_block(held[0].host), with_names);  // api
        EXPECT_EQ(got[1].host.same_block(held[1].host), with_names);  // shop
        EXPECT_EQ(got[2].host, "zzz-new.glb.test");
        EXPECT_EQ(asked, with_names ? std::vector<std::string>{"eu-1/pod-a"} : std::vector<std::string>{});
    }
}

}  // namespace
