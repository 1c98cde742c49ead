// Failover groups (dns-operator >= 0.16): the active-groups record read and written as dns-operator does,
// the set shared in reports (codec, stateDir, the latest wins), which clusters stand by, and the answers:
// a standing-by cluster's entries only while no active one is usable; the TXT served in every zone.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "resolver/model/names.hpp"
#include "resolver/resolver.hpp"
#include "resolver/snapshot/builder.hpp"
#include "sync/groups.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/dns_util.hpp"
#include "tests/sync_util.hpp"
#include "tests/view_builder.hpp"

using namespace glbd;
using namespace glbd::sync;
using test::inst;

namespace {

using Groups = std::vector<std::string>;

TEST(Groups, NamesAsDnsOperatorTakesThem) {
    EXPECT_TRUE(model::is_group_name("us-east"));
    EXPECT_TRUE(model::is_group_name("0123456789abcdef"));    // 16
    EXPECT_FALSE(model::is_group_name("0123456789abcdefg"));  // 17
    EXPECT_FALSE(model::is_group_name(""));
    for (const char* bad : {"a;b", "a&b", "a,b", "a b", "a\"b", "a'b", "a=b", "a\nb", "a\x7f"}) {
        EXPECT_FALSE(model::is_group_name(bad)) << bad;
    }
}

// The text as dns-operator's plugin writes it (cmd/plugin/failover/shared.go): version first, groups sorted.
TEST(Groups, RecordTextAsThePluginWritesIt) {
    EXPECT_EQ(format_active_groups({}), "version=1");
    EXPECT_EQ(format_active_groups({"a", "b"}), "version=1;groups=a&&b");
    EXPECT_EQ(model::active_groups_name("glb.example.com"), "kuadrant-active-groups.glb.example.com");
}

// Read as dns-operator's getActiveGroups reads it (internal/controller/dnsrecord_groups.go): pairs split on
// ';', a pair without exactly one '=' skipped, "groups" split on "&&", order free, empty parts skipped.
TEST(Groups, RecordTextReadAsDnsOperatorReadsIt) {
    EXPECT_EQ(parse_active_groups("groups=us-east&&us-west;version=1"), (Groups{"us-east", "us-west"}));
    EXPECT_EQ(parse_active_groups("version=1;groups=b&&a&&b"), (Groups{"a", "b"}));
    EXPECT_EQ(parse_active_groups("version=1"), Groups{});
    EXPECT_EQ(parse_active_groups("groups=a&&&&b;junk;x=y=z"), (Groups{"a", "b"}));
    EXPECT_EQ(parse_active_groups("groups=a=b"), Groups{});  // two '=': the pair is skipped
    EXPECT_EQ(parse_active_groups("groups=ok&&has space&&0123456789abcdefXYZ"), Groups{"ok"});
    EXPECT_EQ(parse_active_groups(""), Groups{});
    // Quotes around the text, as dns-operator's CLI may leave in a record (and drops when it reads one).
    EXPECT_EQ(parse_active_groups("\"version=1;groups=a&&b\""), (Groups{"a", "b"}));
    EXPECT_EQ(parse_active_groups("\"\"groups=a\""), Groups{"a"});
}

TEST(Groups, UngroupedNeverStandsByAndNoSetMeansEveryGroupIsActive) {
    EXPECT_FALSE(stands_by("", std::nullopt));
    EXPECT_FALSE(stands_by("a", std::nullopt));  // no groups record, no admin set: every group active
    GroupsInForce set{{"a", "c"}, true, 5, {}};
    EXPECT_FALSE(stands_by("a", set));
    EXPECT_TRUE(stands_by("b", set));
    EXPECT_FALSE(stands_by("", set));
    EXPECT_TRUE(stands_by("a", GroupsInForce{{}, true, 5, {}}));  // a set of none: every group stands by
}

TEST(Groups, TheLatestSetOfAnyOriginWinsAndClustersStandBy) {
    Store st;
    auto me = inst("me", "a", 1, 1);
    me.group = "east";
    st.set_own(me, 1000);
    auto eu = inst("eu", "x", 10, 10, {{"192.0.2.1", true}});
    eu.group = "west";
    eu.active_groups = ActiveGroups{{"west"}, 500};
    st.merge(eu, 0, 1000);
    auto us = inst("us", "y", 10, 10, {{"192.0.2.2", true}});
    st.merge(us, 0, 1000);
    ASSERT_TRUE(st.groups_in_force(1000, 3000));
    EXPECT_EQ(st.groups_in_force(1000, 3000)->groups, Groups{"west"});
    EXPECT_TRUE(st.groups_in_force(1000, 3000)->pinned);
    auto view = st.view(1000, 3000);
    EXPECT_TRUE(test::cluster(view, "me")->standby);
    EXPECT_EQ(test::cluster(view, "me")->group, "east");
    EXPECT_FALSE(test::cluster(view, "eu")->standby);
    EXPECT_FALSE(test::cluster(view, "us")->standby);  // ungrouped
    // A later set through us: the switch. The shared view makes new objects for the clusters it changed.
    auto before = st.shared_view(1000, 3000);
    me.version = 2;
    me.active_groups = ActiveGroups{{"east"}, 600};
    st.set_own(me, 1000);
    auto after = st.shared_view(1000, 3000);
    EXPECT_EQ(st.groups_in_force(1000, 3000)->groups, Groups{"east"});
    view = st.view(1000, 3000);
    EXPECT_FALSE(test::cluster(view, "me")->standby);
    EXPECT_TRUE(test::cluster(view, "eu")->standby);
    for (size_t i = 0; i < after.size(); ++i) {
        if (after[i]->id == "us") {
            EXPECT_EQ(after[i], before[i]);  // untouched: the same object
        } else if (after[i]->id == "eu") {
            EXPECT_NE(after[i], before[i]);
        }
    }
}

TEST(Groups, TravelInReportsAndStateDir) {
    auto a = inst("eu-1", "pod-a", 5, 6);
    a.group = "west";
    a.active_groups = ActiveGroups{{"east", "west"}, 42};
    auto b = inst("us-1", "pod-b", 7, 8);  // no group, never set
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(encode("eu-1/pod-a", {{a, 0}, {b, 0}}), from, out, err)) << err;
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].state.group, "west");
    EXPECT_EQ(out[0].state.active_groups, a.active_groups);
    EXPECT_EQ(out[1].state.group, "");
    EXPECT_EQ(out[1].state.active_groups.at_ms, 0u);
    EXPECT_TRUE(check_report(out[0].state, 1000).error.empty());

    std::stringstream file;
    write_state_file(file, {a, b}, 1);
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].group, "west");
    EXPECT_EQ(back[0].active_groups, a.active_groups);
    EXPECT_EQ(back[1].active_groups.at_ms, 0u);

    // An empty set is a set ("none active"), and comes back as one; so does a clear, which is not one.
    a.active_groups = ActiveGroups{{}, 43};
    out.clear();
    ASSERT_TRUE(decode(encode("eu-1/pod-a", {{a, 0}}), from, out, err)) << err;
    EXPECT_EQ(out[0].state.active_groups, a.active_groups);
    a.active_groups = ActiveGroups{{}, 44, true};
    out.clear();
    ASSERT_TRUE(decode(encode("eu-1/pod-a", {{a, 0}}), from, out, err)) << err;
    EXPECT_EQ(out[0].state.active_groups, a.active_groups);
    std::stringstream again;
    write_state_file(again, {a}, 1);
    EXPECT_EQ(read_state_file(again).at(0).active_groups, a.active_groups);
}

// The groups records in the clusters' reports (kuadrant-active-groups.<zone>, exactly: a TXT whose name only
// starts so is any TXT) set the groups while no admin set is pinned; an admin set holds whatever they say
// until it is cleared; with no record left (deleted) every group is active again.
TEST(Groups, RecordsSetTheGroupsTheAdminsSetHoldsUntilClearedNoRecordMeansAllActive) {
    Store st;
    st.set_groups_names({"kuadrant-active-groups.glb.test", "kuadrant-active-groups.other.test"});
    auto me = inst("me", "a", 1, 1);
    me.group = "east";
    st.set_own(me, 1000);
    auto us = inst("us", "y", 10, 10, {{"192.0.2.2", true}});
    us.group = "west";
    auto groups_record = [](const std::string& name, const std::string& text) {
        return ZoneRecord{name, wire::type::TXT, 60, {text}};
    };
    us.records = RecordList{std::vector<ZoneRecord>{
        groups_record("kuadrant-active-groups.shop.glb.test", "version=1;groups=east")}};  // not the name
    st.merge(us, 0, 1000);
    EXPECT_FALSE(st.groups_in_force(1000, 3000));
    EXPECT_FALSE(test::cluster(st.view(1000, 3000), "me")->standby);
    EXPECT_FALSE(test::cluster(st.view(1000, 3000), "us")->standby);

    us.version = 11;  // the record's text as dns-operator's CLI may write it, quotes and all
    us.records = RecordList{
        std::vector<ZoneRecord>{groups_record("kuadrant-active-groups.glb.test", "\"version=1;groups=west\"")}};
    st.merge(us, 0, 1000);
    auto g = st.groups_in_force(1000, 3000);
    ASSERT_TRUE(g);
    EXPECT_FALSE(g->pinned);
    EXPECT_EQ(g->groups, Groups{"west"});
    EXPECT_EQ(g->records, (std::vector<std::pair<std::string, std::string>>{{"us", "\"version=1;groups=west\""}}));
    EXPECT_TRUE(test::cluster(st.view(1000, 3000), "me")->standby);

    me.version = 2;  // glbd groups set east: pinned
    me.active_groups = ActiveGroups{{"east"}, 600};
    st.set_own(me, 1000);
    us.version = 12;  // the record says otherwise later: the admin's set holds
    us.records = RecordList{std::vector<ZoneRecord>{groups_record("kuadrant-active-groups.glb.test", "groups=west")}};
    st.merge(us, 0, 1000);
    g = st.groups_in_force(1000, 3000);
    EXPECT_TRUE(g->pinned);
    EXPECT_EQ(g->groups, Groups{"east"});
    EXPECT_EQ(g->records.size(), 1u);  // shown, not in force
    EXPECT_TRUE(test::cluster(st.view(1000, 3000), "us")->standby);

    me.version = 3;  // glbd groups clear: the record decides again
    me.active_groups = ActiveGroups{{}, 700, true};
    st.set_own(me, 1000);
    g = st.groups_in_force(1000, 3000);
    EXPECT_FALSE(g->pinned);
    EXPECT_EQ(g->groups, Groups{"west"});

    us.version = 13;  // the record deleted: no set, every group active
    us.records = RecordList{};
    st.merge(us, 0, 1000);
    EXPECT_FALSE(st.groups_in_force(1000, 3000));
    EXPECT_FALSE(test::cluster(st.view(1000, 3000), "me")->standby);
    EXPECT_FALSE(test::cluster(st.view(1000, 3000), "us")->standby);
}

TEST(Groups, APeersBadGroupsRefuseItsReport) {
    auto check = [](const std::function<void(InstanceState&)>& spoil) {
        auto s = inst("eu-1", "pod-a", 5, 6);
        spoil(s);
        return check_report(s, 1000).error;
    };
    EXPECT_EQ(check([](InstanceState& s) { s.group = "a;b"; }), "bad group name");
    EXPECT_EQ(check([](InstanceState& s) { s.active_groups = {{"ok", "x y"}, 5}; }), "bad active group name");
    EXPECT_EQ(check([](InstanceState& s) {
                  s.active_groups = {{"b", "a"}, 5};
              }),
              "active groups not sorted or given twice");
    EXPECT_EQ(check([](InstanceState& s) {
                  s.active_groups = {{"a", "a"}, 5};
              }),
              "active groups not sorted or given twice");
    EXPECT_NE(check([](InstanceState& s) { s.active_groups = {{"a"}, 1000 + 6 * 60'000}; }), "");
    EXPECT_EQ(check([](InstanceState& s) {
                  s.active_groups = {{"a"}, 5, true};
              }),
              "active groups cleared and set at once");
    Groups many;
    for (int i = 0; i < 65; ++i) many.push_back("g" + std::to_string(100 + i));
    EXPECT_EQ(check([&](InstanceState& s) { s.active_groups = {many, 5}; }), "too many active groups");
    // The decoder stops at the limit too (a hostile transfer cannot make it hold more).
    std::string list;
    for (int i = 0; i < 10'000; ++i) list += "g&&";
    std::vector<Report> out;
    Decoder d;
    ASSERT_TRUE(d.add(encode_header("x/y"), out));
    ASSERT_TRUE(d.add({"origin=eu-1/pod-a", "inc=1", "version=5", "heartbeat=6", "age=0"}, out));
    EXPECT_FALSE(d.add({"active-groups=" + list, "at=5"}, out));
    EXPECT_TRUE(d.over_limit());
}

// ---- answers
using E = test::TestEntry;

std::shared_ptr<Snapshot> groups_snapshot(const std::map<std::string, std::string>& groups,
                                          const std::optional<GroupsInForce>& active, const std::vector<E>& entries) {
    auto c = test::config_from(test::kGlbTestConfig);
    test::ViewBuilder vb;
    for (const auto& e : entries) vb.add("app.glb.test", e);
    GlobalView view = vb.view();
    for (auto& cv : view) {
        auto g = groups.find(cv.id);
        cv.group = g == groups.end() ? "" : g->second;
        cv.standby = stands_by(cv.group, active);
    }
    std::vector<ZoneRecord> served;
    if (active) {
        served.push_back({model::active_groups_name("glb.test"),
                          wire::type::TXT,
                          kActiveGroupsTtl,
                          {format_active_groups(active->groups)}});
    }
    SnapshotBuilder b;
    return b.build(c, share(view), test::test_geo(), 1, {}, served);
}

std::vector<std::string> answer(const Snapshot& s, const std::string& name = "app.glb.test", uint16_t qtype = 1) {
    auto p = test::ask(s, test::make_query(name, qtype), Transport::udp, "192.0.2.200");
    std::vector<std::string> out;
    for (const auto& rr : p.answer) out.push_back(test::field(rr, 4));
    return out;
}

GroupsInForce pinned(Groups groups) { return GroupsInForce{std::move(groups), true, 1, {}}; }

// Two clusters of one geo and weight (each answer picks one of them by weight), one per group.
std::vector<E> east_west(bool east_healthy = true, bool west_healthy = true) {
    return {{"east-1", "", 100, false, {{"192.0.2.1", east_healthy}}},
            {"west-1", "", 100, false, {{"198.51.100.1", west_healthy}}}};
}

TEST(Groups, OnlyActiveGroupsAreAnsweredWhileOneIsUsable) {
    std::map<std::string, std::string> groups{{"east-1", "east"}, {"west-1", "west"}};
    auto s = groups_snapshot(groups, pinned({"east"}), east_west());
    for (int i = 0; i < 20; ++i) EXPECT_EQ(answer(*s), std::vector<std::string>{"192.0.2.1"});
    s = groups_snapshot(groups, pinned({"west"}), east_west());
    for (int i = 0; i < 20; ++i) EXPECT_EQ(answer(*s), std::vector<std::string>{"198.51.100.1"});
    // The active group's endpoint fails: the standing-by one answers rather than nothing.
    s = groups_snapshot(groups, pinned({"west"}), east_west(true, false));
    for (int i = 0; i < 20; ++i) EXPECT_EQ(answer(*s), std::vector<std::string>{"192.0.2.1"});
    // Both groups active: both answer, as without groups.
    s = groups_snapshot(groups, pinned({"east", "west"}), east_west());
    std::set<std::string> seen;
    for (int i = 0; i < 64; ++i) seen.insert(answer(*s).at(0));
    EXPECT_EQ(seen, (std::set<std::string>{"192.0.2.1", "198.51.100.1"}));
}

TEST(Groups, UngroupedClustersAlwaysAnswerAndNoSetLeavesEveryGroupActive) {
    std::map<std::string, std::string> groups{{"east-1", "east"}};    // west-1 is ungrouped
    auto s = groups_snapshot(groups, pinned({"west"}), east_west());  // east's group stands by
    for (int i = 0; i < 20; ++i) EXPECT_EQ(answer(*s), std::vector<std::string>{"198.51.100.1"});
    s = groups_snapshot(groups, std::nullopt, east_west());  // no set: every group active, both answer
    std::set<std::string> both;
    for (int i = 0; i < 64; ++i) both.insert(answer(*s).at(0));
    EXPECT_EQ(both, (std::set<std::string>{"192.0.2.1", "198.51.100.1"}));
    s = groups_snapshot(groups, pinned({"east"}), east_west());
    std::set<std::string> seen;
    for (int i = 0; i < 64; ++i) seen.insert(answer(*s).at(0));
    EXPECT_EQ(seen, (std::set<std::string>{"192.0.2.1", "198.51.100.1"}));
    // Every cluster grouped and a set of none active: fail-open as before (both).
    groups["west-1"] = "west";
    s = groups_snapshot(groups, pinned({}), east_west());
    seen.clear();
    for (int i = 0; i < 64; ++i) seen.insert(answer(*s).at(0));
    EXPECT_EQ(seen, (std::set<std::string>{"192.0.2.1", "198.51.100.1"}));
}

TEST(Groups, SimpleHostsFollowGroupsToo) {
    std::map<std::string, std::string> groups{{"east-1", "east"}, {"west-1", "west"}};
    std::vector<E> simple = east_west();
    for (auto& e : simple) e.load_balanced = false;
    auto s = groups_snapshot(groups, pinned({"west"}), simple);
    EXPECT_EQ(answer(*s), std::vector<std::string>{"198.51.100.1"});
}

TEST(Groups, TheAdminsSetIsServedInEveryZone) {
    std::map<std::string, std::string> groups{{"east-1", "east"}};
    auto s = groups_snapshot(groups, pinned({"east", "west"}), east_west());
    EXPECT_EQ(answer(*s, "kuadrant-active-groups.glb.test", wire::type::TXT),
              std::vector<std::string>{"\"version=1;groups=east&&west\""});
    s = groups_snapshot(groups, std::nullopt, east_west());
    auto p = test::ask(*s, test::make_query("kuadrant-active-groups.glb.test", wire::type::TXT), Transport::udp,
                       "192.0.2.200");
    EXPECT_TRUE(p.answer.empty());
    EXPECT_EQ(p.rcode, 3);  // NXDOMAIN: no such name while no set is pinned (and no record publishes one)
}

}  // namespace
