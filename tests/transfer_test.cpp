// The serving side of sync, judged from outside: requests are built and signed with ldns as a peer (or dig)
// would, every response message is parsed and its TSIG verified with ldns (RFC 8945 5.3.1 chaining), and
// the records are decoded with sync::decode.

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "sync/transfer/codec.hpp"
#include "sync/transfer/tsig.hpp"
#include "tests/dns_util.hpp"
#include "tests/sync_util.hpp"

#include <ldns/ldns.h>

using namespace glbd;
using namespace glbd::sync;
using glbd::test::hosts;
using glbd::test::StateDir;
using glbd::test::sync_config;
using glbd::test::us_origin;

namespace {

constexpr const char* kKey = "glb-sync.";
constexpr const char* kSecret = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";

struct Request {
    std::vector<uint8_t> wire;
    ldns_rdf* mac = nullptr;  // the request's MAC, which the first response message is signed over
    ~Request() { ldns_rdf_deep_free(mac); }
};

uint16_t last_request_id = 0x4242;  // the ID of the request made last, which its answer carries

// A signed request for `_glbd.`: AXFR, IXFR (with the serial the puller has), SOA, or a NOTIFY.
std::unique_ptr<Request> request(const char* qtype, std::optional<uint32_t> ixfr_serial = std::nullopt,
                                 const std::vector<std::string>& have = {}, bool notify = false, bool relay = true,
                                 bool parts = false) {
    ldns_pkt* p = ldns_pkt_new();
    ldns_pkt_set_id(p, ++last_request_id);  // each its own (as a peer's are random): one sent again is a replay
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
    if (!have.empty() || !relay || parts) {
        std::string text = relay ? "_glbd. 0 IN TXT" : "_glbd. 0 IN TXT \"relay=0\"";
        if (parts) text += " \"parts=outside\"";
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
    std::vector<std::string> owners;            // and their owners
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
        EXPECT_EQ(ldns_pkt_id(p), last_request_id);
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
            char* owner = ldns_rdf2str(ldns_rr_owner(rr));
            z.owners.emplace_back(owner ? owner : "");
            free(owner);
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

TEST(Transfer, LargeStateIsManyMessagesChainedAndEachVerifiesWithLdns) {
    Service svc(test::config_from(sync_config()), nullptr);
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

// Within a message, the owners after an origin's first name it with a pointer (RFC 1035 4.1.4), and a host's TTL
// of 60 is not written: `_glbd.` is spelt out a few times a message, not once a record, and ldns reads every owner
// as named (h<M>.o1._glbd.), in every message; the hosts arrive with their TTLs.
TEST(Transfer, OwnersPointToTheirOriginsNameAndTheUsualTtlIsLeftOut) {
    Service svc(test::config_from(sync_config()), nullptr);
    auto own = hosts(3000);
    own[7].ttl = 30;
    svc.set_own_hosts(own);
    auto msgs = serve(svc, *request("AXFR"));
    ASSERT_GE(msgs.size(), 4u);
    const std::string_view zone("\x05_glbd\0", 7);  // `_glbd.` on the wire
    size_t spelt = 0, bytes = 0;
    for (const auto& m : msgs) {
        std::string_view text(reinterpret_cast<const char*>(m.data()), m.size());
        for (size_t at = text.find(zone); at != std::string_view::npos; at = text.find(zone, at + 1)) ++spelt;
        bytes += m.size();
    }
    // The question, an SOA, the header and the origin's first owner: at most four a message.
    EXPECT_LE(spelt, 4 * msgs.size()) << spelt << " in " << msgs.size() << " messages";
    Zone z = read_zone(msgs);
    ASSERT_EQ(z.owners.size(), own.size() + 2);
    EXPECT_EQ(z.owners[0], "_glbd.");
    EXPECT_EQ(z.owners[1], "o1._glbd.");
    for (size_t i = 0; i < own.size(); ++i) ASSERT_EQ(z.owners[i + 2], "h" + std::to_string(i + 1) + ".o1._glbd.");
    std::vector<std::string> ttls;
    for (const auto& rec : z.txt) {
        for (const auto& str : rec) {
            if (str.rfind("ttl=", 0) == 0) ttls.push_back(str);
        }
    }
    EXPECT_EQ(ttls, std::vector<std::string>{"ttl=30"});
    const Report* got = find(z, "eu/a");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->state.hosts, own);
    std::cout << "3,000 hosts of two endpoints: " << bytes << " bytes in " << msgs.size() << " messages\n";
}

TEST(Transfer, ReorderedOrTamperedMessageBreaksTheChain) {
    Service svc(test::config_from(sync_config()), nullptr);
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
    Service svc(test::config_from(sync_config()), nullptr);
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
    StateDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(sync_config(dir.path)), nullptr);
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

// Each origin's data is encoded once per state and served as it is (TransferWriter): the records are the
// ones encode() writes for the same reports, string for string, named as docs/sync.md shows; a second
// transfer of the same state is the same, and one after a change carries the change.
TEST(Transfer, OwnersNameEachRecordAndEveryTransferCarriesTheStateAsEncoded) {
    StateDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(sync_config(dir.path)), nullptr);
    svc.set_own_hosts(hosts(3));
    ASSERT_TRUE(svc.set_override("eu/192.0.2.10", "down"));
    auto z = read_zone(serve(svc, *request("AXFR")));
    ASSERT_EQ(z.reports.size(), 2u);
    EXPECT_EQ(encode(z.from, z.reports), z.txt);
    ASSERT_EQ(z.owners.size(), z.txt.size());
    std::vector<std::string> expect{"_glbd."};
    int origin = 0, item = 0;
    for (size_t i = 1; i < z.txt.size(); ++i) {
        const std::string& first = z.txt[i][0];
        if (first.rfind("origin=", 0) == 0) {
            expect.push_back("o" + std::to_string(++origin) + "._glbd."), item = 0;
        } else {
            expect.push_back((first.rfind("host=", 0) == 0 ? "h" : "v") + std::to_string(++item) + ".o" +
                             std::to_string(origin) + "._glbd.");
        }
    }
    EXPECT_EQ(z.owners, expect);
    EXPECT_NE(std::find(z.owners.begin(), z.owners.end(), "v4.o1._glbd."), z.owners.end());  // eu/a's override

    auto again = read_zone(serve(svc, *request("AXFR")));
    EXPECT_EQ(again.owners, z.owners);
    ASSERT_EQ(again.txt.size(), z.txt.size());
    for (size_t i = 0; i < z.txt.size(); ++i) {
        if (z.txt[i][0].rfind("origin=", 0) != 0) {  // origin records differ: heartbeats move
            EXPECT_EQ(again.txt[i], z.txt[i]);
        }
    }
    svc.set_own_hosts(hosts(4, "b"));
    auto changed = read_zone(serve(svc, *request("AXFR")));
    ASSERT_NE(find(changed, "eu/a"), nullptr);
    EXPECT_EQ(find(changed, "eu/a")->state.hosts, hosts(4, "b"));
    EXPECT_EQ(encode(changed.from, changed.reports), changed.txt);
}

// "have=origin@version/incarnation" in the request: origins the puller holds at that version or newer, of
// the same incarnation, carry no data.
TEST(Transfer, VersionsThePullerHasAreSentWithoutData) {
    StateDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(sync_config(dir.path)), nullptr);
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
    StateDir dir;
    dir.write(R"({"saved":1,"origins":[)" + us_origin(1000) + "]}");
    Service svc(test::config_from(sync_config(dir.path)), nullptr);
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

// A change of this instance's outside verdicts alone ("a change costs the change"): a puller that says it
// reads reports in parts ("parts=outside") and holds the rest (this life, at the base version or later) is sent
// the verdicts alone; one that does not, or holds less, everything. 10,000 hosts.
TEST(Transfer, OutsideVerdictsAloneGoToAPullerThatHoldsTheRest) {
    Service svc(test::config_from(sync_config()), nullptr);
    svc.set_own_hosts(hosts(10000));
    auto bytes = [](const std::vector<std::vector<uint8_t>>& msgs) {
        size_t n = 0;
        for (const auto& m : msgs) n += m.size();
        return n;
    };
    auto whole = serve(svc, *request("AXFR"));
    const Report before = *find(read_zone(whole), "eu/a");
    const std::string held =
        "eu/a@" + std::to_string(before.state.version) + "/" + std::to_string(before.state.incarnation);
    OutsideMap verdicts{{"us", OutsideVerdicts{3, {{"app.glb.test", test::endpoint_of("192.0.2.7")}}}}};
    svc.set_own_outside(verdicts);
    auto ask = [&](const std::string& have, bool parts) {
        auto msgs = serve(svc, *request("AXFR", std::nullopt, {have}, false, true, parts));
        auto z = read_zone(msgs);
        EXPECT_NE(find(z, "eu/a"), nullptr);
        return std::pair{find(z, "eu/a") ? *find(z, "eu/a") : Report{}, bytes(msgs)};
    };
    auto [part, part_bytes] = ask(held, true);
    EXPECT_TRUE(part.has_data);
    EXPECT_TRUE(part.outside_only);
    EXPECT_TRUE(part.state.hosts.empty());
    EXPECT_EQ(part.state.base_version, before.state.version);
    EXPECT_GT(part.state.version, before.state.version);
    EXPECT_EQ(part.state.outside, verdicts);
    EXPECT_LT(part_bytes * 50, bytes(whole)) << part_bytes << " bytes against " << bytes(whole);
    RecordProperty("outside_alone_bytes", std::to_string(part_bytes));
    RecordProperty("whole_bytes", std::to_string(bytes(whole)));
    // Not said, or less held (an older version, another life): everything, the base version with it.
    for (auto [have, parts] :
         {std::pair{held, false},
          {"eu/a@" + std::to_string(before.state.version - 1) + "/" + std::to_string(before.state.incarnation), true},
          {"eu/a@" + std::to_string(before.state.version) + "/1", true}}) {
        auto [all, all_bytes] = ask(have, parts);
        EXPECT_FALSE(all.outside_only) << have;
        EXPECT_EQ(all.state.hosts.size(), 10000u) << have;
        EXPECT_EQ(all.state.outside, verdicts) << have;
        EXPECT_EQ(all.state.base_version, before.state.version) << have;
    }
    // Hosts changed since: the base moves, and what was held is not enough any more.
    svc.set_own_hosts(hosts(9999));
    auto [after, after_bytes] = ask(held, true);
    EXPECT_FALSE(after.outside_only);
    EXPECT_EQ(after.state.hosts.size(), 9999u);
}

TEST(Transfer, NotifyIsAnsweredSignedOverTheRequestMac) {
    Service svc(test::config_from(sync_config()), nullptr);
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

// A signed request sent again as it was (a NOTIFY captured on the wire, replayed from other addresses) is
// NOTAUTH and counted; on the old code it was answered every time, and each address was trusted as a peer.
TEST(Transfer, AReplayedSignedRequestIsRefused) {
    Service svc(test::config_from(sync_config()), nullptr);
    auto req = request("SOA", std::nullopt, {}, true);
    std::vector<std::vector<uint8_t>> out;
    ASSERT_EQ(svc.handle(req->wire.data(), req->wire.size(), test::address_of("127.0.0.9"), out),
              Service::Handled::answered);
    for (const char* other : {"127.0.0.77", "127.0.0.78", "127.0.0.9"}) {
        out.clear();
        EXPECT_EQ(svc.handle(req->wire.data(), req->wire.size(), test::address_of(other), out),
                  Service::Handled::rejected)
            << other;
        ASSERT_EQ(out.size(), 1u);
        ldns_pkt* p = nullptr;
        ASSERT_EQ(ldns_wire2pkt(&p, out[0].data(), out[0].size()), LDNS_STATUS_OK);
        EXPECT_EQ(ldns_pkt_get_rcode(p), LDNS_RCODE_NOTAUTH);
        ldns_pkt_free(p);
    }
    EXPECT_EQ(svc.counters().rejected_replay.load(), 3u);
    EXPECT_EQ(svc.counters().notifies_received.load(), 1u);
}

// Two requests alike in all else differ beyond their ID (a random "nonce=" string), so that signed in the same
// second they never share a MAC, which a server refuses as a replay; a server reads past the nonce.
TEST(SyncRequest, TwoAlikeDifferBeyondTheirIdAndReadTheSame) {
    for (bool notify : {false, true}) {
        auto one = sync_request(notify, 7, {"have=us/b@1/1"}, false);
        auto two = sync_request(notify, 7, {"have=us/b@1/1"}, false);
        ASSERT_EQ(one.size(), two.size());
        EXPECT_FALSE(std::equal(one.begin() + 2, one.end(), two.begin() + 2)) << "alike but for the ID";
        SyncRequest a, b;
        ASSERT_TRUE(parse_sync_request(one.data(), one.size(), a));
        ASSERT_TRUE(parse_sync_request(two.data(), two.size(), b));
        EXPECT_EQ(a.known_serial, b.known_serial);
        EXPECT_EQ(a.own_only, !notify);
        EXPECT_EQ(a.takes_parts, !notify);
        EXPECT_EQ(a.have.size(), notify ? 0u : 1u);
        EXPECT_EQ(b.have.size(), a.have.size());
    }
}

// Requests as glbd makes them, alike in all else and signed in the same second, are each answered: none is taken
// for a replay of another (a fleet's NOTIFYs are all alike, and so are pulls holding the same versions).
TEST(Transfer, RequestsAlikeSignedInOneSecondAreNoReplays) {
    Service svc(test::config_from(sync_config()), nullptr);
    const auto key = tsig::Key::from("glb-sync", kSecret);
    const auto now = static_cast<uint64_t>(std::time(nullptr));
    for (bool notify : {true, false}) {
        for (int i = 0; i < 1000; ++i) {  // by their random IDs alone, two of 1,000 are alike 99.95 % of the time
            auto wire = sync_request(notify, 0, {});
            tsig::sign(wire, key, "", false, now);
            std::vector<std::vector<uint8_t>> out;
            ASSERT_EQ(svc.handle(wire.data(), wire.size(), test::address_of("127.0.0.9"), out),
                      Service::Handled::answered)
                << (notify ? "NOTIFY " : "pull ") << i;
        }
    }
    EXPECT_EQ(svc.counters().rejected_replay.load(), 0u);
}

// Only a configured member's address earns the trust that keeps its connections (a transfer included); any
// other holder of the key is answered but not trusted.
TEST(Transfer, OnlyAMembersAddressIsTrusted) {
    Service svc(test::config_from(sync_config() + "  members: [{address: \"127.0.0.9:5399\"}]\n"), nullptr);
    std::vector<std::vector<uint8_t>> out;
    auto axfr = request("AXFR");
    MoreMessages more;
    EXPECT_EQ(svc.handle(axfr->wire.data(), axfr->wire.size(), test::address_of("127.0.0.9"), out, more),
              Service::Handled::answered_member);
    auto notify = request("SOA", std::nullopt, {}, true);
    out.clear();
    EXPECT_EQ(svc.handle(notify->wire.data(), notify->wire.size(), test::address_of("127.0.0.10"), out),
              Service::Handled::answered);
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

}  // namespace

namespace {

// A host with 5,000 endpoints: its endpoints go in several records (each far below a TXT record's 65,535
// bytes), every message verifies, and the puller gets the host whole.
TEST(Transfer, HostWithFiveThousandEndpointsArrivesWhole) {
    Service svc(test::config_from(sync_config()), nullptr);
    HostEntry big{"big.glb.test", 60, model::LoadBalancing{1, "IE", false}, {}};
    for (int i = 0; i < 5000; ++i) {
        big.endpoints.push_back(EndpointState{
            test::endpoint_of("2001:db8:" + std::to_string(i / 4096) + "::" + std::to_string(i % 4096 + 1)),
            i % 7 != 0});
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
