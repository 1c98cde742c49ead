// Load-balanced answers: docs/answers.md steps 1-8, simple hosts, ECS, weights.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "resolver/explain.hpp"
#include "resolver/resolver.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

using namespace glbd;
using namespace glbd::test;

namespace {

using E = TestEntry;

std::shared_ptr<const Snapshot> snapshot(
    const std::vector<E>& entries, const std::string& host = "app.glb.test", uint32_t ttl = 60,
    const std::vector<geo::Network>& networks = networks_of({{"192.168.7.0/24", "dc-north"}}),
    const CounterIds& counter_ids = {}, bool nearest = false) {
    auto c = config_from(kGlbTestConfig);
    c.geoip.nearest = nearest;
    ViewBuilder view;
    for (E e : entries) {
        e.ttl = ttl;
        view.add(host, e);
    }
    return view.snapshot(c, networks, 1, counter_ids);
}

QueryOpts ecs(const std::string& subnet) {
    QueryOpts o;
    o.ecs = ecs_payload(subnet);
    return o;
}

Parsed query(const Snapshot& s, const std::string& subnet, uint16_t qtype = 1, QueryInfo* qi = nullptr,
             const std::string& name = "app.glb.test") {
    return ask(s, make_query(name, qtype, subnet.empty() ? QueryOpts{} : ecs(subnet)), Transport::udp, "192.0.2.200",
               qi);
}

// Three clusters: Ireland, the US (the default geo) and Oceania.
std::vector<E> world() {
    return {
        {"ie", "IE", 100, false, {{"192.0.2.10", true}, {"192.0.2.11", true}}},
        {"us", "US", 100, true, {{"198.51.100.10", true}}},
        {"oc", "GEO-OC", 100, false, {{"203.0.113.10", true}}},
    };
}

TEST(Selection, ExactCountry) {
    auto s = snapshot(world());
    auto p = query(*s, "10.1.0.0/16");
    EXPECT_EQ(answer_rdata(p), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
    EXPECT_EQ(field(p.answer, 0, 1), "60");
    EXPECT_EQ(p.ecs_scope, 16);
}

TEST(Selection, Continent) {
    auto s = snapshot(world());
    auto p = query(*s, "10.2.0.0/16");  // AU, Oceania: no AU entry, a GEO-OC one
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    EXPECT_EQ(field(p.answer, 0, 1), "60");
}

TEST(Selection, DefaultGeo) {
    auto s = snapshot(world());
    auto p = query(*s, "10.5.0.0/16");  // JP, Asia: neither country nor continent has entries
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});
    EXPECT_EQ(field(p.answer, 0, 1), "60");  // reached by the ordinary order: the host's TTL
}

TEST(Selection, AllWhenNoDefault) {
    auto w = world();
    w[1].default_geo = false;
    auto s = snapshot(w);
    std::map<std::string, int> seen;
    for (int i = 0; i < 300; ++i) {
        auto p = query(*s, "10.5.0.0/16");
        seen[answer_rdata(p)[0]]++;
        EXPECT_EQ(field(p.answer, 0, 1), "60");
    }
    EXPECT_EQ(seen.size(), 3u);  // every cluster is reachable from "all"
}

// One cluster with two entries for a host (two gateways: Irish addresses, and a US load balancer's name):
// each is an entry of its own, with its own geo, weight and TTL. Merged into one, a US client got the Irish
// addresses.
TEST(Selection, TwoEntriesOfOneClusterStayApart) {
    ViewBuilder view;
    E ie{"c", "IE", 100, false, {{"192.0.2.10", true}, {"192.0.2.11", true}}};
    ie.ttl = 30;
    E us{"c", "US", 40, true, {{"elb.example.net", true}}};
    us.ttl = 90;
    view.add("app.glb.test", ie);
    view.add("app.glb.test", us);
    view.add("app.glb.test", E{"oc", "GEO-OC", 100, false, {{"203.0.113.10", true}}});
    // The entries' names as a cluster's list gives them (HostEntry::entry).
    GlobalView v = view.view();
    v[0].hosts[0].entry = "gw-ie", v[0].hosts[1].entry = "elb.example.net";
    auto c = config_from(kGlbTestConfig);
    auto s = build_snapshot(c, v, test_geo(), 1);
    auto irish = query(*s, "10.1.0.0/16");
    EXPECT_EQ(answer_rdata(irish), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
    EXPECT_EQ(field(irish.answer, 0, 1), "30");
    auto american = query(*s, "10.3.0.0/16");
    ASSERT_EQ(american.answer.size(), 1u);
    EXPECT_EQ(field(american.answer, 0, 3), "CNAME");
    EXPECT_EQ(field(american.answer, 0, 4), "elb.example.net.");
    EXPECT_EQ(field(american.answer, 0, 1), "90");
    auto aussie = query(*s, "10.2.0.0/16");
    EXPECT_EQ(answer_rdata(aussie), std::vector<std::string>{"203.0.113.10"});
    // Explain names each entry of the group it chose.
    ExplainRequest r;
    r.name = "app.glb.test", r.subnet = address_of("10.3.0.0"), r.subnet_len = 16, r.client = address_of("192.0.2.200");
    Explanation e = explain(*s, r);
    ASSERT_EQ(e.candidates.size(), 1u);
    EXPECT_EQ(e.candidates[0].cluster, "c");
    EXPECT_EQ(e.candidates[0].entry, "elb.example.net");
}

TEST(Selection, UnknownLocationUsesDefault) {
    auto s = snapshot(world());
    auto p = query(*s, "10.9.0.0/16");  // not in the database
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});
}

TEST(Selection, CustomNetworkCode) {
    auto w = world();
    w.push_back({"north", "dc-north", 100, false, {{"192.0.2.70", true}}});
    auto s = snapshot(w);
    auto p = query(*s, "192.168.7.0/24");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.70"});
    EXPECT_EQ(p.ecs_scope, 24);
}

// Codes are compared as integers of their first eight bytes; longer ones must still match whole.
TEST(Selection, LongCustomCodesSharingEightBytes) {
    auto w = world();
    w.push_back({"north1", "dc-north-1", 100, false, {{"192.0.2.71", true}}});
    w.push_back({"north2", "dc-north-2", 100, false, {{"192.0.2.72", true}}});
    auto s = snapshot(w, "app.glb.test", 60,
                      networks_of({{"192.168.7.0/24", "dc-north-1"}, {"192.168.8.0/24", "dc-north-2"}}));
    EXPECT_EQ(answer_rdata(query(*s, "192.168.7.0/24")), std::vector<std::string>{"192.0.2.71"});
    EXPECT_EQ(answer_rdata(query(*s, "192.168.8.0/24")), std::vector<std::string>{"192.0.2.72"});
}

// The counter a query reports is the one build_snapshot gave the entry that answered.
TEST(Selection, ReportsTheAnsweringEntrysCounter) {
    std::map<std::pair<std::string, std::string>, uint32_t> ids;
    CounterIds number = [&](std::string_view host, std::span<const std::string_view> clusters,
                            std::span<uint32_t> out) {
        for (size_t i = 0; i < clusters.size(); ++i) {
            out[i] =
                ids.try_emplace({std::string(host), std::string(clusters[i])}, static_cast<uint32_t>(ids.size() + 5))
                    .first->second;
        }
    };
    auto s = snapshot(world(), "app.glb.test", 60, {}, number);
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(s->counters, 8u);
    for (auto [subnet, cluster] : {std::pair{"10.1.0.0/16", "ie"}, {"10.2.0.0/16", "oc"}, {"10.5.0.0/16", "us"}}) {
        QueryInfo qi;
        query(*s, subnet, 1, &qi);
        EXPECT_EQ(qi.counter, ids.at({"app.glb.test", cluster})) << subnet;
    }
    QueryInfo qi;
    query(*s, "10.1.0.0/16", 16, &qi);  // TXT at a host: NODATA, nothing counted
    EXPECT_EQ(qi.counter, kNoCounter);

    std::vector<E> simple = {{"ie", "", 0, false, {{"192.0.2.10", true}}, true, false}};
    auto t = snapshot(simple, "plain.glb.test", 60, {}, number);
    query(*t, "", 1, &qi, "plain.glb.test");
    EXPECT_EQ(qi.counter, ids.at({"plain.glb.test", "all"}));
}

TEST(Selection, GroupUnhealthyFallsToNextGroupWithShortTtl) {
    auto w = world();
    w[0].endpoints = {{"192.0.2.10", false}, {"192.0.2.11", false}};
    auto s = snapshot(w);
    QueryInfo qi;
    auto p = query(*s, "10.1.0.0/16", 1, &qi);
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});  // IE unusable -> default (US)
    EXPECT_EQ(field(p.answer, 0, 1), "10");
    EXPECT_TRUE(qi.fallback);
    EXPECT_FALSE(qi.fail_open);
}

TEST(Selection, DeadClusterFallsToNextGroup) {
    auto w = world();
    w[0].alive = false;
    auto s = snapshot(w);
    auto p = query(*s, "10.1.0.0/16");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});
    EXPECT_EQ(field(p.answer, 0, 1), "10");
}

TEST(Selection, OnlyHealthyAddressesOfTheChosenEntry) {
    auto w = world();
    w[0].endpoints = {{"192.0.2.10", false}, {"192.0.2.11", true}};
    auto s = snapshot(w);
    auto p = query(*s, "10.1.0.0/16");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.11"});
    EXPECT_EQ(field(p.answer, 0, 1), "60");
}

TEST(Selection, AllUnhealthyFailsOpenWithShortTtl) {
    auto w = world();
    for (auto& e : w) {
        for (auto& ep : e.endpoints) ep.second = false;
    }
    auto s = snapshot(w);
    QueryInfo qi;
    auto p = query(*s, "10.1.0.0/16", 1, &qi);
    // The first group (IE) as if every endpoint were healthy.
    EXPECT_EQ(answer_rdata(p), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
    EXPECT_EQ(field(p.answer, 0, 1), "10");
    EXPECT_TRUE(qi.fail_open);
    EXPECT_EQ(p.rcode, 0);
}

TEST(Selection, AllDeadFailsOpenNeverEmpty) {
    auto w = world();
    for (auto& e : w) e.alive = false;
    auto s = snapshot(w);
    auto p = query(*s, "10.2.0.0/16");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    EXPECT_EQ(field(p.answer, 0, 1), "10");
}

TEST(Selection, WeightZeroOnlyWhenEveryUsableEntryIsZero) {
    std::vector<E> w = {{"a", "IE", 0, false, {{"192.0.2.1", true}}}, {"b", "IE", 5, false, {{"192.0.2.2", true}}}};
    auto s = snapshot(w);
    for (int i = 0; i < 500; ++i) EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16"))[0], "192.0.2.2");
    w[1].endpoints[0].second = false;  // b unusable: a (weight 0) is the only usable entry
    auto s2 = snapshot(w);
    auto p = query(*s2, "10.1.0.0/16");
    EXPECT_EQ(answer_rdata(p)[0], "192.0.2.1");
    EXPECT_EQ(field(p.answer, 0, 1), "60");
    w[1].weight = 0;
    w[1].endpoints[0].second = true;
    auto s3 = snapshot(w);
    std::map<std::string, int> seen;
    for (int i = 0; i < 400; ++i) seen[answer_rdata(query(*s3, "10.1.0.0/16"))[0]]++;
    EXPECT_EQ(seen.size(), 2u);  // all zero: uniform
}

TEST(Selection, HostnameEndpointIsCname) {
    std::vector<E> w = {{"aws", "IE", 100, false, {{"lb-123.elb.example.net", true}}}};
    auto s = snapshot(w);
    auto p = query(*s, "10.1.0.0/16");
    ASSERT_EQ(p.answer.size(), 1u);
    EXPECT_EQ(field(p.answer, 0, 3), "CNAME");
    EXPECT_EQ(field(p.answer, 0, 4), "lb-123.elb.example.net.");
    auto aaaa = query(*s, "10.1.0.0/16", 28);
    ASSERT_EQ(aaaa.answer.size(), 1u);
    EXPECT_EQ(field(aaaa.answer, 0, 3), "CNAME");
}

TEST(Selection, AaaaOnlyEntries) {
    std::vector<E> w = {{"v4", "IE", 100, false, {{"192.0.2.1", true}}},
                        {"v6", "IE", 100, false, {{"2001:db8::1", true}}}};
    auto s = snapshot(w);
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16", 28)), std::vector<std::string>{"2001:db8::1"});
        EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16", 1)), std::vector<std::string>{"192.0.2.1"});
    }
}

TEST(Selection, NodataForTypesWithoutData) {
    std::vector<E> w = {{"v4", "IE", 100, false, {{"192.0.2.1", true}}}};
    auto s = snapshot(w);
    auto p = query(*s, "10.1.0.0/16", 28);
    EXPECT_EQ(p.rcode, 0);
    EXPECT_TRUE(p.answer.empty());
    ASSERT_EQ(p.authority.size(), 1u);
    EXPECT_EQ(field(p.authority, 0, 3), "SOA");
    auto txt = query(*s, "10.1.0.0/16", 16);
    EXPECT_EQ(txt.rcode, 0);
    EXPECT_TRUE(txt.answer.empty());
}

TEST(Selection, WildcardHost) {
    auto s = snapshot(world(), "*.apps.glb.test");
    auto p = query(*s, "10.1.0.0/16", 1, nullptr, "Shop.Apps.glb.test");
    EXPECT_EQ(answer_rdata(p), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
    EXPECT_EQ(field(p.answer, 0, 0), "Shop.Apps.glb.test.");
    EXPECT_EQ(query(*s, "10.1.0.0/16", 1, nullptr, "apps.glb.test").answer.size(), 0u);
}

TEST(Selection, SimpleHostUnion) {
    std::vector<E> w = {
        {"a", "", 0, false, {{"192.0.2.1", true}, {"192.0.2.2", false}}, true, false},
        {"b", "", 0, false, {{"192.0.2.3", true}}, true, false},
        {"c", "", 0, false, {{"192.0.2.4", true}}, false, false},  // dead
    };
    auto s = snapshot(w);
    auto p = query(*s, "10.1.0.0/16");
    EXPECT_EQ(answer_rdata(p), (std::vector<std::string>{"192.0.2.1", "192.0.2.3"}));
    EXPECT_EQ(field(p.answer, 0, 1), "60");
    EXPECT_EQ(p.ecs_scope, 0);  // does not depend on the client
}

TEST(Selection, SimpleHostAllDownFailsOpen) {
    std::vector<E> w = {{"a", "", 0, false, {{"192.0.2.1", false}}, true, false},
                        {"b", "", 0, false, {{"192.0.2.3", false}}, true, false}};
    auto s = snapshot(w);
    auto p = query(*s, "");
    EXPECT_EQ(answer_rdata(p), (std::vector<std::string>{"192.0.2.1", "192.0.2.3"}));
    EXPECT_EQ(field(p.answer, 0, 1), "10");
}

TEST(Selection, SourceAddressWhenNoEcs) {
    auto s = snapshot(world());
    auto p = ask(*s, make_query("app.glb.test", 1), Transport::udp, "10.2.0.5");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    EXPECT_FALSE(p.ecs);  // no ECS in the answer when the query had none
}

TEST(Ecs, ScopeIsTheDecidingNetworkLength) {
    auto s = snapshot(world());
    EXPECT_EQ(query(*s, "10.1.0.0/24").ecs_scope, 16);
    EXPECT_EQ(query(*s, "10.4.0.0/24").ecs_scope, 24);
    auto v6 = query(*s, "2001:db8:2::/56");
    EXPECT_EQ(v6.ecs_family, 2);
    EXPECT_EQ(v6.ecs_source, 56);
    EXPECT_EQ(v6.ecs_scope, 48);
    EXPECT_EQ(answer_rdata(v6), std::vector<std::string>{"203.0.113.10"});
}

TEST(Ecs, ScopeZeroForStaticData) {
    auto s = snapshot(world());
    auto p = query(*s, "10.1.0.0/16", 1, nullptr, "static.glb.test");
    ASSERT_TRUE(p.ecs);
    EXPECT_EQ(p.ecs_scope, 0);
    EXPECT_EQ(p.ecs_source, 16);
}

TEST(Ecs, ScopeZeroWhenTheHostDoesNotDependOnLocation) {
    auto s = snapshot({{"a", "IE", 1, false, {{"192.0.2.1", true}}}});
    EXPECT_EQ(query(*s, "10.1.0.0/16").ecs_scope, 0);
}

TEST(Ecs, MalformedIsFormerr) {
    auto s = snapshot(world());
    auto send = [&](std::vector<uint8_t> payload) {
        QueryOpts o;
        o.ecs = std::move(payload);
        return ask(*s, make_query("app.glb.test", 1, o)).rcode;
    };
    EXPECT_EQ(send({0, 1, 16, 0, 10, 1}), 0);           // well formed
    EXPECT_EQ(send({0, 1, 16, 0, 10, 1, 0}), 1);        // address longer than the prefix needs
    EXPECT_EQ(send({0, 1, 16, 0, 10}), 1);              // shorter
    EXPECT_EQ(send({0, 1, 12, 0, 10, 0x1f}), 1);        // bits beyond the source prefix set
    EXPECT_EQ(send({0, 3, 8, 0, 10}), 1);               // unknown family
    EXPECT_EQ(send({0, 1, 33, 0, 10, 1, 0, 0, 0}), 1);  // source prefix longer than IPv4 allows
    EXPECT_EQ(send({0, 2, 129, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 1);
    EXPECT_EQ(send({0, 1}), 1);  // truncated option
}

TEST(Ecs, SourceZeroUsesPacketSourceAndScopeZero) {
    auto s = snapshot(world());
    QueryOpts o;
    o.ecs = std::vector<uint8_t>{0, 1, 0, 0};
    auto p = ask(*s, make_query("app.glb.test", 1, o), Transport::udp, "10.2.0.9");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    EXPECT_EQ(p.ecs_scope, 0);
}

TEST(Ecs, Ipv6SourceZeroUsesPacketSourceAndScopeZero) {
    auto s = snapshot(world());
    QueryOpts o;
    o.ecs = std::vector<uint8_t>{0, 2, 0, 0};
    auto p = ask(*s, make_query("app.glb.test", 1, o), Transport::udp, "2001:db8:2::9");  // AU in the fixture
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    ASSERT_TRUE(p.ecs);
    EXPECT_EQ(p.ecs_family, 2);
    EXPECT_EQ(p.ecs_source, 0);
    EXPECT_EQ(p.ecs_scope, 0);
    // From an IPv4 source too: the family of the option is echoed, scope 0.
    auto q = ask(*s, make_query("app.glb.test", 1, o), Transport::udp, "10.1.0.9");
    EXPECT_EQ(answer_rdata(q), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
    EXPECT_EQ(q.ecs_scope, 0);
}

// An entry with addresses and a host name: the addresses of the asked type answer while one is healthy;
// otherwise (no address of that type, or all of them down) the host name, as a CNAME.
TEST(Selection, MixedEntryAnswersAddressesThenItsHostName) {
    std::vector<E> w = {{"ie", "IE", 100, false, {{"192.0.2.1", true}, {"lb-1.elb.example.net", true}}}};
    auto s = snapshot(w);
    EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16", 1)), std::vector<std::string>{"192.0.2.1"});
    auto aaaa = query(*s, "10.1.0.0/16", 28);
    ASSERT_EQ(aaaa.answer.size(), 1u);
    EXPECT_EQ(field(aaaa.answer, 0, 3), "CNAME");
    EXPECT_EQ(field(aaaa.answer, 0, 4), "lb-1.elb.example.net.");
    w[0].endpoints[0].second = false;  // the address goes down: the host name answers A too
    auto down = snapshot(w);
    auto a = query(*down, "10.1.0.0/16", 1);
    ASSERT_EQ(a.answer.size(), 1u);
    EXPECT_EQ(field(a.answer, 0, 3), "CNAME");
    EXPECT_EQ(field(a.answer, 0, 1), "60");  // the entry is usable: the host's TTL
}

// A wildcard load-balanced host beside static names (RFC 4592): names that exist are never answered
// from the wildcard, whatever the type; other names are.
TEST(Selection, WildcardHostBesideStaticNames) {
    auto s = snapshot(world(), "*.glb.test");
    EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16", 1, nullptr, "static.glb.test")),
              std::vector<std::string>{"192.0.2.1"});
    auto nodata = query(*s, "10.1.0.0/16", 28, nullptr, "static.glb.test");
    EXPECT_EQ(nodata.rcode, 0);
    EXPECT_TRUE(nodata.answer.empty());
    EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16", 1, nullptr, "other.glb.test")),
              (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
    EXPECT_EQ(answer_rdata(query(*s, "10.3.0.0/16", 1, nullptr, "deep.er.glb.test")),
              std::vector<std::string>{"198.51.100.10"});
    // The nameserver's own name is not load-balanced either.
    EXPECT_EQ(answer_rdata(query(*s, "10.1.0.0/16", 1, nullptr, "ns1.glb.test")),
              std::vector<std::string>{"192.0.2.53"});
}

// Chi-square goodness of fit of the chosen entries against weight / sum of weights.
double chi_square(const std::vector<uint16_t>& weights, int n, std::vector<int>* counts_out = nullptr) {
    std::vector<E> w;
    for (size_t i = 0; i < weights.size(); ++i) {
        w.push_back({"c" + std::to_string(i), "IE", weights[i], false, {{"192.0.2." + std::to_string(i + 1), true}}});
    }
    auto s = snapshot(w);
    seed_selection(20261130);
    std::vector<int> counts(weights.size(), 0);
    auto q = make_query("app.glb.test", 1, ecs("10.1.0.0/16"));
    Client c;
    uint8_t out[512];
    for (int i = 0; i < n; ++i) {
        QueryInfo qi;
        answer(*s, q.data(), q.size(), c, out, sizeof out, &qi);
        counts[static_cast<size_t>(qi.entry)]++;
    }
    double total = 0;
    for (auto x : weights) total += x;
    double chi = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
        if (weights[i] == 0) continue;
        double expected = n * weights[i] / total;
        chi += (counts[i] - expected) * (counts[i] - expected) / expected;
    }
    if (counts_out) *counts_out = counts;
    return chi;
}

TEST(Weights, ChiSquare100_300_0) {
    std::vector<int> counts;
    double chi = chi_square({100, 300, 0}, 120000, &counts);
    // df = 1; 10.83 is the 0.1% critical value.
    EXPECT_LT(chi, 10.83) << counts[0] << " " << counts[1];
    EXPECT_EQ(counts[2], 0);
    std::printf("[ weights 100/300/0 ] counts %d/%d/%d chi-square %.3f (df 1)\n", counts[0], counts[1], counts[2], chi);
}

TEST(Weights, ChiSquare1_1_1) {
    std::vector<int> counts;
    double chi = chi_square({1, 1, 1}, 120000, &counts);
    EXPECT_LT(chi, 13.82);  // df = 2, 0.1%
    std::printf("[ weights 1/1/1 ] counts %d/%d/%d chi-square %.3f (df 2)\n", counts[0], counts[1], counts[2], chi);
}

TEST(Weights, ChiSquareCatchesABias) {
    // The same statistic against a wrong expectation (1/1 when the truth is 100/300) is far above
    // the critical value: the tolerance is tight enough to see a real bias.
    std::vector<int> counts;
    chi_square({100, 300}, 120000, &counts);
    double expected = 60000, chi = 0;
    for (int c : counts) chi += (c - expected) * (c - expected) / expected;
    EXPECT_GT(chi, 1000);
}

// geoip.fallback: nearest. Points (geo/points_table.inc): JP 35.65N 139.74E; GEO-OC 10.99S 174.83E (about
// 6,400 km from JP); US 41.30N 101.30W (9,439 km from JP, 7,430 from BR); IE 53.33N 6.25W (9,592 from JP,
// 7,999 from BR); GEO-AN, the default geo, 67.75S 37.13E (farther from both than any other).
std::vector<E> spread(bool oc_up = true, bool us_up = true) {
    return {
        {"ie", "IE", 100, false, {{"192.0.2.10", true}}},
        {"us", "US", 100, false, {{"198.51.100.10", us_up}}},
        {"oc", "GEO-OC", 100, false, {{"203.0.113.10", oc_up}}},
        {"an", "GEO-AN", 100, true, {{"203.0.113.50", true}}},  // the default geo
    };
}

std::shared_ptr<const Snapshot> nearest_snapshot(const std::vector<E>& entries, bool nearest = true) {
    return snapshot(entries, "app.glb.test", 60, networks_of({{"192.168.7.0/24", "dc-north"}}), {}, nearest);
}

TEST(Selection, NearestClusterWhenTheCountryAndContinentHaveNone) {
    auto p = query(*nearest_snapshot(spread(), false), "10.5.0.0/16");  // JP, Asia: no entry for either
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.50"}) << "the default geo without nearest";
    auto s = nearest_snapshot(spread());
    p = query(*s, "10.5.0.0/16");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"}) << "JP's nearest is Oceania";
    EXPECT_EQ(p.ecs_scope, 16);
    EXPECT_EQ(field(p.answer, 0, 1), "60");  // the nearest usable group is no fallback
    p = query(*s, "10.6.0.0/20");            // BR: nearest is the US
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});
    p = query(*s, "10.1.0.0/16");  // IE has its own group: nearest is not asked
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.10"});
    p = query(*s, "172.16.0.0/16");  // no location at all: the default geo
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.50"});
}

// The next nearest answers with the short TTL, as any fallback does: the client comes back when the nearest
// recovers. (On the old code JP got the normal 60 while AU, whose own continent was down, got 10.)
TEST(Selection, NearestThenTheNextNearestWhenItFails) {
    auto p = query(*nearest_snapshot(spread(false)), "10.5.0.0/16");  // Oceania down: JP's next is the US
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});
    EXPECT_EQ(field(p.answer, 0, 1), "10");
    auto au = query(*nearest_snapshot(spread(false)), "10.2.0.0/16");  // AU, Oceania's own: the same
    EXPECT_EQ(field(au.answer, 0, 1), "10");
    p = query(*nearest_snapshot(spread(false, false)), "10.5.0.0/16");  // and the US down too: Ireland
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.10"});
    p = query(*nearest_snapshot(spread(true, false)), "10.6.0.0/20");  // BR with the US down: Ireland
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.10"});
}

// New Zealand lies across the 180th meridian (Auckland 174.8E, the Chatham Islands 176.5W): with Oceania
// drained its clients go to the US, not to Ireland. (The old table put NZ in the South Atlantic, at 0.89W,
// from a plain median of the two longitudes: Ireland was "nearest", 10,436 km.)
TEST(Selection, NearestFromNewZealandAcrossTheAntimeridian) {
    std::vector<E> three = {
        {"ie", "IE", 100, false, {{"192.0.2.10", true}}},
        {"us", "US", 100, false, {{"198.51.100.10", true}}},
        {"oc", "GEO-OC", 100, false, {{"203.0.113.10", false}}},
    };
    auto s = snapshot(three, "app.glb.test", 60, networks_of({{"10.64.0.0/16", "NZ"}}), {}, true);
    EXPECT_EQ(answer_rdata(query(*s, "10.64.0.0/16")), std::vector<std::string>{"198.51.100.10"});
}

TEST(Selection, NearestMeasuresFromTheDatabasesCoordinates) {
    // Three clients in Russia (its point 54.86N 86.04E, in Siberia): the test database places 10.12/16 at
    // Vladivostok and 10.13/16 at Kaliningrad; 10.14/16 has no coordinates.
    auto s = nearest_snapshot(spread());
    auto p = query(*s, "10.12.0.0/16");  // Vladivostok: Oceania 7,000 km, the US 8,500, Ireland 8,600
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    EXPECT_EQ(p.ecs_scope, 16);
    p = query(*s, "10.13.0.0/16");  // Kaliningrad: Ireland
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.10"});
    p = query(*s, "10.14.0.0/16");  // no coordinates: the country's point, nearest Ireland
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"192.0.2.10"});
}

TEST(Selection, NearestUsesTheClustersLocation) {
    // The US cluster says it is in Anchorage (61.22N 149.90W): 5,500 km from JP, nearer than Oceania's
    // point (6,557 km). Without it the US group's point is the country's (9,439 km).
    auto entries = spread();
    entries[1].location = model::Coordinates{61.2181f, -149.9003f};
    auto p = query(*nearest_snapshot(entries), "10.5.0.0/16");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"198.51.100.10"});
    // Down, it is passed over for the next nearest, as before.
    entries[1].endpoints[0].second = false;
    p = query(*nearest_snapshot(entries), "10.5.0.0/16");
    EXPECT_EQ(answer_rdata(p), std::vector<std::string>{"203.0.113.10"});
    // A second US cluster without a location joins the group: the group keeps Anchorage as its point.
    entries[1].endpoints[0].second = true;
    entries.push_back({"us2", "US", 100, false, {{"198.51.100.20", true}}});
    p = query(*nearest_snapshot(entries), "10.5.0.0/16");
    EXPECT_EQ(p.answer.size(), 1u);
    EXPECT_NE(answer_rdata(p), std::vector<std::string>{"203.0.113.10"}) << "the US group (Anchorage) is nearest";
}

TEST(Selection, NearestIsExplained) {
    auto s = nearest_snapshot(spread(false));
    ExplainRequest r;
    r.name = "app.glb.test";
    r.subnet = address_of("10.5.0.0");
    r.subnet_len = 16;
    r.client = address_of("192.0.2.200");
    Explanation e = explain(*s, r);
    // JP: the nearest is Oceania, down (passed over), then the nearest usable, the US: a fallback.
    ASSERT_EQ(e.steps.size(), 6u);
    EXPECT_EQ(e.steps[2].role, "nearest");
    EXPECT_EQ(e.steps[2].geo, "GEO-OC");
    EXPECT_EQ(e.steps[2].result, "none usable");
    EXPECT_EQ(e.steps[3].role, "next nearest");
    EXPECT_EQ(e.steps[3].geo, "US");
    EXPECT_EQ(e.steps[3].result, "chosen");
    EXPECT_GT(e.steps[3].km, e.steps[2].km);
    EXPECT_TRUE(e.fallback);
    EXPECT_EQ(e.answers, std::vector<std::string>{"A 198.51.100.10"});
}

}  // namespace
