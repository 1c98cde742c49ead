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
    auto r = record(
        "api.glb.example.com",
        json::array({
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
    auto r = record("www.glb.example.com",
                    json::array({endpoint("www.glb.example.com", "A", {"192.0.2.7", "192.0.2.8"}, 0)}));
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

// ---- where the API server is (sync/kube/client: ApiAccess)
#include <cstdlib>
#include <fstream>

#include "sync/kube/client.hpp"

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(KubeAccess, InClusterUsesTheServiceAccountAndBracketsIpv6) {
    test::TempDir sa;
    write(sa / "token", "tok\n");
    write(sa / "ca.crt", "-----BEGIN CERTIFICATE-----\n");
    write(sa / "namespace", "glbd\n");
    setenv("KUBERNETES_SERVICE_HOST", "2001:db8::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    auto a = kube::ApiAccess::from(conf::Kubernetes{}, sa.path);
    EXPECT_EQ(a.server, "https://[2001:db8::1]:6443");
    EXPECT_EQ(a.token_file, sa / "token");  // a file: re-read, tokens rotate
    EXPECT_EQ(a.ca_file, sa / "ca.crt");
    EXPECT_EQ(a.namespace_, "glbd");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    unsetenv("KUBERNETES_SERVICE_PORT");
    EXPECT_EQ(kube::ApiAccess::from(conf::Kubernetes{}, sa.path).server, "https://10.96.0.1:443");
    unsetenv("KUBERNETES_SERVICE_HOST");
    EXPECT_THROW(kube::ApiAccess::from(conf::Kubernetes{}, sa.path), std::runtime_error);  // not in a cluster
    conf::Kubernetes url;
    url.api_server = "http://127.0.0.1:8080";
    EXPECT_EQ(kube::ApiAccess::from(url, sa.path).server, "http://127.0.0.1:8080");
}

TEST(KubeAccess, KubeconfigCurrentContextWithEmbeddedCaAndClientCertificate) {
    test::TempDir d;
    write(d / "config", R"(apiVersion: v1
kind: Config
current-context: two
contexts:
  - {name: one, context: {cluster: a, user: ua}}
  - {name: two, context: {cluster: b, user: ub, namespace: web}}
clusters:
  - {name: a, cluster: {server: "https://a.example:6443"}}
  - {name: b, cluster: {server: "https://[2001:db8::2]:6443", certificate-authority-data: Q0EtUEVN}}
users:
  - {name: ua, user: {token: nope}}
  - {name: ub, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ, tokenFile: tok}}
)");
    conf::Kubernetes k;
    k.kubeconfig = d / "config";
    auto a = kube::ApiAccess::from(k, d.path);
    EXPECT_EQ(a.server, "https://[2001:db8::2]:6443");
    EXPECT_EQ(a.ca_data, "CA-PEM");
    EXPECT_EQ(a.cert_data, "CERT");
    EXPECT_EQ(a.key_data, "KEY");
    EXPECT_EQ(a.token_file, d / "tok");  // relative to the kubeconfig's folder
    EXPECT_EQ(a.token, "");
    EXPECT_EQ(a.namespace_, "web");
    write(d / "bad", "current-context: missing\ncontexts: []\n");
    k.kubeconfig = d / "bad";
    EXPECT_THROW(kube::ApiAccess::from(k, d.path), std::runtime_error);
    k.kubeconfig = d / "absent";
    EXPECT_THROW(kube::ApiAccess::from(k, d.path), std::runtime_error);
}

TEST(KubeEvents, ParseEventTakesOnlyWellFormedEvents) {
    auto ev = kube::parse_event(
        R"({"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"n","resourceVersion":"42"}}})");
    ASSERT_TRUE(ev.ok);
    EXPECT_EQ(ev.type, "MODIFIED");
    EXPECT_EQ(ev.resource_version, "42");
    EXPECT_EQ(kube::key_of(ev.object), "n/a");
    ev = kube::parse_event(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
    ASSERT_TRUE(ev.ok);
    EXPECT_EQ(ev.code, 410);
    for (const char* bad :
         {"", "{", "[]", R"({"type":1,"object":{}})", R"({"type":"ADDED"})", R"({"type":"ADDED","object":[]})",
          "\xff\xfe", R"({"type":"ADDED","object":{"metadata":{"resourceVersion":7}}})"}) {
        auto e = kube::parse_event(bad);
        if (e.ok) {
            EXPECT_EQ(e.resource_version, "") << bad;  // a number is not a resourceVersion
        }
    }
    EXPECT_FALSE(kube::parse_event(R"({"type":"ADDED"})").ok);
}

}  // namespace

namespace {

TEST(KubeRecords, OtherNamesWithAddressesAreSimpleHostsTxtAndNsAreListed) {
    auto r = kuadrant_lb();
    r["spec"]["endpoints"].push_back(endpoint("admin.glb.example.com", "A", {"192.0.2.44"}, 30));
    r["spec"]["endpoints"].push_back(endpoint("docs.glb.example.com", "CNAME", {"docs.example.org."}, 30));
    r["spec"]["endpoints"].push_back(endpoint("_acme-challenge.shop.glb.example.com", "TXT", {"token"}, 30));
    r["spec"]["endpoints"].push_back(endpoint("sub.glb.example.com", "NS", {"ns1.elsewhere.net"}, 30));
    r["spec"]["endpoints"].push_back(endpoint("x.unrelated.example.net", "A", {"192.0.2.45"}, 30));
    auto m = kube::map_record(r, zones());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 3u);  // shop (load-balanced), admin, docs
    EXPECT_EQ(m.hosts[1].name, "admin.glb.example.com");
    EXPECT_EQ(m.hosts[1].endpoints, std::vector<std::string>{"192.0.2.44"});
    EXPECT_EQ(m.hosts[1].ttl, 30u);
    EXPECT_FALSE(m.hosts[1].load_balancing);
    EXPECT_EQ(m.hosts[2].name, "docs.glb.example.com");
    EXPECT_EQ(m.hosts[2].endpoints, std::vector<std::string>{"docs.example.org"});
    EXPECT_EQ(m.unserved,
              (std::vector<std::string>{"_acme-challenge.shop.glb.example.com TXT", "sub.glb.example.com NS"}));
    // A record of other names only (no endpoint at its root host) is still served.
    auto only = record("shop.glb.example.com", json::array({endpoint("admin.glb.example.com", "A", {"192.0.2.44"})}));
    m = kube::map_record(only, zones());
    EXPECT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
}

}  // namespace
