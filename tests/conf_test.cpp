// Config validation: a good file loads; each bad one names file:line:col, the key path and the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "conf/config.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/text.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

const char* kGood = R"(cluster:
  id: eu-1
  instance: a
listen:
  dns: ["127.0.0.1:5353", "[::1]:5353"]
admin:
  listen: "127.0.0.1:9153"
geoip:
  networks:
    10.1.0.0/16: IE
    192.168.7.0/24: dc-north
zones:
  - origin: glb.example.com
    ttl: 300
    soa: {rname: hostmaster.example.com, refresh: 3600, retry: 600, expire: 86400, minimum: 60}
    nameservers:
      - name: ns-eu.glb.example.com
        addresses: [192.0.2.53]
    records: |
      www 300 IN CNAME shop
hosts:
  - name: shop.glb.example.com
    ttl: 60
    endpoints: [192.0.2.10, "2001:db8::10", lb-123.elb.example.net]
    loadBalancing: {weight: 120, geo: IE, defaultGeo: true}
    healthCheck:
      protocol: HTTPS
      port: 443
      path: /healthz
      interval: 5s
      timeout: 2s
      failureThreshold: 3
      successThreshold: 1
      expectedStatus: [200, 201]
      headers: {X-Probe: glbd}
      insecureSkipVerify: false
  - name: "*.apps.glb.example.com"
    endpoints: [192.0.2.11]
    loadBalancing: {weight: 1, geo: dc-north}
peers:
  key: {name: glb-sync, algorithm: hmac-sha256, secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="}
  members:
    - address: 198.51.100.53:53
    - address: "[2001:db8::53]:53"
    - address: glbd-peers.glbd.svc.cluster.local:53
  syncInterval: 1s
  deadAfter: 10s
stateDir: /var/lib/glbd
log: {level: info, format: json}
)";

TEST(Conf, GoodConfigLoadsEveryField) {
    auto r = conf::load_text(kGood, "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    const auto& c = *r.config;
    EXPECT_EQ(c.cluster.id, "eu-1");
    EXPECT_EQ(c.cluster.instance, "a");
    ASSERT_EQ(c.listen.dns.size(), 2u);
    EXPECT_EQ(c.listen.dns[1].str(), "[::1]:5353");
    ASSERT_EQ(c.geoip.networks.size(), 2u);
    EXPECT_FALSE(c.geoip.nearest);  // fallback: default unless set
    EXPECT_EQ(c.geoip.networks[1].code, "dc-north");
    ASSERT_EQ(c.zones.size(), 1u);
    EXPECT_EQ(c.zones[0].records.size(), 1u);
    ASSERT_EQ(c.hosts.size(), 2u);
    EXPECT_EQ(c.hosts[0].endpoints[2], "lb-123.elb.example.net");
    EXPECT_EQ(c.hosts[0].load_balancing->weight, 120);
    EXPECT_TRUE(c.hosts[0].load_balancing->default_geo);
    EXPECT_EQ(c.hosts[0].health_check->protocol, model::Protocol::https);
    EXPECT_EQ(c.hosts[0].health_check->interval.count(), 5000);
    EXPECT_EQ(c.hosts[0].health_check->headers[0].first, "X-Probe");
    EXPECT_EQ(c.hosts[1].name, "*.apps.glb.example.com");
    ASSERT_TRUE(c.peers);
    EXPECT_EQ(c.peers->members.size(), 3u);
    EXPECT_EQ(c.peers->members[2].host, "glbd-peers.glbd.svc.cluster.local");
    EXPECT_EQ(c.peers->dead_after.count(), 10000);
    EXPECT_EQ(c.log.format, "json");
}

// Replaces the first occurrence of `from` in the good config.
// `text` with its first `from` replaced by `to` (the good config when not given).
std::string with(const std::string& from, const std::string& to, std::string text = kGood) {
    auto at = text.find(from);
    if (at == std::string::npos) throw std::runtime_error("no '" + from + "' in the config");
    return text.replace(at, from.size(), to);
}

TEST(Conf, DeadAfterMaxIsReadAndUnsetMeansNone) {
    auto r = conf::load_text(with("deadAfter: 10s", "deadAfter: 10s\n  deadAfterMax: 12s"), "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    EXPECT_EQ(r.config->peers->dead_after_max.count(), 12000);
    EXPECT_EQ(conf::load_text(kGood, "glbd.yaml").config->peers->dead_after_max.count(), 0);
}

TEST(Conf, AdvertiseAndLearnMembers) {
    auto r = conf::load_text(
        with("deadAfter: 10s",
             "deadAfter: 10s\n  advertise: [\"198.51.100.54:53\", \"[2001:db8::54]:53\"]\n  learnMembers: false"),
        "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    ASSERT_EQ(r.config->peers->advertise.size(), 2u);
    EXPECT_EQ(r.config->peers->advertise[1].str(), "[2001:db8::54]:53");
    EXPECT_FALSE(r.config->peers->learn_members);
    auto d = conf::load_text(kGood, "glbd.yaml");  // the defaults: the listen addresses, learning on
    EXPECT_TRUE(d.config->peers->advertise.empty());
    EXPECT_TRUE(d.config->peers->learn_members);
}

struct Bad {
    const char* name;
    std::string yaml;
    std::string expected;  // a substring of one of the errors
};

class BadConfig : public ::testing::TestWithParam<Bad> {};

TEST_P(BadConfig, IsRejectedWithLocatedMessage) {
    const Bad& b = GetParam();
    auto r = conf::load_text(b.yaml, "glbd.yaml");
    EXPECT_FALSE(r.config);
    std::string all;
    for (const auto& e : r.errors) all += e.str() + "\n";
    EXPECT_NE(all.find(b.expected), std::string::npos) << "want: " << b.expected << "\ngot:\n" << all;
}

TEST(Conf, NearestFallback) {
    std::string yaml = kGood;
    yaml.replace(yaml.find("geoip:\n"), 7, "geoip:\n  fallback: nearest\n");
    auto r = conf::load_text(yaml, "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    EXPECT_TRUE(r.config->geoip.nearest);
}

// A cluster may give one name several entries (two gateways), each listing named by its entry.
TEST(Conf, TwoEntriesOfOneHost) {
    auto r =
        conf::load_text(with("    ttl: 60\n", "    ttl: 60\n    entry: gw-1\n",
                             with("name: \"*.apps.glb.example.com\"", "name: shop.glb.example.com\n    entry: gw-2")),
                        "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    ASSERT_EQ(r.config->hosts.size(), 2u);
    EXPECT_EQ(r.config->hosts[0].entry, "gw-1");
    EXPECT_EQ(r.config->hosts[1].entry, "gw-2");
    EXPECT_EQ(r.config->hosts[1].name, "shop.glb.example.com");
}

// The kubernetes section's keys for DNSRecords as Kuadrant ships them (docs/kuadrant.md, docs/config.md).
TEST(Conf, KubernetesKeys) {
    auto r = conf::load_text(
        with("stateDir:",
             "kubernetes:\n  mode: delegate\n  owners: {shop: [Shop.GLB.example.com.], web: [www.glb.example.com]}\n"
             "  group: eu\n  insecureHealthChecks: false\n  denyNetworks: [169.254.0.0/16, \"fe80::/10\"]\n"
             "  groupsFrom: [kuadrant-system, ops]\n"
             "stateDir:"),
        "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    const auto& k = *r.config->kubernetes;
    EXPECT_EQ(k.mode, conf::Kubernetes::Mode::delegate);
    ASSERT_EQ(k.owners.size(), 2u);
    EXPECT_EQ(k.owners.at("shop"), std::vector<std::string>{"shop.glb.example.com"});  // lower case, no dot
    EXPECT_EQ(k.group, "eu");
    EXPECT_EQ(k.groups_from, (std::vector<std::string>{"kuadrant-system", "ops"}));
    EXPECT_FALSE(k.insecure_health_checks);
    ASSERT_EQ(k.deny_networks.size(), 2u);
    EXPECT_EQ(k.deny_networks[1].str(), "fe80::/10");
    auto d = conf::load_text(with("stateDir:", "kubernetes: {}\nstateDir:"), "glbd.yaml");
    ASSERT_TRUE(d.config);
    EXPECT_EQ(d.config->kubernetes->mode, conf::Kubernetes::Mode::coredns);
    EXPECT_TRUE(d.config->kubernetes->insecure_health_checks);  // dns-operator's default
    EXPECT_TRUE(d.config->kubernetes->owners.empty());
}

// The bearer token goes to apiServer: plain HTTP only when its host is a loopback address, compared whole (a
// prefix compare let http://127.0.0.1.attacker.example through).
TEST(Conf, ApiServerUrls) {
    for (const char* ok : {"https://api.example:6443", "http://127.0.0.1:8080", "http://127.9.9.9", "http://[::1]:80/",
                           "http://localhost:8001/api"}) {
        EXPECT_TRUE(model::is_api_server_url(ok)) << ok;
    }
    for (const char* bad : {"http://127.0.0.1.attacker.example", "http://localhost.attacker.example:80",
                            "http://127.0.0.1@attacker.example", "http://[::1].attacker.example", "http://[::2]:80",
                            "http://10.0.0.1", "http://127.0.0.1:80x", "ftp://127.0.0.1", "https://", ""}) {
        EXPECT_FALSE(model::is_api_server_url(bad)) << bad;
    }
}

// listen.cookieSecretFile: 16 bytes in base64, shared by a cluster's replicas.
TEST(Conf, CookieSecretFile) {
    test::TempDir d;
    auto load = [&](const std::string& content) {
        std::ofstream(d / "cookie") << content;
        std::filesystem::permissions(d / "cookie",
                                     std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        return conf::load_text(
            with("  dns: [\"127.0.0.1:5353\", \"[::1]:5353\"]",
                 "  dns: [\"127.0.0.1:5353\", \"[::1]:5353\"]\n  cookieSecretFile: " + (d / "cookie")),
            "glbd.yaml");
    };
    auto r = load("AAECAwQFBgcICQoLDA0ODw==\n");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    ASSERT_TRUE(r.config->listen.cookie_secret);
    EXPECT_EQ((*r.config->listen.cookie_secret)[15], 15);
    r = load("AAECAwQFBgcICQoLDA0O\n");  // 15 bytes
    ASSERT_FALSE(r.config);
    EXPECT_NE(r.errors[0].str().find("listen.cookieSecretFile: must hold 16 bytes in base64"), std::string::npos)
        << r.errors[0].str();
    EXPECT_FALSE(conf::load_text(kGood, "glbd.yaml").config->listen.cookie_secret);
}

// A file that holds a secret (peers.key.secretFile, listen.cookieSecretFile) that every user may read or write
// is refused, as a DNSSEC private key is: the error names the key, the file and its mode.
TEST(Conf, SecretFilesOpenToEveryUserAreRefused) {
    namespace fs = std::filesystem;
    test::TempDir d;
    std::ofstream(d / "tsig") << "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\n";
    std::ofstream(d / "cookie") << "AAECAwQFBgcICQoLDA0ODw==\n";
    std::string yaml = with("  dns: [\"127.0.0.1:5353\", \"[::1]:5353\"]",
                            "  dns: [\"127.0.0.1:5353\", \"[::1]:5353\"]\n  cookieSecretFile: " + (d / "cookie"));
    const std::string inline_secret = "secret: \"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\"";
    yaml.replace(yaml.find(inline_secret), inline_secret.size(), "secretFile: " + (d / "tsig"));
    for (auto mode : {fs::perms::others_read, fs::perms::others_write}) {
        for (const char* f : {"tsig", "cookie"}) {
            fs::permissions(d / "tsig", fs::perms::owner_read | fs::perms::group_read);
            fs::permissions(d / "cookie", fs::perms::owner_read | fs::perms::group_read);
            fs::permissions(d / f, mode, fs::perm_options::add);
            auto r = conf::load_text(yaml, "glbd.yaml");
            ASSERT_FALSE(r.config) << f;
            ASSERT_EQ(r.errors.size(), 1u) << f;
            const std::string key = std::string(f) == "tsig" ? "peers.key.secretFile" : "listen.cookieSecretFile";
            const std::string mode_text = mode == fs::perms::others_read ? "0444" : "0442";
            EXPECT_NE(r.errors[0].str().find(key + ": \"" + (d / f) +
                                             "\" holds a secret but every user may read or "
                                             "write it (mode " +
                                             mode_text + "): chmod o-rw it"),
                      std::string::npos)
                << r.errors[0].str();
        }
    }
    fs::permissions(d / "tsig", fs::perms::owner_read | fs::perms::group_read);
    fs::permissions(d / "cookie", fs::perms::owner_read | fs::perms::group_read);
    auto r = conf::load_text(yaml, "glbd.yaml");
    ASSERT_TRUE(r.config) << r.errors[0].str();
    EXPECT_EQ(r.config->peers->key.secret, "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=");
}

// geoip.signingKey: a public key in PEM; any other file is blamed on the key, at its line (not later, on the
// database's signature).
TEST(Conf, SigningKeyIsAPublicKey) {
    test::TempDir d;
    auto load = [&](const std::string& content) {
        std::ofstream(d / "key.pem") << content;
        return conf::load_text(with("geoip:\n", "geoip:\n  signingKey: " + (d / "key.pem") + "\n"), "glbd.yaml");
    };
    auto r = load(
        "-----BEGIN PUBLIC KEY-----\n"
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfTkJb0WrVuVn5A5M0Oo+SpHGGi6v\n"
        "fu1Ydznam+mLPgCBEVdOZYBE2UwVyxI3+t2wKmDbgJlUZW7pwYa1JinOjg==\n"
        "-----END PUBLIC KEY-----\n");
    ASSERT_TRUE(r.config) << r.errors[0].str();
    EXPECT_EQ(r.config->geoip.signing_key, d / "key.pem");
    r = load("my-cluster\n");
    ASSERT_FALSE(r.config);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].str(), "glbd.yaml:9:15: geoip.signingKey: \"" + (d / "key.pem") +
                                     "\" holds no public key in PEM (-----BEGIN PUBLIC KEY-----)");
}

// dnstap: a socket or a file; each bad value named by its key.
TEST(Conf, Dnstap) {
    auto load = [](const std::string& section) { return conf::load_text(kGood + section, "glbd.yaml"); };
    auto r = load("dnstap: {sink: unix:/run/glbd/dnstap.sock, identity: ns1, queries: false, sample: 10}\n");
    ASSERT_TRUE(r.config) << r.errors[0].str();
    ASSERT_TRUE(r.config->dnstap);
    EXPECT_TRUE(r.config->dnstap->unix_socket);
    EXPECT_EQ(r.config->dnstap->path, "/run/glbd/dnstap.sock");
    EXPECT_EQ(r.config->dnstap->identity, "ns1");
    EXPECT_FALSE(r.config->dnstap->queries);
    EXPECT_TRUE(r.config->dnstap->responses);
    EXPECT_EQ(r.config->dnstap->sample, 10u);
    r = load("dnstap: {sink: /tmp/glbd.fstrm}\n");
    ASSERT_TRUE(r.config && r.config->dnstap);
    EXPECT_FALSE(r.config->dnstap->unix_socket);
    EXPECT_FALSE(conf::load_text(kGood, "glbd.yaml").config->dnstap);
    for (auto [section, error] : std::vector<std::pair<std::string, std::string>>{
             {"dnstap: {identity: x}\n", "dnstap.sink: required"},
             {"dnstap: {sink: \"unix:\"}\n", "dnstap.sink: must be unix:PATH"},
             {"dnstap: {sink: /no/such/dir/tap.fstrm}\n", "dnstap.sink: no directory \"/no/such/dir\""},
             {"dnstap: {sink: unix:/" + std::string(120, 'x') + "}\n",
              "dnstap.sink: a Unix socket path is at most 107"},
             {"dnstap: {sink: /tmp/t, sample: 0}\n", "dnstap.sample"},
             {"dnstap: {sink: /tmp/t, queries: false, responses: false}\n", "nothing to log"},
             {"dnstap: {sink: /tmp/t, format: json}\n", "format"},
         }) {
        auto bad = load(section);
        ASSERT_FALSE(bad.config) << section;
        EXPECT_NE(bad.errors[0].str().find(error), std::string::npos) << section << ": " << bad.errors[0].str();
    }
}

TEST(Conf, HealthSection) {
    auto load = [](const std::string& section) { return conf::load_text(kGood + section, "glbd.yaml"); };
    auto r = load(
        "health:\n  sourceAddress: 192.0.2.7\n  outside: {enabled: false, vantages: 5, quorum: 2, "
        "keepDead: 1m, maxProbesPerSecond: 400}\n");
    ASSERT_TRUE(r.config) << r.errors[0].str();
    const conf::Health& h = r.config->health;
    ASSERT_TRUE(h.source_address);
    EXPECT_EQ(h.source_address->str(), "192.0.2.7");
    EXPECT_FALSE(h.outside.enabled);
    EXPECT_EQ(h.outside.vantages, 5u);
    EXPECT_EQ(h.outside.quorum, 2u);
    EXPECT_EQ(h.outside.keep_dead, conf::Millis{60'000});
    EXPECT_EQ(h.outside.max_probes_per_second, 400u);
    // docs/config.md's defaults, with and without the section.
    for (const std::string& section : {std::string(), std::string("health: {sourceAddress: \"\", outside: "
                                                                  "{quorum: majority}}\n")}) {
        r = load(section);
        ASSERT_TRUE(r.config) << section << ": " << r.errors[0].str();
        EXPECT_FALSE(r.config->health.source_address);
        EXPECT_EQ(r.config->health.outside, conf::Health::Outside{});
        EXPECT_TRUE(r.config->health.outside.enabled);
        EXPECT_EQ(r.config->health.outside.vantages, 3u);
        EXPECT_EQ(r.config->health.outside.quorum, 0u);  // a majority
        EXPECT_EQ(r.config->health.outside.keep_dead, conf::Millis{600'000});
        EXPECT_EQ(r.config->health.outside.max_probes_per_second, 100u);
    }
    EXPECT_EQ(load("health: {sourceAddress: \"2001:db8::7\"}\n").config->health.source_address->family, 6);
    for (auto [section, error] : std::vector<std::pair<std::string, std::string>>{
             {"health: {sourceAddress: eth0}\n",
              "glbd.yaml:50:25: health.sourceAddress: \"eth0\" is not an IP address"},
             {"health: {sourceAddress: 0.0.0.0}\n", "health.sourceAddress: must be an address of this host"},
             {"health: {sourceAddress: \"ff02::1\"}\n", "health.sourceAddress: must be an address of this host"},
             {"health: {outside: {vantages: 0}}\n", "health.outside.vantages: must be an integer 1..16, got \"0\""},
             {"health: {outside: {vantages: 17}}\n", "health.outside.vantages: must be an integer 1..16"},
             {"health: {outside: {quorum: most}}\n", "health.outside.quorum: must be an integer 1..16, got \"most\""},
             {"health: {outside: {quorum: 4}}\n", "health.outside.quorum: must be at most health.outside.vantages (3)"},
             {"health: {outside: {keepDead: soon}}\n", "health.outside.keepDead: must be a duration"},
             {"health: {outside: {maxProbesPerSecond: 0}}\n", "health.outside.maxProbesPerSecond: must be an integer"},
             {"health: {outside: {vantage: 3}}\n", "health.outside.vantage: unknown key (did you mean \"vantages\"?)"},
             {"health: {source: 192.0.2.1}\n", "health.source: unknown key"},
         }) {
        auto bad = load(section);
        ASSERT_FALSE(bad.config) << section;
        EXPECT_NE(bad.errors[0].str().find(error), std::string::npos) << section << ": " << bad.errors[0].str();
    }
}

// docs/config.md writes `instance: ""` for the default (the host name): that line loads.
TEST(Conf, EmptyInstanceIsTheHostName) {
    auto r = conf::load_text(with("  instance: a\n", "  instance: \"\"\n"), "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    EXPECT_EQ(r.config->cluster.instance, host);
}

TEST(Conf, ClusterLocation) {
    auto r = conf::load_text(with("  instance: a\n", "  instance: a\n  location: {lat: 53.34981, lon: -6.26031}\n"),
                             "glbd.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    ASSERT_TRUE(r.config->cluster.location);
    EXPECT_FLOAT_EQ(r.config->cluster.location->lat, 53.3498f);  // to 4 decimals, as peers will be told
    EXPECT_FLOAT_EQ(r.config->cluster.location->lon, -6.2603f);
    EXPECT_FALSE(conf::load_text(kGood, "glbd.yaml").config->cluster.location);
}

const Bad kBad[] = {
    {"WeightNotInteger", with("weight: 120", "weight: heavy"),
     "glbd.yaml:25:29: hosts[0].loadBalancing.weight: must be an integer 0..65535, got \"heavy\""},
    {"WeightOutOfRange", with("weight: 120", "weight: 70000"),
     "glbd.yaml:25:29: hosts[0].loadBalancing.weight: must be an integer 0..65535, got \"70000\""},
    {"UnknownTopKey", with("stateDir:", "stateDri:"),
     "glbd.yaml:48:1: stateDri: unknown key (did you mean \"stateDir\"?)"},
    {"UnknownNestedKey", with("    ttl: 60\n", "    ttl: 60\n    weigth: 3\n"),
     "glbd.yaml:24:5: hosts[0].weigth: unknown key\n"},  // no key of a host is near it: nothing suggested
    {"MisspeltKeySuggested", with("loadBalancing:", "loadBalancng:"),
     "glbd.yaml:25:5: hosts[0].loadBalancng: unknown key (did you mean \"loadBalancing\"?)"},
    {"MisspeltKeyAnyCase", with("loadBalancing:", "LoadBalancing:"),
     "hosts[0].LoadBalancing: unknown key (did you mean \"loadBalancing\"?)"},
    {"HostOutsideZones", with("name: shop.glb.example.com", "name: shop.other.org"),
     "glbd.yaml:22:11: hosts[0].name: shop.other.org is not in any configured zone"},
    {"LatitudeOffTheGlobe", with("  instance: a\n", "  instance: a\n  location: {lat: 95, lon: 0}\n"),
     "glbd.yaml:4:19: cluster.location.lat: must be a number of degrees from -90 to 90, got \"95\""},
    {"LongitudeNotANumber", with("  instance: a\n", "  instance: a\n  location: {lat: 1, lon: east}\n"),
     "cluster.location.lon: must be a number of degrees from -180 to 180, got \"east\""},
    {"LocationWithoutLon", with("  instance: a\n", "  instance: a\n  location: {lat: 1}\n"),
     "cluster.location.lon: required"},
    {"BadFallback", with("geoip:\n", "geoip:\n  fallback: closest\n"),
     "glbd.yaml:9:13: geoip.fallback: must be default or nearest, got \"closest\""},
    {"BadCidr", with("10.1.0.0/16: IE", "10.1.0.0/33: IE"),
     "glbd.yaml:10:5: geoip.networks.10.1.0.0/33: not a CIDR network"},
    {"CidrWithHostBits", with("10.1.0.0/16: IE", "10.1.0.1/16: IE"), "geoip.networks.10.1.0.1/16: not a CIDR network"},
    {"BadEndpointIp", with("192.0.2.10, ", "192.0.2.300x!, "),
     "glbd.yaml:24:17: hosts[0].endpoints[0]: not an IP address or host name"},
    {"UnknownGeoCode", with("geo: IE", "geo: XX"),
     "glbd.yaml:25:39: hosts[0].loadBalancing.geo: unknown geo code \"XX\""},
    {"UnknownContinent", with("geo: IE", "geo: GEO-XY"), "hosts[0].loadBalancing.geo: unknown geo code \"GEO-XY\""},
    {"DefaultGeoWithoutGeo", with("geo: IE, defaultGeo: true", "defaultGeo: true"),
     "hosts[0].loadBalancing.defaultGeo: defaultGeo needs a geo"},
    {"DuplicateHost", with("name: \"*.apps.glb.example.com\"", "name: shop.glb.example.com"),
     "glbd.yaml:37:11: hosts[1].name: duplicate host shop.glb.example.com"},
    {"SecondListingWithoutEntry",
     with("name: \"*.apps.glb.example.com\"", "name: shop.glb.example.com\n    entry: gw-2"),
     "hosts[1].name: host shop.glb.example.com is listed more than once: give each listing its own entry"},
    {"SameEntryTwice",
     with("    ttl: 60\n", "    ttl: 60\n    entry: gw-1\n",
          with("name: \"*.apps.glb.example.com\"", "name: shop.glb.example.com\n    entry: gw-1")),
     "hosts[1].name: duplicate host shop.glb.example.com entry gw-1"},
    {"EntryWithASpace", with("    ttl: 60\n", "    ttl: 60\n    entry: \"gw 1\"\n"),
     "hosts[0].entry: must be 1..253 characters of [A-Za-z0-9._-], got \"gw 1\""},
    {"SecretNotBase64", with("c2VjcmV0c2VjcmV0c2VjcmV0", "not base64!"),
     "glbd.yaml:41:57: peers.key.secret: the TSIG secret is not valid base64"},
    {"SecretTooShort", with("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", "AA=="),
     "peers.key.secret: the TSIG secret is 1 bytes: at least 32 (as glbd keygen writes)"},
    {"SecretPlaceholder",
     with("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=", "REPLACE/WITH/glbd/keygen/OUTPUT/AAAAAAAAAAAAAAAAAAAAAAA="),
     "peers.key.secret: the manifests' placeholder"},
    {"DuplicateListen", with("\"[::1]:5353\"", "\"127.0.0.1:5353\""),
     "glbd.yaml:5:27: listen.dns[1]: duplicate listen address 127.0.0.1:5353"},
    {"MissingClusterId", with("  id: eu-1\n", ""), "glbd.yaml:2:3: cluster.id: required"},
    {"ClusterIdBadChars", with("id: eu-1", "id: EU_1"), "cluster.id: must be 1..63 characters of [a-z0-9-]"},
    {"BadDuration", with("interval: 5s", "interval: fast"),
     "glbd.yaml:30:17: hosts[0].healthCheck.interval: must be a duration"},
    {"BadProtocol", with("protocol: HTTPS", "protocol: FTP"),
     "hosts[0].healthCheck.protocol: must be HTTP, HTTPS or TCP, got \"FTP\""},
    {"BadPort", with("port: 443", "port: 0"), "hosts[0].healthCheck.port: must be an integer 1..65535"},
    {"WrongType", with("stateDir:", "threads: [1]\nstateDir:"), "threads: must be an integer 0..256, got a list"},
    {"AdminNeedsToken", with("listen: \"127.0.0.1:9153\"", "listen: \"0.0.0.0:9153\""),
     "admin.token: required when admin.listen is not a loopback address"},
    {"BadRecord", with("www 300 IN CNAME shop", "www 300 IN A not-an-ip"),
     "glbd.yaml:20:1: zones[0].records: bad record"},
    {"RecordOutsideZone", with("www 300 IN CNAME shop", "www.other.org. 300 IN A 192.0.2.1"),
     "is outside the zone glb.example.com"},
    {"YamlSyntax", with("log: {level: info, format: json}", "log: {level: info"),
     "glbd.yaml:50:1: YAML: while parsing a flow mapping: did not find expected ',' or '}'"},
    {"LogLevel", with("level: info", "level: loud"), "log.level: must be trace, debug, info, warn or error"},
    {"DeadAfterShorterThanSync", with("deadAfter: 10s", "deadAfter: 500ms"),
     "peers.deadAfter: must be longer than peers.syncInterval"},
    {"DeadAfterMaxBelowDeadAfter", with("deadAfter: 10s", "deadAfter: 10s\n  deadAfterMax: 9s"),
     "peers.deadAfterMax: must be at least peers.deadAfter"},
    {"AdvertiseWildcard", with("deadAfter: 10s", "deadAfter: 10s\n  advertise: [\"0.0.0.0:53\"]"),
     "peers.advertise[0]: must be an address other clusters can reach (not a wildcard or multicast, not port 0)"},
    {"AdvertiseMulticast", with("deadAfter: 10s", "deadAfter: 10s\n  advertise: [\"224.0.0.251:53\"]"),
     "peers.advertise[0]: must be an address other clusters can reach"},
    {"AdvertiseName", with("deadAfter: 10s", "deadAfter: 10s\n  advertise: [\"glbd.example.com:53\"]"),
     "peers.advertise[0]"},
    {"MissingZones", std::string("cluster: {id: a}\nlisten: {dns: [\"127.0.0.1:53\"]}\n"), "zones: required"},
    {"HostCnameConflict", with("www 300 IN CNAME shop", "shop 300 IN CNAME www"),
     "host shop.glb.example.com also has a static CNAME"},
    {"KubeApiServerNotLoopback",
     with("stateDir:", "kubernetes: {apiServer: \"http://127.0.0.1.attacker.example\"}\nstateDir:"),
     "kubernetes.apiServer: must be an https:// URL (http:// only to a loopback address)"},
    {"KubeMode", with("stateDir:", "kubernetes: {mode: primary}\nstateDir:"),
     "kubernetes.mode: must be coredns, delegate or controller"},
    {"KubeOwnersNotAMap", with("stateDir:", "kubernetes: {owners: [shop]}\nstateDir:"),
     "kubernetes.owners: must be a mapping of namespace to a list of names"},
    {"KubeOwnersBadName", with("stateDir:", "kubernetes: {owners: {shop: [\"a b\"]}}\nstateDir:"),
     "kubernetes.owners.shop[0]: not a host name"},
    {"KubeOwnersBadNamespace", with("stateDir:", "kubernetes: {owners: {Shop_1: [shop.example]}}\nstateDir:"),
     "kubernetes.owners.Shop_1: not a namespace name"},
    {"KubeDenyNetworks", with("stateDir:", "kubernetes: {denyNetworks: [10.0.0.1/8]}\nstateDir:"),
     "glbd.yaml:48:29: kubernetes.denyNetworks[0]: not a CIDR network"},
    {"KubeGroupsFromBadNamespace", with("stateDir:", "kubernetes: {groupsFrom: [Ops_1]}\nstateDir:"),
     "glbd.yaml:48:27: kubernetes.groupsFrom[0]: not a namespace name"},
    // A host at the apex answers A/AAAA; a host name endpoint there would be a CNAME beside the SOA and NS.
    {"HostAtApexWithHostName", with("name: shop.glb.example.com", "name: glb.example.com"),
     "glbd.yaml:24:45: hosts[0].endpoints[2]: a host at the zone apex takes IP addresses only"},
};

INSTANTIATE_TEST_SUITE_P(Validation, BadConfig, ::testing::ValuesIn(kBad),
                         [](const auto& tpi) { return std::string(tpi.param.name); });

TEST(Conf, EveryErrorReportedAtOnce) {
    std::string y = with("weight: 120", "weight: heavy");
    y.replace(y.find("level: info"), 11, "level: loud");
    y.replace(y.find("port: 443"), 9, "port: 0");
    auto r = conf::load_text(y, "glbd.yaml");
    EXPECT_EQ(r.errors.size(), 3u);
}

TEST(Conf, MissingFileNamed) {
    auto r = conf::load_file("/nonexistent/glbd.yaml");
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].str(), "/nonexistent/glbd.yaml: cannot open the config file: No such file or directory");
}

TEST(Conf, ZoneFileMergedAndErrorsNameIt) {
    test::TempDir dir;
    std::string path = dir / "extra.zone";
    {
        std::ofstream f(path);
        f << "$TTL 120\napi IN A 192.0.2.44\nbroken IN A 1.2.3\n";
    }
    auto r = conf::load_text(with("    records: |", "    file: " + path + "\n    records: |"), "glbd.yaml");
    ASSERT_FALSE(r.config);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].str().rfind(path + ":3:1: bad record", 0), 0u) << r.errors[0].str();
    {
        std::ofstream f(path);
        f << "$TTL 120\napi IN A 192.0.2.44\n";
    }
    auto ok = conf::load_text(with("    records: |", "    file: " + path + "\n    records: |"), "glbd.yaml");
    ASSERT_TRUE(ok.config);
    EXPECT_EQ(ok.config->zones[0].records.size(), 2u);
}

TEST(Conf, Durations) {
    EXPECT_EQ(conf::parse_duration("500ms")->count(), 500);
    EXPECT_EQ(conf::parse_duration("5s")->count(), 5000);
    EXPECT_EQ(conf::parse_duration("1m30s")->count(), 90000);
    EXPECT_FALSE(conf::parse_duration("5"));
    EXPECT_FALSE(conf::parse_duration("s"));
    EXPECT_FALSE(conf::parse_duration("5x"));
}

TEST(Conf, GeoCodes) {
    EXPECT_TRUE(conf::is_geo_code("IE"));
    EXPECT_TRUE(conf::is_geo_code("US"));
    EXPECT_TRUE(conf::is_geo_code("GEO-OC"));
    EXPECT_FALSE(conf::is_geo_code("UK"));  // not ISO 3166-1 (GB is)
    EXPECT_FALSE(conf::is_geo_code("GEO-XX"));
    EXPECT_FALSE(conf::is_geo_code("ie"));
}

TEST(Conf, Base64RoundTrip) {
    EXPECT_EQ(wire::base64_encode("hello"), "aGVsbG8=");
    EXPECT_EQ(*wire::base64_decode("aGVsbG8="), "hello");
    EXPECT_FALSE(wire::base64_decode("aGVsbG8"));
    EXPECT_FALSE(wire::base64_decode("a!=="));
}

}  // namespace

// is_canonical_name reads a name in one pass; it must say exactly what the round trip through the wire
// form says (the definition it replaced), for names made of every kind of byte that matters to it.
TEST(Conf, CanonicalNameIsTheWireRoundTrip) {
    auto round_trip = [](std::string_view s) {
        auto w = wire::name_to_wire(s);
        return w && wire::wire_to_name(*w) == s;
    };
    const std::string alphabet = "ab-_*.Z9 \\\"\x7f\x01\xc3";
    std::mt19937 rng(7);
    size_t canonical = 0;
    for (int i = 0; i < 200'000; ++i) {
        std::string s;
        size_t len = rng() % 12;
        for (size_t k = 0; k < len; ++k) s += alphabet[rng() % (rng() % 3 ? 6 : alphabet.size())];
        ASSERT_EQ(model::is_canonical_name(s), round_trip(s)) << "\"" << s << "\"";
        canonical += round_trip(s);
    }
    EXPECT_GT(canonical, 10'000u);  // the sample holds many of both
    for (const std::string& s :
         std::vector<std::string>{".", "", "a.", ".a", "a..b", "A.b", std::string(63, 'a') + ".b", std::string(64, 'a'),
                                  std::string(126, 'a') + "." + std::string(126, 'b'), std::string(253, 'a'),
                                  std::string(63, 'a') + "." + std::string(63, 'a') + "." + std::string(63, 'a') + "." +
                                      std::string(61, 'a'),
                                  std::string(63, 'a') + "." + std::string(63, 'a') + "." + std::string(63, 'a') + "." +
                                      std::string(62, 'a')}) {
        EXPECT_EQ(model::is_canonical_name(s), round_trip(s)) << "\"" << s << "\" (" << s.size() << " bytes)";
    }
}
