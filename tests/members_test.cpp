// Members learnt from peers (sync/members.hpp): the advertised addresses as reports, beats and stateDir carry
// them, refused when no peer could reach them; the learnt list bounded, an address that never answered tried
// at most once a minute, and one silent for forgetAfter forgotten.
#include <gtest/gtest.h>

#include <ctime>
#include <sstream>

#include "sync/members.hpp"
#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "sync/transfer/codec.hpp"
#include "sync/transfer/tsig.hpp"
#include "tests/sync_util.hpp"

using namespace glbd;
using namespace glbd::sync;
using test::inst;

namespace {

SocketAddress sa(const std::string& text) {
    SocketAddress a;
    EXPECT_TRUE(SocketAddress::parse(text, a)) << text;
    return a;
}

TEST(Members, ReachTextBothWays) {
    std::vector<SocketAddress> out;
    ASSERT_TRUE(parse_reach("192.0.2.1:53,[2001:db8::1]:5353", out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(join_reach(out), "192.0.2.1:53,[2001:db8::1]:5353");
    EXPECT_TRUE(parse_reach("", out));
    EXPECT_TRUE(out.empty());
    std::string bad;
    for (const char* no : {"0.0.0.0:53", "[::]:53", "192.0.2.1:0", "224.0.0.1:53", "[ff02::1]:53", "192.0.2.1",
                           "glbd.example:53", "192.0.2.1:53,", ",192.0.2.1:53", "192.0.2.1:53 "}) {
        EXPECT_FALSE(parse_reach(no, out, &bad)) << no;
        EXPECT_TRUE(out.empty()) << no;
    }
    EXPECT_FALSE(parse_reach("192.0.2.1:1,192.0.2.1:2,192.0.2.1:3,192.0.2.1:4,192.0.2.1:5", out, &bad));
    EXPECT_EQ(bad, "more than 4 addresses");
}

TEST(Members, ReachTravelsInReportsBeatsAndStateDir) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    a.reach = {sa("198.51.100.53:53"), sa("[2001:db8::53]:53")};
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(encode("eu-1/pod-a", {{a, 0}}), from, out, err)) << err;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].state.reach, a.reach);
    EXPECT_TRUE(check_report(out[0].state, 1000).error.empty());

    std::stringstream file;
    write_state_file(file, {a}, 1);
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].reach, a.reach);

    Beat h;
    h.from = "eu-1/pod-a", h.seq = 9, h.reach = a.reach;
    std::vector<std::vector<std::string>> origins;
    encode_report(a, 6, 0, false, origins);
    auto wire = beat_message(7, h, origins, kMaxBeatBytes);
    Beat got;
    ASSERT_TRUE(parse_beat(wire.data(), wire.size(), got, err)) << err;
    EXPECT_EQ(got.reach, a.reach);
}

TEST(Members, AReportOrBeatClaimingAnAddressNoPeerReachesIsRefused) {
    std::vector<Report> out;
    Decoder d;
    ASSERT_TRUE(d.add(encode_header("x/y"), out));
    EXPECT_FALSE(d.add({"origin=eu-1/pod-a", "inc=1", "version=5", "heartbeat=6", "age=0", "reach=0.0.0.0:53"}, out));
    EXPECT_NE(d.error().find("bad reach"), std::string::npos) << d.error();

    // A beat whose header says "reach=192.0.2.1:00" (written right, then spoilt in place: same length).
    Beat h;
    h.from = "eu-1/pod-a", h.seq = 9, h.reach = {sa("192.0.2.1:53")};
    auto spoilt = beat_message(7, h, {}, kMaxBeatBytes);
    std::string s(spoilt.begin(), spoilt.end());
    size_t r = s.find("192.0.2.1:53");
    ASSERT_NE(r, std::string::npos);
    s.replace(r, 12, "192.0.2.1:00");  // port 0: nobody is reached there
    std::vector<uint8_t> bytes(s.begin(), s.end());
    Beat got;
    std::string error;
    EXPECT_FALSE(parse_beat(bytes.data(), bytes.size(), got, error));
    EXPECT_EQ(error, "bad reach");
}

TEST(Members, LearntAreBoundedAndTriedOnceAMinuteUntilTheyAnswer) {
    LearntMembers l;
    const uint64_t t0 = 1'000'000;
    EXPECT_EQ(l.claim(sa("192.0.2.1:53"), "us/a", t0), LearntMembers::Claim::added);
    EXPECT_EQ(l.claim(sa("192.0.2.1:53"), "us/a", t0), LearntMembers::Claim::known);
    for (size_t i = 2; i <= LearntMembers::kMaxLearnt; ++i) {
        EXPECT_EQ(l.claim(sa("192.0.2." + std::to_string(i) + ":53"), "x/y", t0), LearntMembers::Claim::added);
    }
    EXPECT_EQ(l.claim(sa("198.51.100.1:53"), "x/y", t0), LearntMembers::Claim::full);
    EXPECT_EQ(l.entries().size(), LearntMembers::kMaxLearnt);

    // None has answered: all are tried once now, then none again within the minute, however often asked.
    auto p = l.plan(t0, 10'000, 86'400'000);
    EXPECT_TRUE(p.members.empty());
    EXPECT_EQ(p.try_now.size(), LearntMembers::kMaxLearnt);
    size_t tries = 0;
    for (uint64_t t = t0 + 1000; t < t0 + LearntMembers::kTryEveryMs; t += 1000) {
        tries += l.plan(t, 10'000, 86'400'000).try_now.size();
        tries += l.try_once(sa("192.0.2.1:53"), t) ? 1 : 0;  // a beat from the instance claiming it
    }
    EXPECT_EQ(tries, 0u);
    EXPECT_FALSE(l.try_once(sa("203.0.113.9:53"), t0));  // never claimed: never tried

    // One answers a pull: a member from then on, while it answers (its beats keep it); a beat alone does not
    // make a member of one that never answered.
    const uint64_t t1 = t0 + LearntMembers::kTryEveryMs;
    l.heard(sa("192.0.2.2:53"), t1);
    l.answered(sa("192.0.2.1:53"), t1);
    p = l.plan(t1, 10'000, 86'400'000);
    ASSERT_EQ(p.members.size(), 1u);
    EXPECT_EQ(p.members[0], sa("192.0.2.1:53"));
    EXPECT_EQ(p.try_now.size(), LearntMembers::kMaxLearnt - 1);  // the minute is up for the others
    l.heard(sa("192.0.2.1:53"), t1 + 9'000);
    EXPECT_EQ(l.plan(t1 + 15'000, 10'000, 86'400'000).members.size(), 1u);
    // Silent longer than alive_ms: tried once a minute again, no longer a member.
    p = l.plan(t1 + 20'000, 10'000, 86'400'000);
    EXPECT_TRUE(p.members.empty());
    EXPECT_EQ(p.try_now.size(), 1u);
}

TEST(Members, SilentForForgetAfterIsForgotten) {
    LearntMembers l;
    const uint64_t t0 = 5'000'000, forget = 120'000;
    l.claim(sa("192.0.2.1:53"), "us/a", t0);
    l.claim(sa("192.0.2.2:53"), "eu/b", t0);
    l.answered(sa("192.0.2.2:53"), t0 + 50'000);
    // Claimed again, the one that never answered is kept: its origin still says it is there. Both are
    // tried (the other has been silent longer than alive_ms).
    l.claim(sa("192.0.2.1:53"), "us/a", t0 + 10'000);
    auto p = l.plan(t0 + forget, 10'000, forget);
    EXPECT_TRUE(p.dropped.empty());
    EXPECT_EQ(p.try_now.size(), 2u);
    // Neither claimed nor answering for forgetAfter: gone; but one that never answered only a minute after its
    // last try, so that a claim made again cannot have it tried sooner. One that answered: forgetAfter after
    // its last answer.
    EXPECT_TRUE(l.plan(t0 + 10'000 + forget, 10'000, forget).dropped.empty());
    EXPECT_TRUE(l.plan(t0 + 50'000 + forget - 1, 10'000, forget).dropped.empty());
    p = l.plan(t0 + 50'000 + forget, 10'000, forget);
    ASSERT_EQ(p.dropped.size(), 1u);
    EXPECT_EQ(p.dropped[0], sa("192.0.2.2:53"));
    p = l.plan(t0 + forget + LearntMembers::kTryEveryMs, 10'000, forget);
    ASSERT_EQ(p.dropped.size(), 1u);
    EXPECT_EQ(p.dropped[0], sa("192.0.2.1:53"));
    EXPECT_TRUE(l.entries().empty());
    // Room again for a claim once one is forgotten.
    EXPECT_EQ(l.claim(sa("192.0.2.1:53"), "us/a", t0 + 400'000), LearntMembers::Claim::added);
}

}  // namespace

// The DNSKEY sets an instance publishes travel in its report and stateDir; a malformed one, or too many,
// refuse the report; only the zones we serve are compared.
TEST(ZoneKeys, TravelInReportsAndStateDirAndAreCompared) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    ZoneKeys keys;
    ASSERT_TRUE(parse_zone_keys("glb.example.com 12345,33420 0123456789abcdef", keys));
    ASSERT_TRUE(parse_zone_keys("other.example 7 fedcba9876543210", keys));
    EXPECT_FALSE(parse_zone_keys("glb.example.com 1 0123456789abcdef", keys));  // the zone again
    EXPECT_EQ(keys.at("glb.example.com"), "12345,33420 0123456789abcdef");
    a.dnskeys = keys;
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(encode("eu-1/pod-a", {{a, 0}}), from, out, err)) << err;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].state.dnskeys, keys);
    std::stringstream file;
    write_state_file(file, {a}, 1);
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].dnskeys, keys);

    for (const char* bad : {"", "glb.example.com", "glb.example.com 1", "glb.example.com 1 0123456789abcde",
                            "glb.example.com 1 0123456789abcdeF", "glb.example.com 65536 0123456789abcdef",
                            "glb.example.com 1,,2 0123456789abcdef", "Glb.example.com 1 0123456789abcdef",
                            "glb.example.com. 1 0123456789abcdef", "glb example 1 0123456789abcdef",
                            "glb.example.com 1 0123456789abcdef x",
                            "glb.example.com 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17 0123456789abcdef"}) {
        ZoneKeys k;
        EXPECT_FALSE(parse_zone_keys(bad, k)) << bad;
        EXPECT_TRUE(k.empty()) << bad;
        auto rec = encode("eu-1/pod-a", {{inst("eu-1", "pod-a", 5, 6), 0}});
        rec[1].push_back(std::string("dnskey=") + bad);
        out.clear();
        EXPECT_FALSE(decode(rec, from, out, err)) << bad;
        EXPECT_NE(err.find("bad dnskey"), std::string::npos) << err;
    }
    ZoneKeys many;
    for (size_t i = 0; i < kMaxSignedZones; ++i) {
        ASSERT_TRUE(parse_zone_keys("z" + std::to_string(i) + ".example 1 0123456789abcdef", many));
    }
    EXPECT_FALSE(parse_zone_keys("one-more.example 1 0123456789abcdef", many));

    ZoneKeys ours{{"glb.example.com", "1 0123456789abcdef"}};
    std::vector<std::string> served{"glb.example.com", "plain.example"};
    EXPECT_TRUE(key_mismatches(served, ours, ours).empty());
    EXPECT_EQ(key_mismatches(served, ours, {}), std::vector<std::string>{"glb.example.com"});  // unsigned there
    EXPECT_EQ(key_mismatches(served, ours, {{"glb.example.com", "2 0123456789abcdef"}}),
              std::vector<std::string>{"glb.example.com"});
    ZoneKeys theirs{{"glb.example.com", "1 0123456789abcdef"}, {"plain.example", "1 0123456789abcdef"}};
    EXPECT_EQ(key_mismatches(served, ours, theirs), std::vector<std::string>{"plain.example"});  // signed there only
    theirs.erase("plain.example");
    theirs["not-ours.example"] = "9 0123456789abcdef";  // a zone we do not serve: its business
    EXPECT_TRUE(key_mismatches(served, ours, theirs).empty());
}

// What a peer holds of this instance's report (Service::not_holding, which a deletion in delegate mode waits on):
// a live peer counts as holding a version once its heartbeat shows our origin at it or later, in our life.
TEST(Members, APeerHoldsOurReportOnceItsBeatShowsIt) {
    test::StateDir dir;
    uint64_t now = now_ms();
    dir.write(R"({"saved":1,"origins":[)" + test::us_origin(now - 1000) + "]}");  // us/b: known, just heard
    Service svc(test::config_from(test::sync_config(dir.path)), nullptr);
    svc.set_own_hosts(test::hosts(1));
    const uint64_t v = svc.own_version();
    InstanceState ours;
    for (const auto& i : svc.instances()) {
        if (i.self) ours = i.known.state;
    }
    ASSERT_EQ(ours.origin(), "eu/a");
    EXPECT_EQ(svc.not_holding(v), std::vector<std::string>{"us/b"});

    auto key = tsig::Key::from("glb-sync", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=");
    uint64_t seq = now;
    auto beat = [&](uint64_t held_version, uint64_t held_incarnation) {  // us/b's beat showing ours as it holds it
        Beat h;
        h.from = "us/b", h.seq = ++seq;
        InstanceState theirs{"us", "b", now - 1000, now, {}, {}};
        InstanceState held = ours;
        held.version = held_version, held.incarnation = held_incarnation, held.heartbeat = now;
        std::vector<std::vector<std::string>> origins;
        encode_report(theirs, now, 0, false, origins);
        encode_report(held, now, 0, false, origins);
        auto wire = beat_message(7, h, origins, kMaxBeatBytes);
        tsig::sign(wire, key, "", false, static_cast<uint64_t>(std::time(nullptr)));
        svc.take_beat(wire.data(), wire.size(), sa("127.0.0.2:5399"));
    };
    beat(v - 1, ours.incarnation);  // the report before the last change
    EXPECT_EQ(svc.not_holding(v), std::vector<std::string>{"us/b"});
    EXPECT_TRUE(svc.not_holding(v - 1).empty());
    beat(v, ours.incarnation - 1);  // our version, but of a former life
    EXPECT_EQ(svc.not_holding(v), std::vector<std::string>{"us/b"});
    beat(v, ours.incarnation);
    EXPECT_TRUE(svc.not_holding(v).empty());
    beat(v - 5, ours.incarnation);  // an older beat's view never takes it back
    EXPECT_TRUE(svc.not_holding(v).empty());
    svc.set_own_hosts(test::hosts(2));  // a new change: not held until shown
    EXPECT_EQ(svc.not_holding(svc.own_version()), std::vector<std::string>{"us/b"});
}
