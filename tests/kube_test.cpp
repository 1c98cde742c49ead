// Kuadrant DNSRecords to glbd hosts (sync/kube/records): the shapes kuadrant-operator generates.
#include <gtest/gtest.h>

#include "sync/kube/records.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;
using json = nlohmann::json;

namespace {

std::vector<conf::Zone> zones() {
    conf::Zone z;
    z.origin = "glb.example.com";
    return {z};
}

json endpoint(const std::string& name, const std::string& type, std::vector<std::string> targets, int ttl = 60,
              std::vector<std::pair<std::string, std::string>> provider = {}, const std::string& set_id = "") {
    json e = {{"dnsName", name}, {"recordType", type}, {"recordTTL", ttl}, {"targets", targets}};
    if (!set_id.empty()) e["setIdentifier"] = set_id;
    if (!provider.empty()) {
        e["providerSpecific"] = json::array();
        for (auto& [k, v] : provider) e["providerSpecific"].push_back({{"name", k}, {"value", v}});
    }
    return e;
}

json record(const std::string& root, json endpoints, json extra_spec = json::object()) {
    json r = {{"apiVersion", "kuadrant.io/v1alpha1"},
              {"kind", "DNSRecord"},
              {"metadata", {{"name", "shop-api"}, {"namespace", "gateways"}}},
              {"spec", {{"rootHost", root}, {"endpoints", endpoints}}}};
    for (auto& [k, v] : extra_spec.items()) r["spec"][k] = v;
    return r;
}

// What kuadrant-operator writes for one cluster in GEO-EU that is also the default geo, weight 120, with two
// gateway addresses, one of them IPv6 in an A-typed endpoint.
json kuadrant_lb(const std::string& root = "shop.glb.example.com") {
    std::string bare = root.rfind("*.", 0) == 0 ? root.substr(2) : root;
    std::string klb = "klb." + bare, target = "2w705o-1ol0jo." + klb;
    return record(root, json::array({
        endpoint(root, "CNAME", {klb}, 300),
        endpoint(klb, "CNAME", {"eu." + klb}, 300, {{"geo-code", "GEO-EU"}}, "GEO-EU"),
        endpoint(klb, "CNAME", {"eu." + klb}, 300, {{"geo-code", "*"}}, "default"),
        endpoint("eu." + klb, "CNAME", {target}, 60, {{"weight", "120"}}, target),
        endpoint(target, "A", {"172.18.200.1", "2001:db8::1"}, 60),
        endpoint("kuadrant-a-shop.glb.example.com", "TXT", {"\"heritage=external-dns\""}, 0),
    }));
}

TEST(KubeRecords, LoadBalancedShapeBecomesOneEntryPerGeo) {
    auto m = kube::map_record(kuadrant_lb(), zones());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
    const auto& h = m.hosts[0];
    EXPECT_EQ(h.name, "shop.glb.example.com");
    EXPECT_EQ(h.ttl, 60u);  // the leaf's TTL, not the CNAMEs'
    ASSERT_TRUE(h.load_balancing);
    EXPECT_EQ(h.load_balancing->geo, "GEO-EU");
    EXPECT_EQ(h.load_balancing->weight, 120);
    EXPECT_TRUE(h.load_balancing->default_geo);
    EXPECT_EQ(h.endpoints, (std::vector<std::string>{"172.18.200.1", "2001:db8::1"}));
    EXPECT_FALSE(h.health_check);
    EXPECT_EQ(kube::key_of(kuadrant_lb()), "gateways/shop-api");
}

TEST(KubeRecords, CountryGeoExternalHostNameAndNoDefault) {
    std::string klb = "klb.api.glb.example.com";
    auto r = record("api.glb.example.com", json::array({
        endpoint("api.glb.example.com", "CNAME", {klb}),
        endpoint(klb, "CNAME", {"ie." + klb}, 300, {{"geo-code", "IE"}}, "IE"),
        endpoint(klb, "CNAME", {"us." + klb}, 300, {{"geo-code", "*"}}, "default"),
        endpoint("ie." + klb, "CNAME", {"abc123.elb.eu-west-1.amazonaws.com"}, 30, {{"weight", "bogus"}}, "x"),
    }));
    auto m = kube::map_record(r, zones());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].load_balancing->geo, "IE");
    EXPECT_FALSE(m.hosts[0].load_balancing->default_geo);  // the default points at another cluster's geo
    EXPECT_EQ(m.hosts[0].load_balancing->weight, 0);       // a bad weight is 0
    EXPECT_EQ(m.hosts[0].endpoints, std::vector<std::string>{"abc123.elb.eu-west-1.amazonaws.com"});
}

TEST(KubeRecords, WildcardIsServedButNeverProbed) {
    auto r = kuadrant_lb("*.apps.glb.example.com");
    r["spec"]["healthCheck"] = {{"path", "/healthz"}};
    auto m = kube::map_record(r, zones());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].name, "*.apps.glb.example.com");
    EXPECT_FALSE(m.hosts[0].health_check);
}

TEST(KubeRecords, HealthCheckTakesKuadrantDefaults) {
    auto r = kuadrant_lb();
    r["spec"]["healthCheck"] = {{"path", "/healthz"}, {"port", 8443}};
    auto m = kube::map_record(r, zones());
    ASSERT_EQ(m.error, "");
    ASSERT_TRUE(m.hosts[0].health_check);
    const auto& hc = *m.hosts[0].health_check;
    EXPECT_EQ(hc.protocol, conf::Protocol::https);
    EXPECT_EQ(hc.port, 8443);
    EXPECT_EQ(hc.path, "/healthz");
    EXPECT_EQ(hc.interval.count(), 300000);
    EXPECT_EQ(hc.failure_threshold, 5u);
    r["spec"]["healthCheck"] = {{"protocol", "HTTP"}, {"interval", "10s"}, {"failureThreshold", 2}};
    m = kube::map_record(r, zones());
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(m.hosts[0].health_check->protocol, conf::Protocol::http);
    EXPECT_EQ(m.hosts[0].health_check->port, 443);
    EXPECT_EQ(m.hosts[0].health_check->interval.count(), 10000);
}

TEST(KubeRecords, SimpleRecordIsASimpleHost) {
    auto r = record("www.glb.example.com", json::array({endpoint("www.glb.example.com", "A", {"192.0.2.7", "192.0.2.8"}, 0)}));
    auto m = kube::map_record(r, zones());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_FALSE(m.hosts[0].load_balancing);
    EXPECT_EQ(m.hosts[0].ttl, 60u);  // 0 or missing: 60
    EXPECT_EQ(m.hosts[0].endpoints, (std::vector<std::string>{"192.0.2.7", "192.0.2.8"}));
}

TEST(KubeRecords, OtherZonesAndDelegatedRecordsAreNotOurs) {
    auto m = kube::map_record(kuadrant_lb("shop.other.example.net"), zones());
    EXPECT_TRUE(m.out_of_zone);
    EXPECT_EQ(m.error, "");
    EXPECT_TRUE(m.hosts.empty());
    auto d = kuadrant_lb();
    d["spec"]["delegate"] = true;
    EXPECT_TRUE(kube::map_record(d, zones()).out_of_zone);
}

TEST(KubeRecords, BadRecordsGetAReasonNeverAnException) {
    auto bad_geo = kuadrant_lb();
    bad_geo["spec"]["endpoints"][1]["providerSpecific"][0]["value"] = "GEO-XX";
    EXPECT_NE(kube::map_record(bad_geo, zones()).error.find("unknown geo code"), std::string::npos);
    auto bad_ip = kuadrant_lb();
    bad_ip["spec"]["endpoints"][4]["targets"][0] = "172.18.200.300";
    EXPECT_NE(kube::map_record(bad_ip, zones()).error.find("not an IP address"), std::string::npos);
    for (json r : {json::object(), json{{"spec", 5}}, json{{"spec", {{"rootHost", 7}}}},
                   json{{"spec", {{"rootHost", "a.glb.example.com"}, {"endpoints", "x"}}}},
                   json{{"spec", {{"rootHost", "a b.glb.example.com"}}}},
                   json{{"spec", {{"rootHost", "a.glb.example.com"}, {"endpoints", {{{"dnsName", 5}}}}}}},
                   json{{"spec", {{"rootHost", "a.glb.example.com"}, {"healthCheck", {{"port", 70000}}}}}}}) {
        auto m = kube::map_record(r, zones());
        EXPECT_NE(m.error, "") << r.dump();
        EXPECT_TRUE(m.hosts.empty());
    }
}

}  // namespace
