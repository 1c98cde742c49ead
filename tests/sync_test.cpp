// sync/: merging reports (versions, heartbeats, relays, replicas, overrides), the `_glbd.` codec, TSIG.
#include <gtest/gtest.h>

#include <functional>
#include "sync/service.hpp"

#include "resolver/base/log_throttle.hpp"
#include "sync/state.hpp"
#include "sync/transfer/codec.hpp"
#include "sync/transfer/tsig.hpp"
#include "tests/dns_util.hpp"

#include <ldns/ldns.h>

using namespace glbd;
using namespace glbd::sync;

namespace {

InstanceState inst(const std::string& cluster, const std::string& instance, uint64_t version, uint64_t heartbeat,
                   std::vector<std::pair<std::string, bool>> eps = {{"192.0.2.1", true}}) {
    InstanceState s{cluster, instance, version, heartbeat, {}, {}};
    HostEntry h{"shop.glb.test", 60, conf::LoadBalancing{100, "IE", false}, {}};
    for (auto& [t, ok] : eps) h.endpoints.push_back(EndpointState{t, ok});
    s.hosts.push_back(h);
    return s;
}

// A copy: views are temporaries.
std::optional<ClusterView> cluster(const GlobalView& v, const std::string& id) {
    for (const auto& c : v) {
        if (c.id == id) return c;
    }
    return std::nullopt;
}

TEST(Store, NewestVersionWins) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 1000);
    EXPECT_TRUE(st.merge(inst("eu", "x", 10, 10, {{"192.0.2.1", true}}), 0, 1000).data_changed);
    EXPECT_FALSE(st.merge(inst("eu", "x", 9, 11, {{"192.0.2.9", true}}), 0, 1000).data_changed);  // older
    EXPECT_EQ(cluster(st.view(1000, 3000), "eu")->hosts[0].endpoints[0].target, "192.0.2.1");
    EXPECT_TRUE(st.merge(inst("eu", "x", 11, 12, {{"192.0.2.2", true}}), 0, 1000).data_changed);
    EXPECT_EQ(cluster(st.view(1000, 3000), "eu")->hosts[0].endpoints[0].target, "192.0.2.2");
}

TEST(Store, NobodySpeaksForUs) {
    Store st;
    st.set_own(inst("me", "a", 5, 5, {{"192.0.2.5", true}}), 1000);
    EXPECT_FALSE(st.merge(inst("me", "a", 99, 99, {{"192.0.2.99", true}}), 0, 1000).data_changed);
    EXPECT_EQ(cluster(st.view(1000, 3000), "me")->hosts[0].endpoints[0].target, "192.0.2.5");
}

TEST(Store, DeadAfterSilenceAndAliveWhenHeardAgain) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    st.merge(inst("eu", "x", 10, 100), 0, 1000);
    EXPECT_TRUE(cluster(st.view(3999, 3000), "eu")->alive);
    EXPECT_FALSE(cluster(st.view(4001, 3000), "eu")->alive);
    // The same heartbeat relayed again does not revive it; a newer one does.
    st.merge(inst("eu", "x", 10, 100), 0, 5000);
    EXPECT_FALSE(cluster(st.view(5000, 3000), "eu")->alive);
    EXPECT_TRUE(st.merge(inst("eu", "x", 10, 101), 0, 5000).heard);
    EXPECT_TRUE(cluster(st.view(5000, 3000), "eu")->alive);
}

TEST(Store, RelayedAgeCountsAgainstLiveness) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    // Learnt through a relay that last heard the origin 10 s ago: already dead with deadAfter 3 s.
    st.merge(inst("us", "y", 10, 100), 10000, 20000);
    EXPECT_FALSE(cluster(st.view(20000, 3000), "us")->alive);
    st.merge(inst("us", "y", 10, 200), 500, 21000);
    EXPECT_TRUE(cluster(st.view(21000, 3000), "us")->alive);
}

TEST(Store, ReplicasMergeHealthyWhenAtLeastHalfSaySo) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    st.merge(inst("eu", "r1", 10, 10, {{"192.0.2.1", true}, {"192.0.2.2", false}, {"192.0.2.3", false}}), 0, 1000);
    st.merge(inst("eu", "r2", 11, 10, {{"192.0.2.1", true}, {"192.0.2.2", true}, {"192.0.2.3", false}}), 0, 1000);
    auto eu = cluster(st.view(1000, 3000), "eu");
    ASSERT_TRUE(eu);
    ASSERT_EQ(eu->hosts.size(), 1u);
    std::map<std::string, bool> h;
    for (const auto& e : eu->hosts[0].endpoints) h[e.target] = e.healthy;
    EXPECT_TRUE(h["192.0.2.1"]);   // 2 of 2
    EXPECT_TRUE(h["192.0.2.2"]);   // 1 of 2: half is enough
    EXPECT_FALSE(h["192.0.2.3"]);  // 0 of 2
}

TEST(Store, EntriesOfOneNameStayApartAlone_AndAcrossReplicas) {
    auto two = [](const std::string& instance, bool us_healthy) {
        InstanceState s{"eu", instance, 10, 10, {}, {}};
        s.hosts.push_back(HostEntry{"shop.glb.test",
                                    60,
                                    conf::LoadBalancing{100, "US", false},
                                    {{"shop-us.elb.example.com", us_healthy}},
                                    "us-gw"});
        s.hosts.push_back(
            HostEntry{"shop.glb.test", 60, conf::LoadBalancing{100, "IE", true}, {{"192.0.2.1", true}}, "ie-gw"});
        return s;
    };
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    st.merge(two("r1", false), 0, 1000);
    auto eu = cluster(st.view(1000, 3000), "eu");
    ASSERT_TRUE(eu);
    ASSERT_EQ(eu->hosts.size(), 2u);  // one report: kept as it is, in entry order
    EXPECT_EQ(eu->hosts[0].entry, "ie-gw");
    EXPECT_EQ(eu->hosts[1].entry, "us-gw");
    st.merge(two("r2", true), 0, 1000);  // replicas: merged per entry, never into one
    eu = cluster(st.view(1000, 3000), "eu");
    ASSERT_EQ(eu->hosts.size(), 2u);
    EXPECT_EQ(eu->hosts[0].entry, "ie-gw");
    EXPECT_EQ(eu->hosts[0].load_balancing->geo, "IE");
    EXPECT_EQ(eu->hosts[0].endpoints, (std::vector<EndpointState>{{"192.0.2.1", true}}));
    EXPECT_EQ(eu->hosts[1].entry, "us-gw");
    EXPECT_EQ(eu->hosts[1].endpoints, (std::vector<EndpointState>{{"shop-us.elb.example.com", true}}));  // 1 of 2
}

TEST(Store, LosingOneReplicaWithdrawsNothing) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    st.merge(inst("eu", "r1", 10, 10, {{"192.0.2.1", true}}), 0, 0);
    st.merge(inst("eu", "r2", 10, 10, {{"192.0.2.1", true}}), 0, 0);
    st.merge(inst("eu", "r2", 10, 20), 0, 4000);  // r1 falls silent, r2 goes on
    auto eu = cluster(st.view(5000, 3000), "eu");
    EXPECT_TRUE(eu->alive);
    EXPECT_TRUE(eu->hosts[0].endpoints[0].healthy);
}

// Only live replicas vote: a dead replica that disagrees with the live ones changes nothing, either way.
TEST(Store, DeadReplicaThatDisagreesDoesNotVote) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    // 192.0.2.1: r1 and r2 say down, r3 up. 192.0.2.2: r1 and r2 say up, r3 down.
    st.merge(inst("eu", "r1", 10, 10, {{"192.0.2.1", false}, {"192.0.2.2", true}}), 0, 0);
    st.merge(inst("eu", "r2", 10, 10, {{"192.0.2.1", false}, {"192.0.2.2", true}}), 0, 0);
    st.merge(inst("eu", "r3", 10, 10, {{"192.0.2.1", true}, {"192.0.2.2", false}}), 0, 0);
    auto health = [&](uint64_t now) {
        std::map<std::string, bool> h;
        auto eu = cluster(st.view(now, 3000), "eu");
        EXPECT_TRUE(eu && eu->alive);
        if (eu && !eu->hosts.empty()) {
            for (const auto& e : eu->hosts[0].endpoints) h[e.target] = e.healthy;
        }
        return h;
    };
    auto all_live = health(1000);
    EXPECT_FALSE(all_live["192.0.2.1"]);  // 1 of 3
    EXPECT_TRUE(all_live["192.0.2.2"]);   // 2 of 3
    // r1 and r2 fall silent; r3 goes on: only r3 votes once they are dead.
    st.merge(inst("eu", "r3", 10, 20, {{"192.0.2.1", true}, {"192.0.2.2", false}}), 0, 3500);
    auto one_live = health(4000);
    EXPECT_TRUE(one_live["192.0.2.1"]);   // 1 of 1 live (the two dead ones said down)
    EXPECT_FALSE(one_live["192.0.2.2"]);  // 0 of 1 live (the two dead ones said up)
}

// Overrides (docs/sync.md): for one target, the one set last (its `at`, the setter's clock) wins, whichever
// origin carries it and in whatever order the reports arrive; equal times go to the origin that sorts last.
TEST(Store, OverrideSetLastWinsWhateverTheArrivalOrder) {
    for (bool older_arrives_last : {false, true}) {
        Store st;
        st.set_own(inst("me", "a", 1, 1), 0);
        auto x = inst("eu", "x", 10, 10);
        auto y = inst("us", "y", 10, 10);
        set_override(x.overrides, "eu", "down", 200);  // set later, through eu/x
        set_override(y.overrides, "eu", "up", 100);    // set earlier, through us/y
        if (older_arrives_last) {
            st.merge(x, 0, 0), st.merge(y, 0, 0);
        } else {
            st.merge(y, 0, 0), st.merge(x, 0, 0);
        }
        EXPECT_FALSE(cluster(st.view(0, 3000), "eu")->hosts[0].endpoints[0].healthy) << older_arrives_last;
        ASSERT_EQ(st.overrides().count("eu"), 1u);
        EXPECT_EQ(st.overrides().at("eu").state, OverrideState::down);
    }
}

TEST(Store, OverrideTieGoesToTheOriginThatSortsLast) {
    for (bool swap : {false, true}) {
        Store st;
        st.set_own(inst("me", "a", 1, 1), 0);
        auto x = inst("eu", "x", 10, 10);
        auto y = inst("us", "y", 10, 10);
        set_override(x.overrides, "eu", "down", 100);
        set_override(y.overrides, "eu", "up", 100);  // us/y sorts after eu/x: up wins
        if (swap) {
            st.merge(y, 0, 0), st.merge(x, 0, 0);
        } else {
            st.merge(x, 0, 0), st.merge(y, 0, 0);
        }
        EXPECT_TRUE(cluster(st.view(0, 3000), "eu")->hosts[0].endpoints[0].healthy) << swap;
    }
}

// An endpoint's override beats its cluster's, even when the cluster's was set later; "auto" on the endpoint
// hands it back to the cluster's.
TEST(Store, EndpointOverrideBeatsClusterOverrideSetLater) {
    Store st;
    auto me = inst("me", "a", 1, 1);
    set_override(me.overrides, "eu/192.0.2.1", "up", 100);
    st.set_own(me, 0);
    auto x = inst("eu", "x", 10, 10, {{"192.0.2.1", true}, {"192.0.2.2", true}});
    set_override(x.overrides, "eu", "down", 200);
    st.merge(x, 0, 0);
    auto eu = cluster(st.view(0, 3000), "eu");
    std::map<std::string, bool> h;
    for (const auto& e : eu->hosts[0].endpoints) h[e.target] = e.healthy;
    EXPECT_TRUE(h["192.0.2.1"]);
    EXPECT_FALSE(h["192.0.2.2"]);
    set_override(me.overrides, "eu/192.0.2.1", "auto", 300);
    me.version = 2;
    st.set_own(me, 0);
    eu = cluster(st.view(0, 3000), "eu");
    for (const auto& e : eu->hosts[0].endpoints) EXPECT_FALSE(e.healthy) << e.target;
}

TEST(Store, LatestOverrideWinsAcrossOrigins) {
    Store st;
    auto me = inst("me", "a", 1, 1);
    set_override(me.overrides, "eu", "down", 100);
    st.set_own(me, 0);
    auto other = inst("eu", "x", 10, 10);
    st.merge(other, 0, 0);
    EXPECT_FALSE(cluster(st.view(0, 3000), "eu")->hosts[0].endpoints[0].healthy);
    set_override(other.overrides, "eu", "auto", 200);  // set later, elsewhere
    other.version = 11;
    st.merge(other, 0, 0);
    EXPECT_TRUE(cluster(st.view(0, 3000), "eu")->hosts[0].endpoints[0].healthy);
    EXPECT_TRUE(st.overrides().empty());
}

TEST(Codec, RoundTrip) {
    auto a = inst("eu-1", "pod-a", 1796037623033, 1796037624637, {{"192.0.2.1", true}, {"lb.example.net", false}});
    a.hosts[0].load_balancing->default_geo = true;
    set_override(a.overrides, "eu-1/192.0.2.1", "down", 42);
    auto b = inst("us-1", "pod-b", 7, 8);
    b.hosts[0].load_balancing.reset();
    auto records = encode("eu-1/pod-a", {{a, 0}, {b, 1500}});
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    EXPECT_EQ(from, "eu-1/pod-a");
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].state.origin(), "eu-1/pod-a");
    EXPECT_EQ(out[0].state.version, 1796037623033u);
    EXPECT_EQ(out[0].state.heartbeat, 1796037624637u);
    ASSERT_EQ(out[0].state.hosts[0].endpoints.size(), 2u);
    EXPECT_FALSE(out[0].state.hosts[0].endpoints[1].healthy);
    EXPECT_TRUE(out[0].state.hosts[0].load_balancing->default_geo);
    EXPECT_EQ(out[0].state.overrides.at("eu-1/192.0.2.1").state, OverrideState::down);
    EXPECT_EQ(out[1].age_ms, 1500u);
    EXPECT_FALSE(out[1].state.hosts[0].load_balancing);
}

TEST(Codec, StaticRecordsTravelWithTheOriginAndOlderDecodersSkipThem) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    std::string long_txt(700, 'y');
    a.records = std::vector<ZoneRecord>{{"sub.glb.test", wire::type::NS, 300, {"ns1.sub.glb.test"}},
                                        {"ns1.sub.glb.test", wire::type::A, 300, {"192.0.2.53"}},
                                        {"_acme.glb.test", wire::type::TXT, 60, {"a=b c", long_txt, ""}}};
    auto records = encode("eu-1/pod-a", {{a, 0}});
    for (const auto& rec : records) {
        for (const auto& str : rec) EXPECT_LE(str.size(), 255u);  // each a character-string
    }
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].state.records, a.records);
    EXPECT_EQ(out[0].state.hosts, a.hosts);
    // A record kind or a type this glbd does not know is skipped, the rest read (what an older glbd does).
    records.back().push_back("future=1");
    records.push_back({"zone=x.glb.test", "type=SVCB", "ttl=60", "d=1 ."});
    records.push_back({"kind-from-the-future=1"});
    out.clear();
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    EXPECT_EQ(out[0].state.records, a.records);
    out.clear();
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"zone=x.glb.test", "type=TXT", "d+=orphan"}}, from, out, err));
}

TEST(CheckReport, BadStaticRecordsAreLeftOutAndTheRestStands) {
    auto s = inst("eu-1", "pod-a", 5, 6);
    std::vector<ZoneRecord> list = {
        {"sub.glb.test", wire::type::NS, 300, {"ns1.sub.glb.test"}},
        {"*.glb.test", wire::type::NS, 300, {"ns1.glb.test"}},           // NS at a wildcard
        {"x.glb.test", wire::type::NS, 300, {"192.0.2.1"}},              // an address is no name server name
        {"g.glb.test", wire::type::A, 300, {"2001:db8::1"}},             // AAAA data in an A record
        {"g.glb.test", wire::type::A, 300, {"192.000.2.1"}},             // not canonical
        {"t.glb.test", wire::type::TXT, 300, {std::string(9000, 'z')}},  // too long
        {"bad name.glb.test", wire::type::TXT, 300, {"x"}},
        {"m.glb.test", wire::type::MX, 300, {"10 mx"}},
        {"t.glb.test", wire::type::TXT, 300, {"fine"}},
    };
    s.records = list;
    CheckResult r = check_report(s, 0, false);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.dropped, 7u);
    EXPECT_EQ(r.dropped_why, "*.glb.test: bad NS record");
    EXPECT_EQ(s.records, (std::vector<ZoneRecord>{list.front(), list.back()}));
    EXPECT_EQ(s.hosts.size(), 1u);
}

TEST(Codec, OriginWithoutDataCarriesNoHosts) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    auto b = inst("us-1", "pod-b", 7, 8);
    auto records = encode("eu-1/pod-a", {{a, 0, false}, {b, 0, true}});
    ASSERT_EQ(records.size(), 4u);  // the header, a's origin record, b's origin record and host
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    EXPECT_FALSE(out[0].has_data);
    EXPECT_EQ(out[0].state.heartbeat, 6u);
    EXPECT_TRUE(out[0].state.hosts.empty());
    EXPECT_TRUE(out[1].has_data);
    EXPECT_EQ(out[1].state.hosts.size(), 1u);
}

TEST(Codec, ClusterLocationTravelsWithTheOrigin) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    a.location = conf::Coordinates{53.3498f, -6.2603f};
    auto b = inst("us-1", "pod-b", 7, 8);
    auto records = encode("eu-1/pod-a", {{a, 0}, {b, 0}});
    EXPECT_NE(std::find(records[1].begin(), records[1].end(), "loc=53.3498,-6.2603"), records[1].end());
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    ASSERT_TRUE(out[0].state.location);
    EXPECT_EQ(*out[0].state.location, *a.location);  // the same float on both sides: answers agree
    EXPECT_FALSE(out[1].state.location);
    // Off the globe or not two numbers: the transfer is refused, not half-read.
    for (const char* bad :
         {"loc=91,0", "loc=0,180.5", "loc=1", "loc=1,2,3", "loc=nan,1", "loc=,", "loc=1e999,0", "loc= 1,2"}) {
        out.clear();
        EXPECT_FALSE(decode({{"origin=eu/a", bad}}, from, out, err)) << bad;
    }
    // The view takes a cluster's location from its newest report.
    Store st;
    st.set_own(inst("me", "x", 1, 1), 0);
    st.merge(a, 0, 0);
    EXPECT_EQ(cluster(st.view(0, 3000), "eu-1")->location, a.location);
    EXPECT_FALSE(cluster(st.view(0, 3000), "me")->location);
}

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

TEST(Store, EachOriginRemembersTheGenerationOfItsLastChange) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    st.merge(inst("eu", "x", 10, 100), 0, 0);
    uint32_t after_eu = st.generation();
    st.merge(inst("us", "y", 10, 100), 0, 0);
    EXPECT_FALSE(newer(st.known().at("eu/x").changed_generation, after_eu));  // unchanged since
    EXPECT_TRUE(newer(st.known().at("us/y").changed_generation, after_eu));
    st.merge(inst("eu", "x", 11, 101), 0, 0);
    EXPECT_TRUE(newer(st.known().at("eu/x").changed_generation, after_eu));
    EXPECT_TRUE(newer(1u, 0xfffffff0u));  // serial arithmetic wraps
}

TEST(Store, HeartbeatOnlyMovesLivenessAndAsksForNewerData) {
    Store st;
    st.set_own(inst("me", "a", 1, 1), 0);
    st.merge(inst("eu", "x", 10, 100), 0, 0);
    uint32_t g = st.generation();
    bool heard = false;
    EXPECT_FALSE(st.merge_heartbeat(inst("eu", "x", 10, 200), 0, 2500, &heard));
    EXPECT_TRUE(heard);
    EXPECT_EQ(st.generation(), g);  // heartbeats are not data
    EXPECT_TRUE(cluster(st.view(5000, 3000), "eu")->alive);
    EXPECT_FALSE(cluster(st.view(5000, 3000), "eu")->hosts.empty());             // data kept
    EXPECT_TRUE(st.merge_heartbeat(inst("eu", "x", 11, 300), 0, 2600, &heard));  // newer version: pull it
    EXPECT_TRUE(st.merge_heartbeat(inst("us", "y", 1, 1), 0, 2600, &heard));     // unknown origin
}

TEST(Codec, MalformedRejected) {
    std::string from, err;
    std::vector<Report> out;
    EXPECT_FALSE(decode({{"host=x.glb.test"}}, from, out, err));  // a host before any origin
    EXPECT_FALSE(decode({{"origin=eu"}}, from, out, err));        // no instance
    EXPECT_FALSE(decode({{"origin=eu/a", "version=abc"}}, from, out, err));
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"host=x", "ep=192.0.2.1 maybe"}}, from, out, err));
    EXPECT_FALSE(decode({{"glbd-sync=2"}}, from, out, err));
    EXPECT_TRUE(decode({{"glbd-sync=1"}, {"future=thing"}}, from, out, err));  // unknown kinds skipped
}

// TSIG: requests signed with ldns as a peer would sign them.
const char* kSyncConfig = R"(cluster: {id: eu, instance: a}
listen: {dns: ["127.0.0.1:5399"]}
zones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}]
peers:
  key: {name: glb-sync, secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="}
)";

std::vector<uint8_t> signed_axfr(const char* key, const char* secret, uint16_t fudge = 300) {
    ldns_pkt* p = ldns_pkt_new();
    ldns_rr* q = nullptr;
    ldns_rr_new_question_frm_str(&q, "_glbd. IN AXFR", nullptr, nullptr);
    ldns_pkt_push_rr(p, LDNS_SECTION_QUESTION, q);
    if (key) ldns_pkt_tsig_sign(p, key, secret, fudge, "hmac-sha256.", nullptr);
    uint8_t* w = nullptr;
    size_t n = 0;
    ldns_pkt2wire(&w, p, &n);
    std::vector<uint8_t> out(w, w + n);
    free(w);
    ldns_pkt_free(p);
    return out;
}

TEST(Tsig, SignedRequestAccepted) {
    Service svc(test::config_from(kSyncConfig), nullptr);
    auto m = signed_axfr("glb-sync.", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=");
    EXPECT_EQ(svc.verify_request(m.data(), m.size(), static_cast<uint64_t>(time(nullptr))), Service::Auth::ok);
}

TEST(Tsig, UnsignedWrongKeyWrongSecretAndStaleRejected) {
    Service svc(test::config_from(kSyncConfig), nullptr);
    auto now = static_cast<uint64_t>(time(nullptr));
    auto unsigned_ = signed_axfr(nullptr, nullptr);
    EXPECT_EQ(svc.verify_request(unsigned_.data(), unsigned_.size(), now), Service::Auth::unsigned_);
    auto other_key = signed_axfr("other-key.", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=");
    EXPECT_EQ(svc.verify_request(other_key.data(), other_key.size(), now), Service::Auth::badkey);
    auto wrong_secret = signed_axfr("glb-sync.", "d3JvbmdzZWNyZXR3cm9uZ3NlY3JldHdyb25nc2VjcmU=");
    EXPECT_EQ(svc.verify_request(wrong_secret.data(), wrong_secret.size(), now), Service::Auth::badsig);
    auto good = signed_axfr("glb-sync.", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=");
    EXPECT_EQ(svc.verify_request(good.data(), good.size(), now + 301), Service::Auth::badtime);  // outside the fudge
    EXPECT_EQ(svc.verify_request(good.data(), good.size(), now - 301), Service::Auth::badtime);
    EXPECT_EQ(svc.verify_request(good.data(), good.size(), now + 299), Service::Auth::ok);
}

// A signer may claim a fudge of up to 65535 s; we accept at most 300 s of clock difference whatever it says.
TEST(Tsig, ClaimedFudgeIsCappedAt300Seconds) {
    Service svc(test::config_from(kSyncConfig), nullptr);
    auto now = static_cast<uint64_t>(time(nullptr));
    auto wide = signed_axfr("glb-sync.", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", 3600);
    EXPECT_EQ(svc.verify_request(wide.data(), wide.size(), now + 299), Service::Auth::ok);
    EXPECT_EQ(svc.verify_request(wide.data(), wide.size(), now + 1000), Service::Auth::badtime);
    EXPECT_EQ(svc.verify_request(wide.data(), wide.size(), now - 1000), Service::Auth::badtime);
    auto narrow = signed_axfr("glb-sync.", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", 10);
    EXPECT_EQ(svc.verify_request(narrow.data(), narrow.size(), now + 60),
              Service::Auth::badtime);  // its own fudge holds
    EXPECT_TRUE(glbd::tsig::hmac_works());
}

TEST(Tsig, RejectedRequestsLearnNothing) {
    Service svc(test::config_from(kSyncConfig), nullptr);
    auto m = signed_axfr("glb-sync.", "d3JvbmdzZWNyZXR3cm9uZ3NlY3JldHdyb25nc2VjcmU=");
    std::vector<std::vector<uint8_t>> out;
    geo::Address from;
    from = test::address_of("127.0.0.9");
    ASSERT_EQ(svc.handle(m.data(), m.size(), from, out), sync::Service::Handled::rejected);
    ASSERT_EQ(out.size(), 1u);
    auto p = test::parse(out[0].data(), out[0].size());
    EXPECT_EQ(p.rcode, 9);  // NOTAUTH
    EXPECT_TRUE(p.answer.empty());
    EXPECT_EQ(svc.counters().rejected_badsig.load(), 1u);
}

TEST(LogThrottle, FewLinesPerKeyAndSecondAndTheRestReported) {
    LogThrottle t(2);
    uint64_t left = 99;
    int logged = 0;
    for (int i = 0; i < 1000; ++i)
        logged += t.allow("10.0.0.1 unsigned", 5000 + static_cast<uint64_t>(i % 1000), &left);
    EXPECT_EQ(logged, 2);
    EXPECT_TRUE(t.allow("10.0.0.2 unsigned", 5999, &left));  // another key has its own lines
    EXPECT_EQ(left, 0u);
    ASSERT_TRUE(t.allow("10.0.0.1 unsigned", 6000, &left));  // the next second: the first line tells
    EXPECT_EQ(left, 998u);
    // Keys are bounded: a flood of sources in one second tracks at most kMaxKeys and counts the rest.
    for (int i = 0; i < 10000; ++i) t.allow("k" + std::to_string(i), 7000, &left);
    EXPECT_EQ(t.overflow(), 10000u - LogThrottle::kMaxKeys);
    EXPECT_TRUE(t.allow("late", 8000, &left));  // forgotten the next second
}

// "Once a minute" counts from the key's line, not from the clock's minute: a peer pulled every 300 ms
// across a minute's turn is still logged once (system.badpeer failed on this when CI crossed xx:00).
TEST(LogThrottle, AWindowBeginsWithItsFirstLineNotAtTheClocksTurn) {
    LogThrottle t(1, 60'000);
    uint64_t left = 99;
    ASSERT_TRUE(t.allow("peer origin", 59'816, &left));
    EXPECT_EQ(left, 0u);
    EXPECT_FALSE(t.allow("peer origin", 60'109, &left));
    EXPECT_FALSE(t.allow("peer origin", 119'815, &left));
    ASSERT_TRUE(t.allow("peer origin", 119'816, &left));  // a minute after the last line
    EXPECT_EQ(left, 2u);
    // Another key in between has a window of its own, and quiet keys are forgotten.
    ASSERT_TRUE(t.allow("other", 100'000, &left));
    EXPECT_FALSE(t.allow("other", 159'999, &left));
    ASSERT_TRUE(t.allow("other", 160'000, &left));
    EXPECT_EQ(left, 1u);
}

InstanceState life(uint64_t incarnation, uint64_t version, uint64_t heartbeat, const std::string& ep) {
    InstanceState s{"us", "b",        version, heartbeat, {HostEntry{"a.glb.test", 60, std::nullopt, {{ep, true}}}},
                    {},   incarnation};
    return s;
}

TEST(Store, NewerIncarnationReplacesWholeAndOlderIsIgnored) {
    Store store;
    store.set_own(InstanceState{"eu", "a", 1, 1, {}, {}, 1}, 0);
    uint64_t hour_ahead = 3'600'000 + 10'000;
    store.merge(life(5, hour_ahead, hour_ahead, "192.0.2.1"), 0, 10'000);
    // Restarted with its clock corrected: lower version and heartbeat, but a new life.
    auto m = store.merge(life(6, 20'000, 20'000, "192.0.2.2"), 0, 20'000);
    EXPECT_TRUE(m.data_changed);
    EXPECT_TRUE(m.heard);
    const Known& k = store.known().at("us/b");
    EXPECT_EQ(k.state.hosts[0].endpoints[0].target, "192.0.2.2");
    EXPECT_EQ(k.state.heartbeat, 20'000u);
    EXPECT_TRUE(store.alive(k, 21'000, 5000));
    // Its heartbeats move it again (they would not against the old life's hour-ahead heartbeat).
    bool heard = false;
    EXPECT_FALSE(store.merge_heartbeat(life(6, 20'000, 30'000, ""), 0, 30'000, &heard));
    EXPECT_EQ(store.known().at("us/b").state.heartbeat, 30'000u);
    // A relay of the old life changes nothing.
    m = store.merge(life(5, hour_ahead + 1, hour_ahead + 1, "192.0.2.9"), 0, 31'000);
    EXPECT_FALSE(m.data_changed);
    EXPECT_EQ(store.known().at("us/b").state.hosts[0].endpoints[0].target, "192.0.2.2");
    // A heartbeat of a newer life asks for its data.
    EXPECT_TRUE(store.merge_heartbeat(life(7, 1, 1, ""), 0, 32'000, &heard));
}

TEST(Store, ForgetsInstancesNotHeardForForgetAfterButNeverItself) {
    Store store;
    store.set_own(InstanceState{"eu", "a", 1, 1, {}, {}, 1}, 0);
    store.merge(life(1, 1, 1, "192.0.2.1"), 0, 1000);
    InstanceState fresh = life(1, 1, 1, "192.0.2.1");
    fresh.instance = "c";
    store.merge(fresh, 0, 50'000);
    uint32_t g = store.generation();
    auto gone = store.forget(61'001, 60'000);  // us/b heard at 1,000: just over a minute ago
    ASSERT_EQ(gone, std::vector<std::string>{"us/b"});
    EXPECT_TRUE(newer(store.generation(), g));
    EXPECT_EQ(store.known().count("us/c"), 1u);
    EXPECT_EQ(store.known().count("eu/a"), 1u);
    EXPECT_TRUE(store.forget(10'000'000, 60'000).size() == 1);  // us/c; never eu/a
    EXPECT_EQ(store.known().count("eu/a"), 1u);
}

// What breaks a rule about the origin (names, times, overrides, limits) refuses the report; a host that breaks
// one is left out and the rest of the report stands (one bad DNSRecord of a cluster must not withdraw the
// cluster's other hosts everywhere).
TEST(CheckReport, EveryFieldByTheConfigRules) {
    const uint64_t now = 1'000'000'000;
    InstanceState good = life(1, now, now, "192.0.2.1");
    good.hosts.push_back(
        HostEntry{"*.w.glb.test", 60, conf::LoadBalancing{5, "GEO-EU", false}, {{"lb.example.net", true}}});
    good.hosts.push_back(
        HostEntry{"c.glb.test", 60, conf::LoadBalancing{5, "dc_west-1", false}, {{"2001:db8::1", false}}});
    good.overrides["us/192.0.2.1"] = OverrideEntry{OverrideState::down, now};
    const size_t all = good.hosts.size();
    {
        InstanceState s = good;
        CheckResult r = check_report(s, now);
        EXPECT_EQ(r.error, "");
        EXPECT_EQ(r.dropped, 0u);
        EXPECT_EQ(s.hosts.size(), all);
    }
    struct Case {
        const char* what;
        std::function<void(InstanceState&)> spoil;
        const char* why;
    };
    std::vector<Case> refused = {
        {"cluster with 0xff", [](InstanceState& s) { s.cluster = "ev\xffl"; }, "bad cluster name"},
        {"cluster in capitals", [](InstanceState& s) { s.cluster = "US"; }, "bad cluster name"},
        {"instance with a newline", [](InstanceState& s) { s.instance = "b\nforged log line"; }, "bad instance name"},
        {"version 2^64-1", [](InstanceState& s) { s.version = UINT64_MAX; }, "version"},
        {"heartbeat 6 minutes ahead", [&](InstanceState& s) { s.heartbeat = now + 360'000; }, "heartbeat"},
        {"override target with a quote", [](InstanceState& s) { s.overrides["us/\"x\""] = {}; }, "bad override target"},
        {"override 6 minutes ahead",
         [&](InstanceState& s) {
             s.overrides["us"] = OverrideEntry{OverrideState::down, now + 360'000};
         },
         "override time"},
    };
    for (const auto& c : refused) {
        InstanceState s = good;
        c.spoil(s);
        CheckResult r = check_report(s, now);
        EXPECT_NE(r.error.find(c.why), std::string::npos) << c.what << ": " << r.error;
    }
    std::vector<Case> left_out = {
        {"host with a space", [](InstanceState& s) { s.hosts[1].host = "a b.glb.test"; }, "bad host name"},
        {"host in capitals", [](InstanceState& s) { s.hosts[1].host = "A.glb.test"; }, "bad host name"},
        {"wildcard inside", [](InstanceState& s) { s.hosts[1].host = "a.*.glb.test"; }, "bad host name"},
        {"endpoint with a quote", [](InstanceState& s) { s.hosts[1].endpoints[0].target = "192.0.2.1\""; },
         "bad endpoint"},
        {"endpoint 300.1.1.1", [](InstanceState& s) { s.hosts[1].endpoints[0].target = "300.1.1.1"; }, "bad endpoint"},
        {"geo with 0xff", [](InstanceState& s) { s.hosts[1].load_balancing->geo = "X\xffY"; }, "bad geo code"},
        {"entry with a newline", [](InstanceState& s) { s.hosts[1].entry = "gw\nforged"; }, "bad entry name"},
        {"too many endpoints",
         [](InstanceState& s) {
             s.hosts[1].endpoints.resize(ReportLimits::kMaxEndpoints + 1, {"192.0.2.1", true});
         },
         "endpoints"},
        {"one entry given twice", [](InstanceState& s) { s.hosts[1] = s.hosts[0]; }, "given twice"},
    };
    for (const auto& c : left_out) {
        InstanceState s = good;
        c.spoil(s);
        std::string kept_name = s.hosts[0].host;
        CheckResult r = check_report(s, now);
        EXPECT_EQ(r.error, "") << c.what;
        EXPECT_EQ(r.dropped, 1u) << c.what;
        EXPECT_NE(r.dropped_why.find(c.why), std::string::npos) << c.what << ": " << r.dropped_why;
        ASSERT_EQ(s.hosts.size(), all - 1) << c.what;
        EXPECT_EQ(s.hosts[0].host, kept_name) << c.what;
    }
    InstanceState ahead = good;
    ahead.version = now + 299'000;  // within the 5 minutes
    EXPECT_EQ(check_report(ahead, now).error, "");
}

}  // namespace
