// The report codec (`_glbd.` TXT records: hosts, entries, static records, overrides, locations), beats,
// and the checks every peer's report passes (check_report), against reports built by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/dns_util.hpp"
#include "tests/sync_util.hpp"

using namespace glbd;
using namespace glbd::sync;
using test::cluster;
using test::inst;
using test::life;

namespace {

TEST(Codec, RoundTrip) {
    auto a = inst("eu-1", "pod-a", 1796037623033, 1796037624637, {{"192.0.2.1", true}, {"lb.example.net", false}});
    a.hosts[0].load_balancing->default_geo = true;
    set_override(a.overrides, "eu-1/192.0.2.1", "down", 42);
    a.forgotten["us-1/pod-old"] = Forgotten{1796037000, 1796037001000, 1796037623000};
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
    EXPECT_EQ(out[0].state.forgotten, a.forgotten);
    EXPECT_TRUE(out[1].state.forgotten.empty());
    EXPECT_EQ(out[1].age_ms, 1500u);
    EXPECT_FALSE(out[1].state.hosts[0].load_balancing);
}

// A host whose endpoints pass one record's budget goes on in records marked more=1, which the decoder
// appends to the host the last record began; one that begins nothing is refused.
TEST(Codec, AHostOfManyEndpointsGoesOnInMoreRecords) {
    auto a = inst("eu-1", "pod-a", 7, 8);
    a.hosts[0].endpoints.clear();
    for (int i = 0; i < 2000; ++i) {
        a.hosts[0].endpoints.push_back(
            {test::endpoint_of("10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250)), i % 3 != 0});
    }
    auto records = encode("eu-1/pod-a", {{a, 0}});
    size_t more = std::count_if(records.begin(), records.end(), [](const std::vector<std::string>& r) {
        return std::find(r.begin(), r.end(), "more=1") != r.end();
    });
    EXPECT_GE(more, 3u);  // 2,000 endpoints of about 16 bytes in records of at most 8,000
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].state.hosts.size(), 1u);
    EXPECT_EQ(out[0].state.hosts[0].endpoints, a.hosts[0].endpoints);

    auto orphan = records;
    auto first_more = std::find_if(orphan.begin(), orphan.end(), [](const std::vector<std::string>& r) {
        return std::find(r.begin(), r.end(), "more=1") != r.end();
    });
    ASSERT_NE(first_more, orphan.end());
    (*first_more)[0] = "host=other.glb.test";  // continues a host that no record began
    out.clear();
    EXPECT_FALSE(decode(orphan, from, out, err));
    EXPECT_NE(err.find("more= without its host"), std::string::npos) << err;
}

// An endpoint that is neither an address nor a host name (a peer's bytes) leaves its host out, with the records
// that continue it (more=1), and check_report counts it with the hosts it leaves out itself; the rest stands.
TEST(Codec, AnUnreadableEndpointLeavesItsHostOutAndTheRestStands) {
    auto a = inst("eu-1", "pod-a", 7, 8);
    a.hosts.push_back(HostEntry{"b.glb.test", 60, std::nullopt, {}});
    for (int i = 0; i < 2000; ++i) {  // several records, more=1
        a.hosts.back().endpoints.push_back(
            {test::endpoint_of("10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250)), true});
    }
    a.hosts.push_back(HostEntry{"c.glb.test", 60, std::nullopt, {{"192.0.2.3", true}}});
    const auto good = encode("eu-1/pod-a", {{a, 0}});
    for (const char* bad : {"300.1.1.1", "192.0.2.1\"", "Upper.example.net", "a b", ""}) {
        for (bool in_more : {false, true}) {
            auto records = good;
            // The first endpoint of b's first record, or of its first more=1 record.
            auto it = std::find_if(records.begin(), records.end(), [&](const std::vector<std::string>& r) {
                bool more = std::find(r.begin(), r.end(), "more=1") != r.end();
                return r[0] == "host=b.glb.test" && more == in_more;
            });
            ASSERT_NE(it, records.end());
            auto ep = std::find_if(it->begin(), it->end(), [](const std::string& f) { return f.rfind("ep=", 0) == 0; });
            ASSERT_NE(ep, it->end());
            *ep = "ep=" + std::string(bad) + " up";
            std::string from, err;
            std::vector<Report> out;
            ASSERT_TRUE(decode(records, from, out, err)) << bad << ": " << err;
            ASSERT_EQ(out.size(), 1u);
            CheckResult r = check_report(out[0].state, 10'000);
            EXPECT_EQ(r.error, "") << bad;
            EXPECT_EQ(r.dropped, 1u) << bad;
            EXPECT_NE(r.dropped_why.find("b.glb.test: bad endpoint"), std::string::npos)
                << bad << ": " << r.dropped_why;
            ASSERT_EQ(out[0].state.hosts.size(), 2u) << bad << (in_more ? " in a more=1 record" : "");
            EXPECT_EQ(out[0].state.hosts[0].host, "c.glb.test");  // put in order (check_report)
            EXPECT_EQ(out[0].state.hosts[1].host, a.hosts[0].host);
        }
    }
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

// A zone record without type= is skipped (as one of a type this version does not know): it was kept as type
// 0, which the state file wrote as "TYPE0" and could not read back (fuzz_sync found it).
TEST(Codec, AZoneRecordWithoutATypeIsSkipped) {
    std::vector<std::vector<std::string>> recs = {
        {"glbd-sync=1", "from=eu/a"},
        {"origin=eu/a", "inc=1", "version=5", "heartbeat=6", "age=0"},
        {"zone=_acme.glb.test", "ttl=60", "d=token"},
        {"zone=_acme.glb.test", "type=TXT", "ttl=60", "d=kept"},
    };
    std::string from, err;
    std::vector<Report> reports;
    ASSERT_TRUE(decode(recs, from, reports, err)) << err;
    ASSERT_EQ(reports.size(), 1u);
    ASSERT_EQ(reports[0].state.records.size(), 1u);
    EXPECT_EQ(reports[0].state.records[0].data, std::vector<std::string>{"kept"});
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
    a.location = model::Coordinates{53.3498f, -6.2603f};
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

// A report of outside verdicts alone ("part=outside"): its verdicts and base version, nothing else of the
// origin's; a record of another kind in it, a base after its version, or none, refuse the transfer.
TEST(Codec, AReportOfOutsideVerdictsAlone) {
    std::string from, err;
    std::vector<Report> out;
    const std::vector<std::string> head{"origin=eu/a", "inc=1",        "version=20", "heartbeat=20",
                                        "age=0",       "part=outside", "base=10"};
    ASSERT_TRUE(decode({head, {"outside=us", "probed=2", "fail=app.glb.test 192.0.2.7"}}, from, out, err)) << err;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].outside_only);
    EXPECT_EQ(out[0].state.base_version, 10u);
    EXPECT_EQ(out[0].state.outside.at("us").probed, 2u);
    for (const char* kind : {"host=app.glb.test", "check=1", "override=eu", "zone=x.glb.test", "forget=us/b 1 1 1"}) {
        out.clear();
        EXPECT_FALSE(decode({head, {kind}}, from, out, err)) << kind;
        EXPECT_NE(err.find("outside verdicts alone"), std::string::npos) << err;
    }
    auto with = [&](const char* field, const char* value) {
        auto h = head;
        for (auto& f : h) {
            if (f.rfind(std::string(field) + "=", 0) == 0) f = std::string(field) + "=" + value;
        }
        out.clear();
        return decode({h}, from, out, err);
    };
    EXPECT_FALSE(with("base", "21"));
    EXPECT_FALSE(with("base", "0"));
    EXPECT_FALSE(with("base", "x"));
    EXPECT_TRUE(with("base", "20"));
}

// A list in order (as a glbd sends it) is checked for an entry given twice without sets of names; one out of
// order with the sets. Both find the same entry, wherever it comes again.
// A report out of order (an older or a hostile peer, or one written by hand) is put in order as it is checked,
// and a target given twice in one entry is given once, healthy when half its listings say so: the store keeps it
// so, and its cluster's view shares the report's list instead of merging a copy (55 MB at 10,000 x 20 before).
TEST(CheckReport, AReportIsPutInOrderAndItsViewSharesIt) {
    InstanceState s = inst("eu-1", "pod-a", 7, 8);
    s.hosts = std::vector<HostEntry>{
        HostEntry{"h10.glb.test", 60, std::nullopt, {{"192.0.2.10", true}}},
        HostEntry{"h2.glb.test", 60, std::nullopt, {{"192.0.2.2", true}, {"192.0.2.3", false}, {"192.0.2.2", false}}},
        HostEntry{"h1.glb.test", 60, std::nullopt, {{"192.0.2.1", false}, {"192.0.2.1", false}, {"192.0.2.1", true}}}};
    CheckResult r = check_report(s, 10'000);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.dropped, 0u);
    ASSERT_EQ(s.hosts.size(), 3u);
    EXPECT_EQ(s.hosts[0].host, "h1.glb.test");
    EXPECT_EQ(s.hosts[1].host, "h10.glb.test");
    EXPECT_EQ(s.hosts[2].host, "h2.glb.test");
    ASSERT_EQ(s.hosts[0].endpoints.size(), 1u);
    EXPECT_FALSE(s.hosts[0].endpoints[0].healthy);  // 1 of 3 listings up
    ASSERT_EQ(s.hosts[2].endpoints.size(), 2u);
    EXPECT_EQ(s.hosts[2].endpoints[0].target, "192.0.2.2");
    EXPECT_TRUE(s.hosts[2].endpoints[0].healthy);  // 1 of 2 up: half
    EXPECT_EQ(s.hosts[2].endpoints[1].target, "192.0.2.3");
    Store store;
    store.set_own(inst("me", "a", 1, 1), 1000);
    store.merge(s, 0, 1000);
    const SharedView view = store.shared_view(1000, 3000);
    auto eu = std::find_if(view.begin(), view.end(), [](const auto& c) { return c->id == "eu-1"; });
    ASSERT_NE(eu, view.end());
    EXPECT_TRUE((*eu)->hosts.same_list(store.known().at("eu-1/pod-a").state.hosts));
}

TEST(CheckReport, AnEntryGivenTwiceIsLeftOutInOrderOrNot) {
    const uint64_t now = 1'000'000'000;
    auto host = [](const char* name, const char* entry) {
        return HostEntry{name, 60, std::nullopt, {{"192.0.2.1", true}}, entry};
    };
    auto insert = [](const HostList& list, size_t at, HostEntry h) {
        std::vector<HostEntry> v = list;
        v.insert(v.begin() + static_cast<ptrdiff_t>(at), std::move(h));
        return v;
    };
    InstanceState ordered = life(1, now, now, "192.0.2.1");  // a.glb.test
    ordered.hosts.push_back(host("b.glb.test", ""));
    ordered.hosts.push_back(host("c.glb.test", "gw-a"));
    ordered.hosts.push_back(host("c.glb.test", "gw-b"));
    ASSERT_TRUE(strictly_ordered(ordered.hosts));
    {
        InstanceState s = ordered;
        CheckResult r = check_report(s, now);
        EXPECT_EQ(r.dropped, 0u);
        EXPECT_EQ(s.hosts.size(), 4u);
    }
    struct Case {
        const char* what;
        std::function<void(InstanceState&)> spoil;
        const char* twice;
    };
    std::vector<Case> cases = {
        {"next to it", [&](InstanceState& s) { s.hosts = insert(s.hosts, 2, host("b.glb.test", "")); },
         "b.glb.test: entry \"\" given twice"},
        {"apart, out of order", [&](InstanceState& s) { s.hosts.push_back(host("a.glb.test", "")); },
         "a.glb.test: entry \"\" given twice"},
        {"a named entry apart", [&](InstanceState& s) { s.hosts = insert(s.hosts, 0, host("c.glb.test", "gw-b")); },
         "c.glb.test: entry \"gw-b\" given twice"},
    };
    for (const auto& c : cases) {
        InstanceState s = ordered;
        c.spoil(s);
        EXPECT_FALSE(strictly_ordered(s.hosts)) << c.what;
        CheckResult r = check_report(s, now);
        EXPECT_EQ(r.error, "") << c.what;
        EXPECT_EQ(r.dropped, 1u) << c.what;
        EXPECT_EQ(r.dropped_why, c.twice) << c.what;
        EXPECT_EQ(s.hosts.size(), 4u) << c.what;
    }
}

TEST(CheckReport, EveryFieldByTheConfigRules) {
    const uint64_t now = 1'000'000'000;
    InstanceState good = life(1, now, now, "192.0.2.1");
    good.hosts.push_back(
        HostEntry{"*.w.glb.test", 60, model::LoadBalancing{5, "GEO-EU", false}, {{"lb.example.net", true}}});
    good.hosts.push_back(
        HostEntry{"c.glb.test", 60, model::LoadBalancing{5, "dc_west-1", false}, {{"2001:db8::1", false}}});
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
        {"geo with 0xff", [](InstanceState& s) { s.hosts[1].load_balancing->geo = "X\xffY"; }, "bad geo code"},
        {"entry with a newline", [](InstanceState& s) { s.hosts[1].entry = "gw\nforged"; }, "bad entry name"},
        {"too many endpoints",
         [](InstanceState& s) {
             s.hosts[1].endpoints.resize(ReportLimits::kMaxEndpoints + 1, {"192.0.2.1", true});
         },
         "endpoints"},
        {"one entry given twice", [](InstanceState& s) { s.hosts[1] = s.hosts[0]; }, "given twice"},
        {"one named entry given twice",
         [](InstanceState& s) {
             s.hosts[0].entry = "gw-a";
             s.hosts[1] = s.hosts[0];
         },
         "given twice"},
    };
    for (const auto& c : left_out) {
        InstanceState s = good;
        c.spoil(s);
        std::string kept_name = s.hosts[0].host.str();
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

namespace {

// A beat as send_beats() writes it: the header, the sender's origin record and the ones it relays.
std::vector<uint8_t> a_beat(const Beat& header, size_t relayed, size_t budget = kMaxBeatBytes,
                            size_t* dropped = nullptr) {
    std::vector<std::vector<std::string>> origins;
    encode_report(inst("eu-1", "pod-a", 100, 200), 200, 0, false, origins);
    for (size_t i = 0; i < relayed; ++i) {
        encode_report(inst("c" + std::to_string(i), "pod-" + std::to_string(i), 10 + i, 20 + i), 20 + i, 30 * i, false,
                      origins);
    }
    return beat_message(7, header, origins, budget, dropped);
}

TEST(Beat, RoundTrip) {
    Beat h;
    h.from = "eu-1/pod-a", h.seq = 1796037624637, h.echo = 1796037624001, h.held_ms = 412;
    auto wire = a_beat(h, 2);
    Beat got;
    std::string error;
    ASSERT_TRUE(parse_beat(wire.data(), wire.size(), got, error)) << error;
    EXPECT_EQ(got.from, "eu-1/pod-a");
    EXPECT_EQ(got.seq, h.seq);
    EXPECT_EQ(got.echo, h.echo);
    EXPECT_EQ(got.held_ms, 412u);
    ASSERT_EQ(got.reports.size(), 3u);
    EXPECT_EQ(got.reports[0].state.origin(), "eu-1/pod-a");
    EXPECT_EQ(got.reports[0].state.version, 100u);
    EXPECT_EQ(got.reports[0].state.heartbeat, 200u);
    EXPECT_FALSE(got.reports[0].has_data);
    EXPECT_EQ(got.reports[2].state.origin(), "c1/pod-1");
    EXPECT_EQ(got.reports[2].age_ms, 30u);
    EXPECT_EQ(wire::opcode_of(wire::get16(wire.data() + 2)), wire::opcode::NOTIFY);
}

TEST(Beat, StaysWithinItsBudgetAndCountsWhatWasLeftOut) {
    Beat h;
    h.from = "eu-1/pod-a", h.seq = 5;
    size_t dropped = 0;
    auto wire = a_beat(h, 60, kMaxBeatBytes - 120, &dropped);
    EXPECT_LE(wire.size(), kMaxBeatBytes - 120);
    EXPECT_GT(dropped, 0u);
    Beat got;
    std::string error;
    ASSERT_TRUE(parse_beat(wire.data(), wire.size(), got, error)) << error;
    EXPECT_EQ(got.reports.size() + dropped, 61u);
    EXPECT_EQ(got.reports[0].state.origin(), "eu-1/pod-a");  // the sender's own record always goes first
}

TEST(Beat, ABeatWithDataOrWithoutANumberIsRefused) {
    Beat h;
    h.from = "eu-1/pod-a", h.seq = 0;
    auto wire = a_beat(h, 0);
    Beat got;
    std::string error;
    EXPECT_FALSE(parse_beat(wire.data(), wire.size(), got, error));
    EXPECT_EQ(error, "no beat number");

    h.seq = 9;
    std::vector<std::vector<std::string>> with_data;
    encode_report(inst("eu-1", "pod-a", 100, 200), 200, 0, true, with_data);
    wire = beat_message(7, h, with_data, kMaxBeatBytes);
    EXPECT_FALSE(parse_beat(wire.data(), wire.size(), got, error));
    EXPECT_NE(error.find("carries data"), std::string::npos) << error;

    auto pull = sync_request(false, 0, {});  // a transfer request is no beat
    EXPECT_FALSE(parse_beat(pull.data(), pull.size(), got, error));
}

}  // namespace
