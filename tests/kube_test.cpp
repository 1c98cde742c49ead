// Kuadrant DNSRecords to glbd entries and static records (sync/kube/records), on records made by
// tests/tools/kuadrant_records.py from upstream's generation code (tests/fixtures/kuadrant), and the
// hostile cases a record's author may try.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sync/kube/records.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;
using json = nlohmann::json;

namespace {

constexpr const char* kZone = "glb.example.com";

model::Zone zone(const std::string& origin) {
    model::Zone z;
    z.origin = origin;
    z.nameservers = {{"ns1." + origin, {"127.0.0.1"}}, {"ns2." + origin, {"127.0.0.2"}}};
    return z;
}

kube::MapOptions options(kube::Mode mode = kube::Mode::coredns) {
    kube::MapOptions o;
    o.mode = mode;
    o.zones = {zone(kZone), zone("example.net")};
    return o;
}

// The records of a fixture, by name.
std::map<std::string, kube::Record> fixture(const std::string& scenario) {
    std::ifstream in(std::string(GLBD_FIXTURES) + "/kuadrant/" + scenario + ".json");
    std::stringstream text;
    text << in.rdbuf();
    json list = json::parse(text.str());
    std::map<std::string, kube::Record> out;
    for (const auto& item : list["items"]) out[item["metadata"]["name"]] = kube::read_record(item, item.dump().size());
    return out;
}

kube::Record only(const std::string& scenario) {
    auto all = fixture(scenario);
    EXPECT_EQ(all.size(), 1u);
    return all.begin()->second;
}

const model::Host* entry(const kube::Mapped& m, const std::string& name, const std::string& key) {
    for (const auto& h : m.hosts) {
        if (h.name == name && h.entry == key) return &h;
    }
    return nullptr;
}

std::string refusals(const kube::Mapped& m) {
    std::string s;
    for (const auto& r : m.refused) s += r.name + ": " + r.why + "\n";
    return s;
}

TEST(KubeRecords, PrimaryMergeOfThreeClustersGivesAnEntryPerGateway) {
    auto recs = fixture("primary-three-clusters");
    int delegating = 0;
    const kube::Record* auth = nullptr;
    for (const auto& [name, r] : recs) {
        kube::Mapped m = kube::map_record(r, options());
        if (r.delegate) {
            ++delegating;
            EXPECT_TRUE(m.not_ours) << name;  // not labelled: the plugin does not serve them either
        } else {
            auth = &r;
        }
    }
    EXPECT_EQ(delegating, 3);
    ASSERT_NE(auth, nullptr);
    EXPECT_TRUE(auth->authoritative);
    kube::Mapped m = kube::map_record(*auth, options());
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(refusals(m), "");
    ASSERT_EQ(m.hosts.size(), 3u);
    EXPECT_TRUE(m.records.empty());  // the registry's TXT records are not served
    const std::string api = std::string("api.") + kZone;
    const model::Host* eu = entry(m, api, "2n8thi-qjxntp.klb.api.glb.example.com");
    const model::Host* us1 = entry(m, api, "27va7k-qjxntp.klb.api.glb.example.com");
    const model::Host* us2 = entry(m, api, "a1b2c3-us-2.elb.us-east-1.amazonaws.com");
    ASSERT_TRUE(eu && us1 && us2);
    EXPECT_EQ(eu->endpoints, (std::vector<Endpoint>{"172.18.200.1", "2001:db8:e0::1"}));
    EXPECT_EQ(eu->load_balancing, (model::LoadBalancing{120, "GEO-EU", true}));
    EXPECT_EQ(us1->endpoints, std::vector<Endpoint>{"172.18.201.1"});
    EXPECT_EQ(us1->load_balancing, (model::LoadBalancing{120, "US", false}));
    EXPECT_EQ(us2->endpoints, std::vector<Endpoint>{"a1b2c3-us-2.elb.us-east-1.amazonaws.com"});
    EXPECT_EQ(us2->load_balancing, (model::LoadBalancing{40, "US", false}));
    for (const auto* h : {eu, us1, us2}) {
        EXPECT_EQ(h->ttl, 60u);  // the leaf's recordTTL, not the CNAMEs' 300
        // An authoritative record carries no healthCheck: each cluster's dns-operator probed its own
        // gateways and wrote only what it found healthy.
        EXPECT_FALSE(h->health_check);
    }
    EXPECT_EQ(m.names, std::vector<std::string>{api});
}

TEST(KubeRecords, TwoGatewaysOfOneClusterStayTwoEntries) {
    kube::Mapped m = kube::map_record(only("two-gateways"), options());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 2u) << refusals(m);
    const model::Host* ie = nullptr;
    const model::Host* us = nullptr;
    for (const auto& h : m.hosts) (h.load_balancing->geo == "IE" ? ie : us) = &h;
    ASSERT_TRUE(ie && us);
    EXPECT_EQ(ie->endpoints, std::vector<Endpoint>{"172.18.210.1"});
    EXPECT_TRUE(ie->load_balancing->default_geo);
    EXPECT_EQ(us->load_balancing->geo, "US");
    EXPECT_EQ(us->endpoints, std::vector<Endpoint>{"shop-us.elb.us-east-1.amazonaws.com"});
    EXPECT_NE(ie->entry, us->entry);
}

TEST(KubeRecords, WildcardListenerSharesTheChainWithoutALoop) {
    kube::Record r = only("wildcard");
    EXPECT_EQ(r.root_host, std::string("apps.") + kZone);  // GetRootHost() drops "*."
    kube::Mapped m = kube::map_record(r, options());
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(refusals(m), "");
    ASSERT_EQ(m.hosts.size(), 2u);
    std::set<std::string> names;
    for (const auto& h : m.hosts) {
        names.insert(h.name);
        EXPECT_EQ(h.endpoints, (std::vector<Endpoint>{"172.18.200.1", "2001:db8:e0::1"}));
        EXPECT_EQ(h.load_balancing->geo, "GEO-EU");
        EXPECT_EQ(h.entry, m.hosts[0].entry);
    }
    EXPECT_EQ(names, (std::set<std::string>{"*.apps.glb.example.com", "apps.glb.example.com"}));
}

TEST(KubeRecords, SimplePolicyIsASimpleHost) {
    auto recs = fixture("simple");
    std::vector<model::Host> hosts;
    for (const auto& [name, r] : recs) {
        kube::Mapped m = kube::map_record(r, options());
        ASSERT_EQ(m.error, "") << name;
        hosts.insert(hosts.end(), m.hosts.begin(), m.hosts.end());
    }
    ASSERT_EQ(hosts.size(), 2u);
    std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    EXPECT_EQ(hosts[0].name, "docs.glb.example.com");
    EXPECT_EQ(hosts[0].endpoints, std::vector<Endpoint>{"docs-lb.example.org"});
    EXPECT_EQ(hosts[1].name, "www.glb.example.com");
    EXPECT_EQ(hosts[1].endpoints, (std::vector<Endpoint>{"172.18.220.1", "172.18.220.2"}));
    for (const auto& h : hosts) {
        EXPECT_FALSE(h.load_balancing);
        EXPECT_EQ(h.entry, "");
        EXPECT_EQ(h.ttl, 60u);
    }
}

TEST(KubeRecords, GeoCodeOnPlainRecordsMakesEntries) {
    kube::Mapped m = kube::map_record(only("geo-plain"), options());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 2u) << refusals(m);
    const model::Host* eu = entry(m, "plain.glb.example.com", "GEO-EU");
    const model::Host* na = entry(m, "plain.glb.example.com", "GEO-NA");
    ASSERT_TRUE(eu && na);
    EXPECT_EQ(eu->endpoints, std::vector<Endpoint>{"192.0.2.11"});
    EXPECT_EQ(eu->load_balancing->geo, "GEO-EU");
    EXPECT_EQ(na->load_balancing->geo, "GEO-NA");
    EXPECT_EQ(eu->ttl, 300u);
}

TEST(KubeRecords, NsWithGlueAndTxtAreStaticRecords) {
    kube::Mapped m = kube::map_record(only("ns-txt"), options());
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(refusals(m), "");
    EXPECT_TRUE(m.hosts.empty());
    std::vector<kube::StaticRecord> want = {
        {"sub.team.glb.example.com", "NS", 300, {"ns1.sub.team.glb.example.com", "ns.elsewhere.example.org"}},
        {"ns1.sub.team.glb.example.com", "A", 300, {"192.0.2.53"}},
        {"_acme-challenge.team.glb.example.com", "TXT", 120, {"token-1234"}},
        {"team.glb.example.com", "TXT", 300, {"v=spf1 -all"}},
    };
    EXPECT_EQ(m.records, want);
}

TEST(KubeRecords, ZoneSetUpRecordMatchingChangesNothingElseIsRefusedPerName) {
    kube::Mapped m = kube::map_record(only("zone-setup-matching"), options());
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(refusals(m), "");
    ASSERT_EQ(m.hosts.size(), 1u);  // the *.<zone> listener beside it
    EXPECT_EQ(m.hosts[0].name, "*.glb.example.com");
    EXPECT_TRUE(m.records.empty());

    m = kube::map_record(only("zone-setup-other"), options());
    ASSERT_EQ(m.error, "");
    EXPECT_EQ(refusals(m),
              "glb.example.com: its NS set differs from zones[].nameservers\n"
              "ns1.glb.example.com: its addresses differ from zones[].nameservers\n");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].name, "*.glb.example.com");
}

// The active groups' record switches every cluster's traffic: only the namespaces kubernetes.groupsFrom names
// (default: glbd's own) may publish it, as a TXT, at exactly kuadrant-active-groups.<zone>.
TEST(KubeRecords, ActiveGroupsTxtIsServedOnlyFromGroupsFrom) {
    kube::MapOptions o = options();
    o.groups_from = {"kuadrant-coredns"};
    kube::Mapped m = kube::map_record(only("active-groups"), o);
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.records.size(), 1u) << refusals(m);
    EXPECT_EQ(m.records[0].name, "kuadrant-active-groups.glb.example.com");
    EXPECT_EQ(m.records[0].targets, std::vector<std::string>{"version=1;groups=primary-eu&&primary-us"});

    o.groups_from = {"glbd"};
    m = kube::map_record(only("active-groups"), o);
    EXPECT_TRUE(m.records.empty());
    EXPECT_EQ(refusals(m),
              "kuadrant-active-groups.glb.example.com: only the namespaces of kubernetes.groupsFrom may set the "
              "active groups (glbd)\n");
    o.groups_from.clear();
    m = kube::map_record(only("active-groups"), o);
    EXPECT_NE(refusals(m).find("(none: glbd's own namespace is not known)"), std::string::npos) << refusals(m);
}

TEST(KubeRecords, SecondZoneServedOnlyWhenItIsGlbds) {
    kube::Record r = only("second-zone");
    EXPECT_EQ(kube::map_record(r, options()).hosts.size(), 1u);
    kube::MapOptions one = options();
    one.zones.pop_back();
    EXPECT_TRUE(kube::map_record(r, one).not_ours);
}

// A record this mode reads but for a zone glbd does not serve says which zone and glbd's own (logged, counted,
// and in delegate and controller mode written on its status); a record the mode does not read at all says
// nothing (a delegated record in controller mode is dns-operator's).
TEST(KubeRecords, ARecordForAZoneNotServedSaysWhich) {
    kube::Record r = only("second-zone");
    kube::MapOptions one = options();
    one.zones.pop_back();
    kube::Mapped m = kube::map_record(r, one);
    EXPECT_TRUE(m.not_ours);
    EXPECT_EQ(m.other_zone,
              "it is labelled for zone example.net, which this glbd does not serve (its zones: glb.example.com)");
    kube::Record d = fixture("primary-three-clusters").at("api-gw-api-eu-1");
    kube::MapOptions elsewhere = options(kube::Mode::delegate);
    elsewhere.zones = {zone("glb.example.test")};
    m = kube::map_record(d, elsewhere);
    EXPECT_TRUE(m.not_ours);
    EXPECT_EQ(m.other_zone,
              "its rootHost api.glb.example.com lies in no zone this glbd serves (its zones: glb.example.test)");
    elsewhere.mode = kube::Mode::controller;  // a delegated record: not controller mode's input at all
    m = kube::map_record(d, elsewhere);
    EXPECT_TRUE(m.not_ours);
    EXPECT_EQ(m.other_zone, "");
    EXPECT_EQ(kube::map_record(d, options(kube::Mode::delegate)).other_zone, "");  // served
}

TEST(KubeRecords, OlderVersionsAndNewerStatusFieldsRead) {
    kube::Mapped m = kube::map_record(only("v014-labelled"), options());
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].load_balancing->geo, "US");

    kube::Record s = only("status-016");
    EXPECT_EQ(s.group, "primary-eu");
    EXPECT_EQ(s.generation, 0);  // not in the fixture: the API server sets it
    ASSERT_TRUE(s.status);
    EXPECT_EQ((*s.status)["observedGeneration"], 3);
    EXPECT_EQ(kube::map_record(s, options()).hosts.size(), 1u);
}

TEST(KubeRecords, ModesSelectTheirRecords) {
    auto recs = fixture("primary-three-clusters");
    size_t delegate = 0, controller = 0;
    for (const auto& [name, r] : recs) {
        delegate += !kube::map_record(r, options(kube::Mode::delegate)).not_ours;
        controller += !kube::map_record(r, options(kube::Mode::controller)).not_ours;
    }
    EXPECT_EQ(delegate, 3u);    // the spec.delegate records, not the authoritative one
    EXPECT_EQ(controller, 0u);  // neither delegated nor authoritative records
    kube::Mapped m = kube::map_record(recs.at("api-gw-api-eu-1"), options(kube::Mode::delegate));
    ASSERT_EQ(m.hosts.size(), 1u) << refusals(m);
    const model::Host& h = m.hosts[0];
    EXPECT_EQ(h.load_balancing->geo, "GEO-EU");
    // The DNSPolicy's healthCheck, with Kuadrant's semantics.
    ASSERT_TRUE(h.health_check);
    EXPECT_EQ(h.health_check->protocol, model::Protocol::https);
    EXPECT_EQ(h.health_check->port, 8443);
    EXPECT_EQ(h.health_check->path, "/healthz");
    EXPECT_EQ(h.health_check->interval, conf::Millis{10'000});
    EXPECT_EQ(h.health_check->failure_threshold, 4u);  // unhealthy after more than 3 failures
    EXPECT_EQ(h.health_check->timeout, conf::Millis{3000});
    EXPECT_EQ(h.health_check->expected_status, (std::vector<int>{200, 201}));
    EXPECT_TRUE(h.health_check->insecure_skip_verify);  // dns-operator's default
    kube::MapOptions verify = options(kube::Mode::delegate);
    verify.insecure_health_checks = false;
    m = kube::map_record(recs.at("api-gw-api-eu-1"), verify);
    EXPECT_FALSE(m.hosts.at(0).health_check->insecure_skip_verify);
}

// --- the author is not trusted

// The endpoints are a vector, not a json: a json initialised from a braced list of one element is that
// element with clang and an array of it with gcc (nlohmann's single-element brace rule).
json record(const std::string& root, const std::vector<json>& endpoints, json health = nullptr) {
    json r = {
        {"metadata", {{"name", "r"}, {"namespace", "team-a"}, {"labels", {{"kuadrant.io/coredns-zone-name", kZone}}}}},
        {"spec", {{"rootHost", root}, {"endpoints", json(endpoints)}}}};
    if (!health.is_null()) r["spec"]["healthCheck"] = health;
    return r;
}

json a(const std::string& name, std::vector<std::string> targets) {
    return {{"dnsName", name}, {"recordType", "A"}, {"recordTTL", 60}, {"targets", targets}};
}

}  // namespace
namespace glbd::kube {
void PrintTo(const StaticRecord& s, std::ostream* out) {
    *out << s.name << " " << s.type << " " << s.ttl;
    for (const auto& t : s.targets) *out << " " << t;
}
}  // namespace glbd::kube
namespace {

kube::Mapped map(const json& obj, const kube::MapOptions& o = options()) {
    return kube::map_record(kube::read_record(obj, obj.dump().size()), o);
}

TEST(KubeRecords, NamesOutsideTheRootHostApexAndNameServersAreRefused) {
    kube::Mapped m = map(record("shop.glb.example.com",
                                {a("shop.glb.example.com", {"192.0.2.1"}), a("bank.glb.example.com", {"192.0.2.66"}),
                                 a("glb.example.com", {"192.0.2.66"}), a("ns1.glb.example.com", {"192.0.2.66"}),
                                 a("www.example.org", {"192.0.2.66"})}));
    ASSERT_EQ(m.error, "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].name, "shop.glb.example.com");
    EXPECT_EQ(refusals(m),
              "bank.glb.example.com: outside its rootHost shop.glb.example.com\n"
              "glb.example.com: the zone apex is this glbd's unless kubernetes.owners gives it to namespace team-a\n"
              "ns1.glb.example.com: its addresses differ from zones[].nameservers\n"
              "www.example.org: not in a zone of this glbd\n");
}

// The zone apex is the record's only when kubernetes.owners gives it to its namespace, and then for addresses
// only (simple or load-balanced); glbd's SOA and NS stay, a CNAME (or a load-balanced entry that would be one)
// cannot sit beside them (RFC 1034 section 3.6.2), nor may other data.
TEST(KubeRecords, TheApexIsARecordsWhenOwnersGiveItAndThenAddressesOnly) {
    kube::MapOptions o = options();
    o.owners = {{"team-a", {"glb.example.com"}}};
    kube::Mapped m = map(record("glb.example.com", {a("glb.example.com", {"192.0.2.1", "2001:db8::1"})}), o);
    ASSERT_EQ(refusals(m), "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].name, "glb.example.com");
    EXPECT_EQ(m.hosts[0].endpoints, (std::vector<Endpoint>{"192.0.2.1", "2001:db8::1"}));

    json cname = {{"dnsName", "glb.example.com"}, {"recordType", "CNAME"}, {"targets", {"lb.example.net"}}};
    m = map(record("glb.example.com", {cname}), o);
    EXPECT_EQ(refusals(m),
              "glb.example.com: a CNAME at the zone apex (RFC 1034 section 3.6.2: it cannot sit beside the apex's SOA "
              "and NS)\n");
    json txt = {{"dnsName", "glb.example.com"}, {"recordType", "TXT"}, {"targets", {"v=spf1 -all"}}};
    m = map(record("glb.example.com", {txt}), o);
    EXPECT_EQ(refusals(m), "glb.example.com: TXT at the zone apex: its data but addresses is this glbd's\n");

    // Load-balanced at the apex (apex CNAME klb.apex, as kuadrant-operator writes a listener on the apex): the
    // addresses' entries are served, directly; an external host name target would be a CNAME there.
    auto chain = [](const std::string& leaf_type, const std::string& leaf) {
        return std::vector<json>{
            {{"dnsName", "glb.example.com"}, {"recordType", "CNAME"}, {"targets", {"klb.glb.example.com"}}},
            {{"dnsName", "klb.glb.example.com"},
             {"recordType", "CNAME"},
             {"targets", {"ie.klb.glb.example.com"}},
             {"providerSpecific", {{{"name", "geo-code"}, {"value", "IE"}}}}},
            {{"dnsName", "ie.klb.glb.example.com"},
             {"recordType", "CNAME"},
             {"setIdentifier", leaf},
             {"targets", {leaf}},
             {"providerSpecific", {{{"name", "weight"}, {"value", "100"}}}}},
            {{"dnsName", "x1.klb.glb.example.com"}, {"recordType", leaf_type}, {"targets", {"192.0.2.7"}}}};
    };
    m = map(record("glb.example.com", chain("A", "x1.klb.glb.example.com")), o);
    ASSERT_EQ(refusals(m), "");
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].name, "glb.example.com");
    EXPECT_EQ(m.hosts[0].endpoints, std::vector<Endpoint>{"192.0.2.7"});
    std::vector<json> elb = chain("A", "lb-1.elb.example.net");
    elb.pop_back();  // no address records: the target is an external name
    m = map(record("glb.example.com", elb), o);
    EXPECT_TRUE(m.hosts.empty());
    EXPECT_NE(refusals(m).find("glb.example.com: a host at the zone apex takes IP addresses only"), std::string::npos)
        << refusals(m);

    o.owners = {{"team-a", {"shop.glb.example.com"}}};  // owners that do not give the apex
    m = map(record("glb.example.com", {a("glb.example.com", {"192.0.2.1"})}), o);
    EXPECT_TRUE(m.hosts.empty());
    EXPECT_EQ(refusals(m),
              "glb.example.com: the zone apex is this glbd's unless kubernetes.owners gives it to namespace team-a\n");
}

TEST(KubeRecords, OnlyTheExactGroupsNameIsTheGroupsRecord) {
    json txt = {{"dnsName", "kuadrant-active-groups.shop.glb.example.com"},
                {"recordType", "TXT"},
                {"targets", {"version=1;groups=mine"}}};
    kube::Mapped m = map(record("shop.glb.example.com", {a("shop.glb.example.com", {"192.0.2.1"}), txt}));
    EXPECT_EQ(refusals(m), "");  // a TXT like any other, below the record's own name: it sets nothing
    ASSERT_EQ(m.records.size(), 1u);
    kube::MapOptions o = options();
    o.groups_from = {"team-a"};
    m = map(
        record("kuadrant-active-groups.glb.example.com", {a("kuadrant-active-groups.glb.example.com", {"192.0.2.1"})}),
        o);
    EXPECT_EQ(refusals(m), "kuadrant-active-groups.glb.example.com: the active groups' record is a TXT record only\n");
}

TEST(KubeRecords, OwnersLimitANamespacesNames) {
    kube::MapOptions o = options();
    o.owners = {{"team-a", {"a.glb.example.com"}}, {"team-b", {"shop.glb.example.com"}}};
    kube::Mapped m = map(record("shop.glb.example.com", {a("shop.glb.example.com", {"192.0.2.1"})}), o);
    EXPECT_TRUE(m.hosts.empty());
    EXPECT_EQ(refusals(m), "shop.glb.example.com: not among the names kubernetes.owners gives namespace team-a\n");
    m = map(record("x.a.glb.example.com", {a("x.a.glb.example.com", {"192.0.2.1"})}), o);
    EXPECT_EQ(m.hosts.size(), 1u);
    o.owners = {{"team-b", {"shop.glb.example.com"}}};
    m = map(record("x.a.glb.example.com", {a("x.a.glb.example.com", {"192.0.2.1"})}), o);
    EXPECT_EQ(refusals(m), "x.a.glb.example.com: namespace team-a owns no names (kubernetes.owners)\n");
}

TEST(KubeRecords, ProbePathCannotNameAnotherHostOrPort) {
    json hc = {{"path", "@localhost:18081/metrics"}, {"port", 443}};
    kube::Mapped m = map(record("shop.glb.example.com", {a("shop.glb.example.com", {"192.0.2.1"})}, hc));
    EXPECT_TRUE(m.hosts.empty());
    EXPECT_EQ(refusals(m), "shop.glb.example.com: spec.healthCheck.path must start with / or ?\n");
    hc["path"] = "?probe=1";
    m = map(record("shop.glb.example.com", {a("shop.glb.example.com", {"192.0.2.1"})}, hc));
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].health_check->path, "?probe=1");
    EXPECT_EQ(m.hosts[0].health_check->port, 443);
}

TEST(KubeRecords, DeniedNetworksAreLeftOut) {
    kube::MapOptions o = options();
    Prefix lo, ll;
    ASSERT_TRUE(Prefix::parse("127.0.0.0/8", lo));
    ASSERT_TRUE(Prefix::parse("169.254.0.0/16", ll));
    o.deny = {lo, ll};
    kube::Mapped m =
        map(record("shop.glb.example.com", {a("shop.glb.example.com", {"127.0.0.1", "192.0.2.1", "169.254.1.1"}),
                                            a("x.shop.glb.example.com", {"127.0.0.5"})}),
            o);
    ASSERT_EQ(m.hosts.size(), 1u);
    EXPECT_EQ(m.hosts[0].endpoints, std::vector<Endpoint>{"192.0.2.1"});
    EXPECT_EQ(refusals(m), "x.shop.glb.example.com: every address is in kubernetes.denyNetworks\n");
}

TEST(KubeRecords, RecordsOverTheLimitsAreRefusedWhole) {
    std::vector<std::string> many(kube::RecordLimits::kMaxTargets + 1, "192.0.2.1");
    kube::Mapped m = map(record("shop.glb.example.com", {a("shop.glb.example.com", many)}));
    EXPECT_NE(m.error.find("10001 targets (at most 10000)"), std::string::npos) << m.error;
    EXPECT_TRUE(m.hosts.empty());

    json eps = json::array();
    for (size_t i = 0; i <= kube::RecordLimits::kMaxEndpoints; ++i)
        eps.push_back(a("shop.glb.example.com", {"192.0.2.1"}));
    m = map(record("shop.glb.example.com", eps));
    EXPECT_NE(m.error.find("2001 endpoints (at most 2000)"), std::string::npos) << m.error;

    // 70,000 targets spread over endpoints of one entry: the entry's addresses are counted once merged.
    json spread = json::array();
    for (int e = 0; e < 7; ++e) {
        std::vector<std::string> t;
        for (int i = 0; i < 10'000; ++i)
            t.push_back("10." + std::to_string(e) + "." + std::to_string(i / 256) + "." + std::to_string(i % 256));
        spread.push_back(a("shop.glb.example.com", t));
    }
    m = map(record("shop.glb.example.com", spread));  // ~930 KB: over the object limit
    EXPECT_NE(m.error.find("bytes (at most 262144)"), std::string::npos) << m.error;
    // Were it read anyway, the entry's addresses are counted merged, and that name refused.
    m = kube::map_record(kube::read_record(record("shop.glb.example.com", spread), 0), options());
    EXPECT_EQ(m.error, "");
    EXPECT_TRUE(m.hosts.empty());
    EXPECT_EQ(refusals(m), "shop.glb.example.com: 70000 addresses (at most 10000)\n");
}

TEST(KubeRecords, AnObjectOverTheSizeLimitKeepsItsNameOnly) {
    json r = record("shop.glb.example.com", {a("shop.glb.example.com", {"192.0.2.1"})});
    r["metadata"]["annotations"] = {{"pad", std::string(kube::RecordLimits::kMaxObjectBytes, 'x')}};
    kube::Record rec = kube::read_record_text(r.dump());
    EXPECT_EQ(rec.key(), "team-a/r");
    EXPECT_TRUE(rec.endpoints.empty());
    EXPECT_NE(rec.error.find("bytes (at most 262144)"), std::string::npos) << rec.error;
    EXPECT_NE(kube::map_record(rec, options()).error, "");
}

TEST(KubeRecords, ConflictingDataAtANameIsRefused) {
    json cname = {{"dnsName", "x.shop.glb.example.com"}, {"recordType", "CNAME"}, {"targets", {"y.example.org"}}};
    json txt = {{"dnsName", "x.shop.glb.example.com"}, {"recordType", "TXT"}, {"targets", {"hello"}}};
    json txt2 = {{"dnsName", "shop.glb.example.com"}, {"recordType", "TXT"}, {"targets", {"hello"}}};
    json mx = {{"dnsName", "m.shop.glb.example.com"}, {"recordType", "MX"}, {"targets", {"10 mx.example.org"}}};
    kube::Mapped m =
        map(record("shop.glb.example.com", {cname, txt, a("shop.glb.example.com", {"192.0.2.1"}), txt2, mx}));
    EXPECT_EQ(refusals(m),
              "x.shop.glb.example.com: a CNAME beside other data\n"
              "shop.glb.example.com: NS or TXT beside a host's addresses\n"
              "m.shop.glb.example.com: record type MX is not served\n");
    EXPECT_TRUE(m.hosts.empty());
    EXPECT_TRUE(m.records.empty());
}

TEST(KubeRecords, BelowADelegationOnlyGlue) {
    json ns = {
        {"dnsName", "sub.shop.glb.example.com"}, {"recordType", "NS"}, {"targets", {"ns1.sub.shop.glb.example.com"}}};
    json cname = {{"dnsName", "www.sub.shop.glb.example.com"}, {"recordType", "CNAME"}, {"targets", {"y.example.org"}}};
    kube::Mapped m =
        map(record("shop.glb.example.com", {ns, a("ns1.sub.shop.glb.example.com", {"192.0.2.53"}), cname}));
    EXPECT_EQ(refusals(m), "www.sub.shop.glb.example.com: CNAME below the delegation sub.shop.glb.example.com\n");
    std::vector<kube::StaticRecord> want = {{"sub.shop.glb.example.com", "NS", 60, {"ns1.sub.shop.glb.example.com"}},
                                            {"ns1.sub.shop.glb.example.com", "A", 60, {"192.0.2.53"}}};
    EXPECT_EQ(m.records, want);
}

TEST(KubeRecords, RegistryTxtIsRecognised) {
    kube::Endpoint e;
    e.name = "kuadrant-5vi0vatq-cname-api.glb.example.com", e.type = "TXT";
    e.targets = {"\"heritage=external-dns,external-dns/owner=x,external-dns/version=1\""};
    EXPECT_TRUE(kube::is_registry_txt(e));
    e.targets = {"heritage=external-dns,external-dns/owner=x"};
    EXPECT_TRUE(kube::is_registry_txt(e));
    e.targets = {"v=spf1 -all"};
    EXPECT_FALSE(kube::is_registry_txt(e));
    e.name = "api.glb.example.com";
    e.targets = {"\"heritage=external-dns,external-dns/owner=x\""};
    EXPECT_FALSE(kube::is_registry_txt(e));  // not the registry's name shape: served
}

TEST(KubeRecords, MalformedObjectsGiveAReasonNeverAThrow) {
    for (const char* text :
         {"", "null", "[]", "{}", R"({"metadata":{"name":"x"}})",
          R"({"metadata":{"name":"x","namespace":"n"},"spec":{"endpoints":{}}})",
          R"({"metadata":{"name":"x","namespace":"n"},"spec":{"endpoints":[{"dnsName":7}]}})",
          R"({"metadata":{"name":"x","namespace":"n"},"spec":{"endpoints":[{"dnsName":"a.b","targets":[1]}]}})"}) {
        kube::Record r = kube::read_record_text(text);
        EXPECT_NE(r.error, "") << text;
        kube::MapOptions o = options(kube::Mode::controller);
        EXPECT_TRUE(kube::map_record(r, o).hosts.empty()) << text;
    }
}

}  // namespace
