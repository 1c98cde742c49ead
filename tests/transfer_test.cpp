// The serving side of sync, judged from outside: requests are built and signed with ldns as a peer (or dig)
// would, every response message is parsed and its TSIG verified with ldns (RFC 8945 5.3.1 chaining), and
// the records are decoded with sync::decode. stateDir files are written by hand, as an operator might find
// them, and loaded by a real Service.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/dns_util.hpp"

#include <ldns/ldns.h>

using namespace glbd;
using namespace glbd::sync;

namespace {

constexpr const char* kKey = "glb-sync.";
constexpr const char* kSecret = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";

std::string config(const std::string& state_dir = "") {
    std::string c = R"(cluster: {id: eu, instance: a}
listen: {dns: ["127.0.0.1:5399"]}
zones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}]
peers:
  key: {name: glb-sync, secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="}
)";
    if (!state_dir.empty()) c += "stateDir: " + state_dir + "\n";
    return c;
}

std::vector<HostEntry> hosts(size_t n, const std::string& tag = "") {
    std::vector<HostEntry> out;
    for (size_t i = 0; i < n; ++i) {
        HostEntry h{"h" + std::to_string(i) + tag + ".glb.test", 60, conf::LoadBalancing{100, "IE", i == 0}, {}};
        h.endpoints.push_back(EndpointState{"192.0.2." + std::to_string(i % 250 + 1), true});
        h.endpoints.push_back(EndpointState{"2001:db8::" + std::to_string(i % 9999 + 1), i % 3 != 0});
        out.push_back(std::move(h));
    }
    return out;
}

struct Request {
    std::vector<uint8_t> wire;
    ldns_rdf* mac = nullptr;  // the request's MAC, which the first response message is signed over
    ~Request() { ldns_rdf_deep_free(mac); }
};

// A signed request for `_glbd.`: AXFR, IXFR (with the serial the puller has), SOA, or a NOTIFY.
std::unique_ptr<Request> request(const char* qtype, std::optional<uint32_t> ixfr_serial = std::nullopt,
                                 const std::vector<std::string>& have = {}, bool notify = false, bool relay = true) {
    ldns_pkt* p = ldns_pkt_new();
    ldns_pkt_set_id(p, 0x4242);
    ldns_rr* q = nullptr;
    EXPECT_EQ(ldns_rr_new_question_frm_str(&q, (std::string("_glbd. IN ") + qtype).c_str(), nullptr, nullptr),
              LDNS_STATUS_OK);
    ldns_pkt_push_rr(p, LDNS_SECTION_QUESTION, q);
    if (notify) ldns_pkt_set_opcode(p, LDNS_PACKET_NOTIFY), ldns_pkt_set_aa(p, true);
    if (ixfr_serial) {
        ldns_rr* soa = nullptr;
        std::string text = "_glbd. 0 IN SOA glbd. hostmaster.glbd. " + std::to_string(*ixfr_serial) + " 1 1 1 1";
        EXPECT_EQ(ldns_rr_new_frm_str(&soa, text.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK);
        ldns_pkt_push_rr(p, LDNS_SECTION_AUTHORITY, soa);
    }
    if (!have.empty() || !relay) {
        std::string text = relay ? "_glbd. 0 IN TXT" : "_glbd. 0 IN TXT \"relay=0\"";
        for (const auto& h : have) text += " \"have=" + h + "\"";
        ldns_rr* txt = nullptr;
        EXPECT_EQ(ldns_rr_new_frm_str(&txt, text.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK);
        ldns_pkt_push_rr(p, LDNS_SECTION_ADDITIONAL, txt);
    }
    EXPECT_EQ(ldns_pkt_tsig_sign(p, kKey, kSecret, 300, "hmac-sha256.", nullptr), LDNS_STATUS_OK);
    auto r = std::make_unique<Request>();
    r->mac = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
    uint8_t* w = nullptr;
    size_t n = 0;
    EXPECT_EQ(ldns_pkt2wire(&w, p, &n), LDNS_STATUS_OK);
    r->wire.assign(w, w + n);
    free(w);
    ldns_pkt_free(p);
    return r;
}

std::vector<std::vector<uint8_t>> serve(Service& svc, const Request& req) {
    std::vector<std::vector<uint8_t>> out;
    geo::Address from = test::address_of("127.0.0.9");
    EXPECT_EQ(svc.handle(req.wire.data(), req.wire.size(), from, out), sync::Service::Handled::answered);
    return out;
}

// Verifies every message's TSIG with ldns: the first over the request's MAC, each next one over the MAC
// before it with timers only. Returns the index of the first message that fails, or -1.
int first_unverified(const std::vector<std::vector<uint8_t>>& msgs, const ldns_rdf* request_mac) {
    ldns_rdf* prior = ldns_rdf_clone(request_mac);
    int bad = -1;
    for (size_t i = 0; i < msgs.size() && bad < 0; ++i) {
        ldns_pkt* p = nullptr;
        if (ldns_wire2pkt(&p, msgs[i].data(), msgs[i].size()) != LDNS_STATUS_OK || !ldns_pkt_tsig(p) ||
            !ldns_pkt_tsig_verify_next(p, msgs[i].data(), msgs[i].size(), kKey, kSecret, prior, i > 0 ? 1 : 0)) {
            bad = static_cast<int>(i);
        } else {
            ldns_rdf_deep_free(prior);
            prior = ldns_rdf_clone(ldns_rr_rdf(ldns_pkt_tsig(p), 3));
        }
        ldns_pkt_free(p);
    }
    ldns_rdf_deep_free(prior);
    return bad;
}

struct Zone {
    std::vector<std::vector<std::string>> txt;  // every TXT record's strings, in order
    std::vector<uint32_t> soa_serials;
    std::string first_type, last_type;
    std::vector<Report> reports;
    std::string from;
};

Zone read_zone(const std::vector<std::vector<uint8_t>>& msgs) {
    Zone z;
    for (const auto& m : msgs) {
        ldns_pkt* p = nullptr;
        EXPECT_EQ(ldns_wire2pkt(&p, m.data(), m.size()), LDNS_STATUS_OK);
        if (!p) continue;
        EXPECT_TRUE(ldns_pkt_qr(p));
        EXPECT_TRUE(ldns_pkt_aa(p));
        EXPECT_EQ(ldns_pkt_id(p), 0x4242);
        EXPECT_EQ(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
        ldns_rr_list* an = ldns_pkt_answer(p);
        for (size_t i = 0; i < ldns_rr_list_rr_count(an); ++i) {
            const ldns_rr* rr = ldns_rr_list_rr(an, i);
            std::string type = ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA   ? "SOA"
                               : ldns_rr_get_type(rr) == LDNS_RR_TYPE_TXT ? "TXT"
                                                                          : "?";
            if (z.first_type.empty()) z.first_type = type;
            z.last_type = type;
            if (type == "SOA") z.soa_serials.push_back(ldns_rdf2native_int32(ldns_rr_rdf(rr, 2)));
            if (type != "TXT") continue;
            std::vector<std::string> strings;
            for (size_t k = 0; k < ldns_rr_rd_count(rr); ++k) {
                const ldns_rdf* d = ldns_rr_rdf(rr, k);
                strings.emplace_back(reinterpret_cast<const char*>(ldns_rdf_data(d)) + 1, ldns_rdf_data(d)[0]);
            }
            z.txt.push_back(std::move(strings));
        }
        ldns_pkt_free(p);
    }
    std::string err;
    EXPECT_TRUE(decode(z.txt, z.from, z.reports, err)) << err;
    return z;
}

const Report* find(const Zone& z, const std::string& origin) {
    for (const auto& r : z.reports) {
        if (r.state.origin() == origin) return &r;
    }
    return nullptr;
}

// A stateDir holding the given state.json.
struct TempDir : test::TempDir {
    void write(const std::string& text) const { std::ofstream(*this / "state.json") << text; }
};

// A peer's origin "us/b" saved in a state file, as glbd writes it.
std::string us_origin(uint64_t version, const std::string& weight = "50", const std::string& ttl = "30") {
    return R"({"cluster":"us","instance":"b","version":)" + std::to_string(version) + R"(,"heartbeat":)" +
           std::to_string(version) + R"(,"overrides":{},"hosts":[{"host":"shop.glb.test","ttl":)" + ttl +
           R"(,"loadBalancing":{"weight":)" + weight +
           R"(,"geo":"US","defaultGeo":true},"endpoints":[{"target":"198.51.100.1","healthy":true}]}]})";
}

TEST(Transfer, LargeStateIsManyMessagesChainedAndEachVerifiesWithLdns) {
    Service svc(test::config_from(config()), nullptr);
    svc.set_own_hosts(hosts(3000));
    auto req = request("AXFR");
    auto msgs = serve(svc, *req);
    ASSERT_GE(msgs.size(), 4u) << "3000 hosts should need several messages";
    for (const auto& m : msgs) EXPECT_LT(m.size(), 65536u);
    EXPECT_EQ(first_unverified(msgs, req->mac), -1);
    Zone z = read_zone(msgs);
    EXPECT_EQ(z.first_type, "SOA");
    EXPECT_EQ(z.last_type, "SOA");
    ASSERT_EQ(z.soa_serials.size(), 2u);
    EXPECT_EQ(z.soa_serials[0], z.soa_serials[1]);
    EXPECT_EQ(z.from, "eu/a");
    const Report* own = find(z, "eu/a");
    ASSERT_TRUE(own);
    EXPECT_TRUE(own->has_data);
    auto want = hosts(3000);
    ASSERT_EQ(own->state.hosts.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        const auto& got = own->state.hosts[i];
        ASSERT_EQ(got.host, want[i].host);
        ASSERT_EQ(got.load_balancing, want[i].load_balancing) << got.host;
        ASSERT_EQ(got.endpoints.size(), 2u) << got.host;
        for (size_t k = 0; k < 2; ++k) {
            EXPECT_EQ(got.endpoints[k].target, want[i].endpoints[k].target);
            EXPECT_EQ(got.endpoints[k].healthy, want[i].endpoints[k].healthy);
        }
    }
}

TEST(Transfer, ReorderedOrTamperedMessageBreaksTheChain) {
    Service svc(test::config_from(config()), nullptr);
    svc.set_own_hosts(hosts(3000));
    auto req = request("AXFR");
    auto msgs = serve(svc, *req);
    ASSERT_GE(msgs.size(), 3u);
    auto swapped = msgs;
    std::swap(swapped[1], swapped[2]);
    EXPECT_EQ(first_unverified(swapped, req->mac), 1);
    auto tampered = msgs;
    tampered[2][tampered[2].size() / 2] ^= 0x01;
    EXPECT_EQ(first_unverified(tampered, req->mac), 2);
    // Another request's MAC: the first message does not verify.
    auto other = request("SOA");
    EXPECT_EQ(first_unverified(msgs, other->mac), 0);
}

TEST(Transfer, SoaQueryIsOneSignedMessageWithTheSerial) {
    Service svc(test::config_from(config()), nullptr);
    svc.set_own_hosts(hosts(10));
    auto req = request("SOA");
    auto msgs = serve(svc, *req);
    ASSERT_EQ(msgs.size(), 1u);
    EXPECT_EQ(first_unverified(msgs, req->mac), -1);
    Zone z = read_zone(msgs);
    EXPECT_EQ(z.soa_serials.size(), 1u);
    EXPECT_TRUE(z.txt.empty());
}

// IXFR with the serial the puller already has: every origin unchanged since is sent without data; a change
// since then is sent with it.
TEST(Transfer, IxfrFromAKnownGenerationCarriesOnlyWhatChanged) {
    TempDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(config(dir.path)), nullptr);
    svc.set_own_hosts(hosts(5));
    auto full = read_zone(serve(svc, *request("AXFR")));
    ASSERT_TRUE(find(full, "us/b") && find(full, "us/b")->has_data);
    uint32_t serial = full.soa_serials.at(0);

    auto same = read_zone(serve(svc, *request("IXFR", serial)));
    ASSERT_TRUE(find(same, "eu/a") && find(same, "us/b"));
    EXPECT_FALSE(find(same, "eu/a")->has_data);
    EXPECT_FALSE(find(same, "us/b")->has_data);
    EXPECT_TRUE(find(same, "eu/a")->state.hosts.empty());

    svc.set_own_hosts(hosts(6));  // our own data changes; us/b does not
    auto delta = read_zone(serve(svc, *request("IXFR", serial)));
    ASSERT_TRUE(find(delta, "eu/a") && find(delta, "us/b"));
    EXPECT_TRUE(find(delta, "eu/a")->has_data);
    EXPECT_EQ(find(delta, "eu/a")->state.hosts.size(), 6u);
    EXPECT_FALSE(find(delta, "us/b")->has_data);
    EXPECT_NE(delta.soa_serials.at(0), serial);

    // A serial from the future (a former incarnation of the server) gets everything.
    auto future = read_zone(serve(svc, *request("IXFR", delta.soa_serials.at(0) + 1000)));
    EXPECT_TRUE(find(future, "us/b")->has_data);
}

// "have=origin@version/incarnation" in the request: origins the puller holds at that version or newer, of
// the same incarnation, carry no data.
TEST(Transfer, VersionsThePullerHasAreSentWithoutData) {
    TempDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(config(dir.path)), nullptr);
    svc.set_own_hosts(hosts(2));
    auto z = read_zone(serve(svc, *request("AXFR", std::nullopt, {"us/b@1000"})));
    EXPECT_FALSE(find(z, "us/b")->has_data);
    EXPECT_TRUE(find(z, "eu/a")->has_data);
    auto older = read_zone(serve(svc, *request("AXFR", std::nullopt, {"us/b@999", "junk", "x@notanumber"})));
    EXPECT_TRUE(find(older, "us/b")->has_data);
    // A newer version of another life (the origin restarted with its clock set back) is no reason to skip.
    auto other_life = read_zone(serve(svc, *request("AXFR", std::nullopt, {"us/b@5000/7"})));
    EXPECT_TRUE(find(other_life, "us/b")->has_data);
}

// "relay=0": the puller asks the server for its own origin's data only; the others come as heartbeats
// (version and all), so that a puller that is behind on one of them knows to ask again for everything.
TEST(Transfer, RelayZeroSendsTheServersOwnOriginAndHeartbeatsOfTheRest) {
    TempDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(config(dir.path)), nullptr);
    svc.set_own_hosts(hosts(2));
    auto own_only = read_zone(serve(svc, *request("AXFR", std::nullopt, {}, false, false)));
    ASSERT_NE(find(own_only, "us/b"), nullptr);
    EXPECT_FALSE(find(own_only, "us/b")->has_data);
    EXPECT_EQ(find(own_only, "us/b")->state.version, 1000u);
    EXPECT_TRUE(find(own_only, "eu/a")->has_data);
    EXPECT_EQ(find(own_only, "eu/a")->state.hosts.size(), 2u);
    auto relayed = read_zone(serve(svc, *request("AXFR")));
    EXPECT_TRUE(find(relayed, "us/b")->has_data);
    // The pulling side's request says it only when asked to.
    auto says = [](bool relay) {
        auto w = sync_request(false, 7, {"have=us/b@1/1"}, relay);
        return std::string(w.begin(), w.end()).find("relay=0") != std::string::npos;
    };
    EXPECT_TRUE(says(false));
    EXPECT_FALSE(says(true));
}

TEST(Transfer, NotifyIsAnsweredSignedOverTheRequestMac) {
    Service svc(test::config_from(config()), nullptr);
    auto req = request("SOA", std::nullopt, {}, true);
    auto msgs = serve(svc, *req);
    ASSERT_EQ(msgs.size(), 1u);
    EXPECT_EQ(first_unverified(msgs, req->mac), -1);
    ldns_pkt* p = nullptr;
    ASSERT_EQ(ldns_wire2pkt(&p, msgs[0].data(), msgs[0].size()), LDNS_STATUS_OK);
    EXPECT_EQ(ldns_pkt_get_opcode(p), LDNS_PACKET_NOTIFY);
    EXPECT_TRUE(ldns_pkt_qr(p));
    EXPECT_EQ(ldns_pkt_get_rcode(p), LDNS_RCODE_NOERROR);
    ldns_pkt_free(p);
    EXPECT_EQ(svc.counters().notifies_received.load(), 1u);
}

// docs/sync.md shows a transfer: its records must decode as written, and say what the text says.
TEST(Transfer, DocsExampleDecodes) {
    std::ifstream in(std::string(GLBD_SOURCE_DIR) + "/docs/sync.md");
    ASSERT_TRUE(in);
    std::vector<std::vector<std::string>> records;
    std::string line;
    while (std::getline(in, line)) {
        if (line.find(" IN TXT ") == std::string::npos) continue;
        std::vector<std::string> strings;
        for (size_t p = line.find('"'); p != std::string::npos; p = line.find('"', line.find('"', p + 1) + 1)) {
            size_t q = line.find('"', p + 1);
            strings.push_back(line.substr(p + 1, q - p - 1));
        }
        records.push_back(strings);
    }
    ASSERT_GE(records.size(), 4u);
    std::string from, err;
    std::vector<Report> reports;
    ASSERT_TRUE(decode(records, from, reports, err)) << err;
    EXPECT_EQ(from, "eu/eu-0");
    ASSERT_EQ(reports.size(), 2u);
    const auto& eu = reports[0].state;
    EXPECT_EQ(eu.origin(), "eu/eu-0");
    ASSERT_EQ(eu.hosts.size(), 1u);
    EXPECT_EQ(eu.hosts[0].host, "shop.glb.example.com");
    ASSERT_TRUE(eu.hosts[0].load_balancing);
    EXPECT_EQ(eu.hosts[0].load_balancing->geo, "IE");
    ASSERT_EQ(eu.hosts[0].endpoints.size(), 2u);
    EXPECT_FALSE(eu.hosts[0].endpoints[1].healthy);
    ASSERT_EQ(eu.overrides.count("eu/192.0.2.11"), 1u);
    EXPECT_EQ(eu.overrides.at("eu/192.0.2.11").state, OverrideState::down);
    EXPECT_EQ(reports[1].state.origin(), "us/us-0");
    EXPECT_EQ(reports[1].age_ms, 102u);
    // Encoding the decoded reports gives back the same records.
    EXPECT_EQ(encode(from, reports), records);
}

// stateDir: a peer's origin is answered at once, our own overrides and version carry over.
// Our own saved state: its overrides survive, and a new life begins above the saved one, so that the
// versions may start again from the clock even when the last life's clock ran an hour ahead.
TEST(StateDir, RestoresPeersAndOwnOverridesAndBeginsANewLife) {
    TempDir dir;
    uint64_t future = now_ms() + 3'600'000;  // our last version, saved before a clock step back
    uint64_t saved_incarnation = now_ms() / 1000 + 3600;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + R"(,{"cluster":"eu","instance":"a","incarnation":)" +
              std::to_string(saved_incarnation) + R"(,"version":)" + std::to_string(future) +
              R"(,"heartbeat":1,"overrides":{"us/198.51.100.1":{"state":"down","at":77}},"hosts":[]}]})");
    Service svc(test::config_from(config(dir.path)), nullptr);
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
    s.location = conf::Coordinates{-33.8688f, 151.2093f};
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
    s.location = conf::Coordinates{53.3498f, -6.2603f};
    s.hosts.push_back(HostEntry{"app.glb.test",
                                30,
                                conf::LoadBalancing{50, "GEO-EU", true},
                                {{"192.0.2.1", true}, {"lb.example.net", false}, {"2001:db8::1", true}}});
    s.hosts.push_back(HostEntry{"*.w.glb.test", 60, std::nullopt, {}});
    s.overrides["us"] = OverrideEntry{OverrideState::down, 99};
    s.overrides["us/192.0.2.1"] = OverrideEntry{OverrideState::up, 100};
    std::stringstream file;
    write_state_file(file, {s, s}, 1);
    // Format 2: a header, and each host as a row.
    EXPECT_EQ(file.str().rfind(R"({"format":2,"saved":1,"origins":[)", 0), 0u) << file.str();
    EXPECT_NE(
        file.str().find(
            R"(["app.glb.test",30,[["192.0.2.1",true],["lb.example.net",false],["2001:db8::1",true]],[50,"GEO-EU",true]])"),
        std::string::npos)
        << file.str();
    auto back = read_state_file(file);
    ASSERT_EQ(back.size(), 2u);
    for (const auto& b : back) {
        EXPECT_EQ(b.cluster, s.cluster);
        EXPECT_EQ(b.instance, s.instance);
        EXPECT_EQ(b.version, s.version);
        EXPECT_EQ(b.heartbeat, s.heartbeat);
        EXPECT_EQ(b.incarnation, s.incarnation);
        EXPECT_EQ(b.location, s.location);
        EXPECT_EQ(b.hosts, s.hosts);
        EXPECT_EQ(b.overrides, s.overrides);
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
    EXPECT_NE(row(R"(["a.glb.test",60,[],[100,"IE",false],[]])").find("more than 4 items"), std::string::npos);
    EXPECT_NE(row(R"(["a.glb.test",60,{}])").find("not a list"), std::string::npos);
    EXPECT_NE(row(R"(7)").find("a host is not an object or a row"), std::string::npos);
    EXPECT_NE(error_of(R"({"format":3,"saved":1,"origins":[]})").find("format 3 is newer than this glbd reads (2)"),
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
        TempDir dir;
        dir.write(R"({"saved":1,"origins":[)" + us_origin(5, "10") + "," + origin + "]}");
        Service svc(test::config_from(config(dir.path)), nullptr);
        for (const auto& k : svc.known()) EXPECT_NE(k.state.cluster, "us") << origin;
    }
}

}  // namespace

namespace {

// A host with 5,000 endpoints: its endpoints go in several records (each far below a TXT record's 65,535
// bytes), every message verifies, and the puller gets the host whole.
TEST(Transfer, HostWithFiveThousandEndpointsArrivesWhole) {
    Service svc(test::config_from(config()), nullptr);
    HostEntry big{"big.glb.test", 60, conf::LoadBalancing{1, "IE", false}, {}};
    for (int i = 0; i < 5000; ++i) {
        big.endpoints.push_back(
            EndpointState{"2001:db8:" + std::to_string(i / 4096) + "::" + std::to_string(i % 4096 + 1), i % 7 != 0});
    }
    svc.set_own_hosts({big});
    auto req = request("AXFR");
    auto msgs = serve(svc, *req);
    EXPECT_EQ(first_unverified(msgs, req->mac), -1);
    for (const auto& m : msgs) EXPECT_LT(m.size(), 65536u);
    Zone z = read_zone(msgs);
    const Report* own = find(z, "eu/a");
    ASSERT_TRUE(own);
    ASSERT_EQ(own->state.hosts.size(), 1u);
    const auto& got = own->state.hosts[0];
    ASSERT_EQ(got.endpoints.size(), 5000u);
    for (size_t i = 0; i < 5000; ++i) {
        ASSERT_EQ(got.endpoints[i].target, big.endpoints[i].target);
        ASSERT_EQ(got.endpoints[i].healthy, big.endpoints[i].healthy);
    }
    EXPECT_GT(z.txt.size(), 5u);  // the host took several records
}

}  // namespace
