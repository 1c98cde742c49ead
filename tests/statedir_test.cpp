// stateDir, judged from outside: files written by hand as an operator might find them (and as earlier
// versions wrote them) are loaded by a real Service or read by read_state_file; what is written reads back.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "tests/dns_util.hpp"
#include "tests/sync_util.hpp"

using namespace glbd;
using namespace glbd::sync;
using glbd::test::hosts;
using glbd::test::StateDir;
using glbd::test::sync_config;
using glbd::test::us_origin;

namespace {

// stateDir: a peer's origin is answered at once, our own overrides and version carry over.
// Our own saved state: its overrides survive, and a new life begins above the saved one, so that the
// versions may start again from the clock even when the last life's clock ran an hour ahead.
TEST(StateDir, RestoresPeersAndOwnOverridesAndBeginsANewLife) {
    StateDir dir;
    uint64_t future = now_ms() + 3'600'000;  // our last version, saved before a clock step back
    uint64_t saved_incarnation = now_ms() / 1000 + 3600;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + R"(,{"cluster":"eu","instance":"a","incarnation":)" +
              std::to_string(saved_incarnation) + R"(,"version":)" + std::to_string(future) +
              R"(,"heartbeat":1,"overrides":{"us/198.51.100.1":{"state":"down","at":77}},"hosts":[]}]})");
    Service svc(test::config_from(sync_config(dir.path)), nullptr);
    auto overrides = svc.overrides();
    ASSERT_EQ(overrides.count("us/198.51.100.1"), 1u);
    EXPECT_EQ(overrides.at("us/198.51.100.1").state, OverrideState::down);
    EXPECT_EQ(overrides.at("us/198.51.100.1").at_ms, 77u);
    bool saw_us = false;
    for (const auto& k : svc.known()) {
        if (k.state.origin() == "eu/a") {
            EXPECT_EQ(k.state.incarnation, saved_incarnation + 1);
            EXPECT_LT(k.state.version, future);  // from the clock: within the skew peers accept
        }
        if (k.state.origin() == "us/b") {
            saw_us = true;
            ASSERT_EQ(k.state.hosts.size(), 1u);
            EXPECT_EQ(k.state.hosts[0].ttl, 30u);
            EXPECT_EQ(k.state.hosts[0].load_balancing->weight, 50);
        }
    }
    EXPECT_TRUE(saw_us);
    // The override applies to the view: us's endpoint is drained.
    for (const auto& c : svc.view()) {
        if (c.id == "us") {
            EXPECT_FALSE(c.hosts.at(0).endpoints.at(0).healthy);
        }
    }
}

TEST(StateDir, ClusterLocationIsKept) {
    InstanceState s;
    s.cluster = "us", s.instance = "b", s.version = 1000;
    s.location = model::Coordinates{-33.8688f, 151.2093f};
    std::stringstream file;
    write_state_file(file, {s}, 1);
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].location, s.location);
}

// Every field comes back as written; and a file as earlier versions wrote it (keys in alphabetical order,
// here also indented, with a field this version does not know) reads the same.
TEST(StateDir, EveryFieldRoundTripsAndEarlierFilesRead) {
    InstanceState s;
    s.cluster = "us", s.instance = "b", s.version = 1000, s.heartbeat = 1200, s.incarnation = 7;
    s.location = model::Coordinates{53.3498f, -6.2603f};
    s.hosts.push_back(HostEntry{"app.glb.test",
                                30,
                                model::LoadBalancing{50, "GEO-EU", true},
                                {{"192.0.2.1", true}, {"lb.example.net", false}, {"2001:db8::1", true}}});
    s.hosts.push_back(HostEntry{"*.w.glb.test", 60, std::nullopt, {}});
    s.overrides["us"] = OverrideEntry{OverrideState::down, 99};
    s.overrides["us/192.0.2.1"] = OverrideEntry{OverrideState::up, 100};
    s.forgotten["eu/glbd-7"] = Forgotten{5, 900, 1100};
    s.forgotten["ap/x"] = Forgotten{6, 1000, 1150};
    // A cluster with two entries of one name (two gateways), and a simple host's entry with a name.
    InstanceState entries = s;
    entries.hosts.push_back(HostEntry{
        "two.glb.test", 60, model::LoadBalancing{10, "IE", false}, {{"192.0.2.7", true}}, "gw-a.klb.two.glb.test"});
    entries.hosts.push_back(HostEntry{
        "two.glb.test", 60, model::LoadBalancing{20, "US", true}, {{"elb.example.net", true}}, "elb.example.net"});
    entries.hosts.push_back(HostEntry{"simple.glb.test", 60, std::nullopt, {{"192.0.2.8", true}}, "named"});
    entries.records = std::vector<ZoneRecord>{{"sub.glb.test", wire::type::NS, 300, {"ns1.sub.glb.test"}},
                                              {"_acme.glb.test", wire::type::TXT, 60, {"a \"quoted\" b", ""}}};
    std::stringstream file;
    write_state_file(file, {s, entries}, 1);
    // Format 3: a header, and each host as a row; an entry's name last.
    EXPECT_EQ(file.str().rfind(R"({"format":3,"saved":1,"origins":[)", 0), 0u) << file.str();
    EXPECT_NE(
        file.str().find(
            R"(["app.glb.test",30,[["192.0.2.1",true],["lb.example.net",false],["2001:db8::1",true]],[50,"GEO-EU",true]])"),
        std::string::npos)
        << file.str();
    EXPECT_NE(file.str().find(R"(["two.glb.test",60,[["192.0.2.7",true]],[10,"IE",false],"gw-a.klb.two.glb.test"])"),
              std::string::npos)
        << file.str();
    EXPECT_NE(file.str().find(R"(["simple.glb.test",60,[["192.0.2.8",true]],null,"named"])"), std::string::npos)
        << file.str();
    EXPECT_NE(file.str().find(R"("records":[["sub.glb.test","NS",300,["ns1.sub.glb.test"]],)"
                              R"(["_acme.glb.test","TXT",60,["a \"quoted\" b",""]]])"),
              std::string::npos)
        << file.str();
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[1].hosts, entries.hosts);
    EXPECT_EQ(back[1].records, entries.records);
    EXPECT_TRUE(back[0].records.empty());
    back.pop_back();
    for (const auto& b : back) {
        EXPECT_EQ(b.cluster, s.cluster);
        EXPECT_EQ(b.instance, s.instance);
        EXPECT_EQ(b.version, s.version);
        EXPECT_EQ(b.heartbeat, s.heartbeat);
        EXPECT_EQ(b.incarnation, s.incarnation);
        EXPECT_EQ(b.location, s.location);
        EXPECT_EQ(b.hosts, s.hosts);
        EXPECT_EQ(b.overrides, s.overrides);
        EXPECT_EQ(b.forgotten, s.forgotten);
    }
    const char* earlier = R"({
  "origins": [
    {
      "cluster": "us",
      "future": {"nested": [1, {"x": null}]},
      "heartbeat": 1200,
      "hosts": [
        {"endpoints": [{"healthy": true, "target": "192.0.2.1"}, {"healthy": false, "target": "lb.example.net"},
                       {"healthy": true, "target": "2001:db8::1"}],
         "host": "app.glb.test", "loadBalancing": {"defaultGeo": true, "geo": "GEO-EU", "weight": 50}, "ttl": 30},
        {"endpoints": [], "host": "*.w.glb.test", "ttl": 60}
      ],
      "incarnation": 7, "instance": "b", "location": "53.3498,-6.2603",
      "overrides": {"us": {"at": 99, "state": "down"}, "us/192.0.2.1": {"at": 100, "state": "up"}},
      "version": 1000
    }
  ],
  "saved": 1
}
)";
    std::stringstream old(earlier);
    auto read = read_state_file(old);
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(read[0].hosts, s.hosts);
    EXPECT_EQ(read[0].overrides, s.overrides);
    EXPECT_EQ(read[0].location, s.location);
    EXPECT_EQ(read[0].incarnation, 7u);
}

// Each origin says how many hosts follow ("hostCount"), so the reader sizes its list once. The count is a
// hint: a file whose count is wrong, or has none (earlier versions), reads the hosts that are there, in a
// list no larger than they need.
// Every origin read from stateDir holds one text per host name, shared with the largest origin read before it
// (glbd writes hosts by name); a name only one origin has is its own.
TEST(StateDir, OriginsShareTheTextsOfTheirHostNames) {
    InstanceState a{"us", "b", 1000, 1000, {}, {}}, small{"ap", "c", 1000, 1000, {}, {}};
    a.hosts = test::hosts(50);
    small.hosts = test::hosts(3);
    InstanceState b = a;
    b.cluster = "eu";
    b.hosts = test::hosts(50);
    b.hosts.push_back(HostEntry{"only-in-eu.glb.test", 60, std::nullopt, {{"192.0.2.9", true}}});
    order_entries(a.hosts), order_entries(b.hosts), order_entries(small.hosts);
    std::stringstream file;
    write_state_file(file, {a, small, b}, 1);
    std::vector<InstanceState> read = read_state_file(file.str());
    ASSERT_EQ(read.size(), 3u);
    const HostList& us = read[0].hosts;
    const HostList& eu = read[2].hosts;
    ASSERT_EQ(us.size(), 50u);
    ASSERT_EQ(eu.size(), 51u);
    EXPECT_EQ(eu.vec(), b.hosts.vec());  // the same values
    size_t shared = 0;
    for (size_t i = 0, j = 0; i < eu.size(); ++i) {
        while (j < us.size() && us[j].host < eu[i].host) ++j;
        if (j < us.size() && us[j].host == eu[i].host) shared += eu[i].host.same_block(us[j].host);
    }
    EXPECT_EQ(shared, 50u);  // every name us has (the small origin between them is not the one read)
    EXPECT_TRUE(read[1].hosts[2].host.same_block(us[12].host));  // the small origin's h2 is the h2 us has
}

TEST(StateDir, TheHostCountSizesTheListAndIsOnlyAHint) {
    InstanceState s;
    s.cluster = "us", s.instance = "b", s.version = 1;
    for (int i = 0; i < 3; ++i)
        s.hosts.push_back(HostEntry{"h" + std::to_string(i) + ".glb.test", 30, std::nullopt, {{"192.0.2.1", true}}});
    std::stringstream file;
    write_state_file(file, {s}, 1);
    EXPECT_NE(file.str().find(R"("hostCount":3,"hosts":[)"), std::string::npos) << file.str();
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].hosts, s.hosts);
    EXPECT_EQ(back[0].hosts.vec().capacity(), 3u);
    auto with_count = [](const std::string& count) {
        std::stringstream in(R"({"format":2,"saved":1,"origins":[{"cluster":"us","instance":"b","version":1,)" + count +
                             R"("hosts":[["a.glb.test",60,[]],["b.glb.test",60,[]]],"overrides":{}}]})");
        return read_state_file(in);
    };
    for (const char* count : {R"("hostCount":99999999999,)", R"("hostCount":1,)", R"("hostCount":0,)", ""}) {
        auto read = with_count(count);
        ASSERT_EQ(read.size(), 1u) << count;
        ASSERT_EQ(read[0].hosts.size(), 2u) << count;
        EXPECT_EQ(read[0].hosts[1].host, "b.glb.test") << count;
        EXPECT_EQ(read[0].hosts.vec().capacity(), 2u) << count;
    }
    EXPECT_THROW(with_count(R"("hostCount":"many",)"), std::exception);
}

// An endpoint that is neither an address nor a host name (a file edited by hand) leaves its host out, counted and
// said by check_report as a peer's would be; the origin and its other hosts are read.
TEST(StateDir, AnUnreadableEndpointLeavesItsHostOut) {
    for (const char* row :
         {R"(["b.glb.test",60,[["300.1.1.1",true]]])", R"(["b.glb.test",60,[["192.0.2.2",true],["x y",true]]])",
          R"({"host":"b.glb.test","ttl":60,"endpoints":[{"target":"Upper.test","healthy":true}]})"}) {
        std::stringstream in(R"({"format":2,"saved":1,"origins":[{"cluster":"us","instance":"b","version":1,"hosts":[)"
                             R"(["a.glb.test",60,[["192.0.2.1",true]]],)" +
                             std::string(row) + R"(,["c.glb.test",60,[["lb.example.net",false]]]],"overrides":{}}]})");
        auto read = read_state_file(in);
        ASSERT_EQ(read.size(), 1u) << row;
        ASSERT_EQ(read[0].hosts.size(), 2u) << row;
        EXPECT_EQ(read[0].hosts[0].host, "a.glb.test");
        EXPECT_EQ(read[0].hosts[1].host, "c.glb.test");
        EXPECT_EQ(read[0].hosts[1].endpoints[0].target, Endpoint("lb.example.net"));
        CheckResult r = check_report(read[0], 1, false);
        EXPECT_EQ(r.dropped, 1u) << row;
        EXPECT_NE(r.dropped_why.find("b.glb.test: bad endpoint"), std::string::npos) << row << ": " << r.dropped_why;
    }
}

// What is wrong is named: the field missing, the value of the wrong type, where the text stops being JSON.
TEST(StateDir, AMalformedFileSaysWhatIsWrong) {
    auto error_of = [](const std::string& text) -> std::string {
        std::stringstream in(text);
        try {
            read_state_file(in);
        } catch (const std::exception& e) {
            return e.what();
        }
        return "";
    };
    auto origin = [](const std::string& inside) { return R"({"saved":1,"origins":[{)" + inside + "}]}"; };
    EXPECT_NE(error_of(origin(R"("instance":"b","version":1,"hosts":[],"overrides":{})")).find("no \"cluster\""),
              std::string::npos);
    EXPECT_NE(error_of(origin(R"("cluster":"us","instance":"b","version":1,"overrides":{})")).find("no \"hosts\""),
              std::string::npos);
    EXPECT_NE(
        error_of(
            origin(
                R"("cluster":"us","instance":"b","version":1,"hosts":[{"host":"a.glb.test","endpoints":[]}],"overrides":{})"))
            .find("a host has no \"ttl\""),
        std::string::npos);
    EXPECT_NE(error_of(origin(R"("cluster":7,"instance":"b","version":1,"hosts":[],"overrides":{})"))
                  .find("\"cluster\" is not a string"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"saved":1,"origins":[{"cluster":"us")").find("byte"), std::string::npos);  // cut short
    EXPECT_NE(error_of(R"({"saved":1,"origins":[]} trailing)").find("byte"), std::string::npos);
    EXPECT_NE(error_of("[1,2]").find("not a JSON object"), std::string::npos);
    EXPECT_NE(error_of(R"({"saved":1})").find("no \"origins\""), std::string::npos);
    EXPECT_NE(error_of(origin("\"cluster\":\"u\xff\",\"instance\":\"b\",\"version\":1,\"hosts\":[],\"overrides\":{}")),
              "");  // not UTF-8
    EXPECT_EQ(error_of(R"({"saved":1,"origins":[]})"), "");
    // Format 2's rows: each item in its place, and a format this glbd does not know refused by name.
    auto row = [&](const std::string& host) {
        return error_of(R"({"format":2,"saved":1,"origins":[{"cluster":"us","instance":"b","version":1,"hosts":[)" +
                        host + R"(],"overrides":{}}]})");
    };
    EXPECT_EQ(row(R"(["a.glb.test",60,[["192.0.2.1",true]],[100,"IE",false]])"), "");
    EXPECT_EQ(row(R"(["a.glb.test",60,[]])"), "");
    EXPECT_NE(row(R"(["a.glb.test",60])").find("a host has no \"endpoints\""), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test","60",[]])").find("\"ttl\""), std::string::npos);
    EXPECT_NE(row(R"([60,"a.glb.test",[]])").find("\"host\" is not a string"), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,[["192.0.2.1"]]])").find("an endpoint has no \"healthy\""), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,[["192.0.2.1",1]]])").find("\"healthy\" is not true or false"),
              std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,[],[70000,"IE",false]])").find("\"weight\": 70000 is not an integer 0..65535"),
              std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,[],[100,"IE"]])").find("loadBalancing has no \"defaultGeo\""), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,[],[100,"IE",false],[]])").find("item 5 is not a string"), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,[],null,"e",1])").find("more than 5 items"), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,{}])").find("not a list"), std::string::npos);
    EXPECT_NE(row(R"(7)").find("a host is not an object or a row"), std::string::npos);
    EXPECT_NE(error_of(R"({"format":4,"saved":1,"origins":[]})").find("format 4 is newer than this glbd reads (3)"),
              std::string::npos);
}

// A byte that is not printable ASCII (none should reach the store: names are checked) is written as \u00XX,
// so the file stays JSON that reads again.
TEST(StateDir, BytesThatAreNotTextAreEscaped) {
    InstanceState s;
    s.cluster = std::string("u\xff\"\\\n", 5), s.instance = "b", s.version = 1;
    std::stringstream file;
    write_state_file(file, {s}, 1);
    EXPECT_NE(file.str().find("u\\u00ff\\\"\\\\\\u000a"), std::string::npos) << file.str();
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].cluster, "u\u00ff\"\\\n");
}

// A state file with a wrong type or a number out of range is ignored whole: nothing is loaded, never a
// truncated value.
TEST(StateDir, WrongTypesAndOutOfRangeNumbersIgnoreTheWholeFile) {
    const std::vector<std::string> bad = {
        us_origin(1000, "70000"),             // weight over 65535 (a silent cast would make it 4464)
        us_origin(1000, "-1"),                // negative weight
        us_origin(1000, "\"heavy\""),         // weight of the wrong type
        us_origin(1000, "50", "4294967296"),  // ttl over 32 bits
        us_origin(1000, "50", "1.5"),         // ttl not an integer
        R"({"cluster":"us","instance":"b","version":"1000","hosts":[],"overrides":{}})",
        R"({"cluster":"us","instance":"b","version":1000,"hosts":[],"overrides":{"us":{"state":"sideways","at":1}}})",
        R"({"cluster":"us","instance":"b","version":1000,"hosts":{},"overrides":{}})",
        R"({"cluster":"us","instance":"b","version":1000,"hosts":[],"overrides":{},"location":"91,0"})",
        R"({"cluster":"us","instance":"b","version":1000,"hosts":[],"overrides":{},"location":[1,2]})",
    };
    for (const auto& origin : bad) {
        StateDir dir;
        dir.write(R"({"saved":1,"origins":[)" + us_origin(5, "10") + "," + origin + "]}");
        Service svc(test::config_from(sync_config(dir.path)), nullptr);
        for (const auto& k : svc.known()) EXPECT_NE(k.state.cluster, "us") << origin;
    }
}

}  // namespace

namespace {
uint16_t us_weight(const Service& svc) {
    for (const auto& k : svc.known()) {
        if (k.state.origin() == "us/b" && !k.state.hosts.empty()) return k.state.hosts[0].load_balancing->weight;
    }
    return 0;
}
}  // namespace

// The file read ahead (as `glbd serve` begins it while the config is parsed) is what the service loads when it is
// for the config's stateDir; one begun for another directory, or never, leaves the service to read the file.
TEST(StateDir, AReadAheadIsTakenOnlyForTheConfigsDirectory) {
    StateDir dir, other;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000, "50") + "]}");
    StateReadAhead ahead;
    EXPECT_FALSE(ahead.take(dir.path));  // nothing begun
    ahead.begin(dir.path);
    ahead.begin(other.path);  // the first text seen counts
    EXPECT_FALSE(ahead.take(other.path));
    std::optional<StateFileRead> read = ahead.take(dir.path);
    ASSERT_TRUE(read);
    EXPECT_TRUE(read->error.empty());
    ASSERT_EQ(read->origins.size(), 1u);
    EXPECT_EQ(read->origins[0].origin(), "us/b");
    EXPECT_FALSE(ahead.take(dir.path));  // taken once
    // The file changes after it was read: a service given the read loads what was read, one without reads it now.
    dir.write(R"({"saved":2,"origins":[)" + us_origin(2000, "70") + "]}");
    auto config = test::config_from(sync_config(dir.path));
    Service given(config, nullptr, {}, std::move(read));
    EXPECT_EQ(us_weight(given), 50);
    Service alone(config, nullptr);
    EXPECT_EQ(us_weight(alone), 70);
}

// What a read ahead found is said as the service's own read would say it: a missing file is nothing, a malformed one
// its problem, and neither loads anything.
TEST(StateDir, AReadAheadOfAMissingOrMalformedFileLoadsNothing) {
    StateDir dir;
    StateFileRead missing = read_state_dir(dir.path + "/none");
    EXPECT_TRUE(missing.missing);
    EXPECT_TRUE(missing.error.empty());
    dir.write(R"({"saved":1,"origins":[{"cluster":"us")");
    StateReadAhead ahead;
    ahead.begin(dir.path);
    std::optional<StateFileRead> read = ahead.take(dir.path);
    ASSERT_TRUE(read);
    EXPECT_FALSE(read->missing);
    EXPECT_NE(read->error.find("byte"), std::string::npos) << read->error;
    EXPECT_TRUE(read->origins.empty());
    Service svc(test::config_from(sync_config(dir.path)), nullptr, {}, std::move(read));
    EXPECT_EQ(us_weight(svc), 0);
    EXPECT_EQ(svc.known().size(), 1u);  // its own origin only
}

// A large file is read on two threads, the later origins on one of their own: found from the text's strings and
// nesting alone, among strings and unknown fields that hold brackets, braces, quotes and escapes; the same
// origins, in the same order, as read on one thread.
constexpr std::string_view kTrickyText = R"(]},{"origins":[ \" \\)";  // a TXT record's string
std::string tricky_state_file() {
    std::vector<InstanceState> origins;
    for (int i = 0; i < 5; ++i) {
        InstanceState s;
        s.cluster = "c" + std::to_string(i), s.instance = "a", s.version = 1000 + i;
        s.hosts.push_back(HostEntry{"app.glb.test", 30, model::LoadBalancing{50, "IE", false}, {{"192.0.2.1", true}}});
        s.records = std::vector<ZoneRecord>{{"_t.glb.test", wire::type::TXT, 60, {std::string(kTrickyText)}}};
        origins.push_back(std::move(s));
    }
    std::stringstream file;
    write_state_file(file, origins, 1);
    std::string text = file.str();
    // Fields this version does not read, before and after the array, and in an origin.
    text.insert(1, R"("note":"]\"[{,","more":[{"origins":["x"]}],)");
    text.insert(text.find(R"("cluster":"c3")"), R"("unknown":{"a":["}",{"b":"\\"}]},)");
    text.insert(text.size() - 2, R"(,"after":["]"])");
    return text;
}

TEST(StateDir, ALargeFileIsReadOnTwoThreadsAsOnOne) {
    const std::string text = tricky_state_file();
    std::optional<OriginSpans> spans = origin_spans(text);
    ASSERT_TRUE(spans);
    ASSERT_EQ(spans->origins.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
        auto [begin, end] = spans->origins[i];
        std::string_view one = std::string_view(text).substr(begin, end - begin);
        EXPECT_EQ(one.front(), '{');
        EXPECT_EQ(one.back(), '}');
        EXPECT_NE(one.find("\"cluster\":\"c" + std::to_string(i) + "\""), std::string::npos) << one;
    }
    EXPECT_EQ(text[spans->close], ']');
    auto written = [](const std::vector<InstanceState>& origins) {
        std::stringstream out;
        write_state_file(out, origins, 1);
        return out.str();
    };
    std::vector<InstanceState> one = read_state_file(text, SIZE_MAX), two = read_state_file(text, 0);
    ASSERT_EQ(two.size(), 5u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(two[i].cluster, "c" + std::to_string(i));
    EXPECT_EQ(written(two), written(one));
    EXPECT_EQ(two[4].records.at(0).data.at(0), kTrickyText);
}

// What is not shaped as glbd writes it is read on one thread; a bad origin anywhere, found on either, is said as
// one thread says it (what, and at which byte of the file).
TEST(StateDir, AMalformedLargeFileSaysWhatOneThreadSays) {
    const std::string good = tricky_state_file();
    const size_t last = good.rfind(R"({"cluster":"c4")");
    auto error = [](const std::string& text, size_t two_threads_from) {
        try {
            read_state_file(text, two_threads_from);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    std::string no_comma = good, trailing = good, between = good, not_object = good, bad_late = good;
    no_comma.erase(last - 1, 1);
    trailing.insert(good.rfind(']', good.rfind(R"(,"after")")), ",");
    between.insert(last, " x ");
    not_object.insert(last, "7,");
    bad_late.replace(bad_late.find(R"("version":1004)"), 15, R"("version":"x",)");
    for (const std::string& bad : {no_comma, trailing, between, not_object}) {
        EXPECT_FALSE(origin_spans(bad)) << bad;
        const std::string said = error(bad, SIZE_MAX);
        EXPECT_NE(said, "no error") << bad;
        EXPECT_EQ(error(bad, 0), said);
    }
    ASSERT_TRUE(origin_spans(bad_late));  // its shape is good: the later thread finds the bad version
    EXPECT_NE(error(bad_late, SIZE_MAX).find("\"version\""), std::string::npos) << error(bad_late, SIZE_MAX);
    EXPECT_EQ(error(bad_late, 0), error(bad_late, SIZE_MAX));
    // Two "origins" arrays (which one thread reads one after the other) are read so, on one.
    std::string twice = good;
    twice.insert(1, R"("origins":[{"cluster":"c9","instance":"a","version":1,"hosts":[],"overrides":{}}],)");
    EXPECT_FALSE(origin_spans(twice));
    EXPECT_EQ(read_state_file(twice, 0).size(), 6u);
    // No more origins than may be known at once are looked for (a file of a billion "{}," is not a billion spans).
    std::string many = R"({"origins":[{})";
    for (size_t i = 1; i < ReportLimits::kMaxOrigins; ++i) many += ",{}";
    EXPECT_EQ(origin_spans(many + "]}")->origins.size(), ReportLimits::kMaxOrigins);
    EXPECT_FALSE(origin_spans(many + ",{}]}"));
    std::string cut = good.substr(0, last + 20);  // a file cut short
    EXPECT_FALSE(origin_spans(cut));
    EXPECT_EQ(error(cut, 0), error(cut, SIZE_MAX));
}
