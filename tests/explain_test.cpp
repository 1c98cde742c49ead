// /v1/explain's engine: the explanation of an answer against the answer path itself, over many clients.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "resolver/explain.hpp"
#include "resolver/resolver.hpp"
#include "server/app/admin.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

using namespace glbd;
using namespace glbd::test;

namespace {

using E = TestEntry;

std::shared_ptr<const Snapshot> snapshot(const std::vector<E>& entries) {
    return ViewBuilder().add("app.glb.test", entries).snapshot(config_from(kGlbTestConfig), {}, 7);
}

// Two weighted Irish clusters (one with an endpoint down), the US as the default geo, Oceania, Germany down.
std::vector<E> world() {
    return {
        {"ie-a", "IE", 30, false, {{"192.0.2.10", true}, {"192.0.2.11", false}}},
        {"ie-b", "IE", 70, false, {{"192.0.2.20", true}}},
        {"us", "US", 100, true, {{"198.51.100.10", true}}},
        {"oc", "GEO-OC", 100, false, {{"203.0.113.10", true}}},
        {"de", "DE", 100, false, {{"203.0.113.50", false}}},
    };
}

ExplainRequest subnet(const std::string& cidr, uint16_t qtype = 1) {
    ExplainRequest r;
    r.name = "app.glb.test", r.qtype = qtype;
    geo::Network n = network_of(cidr, "");  // inet_pton, not the code under test
    r.subnet = n.prefix.address, r.subnet_len = n.prefix.length;
    r.client = address_of("192.0.2.200");
    return r;
}

std::string chosen(const Explanation& e) {
    for (const auto& s : e.steps) {
        if (s.result.rfind("chosen", 0) == 0) return s.role + (s.geo.empty() ? "" : " " + s.geo);
    }
    return "";
}

TEST(Explain, AgreesWithTheAnswerPathForRandomClients) {
    auto s = snapshot(world());
    std::mt19937 rng(20261201);
    int checked = 0;
    for (int i = 0; i < 600; ++i) {
        // Mostly the test database's networks (10.1-10.6), some elsewhere (no location: the default geo).
        unsigned second = rng() % 8, third = rng() % 256, len = 16 + rng() % 9;
        std::string cidr = "10." + std::to_string(second) + "." + std::to_string(third) + ".0/" + std::to_string(len);
        if (len < 24) cidr = "10." + std::to_string(second) + ".0.0/16";
        Explanation e = explain(*s, subnet(cidr));
        ASSERT_TRUE(e.error.empty()) << e.error;
        // What may be answered: the chosen group's healthy endpoints (every endpoint when failing open).
        std::set<std::string> allowed;
        for (const auto& c : e.candidates) {
            for (const auto& ep : c.endpoints) {
                if (ep.healthy || e.fail_open) allowed.insert("A " + ep.target);
            }
        }
        // The answer path, asked as dig asks: every address it gives is one the explanation allows.
        Parsed p = ask(*s,
                       make_query("app.glb.test", 1,
                                  [&] {
                                      QueryOpts o;
                                      o.ecs = ecs_payload(cidr);
                                      return o;
                                  }()),
                       Transport::udp, "192.0.2.200");
        ASSERT_FALSE(p.answer.empty()) << cidr;
        for (const auto& rr : p.answer)
            EXPECT_TRUE(allowed.count("A " + field(rr, 4))) << cidr << " got " << field(rr, 4) << " via " << chosen(e);
        for (const auto& a : e.answers) EXPECT_TRUE(allowed.count(a)) << cidr << ": " << a;
        EXPECT_EQ(e.scope, p.ecs_scope) << cidr;
        EXPECT_EQ(e.serial, 7u);
        ++checked;
    }
    EXPECT_EQ(checked, 600);
}

TEST(Explain, EachStepSaysWhy) {
    auto s = snapshot(world());
    Explanation ie = explain(*s, subnet("10.1.0.0/16"));
    EXPECT_EQ(ie.country, "IE");
    EXPECT_EQ(ie.continent, "EU");
    EXPECT_EQ(ie.located_by, "MaxMind database");
    EXPECT_EQ(ie.prefix, 16u);
    EXPECT_EQ(chosen(ie), "country IE");
    ASSERT_EQ(ie.candidates.size(), 2u);  // ie-a and ie-b, with their weights and health
    EXPECT_EQ(ie.candidates[0].cluster, "ie-a");
    EXPECT_EQ(ie.candidates[0].weight, 30u);
    ASSERT_EQ(ie.candidates[0].endpoints.size(), 2u);
    EXPECT_TRUE(ie.candidates[0].endpoints[0].healthy);
    EXPECT_FALSE(ie.candidates[0].endpoints[1].healthy);
    EXPECT_FALSE(ie.fallback);
    EXPECT_EQ(ie.ttl, 60u);

    Explanation au = explain(*s, subnet("10.2.0.0/16"));  // no AU entry: Oceania's continent group
    EXPECT_EQ(au.steps[0].result, "no group");
    EXPECT_EQ(chosen(au), "continent GEO-OC");
    EXPECT_EQ(au.answers, std::vector<std::string>{"A 203.0.113.10"});

    Explanation jp = explain(*s, subnet("10.5.0.0/16"));  // nothing for Japan or Asia: the default geo
    EXPECT_EQ(chosen(jp), "defaultGeo");
    EXPECT_EQ(jp.answers, std::vector<std::string>{"A 198.51.100.10"});

    Explanation de = explain(*s, subnet("10.4.0.0/24"));  // Germany's only endpoint is down: fallback
    EXPECT_EQ(de.steps[0].result, "none usable");
    EXPECT_EQ(de.steps[0].geo, "DE");
    EXPECT_TRUE(de.fallback);
    EXPECT_EQ(chosen(de), "defaultGeo");
    EXPECT_EQ(de.ttl, 10u);  // a fallback answer has the short TTL

    Explanation far = explain(*s, subnet("172.16.0.0/16"));  // not in the database
    EXPECT_EQ(far.country, "");
    EXPECT_EQ(far.located_by, "nothing: unknown location");
    EXPECT_EQ(chosen(far), "defaultGeo");
}

TEST(Explain, FailOpenWhenNothingIsUsable) {
    auto s = snapshot(
        {{"ie", "IE", 100, false, {{"192.0.2.10", false}}}, {"us", "US", 100, true, {{"198.51.100.10", false}}}});
    Explanation e = explain(*s, subnet("10.1.0.0/16"));
    EXPECT_TRUE(e.fail_open);
    EXPECT_EQ(chosen(e), "country IE");
    EXPECT_EQ(e.steps[0].result, "chosen: none usable anywhere, answered as if healthy");
    EXPECT_EQ(e.answers, std::vector<std::string>{"A 192.0.2.10"});
}

TEST(Explain, NamesItCannotExplain) {
    auto s = snapshot(world());
    ExplainRequest r = subnet("10.1.0.0/16");
    r.name = "www.example.org";
    EXPECT_EQ(explain(*s, r).error, "www.example.org is in no zone served here");
    r.name = "nothing.glb.test";
    EXPECT_EQ(explain(*s, r).error, "nothing.glb.test does not exist in glb.test");
    r.name = "static.glb.test";
    EXPECT_EQ(explain(*s, r).error, "static.glb.test is a static name, not a load-balanced host");
    r.name = "bad name.glb.test";
    EXPECT_EQ(explain(*s, r).error, "not a domain name: \"bad name.glb.test\"");
}

// A static name holding a CNAME is followed to the host it reaches (as the client's resolver would), and the
// answer shown is the one to the name asked: the CNAME, then the host's records.
TEST(Explain, FollowsCnamesToTheHost) {
    std::string config = kGlbTestConfig;
    const std::string anchor = "      static IN A 192.0.2.1\n";
    config.replace(config.find(anchor), anchor.size(),
                   anchor +
                       "      www IN CNAME shop\n      shop IN CNAME app\n      away IN CNAME www.example.org.\n"
                       "      c0 IN CNAME c1\n      c1 IN CNAME c2\n      c2 IN CNAME c3\n      c3 IN CNAME c4\n"
                       "      c4 IN CNAME c5\n      c5 IN CNAME c6\n      c6 IN CNAME c7\n      c7 IN CNAME c8\n"
                       "      c8 IN CNAME app\n");
    auto s = ViewBuilder().add("app.glb.test", world()).snapshot(config_from(config), {}, 7);
    ExplainRequest r = subnet("10.1.0.0/16");
    r.name = "www.glb.test";
    Explanation e = explain(*s, r);
    ASSERT_EQ(e.error, "");
    EXPECT_EQ(e.cnames,
              (std::vector<std::string>{"www.glb.test CNAME shop.glb.test", "shop.glb.test CNAME app.glb.test"}));
    EXPECT_EQ(e.host, "app.glb.test");
    EXPECT_EQ(chosen(e), "country IE");
    ASSERT_EQ(e.answers.size(), 3u);
    EXPECT_EQ(e.answers[0], "CNAME shop.glb.test");
    EXPECT_EQ(e.answers[1], "CNAME app.glb.test");
    EXPECT_TRUE(e.answers[2] == "A 192.0.2.10" || e.answers[2] == "A 192.0.2.20") << e.answers[2];
    r.name = "away.glb.test";
    e = explain(*s, r);
    EXPECT_EQ(e.cnames, std::vector<std::string>{"away.glb.test CNAME www.example.org"});
    EXPECT_EQ(e.error, "www.example.org is in no zone served here (the resolver asks its own servers for it)");
    r.name = "c0.glb.test";  // nine CNAMEs: more than are followed
    EXPECT_EQ(explain(*s, r).error, "c8.glb.test is reached by more CNAMEs than are followed");
    r.name = "c1.glb.test";
    EXPECT_EQ(explain(*s, r).host, "app.glb.test");
}

TEST(Explain, QueryStringParameters) {
    using admin::query_param;
    EXPECT_EQ(query_param("name=shop.glb.test&subnet=10.1.0.0%2F16&type=A", "subnet"), "10.1.0.0/16");
    EXPECT_EQ(query_param("name=shop.glb.test&subnet=10.1.0.0%2F16&type=A", "name"), "shop.glb.test");
    EXPECT_EQ(query_param("a=x+y%20z", "a"), "x y z");
    EXPECT_EQ(query_param("a=1&b=2", "c"), std::nullopt);
    EXPECT_EQ(query_param("a&b=2", "a"), "");
    EXPECT_EQ(query_param("a=%zz", "a"), std::nullopt);  // a malformed escape is no value
    EXPECT_EQ(query_param("a=%4", "a"), std::nullopt);
    EXPECT_EQ(query_param("", "a"), std::nullopt);
}

}  // namespace
