// Signed answers (issue 38, parts 2 and 3): with DO, every RRset answer() gives from a signed zone carries the
// RRSIGs its keys make, and ldns verifies each with the zone's DNSKEYs: static data, the apex's SOA, NS and
// DNSKEY, load-balanced answers for clients in two geos, a fail-open answer, a CNAME to a hostname endpoint
// and a simple host. The DNSKEY RRset is signed by the KSK, every other by the ZSK. Without DO, no RRSIG.
// Denial is compact (RFC 9824): one NSEC at the name asked, its next name \000.name, its bitmap the name's
// types (NXNAME for a name that does not exist, then NOERROR unless the query set CO); a wildcard's answer is
// signed at the name asked.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "resolver/dnssec/keys.hpp"
#include "resolver/resolver.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

using namespace glbd;
using namespace glbd::test;
namespace fs = std::filesystem;

namespace {

std::string read(const std::string& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class SignedAnswers : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/glbd-signed-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        std::string error;
        ksk_ = dnssec::generate("glb.test", dnssec::kEd25519, dir_, error);
        ASSERT_FALSE(ksk_.empty()) << error;
        // A ZSK of the same algorithm (RFC 4035 2.2: each RRset signed with every algorithm of the DNSKEY
        // set): an Ed25519 pair with flags 256 (its tag changes with the flags, so the files are renamed).
        std::string made = dnssec::generate("glb.test", dnssec::kEd25519, dir_, error);
        ASSERT_FALSE(made.empty()) << error;
        std::string pub = read(made + ".key");
        pub.replace(pub.find("DNSKEY 257"), 10, "DNSKEY 256");
        zsk_ = dir_ + "/zsk";
        std::ofstream(zsk_ + ".key") << pub;
        fs::rename(made + ".private", zsk_ + ".private");
        fs::remove(made + ".key");
        keys_ = ldns_rr_list_new();
        for (const auto& k : {ksk_, zsk_}) {
            std::string text = read(k + ".key");
            std::string record = text.substr(text.find("\nglb.test") + 1);  // after the comment lines
            ldns_rr* rr = nullptr;
            ASSERT_EQ(ldns_rr_new_frm_str(&rr, record.c_str(), 0, nullptr, nullptr), LDNS_STATUS_OK) << record;
            ldns_rr_list_push_rr(keys_, rr);
        }
    }
    void TearDown() override {
        ldns_rr_list_deep_free(keys_);
        fs::remove_all(dir_);
    }
    conf::Config config() const {
        return config_from(std::string(kGlbTestConfig) +
                           "      www IN TXT \"hello\"\n      *.wild IN TXT \"wild\"\n      a.b.deep IN TXT \"deep\"\n"
                           "      sub IN NS ns.sub.glb.test.\n      ns.sub IN A 192.0.2.99\n    dnssec: {keys: [" +
                           ksk_ + ", " + zsk_ + "]}\n");
    }
    // Each RRset of `section` with its RRSIGs, verified by ldns against the zone's keys; the tags that signed.
    struct Verdict {
        size_t sets = 0, verified = 0;
        std::vector<std::string> failures;
        std::vector<std::pair<uint16_t, uint16_t>> signed_by;  // (type covered, key tag)
    };
    Verdict verify(const uint8_t* wire, size_t len, ldns_pkt_section which) const {
        Verdict v;
        ldns_pkt* pkt = nullptr;
        if (ldns_wire2pkt(&pkt, wire, len) != LDNS_STATUS_OK) {
            v.failures.push_back("not a message");
            return v;
        }
        ldns_rr_list* rrs = ldns_pkt_get_section_clone(pkt, which);
        for (size_t i = 0; i < ldns_rr_list_rr_count(rrs); ++i) {
            ldns_rr* rr = ldns_rr_list_rr(rrs, i);
            if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_RRSIG) continue;
            auto covered = static_cast<uint16_t>(ldns_rdf2rr_type(ldns_rr_rrsig_typecovered(rr)));
            v.signed_by.emplace_back(covered, ldns_rdf2native_int16(ldns_rr_rrsig_keytag(rr)));
        }
        for (size_t i = 0; i < ldns_rr_list_rr_count(rrs); ++i) {
            ldns_rr* rr = ldns_rr_list_rr(rrs, i);
            ldns_rr_type t = ldns_rr_get_type(rr);
            if (t == LDNS_RR_TYPE_RRSIG || (i > 0 && ldns_rr_get_type(ldns_rr_list_rr(rrs, i - 1)) == t)) continue;
            ldns_rr_list* set = ldns_pkt_rr_list_by_name_and_type(pkt, ldns_rr_owner(rr), t, which);
            ldns_rr_list* sigs = ldns_pkt_rr_list_by_name_and_type(pkt, ldns_rr_owner(rr), LDNS_RR_TYPE_RRSIG, which);
            ++v.sets;
            ldns_rr_list* good = ldns_rr_list_new();
            ldns_status st = sigs ? ldns_verify(set, sigs, keys_, good) : LDNS_STATUS_CRYPTO_NO_RRSIG;
            if (st == LDNS_STATUS_OK) {
                ++v.verified;
            } else {
                v.failures.push_back("type " + std::to_string(t) + ": " + ldns_get_errorstr_by_id(st));
            }
            ldns_rr_list_free(good);
            ldns_rr_list_deep_free(set);
            ldns_rr_list_deep_free(sigs);
        }
        ldns_rr_list_deep_free(rrs);
        ldns_pkt_free(pkt);
        return v;
    }
    // The answer to `name`/`type` from 192.0.2.200 over UDP, kept in out_ (out_len_ bytes); `lines` gets the
    // records of `section` (0 answer, 1 authority), one a line.
    Parsed ask_raw(const Snapshot& snap, const std::string& name, uint16_t type, const QueryOpts& opts, int section,
                   std::string& lines) {
        auto q = make_query(name, type, opts);
        Client client;
        client.address = address_of("192.0.2.200");
        out_len_ = answer(snap, q.data(), q.size(), client, out_, sizeof out_);
        Parsed p = parse(out_, out_len_);
        lines.clear();
        for (const auto& rr : section == 0 ? p.answer : p.authority) lines += rr + "\n";
        return p;
    }
    uint16_t tag(const std::string& path) const {
        std::string error;
        auto k = dnssec::Key::load(path, "glb.test", error);
        EXPECT_NE(k, nullptr) << error;
        return k ? k->tag() : 0;
    }

    std::string dir_, ksk_, zsk_;
    ldns_rr_list* keys_ = nullptr;
    uint8_t out_[4096];
    size_t out_len_ = 0;
};

TEST_F(SignedAnswers, EveryRRsetVerifiesWithLdns) {
    ViewBuilder view;
    view.add("shop.glb.test", {TestEntry{"ie", "IE", 100, true, {{"10.0.0.1", true}, {"2001:db8::1", true}}},
                               TestEntry{"oc", "GEO-OC", 100, false, {{"10.0.0.2", true}, {"10.0.0.3", true}}}});
    view.add("down.glb.test", TestEntry{"ie", "IE", 100, true, {{"10.0.1.1", false}, {"10.0.1.2", false}}});
    view.add("lb.glb.test", TestEntry{"ie", "IE", 100, true, {{"LB-1.elb.Example.net", true}}});
    view.add("simple.glb.test", TestEntry{"ie", "", 100, false, {{"10.1.0.1", true}}, true, false, std::nullopt, 30});
    auto snap = view.snapshot(config());
    const uint16_t ksk = tag(ksk_), zsk = tag(zsk_);

    QueryOpts ie, au, plain;
    ie.do_bit = au.do_bit = true;
    ie.payload = au.payload = 4096;
    ie.ecs = ecs_payload("10.1.0.0/16");
    au.ecs = ecs_payload("10.2.0.0/24");
    struct Case {
        std::string name;
        uint16_t type;
        QueryOpts opts;
        std::vector<std::string> want;  // in the answer section
    };
    for (const Case& c : std::vector<Case>{
             {"shop.glb.test", 1, ie, {"10.0.0.1"}},
             {"shop.glb.test", 1, au, {"10.0.0.2", "10.0.0.3"}},
             {"shop.glb.test", 28, ie, {"2001:db8::1"}},
             {"down.glb.test", 1, ie, {"10.0.1.1", "10.0.1.2"}},  // fail-open, TTL 10 under the original 60
             {"lb.glb.test", 1, ie, {"lb-1.elb.example.net."}},
             {"simple.glb.test", 1, ie, {"10.1.0.1"}},
             {"static.glb.test", 1, ie, {"192.0.2.1"}},
             {"www.glb.test", 16, ie, {"hello"}},
             {"glb.test", 6, ie, {"SOA"}},
             {"glb.test", 2, ie, {"ns1.glb.test."}},
             {"glb.test", 48, ie, {"DNSKEY"}},
             {"glb.test", 59, ie, {" IN CDS " + std::to_string(ksk) + " 15 2 "}},  // the KSK's alone
             {"glb.test", 60, ie, {" IN CDNSKEY 257 3 15 "}},
         }) {
        std::string what = std::string(c.name) + " type " + std::to_string(c.type), all;
        ask_raw(*snap, c.name, c.type, c.opts, 0, all);
        for (const auto& w : c.want) EXPECT_NE(all.find(w), std::string::npos) << what << ":\n" << all;
        Verdict v = verify(out_, out_len_, LDNS_SECTION_ANSWER);
        EXPECT_EQ(v.sets, 1u) << what << ":\n" << all;
        EXPECT_EQ(v.verified, v.sets) << what << ": " << (v.failures.empty() ? "" : v.failures[0]) << "\n" << all;
        ASSERT_EQ(v.signed_by.size(), 1u) << what << ":\n" << all;
        EXPECT_EQ(v.signed_by[0].second, c.type == 48 || c.type == 59 || c.type == 60 ? ksk : zsk) << what;
        if (c.type == 59 || c.type == 60) {
            EXPECT_EQ(all.find(" 256 3 "), std::string::npos) << what << ": the ZSK is not for the parent\n" << all;
            EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 2) << what << ": one record and its RRSIG\n" << all;
        }
        if (std::string(c.name) == "down.glb.test") {
            EXPECT_NE(all.find(" 10 IN A "), std::string::npos) << all;
        }

        // Without DO: the same answer, no signature.
        plain.ecs = c.opts.ecs;
        Parsed u = ask_raw(*snap, c.name, c.type, plain, 0, all);
        for (const auto* section : {&u.answer, &u.authority, &u.additional}) {
            for (const auto& rr : *section) EXPECT_EQ(rr.find(" IN RRSIG "), std::string::npos) << what << ": " << rr;
        }
    }
}

// Compact denial: each negative answer's authority section (SOA, NSEC, their RRSIGs) verifies, and its NSEC
// covers the name alone and lists what the name has.
TEST_F(SignedAnswers, DenialIsCompactAndVerifies) {
    ViewBuilder view;
    view.add("shop.glb.test", TestEntry{"ie", "IE", 100, true, {{"10.0.0.1", true}}});
    view.add("*.apps.glb.test", TestEntry{"ie", "IE", 100, true, {{"10.0.2.1", true}, {"10.0.2.2", true}}});
    auto snap = view.snapshot(config());
    QueryOpts dnssec, co, plain;
    dnssec.do_bit = co.do_bit = co.co_bit = true;
    dnssec.payload = co.payload = 4096;
    struct Case {
        const char* name;
        uint16_t type;
        QueryOpts opts;
        uint8_t rcode;
        std::string nsec;  // the NSEC record as parse() prints it, "" for none
    };
    for (const Case& c : std::vector<Case>{
             {"nope.glb.test", 1, dnssec, 0, "nope.glb.test. 60 IN NSEC \\000.nope.glb.test. RRSIG NSEC TYPE128"},
             {"Nope.GLB.test", 1, co, 3, "\\000.nope.glb.test. RRSIG NSEC TYPE128"},  // CO: NXDOMAIN
             {"static.glb.test", 16, dnssec, 0, "static.glb.test. 60 IN NSEC \\000.static.glb.test. A RRSIG NSEC"},
             {"shop.glb.test", 28, dnssec, 0, "shop.glb.test. 60 IN NSEC \\000.shop.glb.test. A RRSIG NSEC"},
             {"shop.glb.test", 16, dnssec, 0, "shop.glb.test. 60 IN NSEC \\000.shop.glb.test. A RRSIG NSEC"},
             {"b.deep.glb.test", 1, dnssec, 0, "b.deep.glb.test. 60 IN NSEC \\000.b.deep.glb.test. RRSIG NSEC"},
             {"glb.test", 16, dnssec, 0, "glb.test. 60 IN NSEC \\000.glb.test. NS SOA RRSIG NSEC DNSKEY CDS CDNSKEY"},
             {"sub.glb.test", 43, dnssec, 0, "sub.glb.test. 60 IN NSEC \\000.sub.glb.test. NS RRSIG NSEC"},
             {"x.wild.glb.test", 1, dnssec, 0, "x.wild.glb.test. 60 IN NSEC \\000.x.wild.glb.test. TXT RRSIG NSEC"},
             {"x.apps.glb.test", 28, dnssec, 0, "x.apps.glb.test. 60 IN NSEC \\000.x.apps.glb.test. A RRSIG NSEC"},
             {"nope.glb.test", 1, plain, 3, ""},
         }) {
        std::string what = std::string(c.name) + " type " + std::to_string(c.type), all;
        Parsed p = ask_raw(*snap, c.name, c.type, c.opts, 1, all);
        const uint8_t* out = out_;
        const size_t n = out_len_;
        EXPECT_EQ(p.rcode, c.rcode) << what;
        EXPECT_TRUE(p.answer.empty()) << what << ": " << p.answer[0];
        // The OPT record (no options here) is the message's last 11 bytes; its flags echo CO only when asked.
        ASSERT_GT(n, 11u);
        const uint16_t flags = static_cast<uint16_t>(out[n - 4] << 8 | out[n - 3]);
        EXPECT_EQ((flags & 0x4000) != 0, c.opts.co_bit) << what;
        if (c.nsec.empty()) {
            EXPECT_EQ(all.find(" IN NSEC "), std::string::npos) << what << ":\n" << all;
            EXPECT_EQ(all.find(" IN RRSIG "), std::string::npos) << what << ":\n" << all;
            continue;
        }
        EXPECT_NE(all.find(c.nsec + " \n"), std::string::npos) << what << ":\n"
                                                               << all;  // the whole bitmap (ldns ends it with a space)
        Verdict v = verify(out, n, LDNS_SECTION_AUTHORITY);
        EXPECT_EQ(v.sets, 2u) << what << ":\n" << all;  // SOA and NSEC
        EXPECT_EQ(v.verified, v.sets) << what << ": " << (v.failures.empty() ? "" : v.failures[0]) << "\n" << all;
    }

    // A referral proves that the child is not signed: the NSEC at the cut, without DS, beside the NS.
    std::string all;
    ask_raw(*snap, "www.sub.glb.test", 1, dnssec, 1, all);
    EXPECT_NE(all.find("sub.glb.test. 60 IN NSEC \\000.sub.glb.test. NS RRSIG NSEC"), std::string::npos) << all;
    Verdict v = verify(out_, out_len_, LDNS_SECTION_AUTHORITY);
    EXPECT_EQ(v.verified, 1u) << all;  // the NSEC (the child's NS are not signed)

    // A wildcard's answer is signed at the name asked: labels are the name's, and it verifies there.
    for (const char* name : {"x.wild.glb.test", "y.x.apps.glb.test"}) {
        ask_raw(*snap, name, std::string(name).find("wild") != std::string::npos ? 16 : 1, dnssec, 0, all);
        const std::string labels = std::string(name).find("wild") != std::string::npos ? " 4 " : " 5 ";
        EXPECT_NE(all.find(labels), std::string::npos) << name << ":\n" << all;
        v = verify(out_, out_len_, LDNS_SECTION_ANSWER);
        EXPECT_EQ(v.sets, 1u) << name << ":\n" << all;
        EXPECT_EQ(v.verified, 1u) << name << ": " << (v.failures.empty() ? "" : v.failures[0]) << "\n" << all;
    }
}

}  // namespace

namespace {

// Other keys in a reload: every host is built (and signed) again, none keeps the old keys' signatures.
TEST_F(SignedAnswers, OtherKeysSignEveryHostAgain) {
    ViewBuilder view;
    view.add("shop.glb.test", TestEntry{"ie", "IE", 100, true, {{"10.0.0.1", true}}});
    std::string error;
    std::string other = dnssec::generate("glb.test", dnssec::kEcdsaP256Sha256, dir_, error);
    ASSERT_FALSE(other.empty()) << error;
    auto with = [&](const std::string& key) {
        return config_from(std::string(kGlbTestConfig) + "    dnssec: {keys: [" + key + "]}\n");
    };
    SnapshotBuilder builder;
    auto shared = share(view.view());
    auto tag_of_answer = [&](const Snapshot& snap) {
        QueryOpts o;
        o.do_bit = true;
        std::string all;
        for (const auto& rr : ask_raw(snap, "shop.glb.test", 1, o, 0, all).answer) {
            std::smatch m;
            if (std::regex_search(rr, m, std::regex(" IN RRSIG A 1[35] \\d+ \\d+ \\d+ \\d+ (\\d+) ")))
                return std::stoi(m[1]);
        }
        return -1;
    };
    auto first = builder.build(with(ksk_), shared, nullptr, 1);
    EXPECT_EQ(tag_of_answer(*first), tag(ksk_));
    auto again = builder.build(with(ksk_), shared, nullptr, 2);
    EXPECT_FALSE(builder.last().full);  // the same keys: nothing to build
    auto swapped = builder.build(with(other), shared, nullptr, 3);
    EXPECT_TRUE(builder.last().full);
    EXPECT_EQ(tag_of_answer(*swapped), tag(other));
}

}  // namespace

namespace {

// Every RRSIG RDATA a snapshot's hosts carry, in the stored form.
std::set<std::string> host_signatures(const Snapshot& snap) {
    std::set<std::string> out;
    for (const auto& b : snap.hosts) {
        for (const auto& set : b->sigs.sets) {
            HostSignatures::each(
                std::string_view(b->sigs.bytes).substr(set.at, set.len),
                [&](const uint8_t* rd, size_t len) { out.emplace(reinterpret_cast<const char*>(rd), len); });
        }
    }
    return out;
}

// A start answers before it signs (SnapshotBuilder::defer_first_signing): the first build signs no host and
// is due to be signed again at once; its answers (an address set, a CNAME) are signed as they are given and
// verify, and its denials list the host's types. The next build signs every set.
TEST_F(SignedAnswers, AStartAnswersBeforeItSigns) {
    ViewBuilder view;
    view.add("shop.glb.test", {TestEntry{"ie", "IE", 100, true, {{"10.0.0.1", true}}},
                               TestEntry{"us", "US", 100, false, {{"10.0.0.2", true}}}});
    view.add("lb.glb.test", TestEntry{"ie", "IE", 100, true, {{"LB-1.elb.Example.net", true}}});
    QueryOpts o;
    o.do_bit = true;
    o.payload = 4096;
    auto answers_verify = [&](const Snapshot& snap) {
        for (const char* name : {"shop.glb.test", "lb.glb.test"}) {
            std::string lines;
            ask_raw(snap, name, 1, o, 0, lines);
            Verdict v = verify(out_, out_len_, LDNS_SECTION_ANSWER);
            EXPECT_EQ(v.sets, 1u) << name << "\n" << lines;
            EXPECT_EQ(v.verified, v.sets) << name << ": " << (v.failures.empty() ? "" : v.failures[0]) << "\n" << lines;
        }
        std::string lines;
        ask_raw(snap, "shop.glb.test", 28, o, 1, lines);  // NODATA: the NSEC lists A
        EXPECT_NE(lines.find("shop.glb.test. 60 IN NSEC \\000.shop.glb.test. A RRSIG NSEC \n"), std::string::npos)
            << lines;
        Verdict v = verify(out_, out_len_, LDNS_SECTION_AUTHORITY);
        EXPECT_EQ(v.verified, 2u) << lines;  // SOA and NSEC
    };
    SnapshotBuilder builder;
    builder.defer_first_signing(true);
    auto first = builder.build(config(), share(view.view()), nullptr, 1);
    EXPECT_EQ(builder.last().signed_sets.made, 0u);
    EXPECT_EQ(builder.last().signed_sets.deferred, 2u);
    EXPECT_TRUE(host_signatures(*first).empty());
    EXPECT_EQ(first->resign_at, first->signed_at);  // due at once
    answers_verify(*first);

    auto second = builder.build(config(), share(view.view()), nullptr, 2);
    EXPECT_TRUE(builder.last().full);
    EXPECT_EQ(builder.last().signed_sets.deferred, 0u);
    EXPECT_EQ(builder.last().signed_sets.made, 3u);  // shop's IE and US sets, lb's CNAME
    EXPECT_EQ(host_signatures(*second).size(), 3u);
    EXPECT_GT(second->resign_at, second->signed_at);
    answers_verify(*second);
    // Not deferred again: a change signs only its sets.
    view.add("new.glb.test", TestEntry{"ie", "IE", 100, true, {{"10.0.0.9", true}}});
    builder.build(config(), share(view.view()), nullptr, 3);
    EXPECT_EQ(builder.last().signed_sets.deferred, 0u);
    EXPECT_EQ(builder.last().signed_sets.made, 1u);
}

// A host built again keeps the signatures of the sets a change left alone, and signs the rest anew. ECDSA
// signs differently each time (a random nonce), so an equal RRSIG is one kept, not one made again. A full
// build with the same keys and validity (here: the answers counted from now on) keeps every one; another
// validity keeps none. The answers verify throughout.
TEST_F(SignedAnswers, AChangeSignsOnlyTheSetsItChanged) {
    auto entries = [](const std::string& us_address) {
        return std::vector<TestEntry>{TestEntry{"ie", "IE", 100, true, {{"10.0.0.1", true}}},
                                      TestEntry{"us", "US", 100, false, {{us_address, true}}}};
    };
    ViewBuilder was, now;
    was.add("shop.glb.test", entries("10.0.0.2")).add("api.glb.test", entries("10.0.0.9"));
    now.add("shop.glb.test", entries("10.0.0.3")).add("api.glb.test", entries("10.0.0.9"));
    auto with = [&](const std::string& validity) {
        return config_from(std::string(kGlbTestConfig) + "    dnssec: {keys: [" + ksk_ +
                           "], signatureValidity: " + validity + "}\n");
    };
    auto answers_verify = [&](const Snapshot& snap) {
        QueryOpts o;
        o.do_bit = true;
        std::string lines;
        for (const char* name : {"shop.glb.test", "api.glb.test"}) {
            ask_raw(snap, name, 1, o, 0, lines);
            Verdict v = verify(out_, out_len_, LDNS_SECTION_ANSWER);
            EXPECT_EQ(v.sets, 1u) << name << "\n" << lines;
            EXPECT_EQ(v.verified, v.sets) << name << "\n" << lines;
        }
    };
    SnapshotBuilder builder;
    auto first = builder.build(with("7d"), share(was.view()), nullptr, 1);
    EXPECT_EQ(builder.last().signed_sets.kept, 0u);
    // Per host, the sets its picks answer with: IE's endpoint and US's (each once, whichever groups name it).
    EXPECT_EQ(builder.last().signed_sets.made, 4u);
    const auto before = host_signatures(*first);
    answers_verify(*first);

    auto changed = builder.build(with("7d"), share(now.view()), nullptr, 2);
    ASSERT_FALSE(builder.last().full);
    EXPECT_EQ(builder.last().built, 1u);  // shop alone
    const auto after = host_signatures(*changed);
    std::vector<std::string> kept, made;
    for (const auto& sig : after) (before.count(sig) ? kept : made).push_back(sig);
    // shop's set of 10.0.0.3 is new; its set of 10.0.0.1 kept its RRSIG, and api (shared, not built) its two.
    EXPECT_EQ(builder.last().signed_sets.made, 1u);
    EXPECT_EQ(builder.last().signed_sets.kept, 1u);
    EXPECT_EQ(made.size(), 1u);
    EXPECT_EQ(kept.size(), 3u);
    answers_verify(*changed);

    auto counted = builder.build(with("7d"), share(now.view()), nullptr, 3,
                                 [](std::string_view, std::span<const std::string_view>, std::span<uint32_t> ids) {
                                     std::fill(ids.begin(), ids.end(), 0u);
                                 });
    ASSERT_TRUE(builder.last().full);
    EXPECT_EQ(builder.last().built, 2u);
    EXPECT_EQ(builder.last().signed_sets.made, 0u);
    EXPECT_EQ(host_signatures(*counted), after);
    answers_verify(*counted);

    auto other = builder.build(with("6d"), share(now.view()), nullptr, 4);
    ASSERT_TRUE(builder.last().full);
    EXPECT_EQ(builder.last().signed_sets.kept, 0u);
    for (const auto& sig : host_signatures(*other)) EXPECT_EQ(after.count(sig), 0u);
    answers_verify(*other);
}

}  // namespace
