// DNSSEC keys (resolver/dnssec/keys.hpp) and zones[].dnssec: pairs written by glbd load back with their tag
// and DS; every bad pair is refused with the file named and no key material shown. (tests/system/
// dnssec_keys.sh checks the same files against BIND's and ldns's tools.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "conf/config.hpp"
#include "resolver/dnssec/keys.hpp"
#include "resolver/dnssec/rollover.hpp"
#include "resolver/dnssec/sign.hpp"
#include "resolver/wire/text.hpp"

#include <openssl/evp.h>

#include <ldns/ldns.h>  // last: it defines a `bool` macro

using namespace glbd;
namespace fs = std::filesystem;

namespace {

class DnssecKeys : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/glbd-keys-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string make(uint8_t algorithm, const std::string& zone = "glb.example.com") {
        std::string error;
        std::string path = dnssec::generate(zone, algorithm, dir_, error);
        EXPECT_FALSE(path.empty()) << error;
        return path;
    }
    static std::string read(const std::string& file) {
        std::ifstream in(file);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    static void write(const std::string& file, const std::string& text) { std::ofstream(file) << text; }
    // The base64 of the private key, which no message may show.
    static std::string secret_of(const std::string& path) {
        std::smatch m;
        std::string text = read(path + ".private");
        EXPECT_TRUE(std::regex_search(text, m, std::regex("PrivateKey: (\\S+)")));
        return m[1].str();
    }
    // Loading fails with a message holding `want` and not the private key.
    void refused(const std::string& path, const std::string& zone, const std::string& want, const std::string& secret) {
        std::string error;
        EXPECT_EQ(dnssec::Key::load(path, zone, error), nullptr) << path;
        EXPECT_NE(error.find(want), std::string::npos) << error;
        if (!secret.empty()) {
            EXPECT_EQ(error.find(secret), std::string::npos) << error;
        }
    }

    std::string dir_;
};

TEST_F(DnssecKeys, WrittenPairsLoadBack) {
    for (uint8_t alg : {dnssec::kEcdsaP256Sha256, dnssec::kEd25519}) {
        std::string path = make(alg);
        std::smatch m;
        ASSERT_TRUE(std::regex_match(path, m, std::regex(".*/Kglb\\.example\\.com\\.\\+(\\d{3})\\+(\\d{5})"))) << path;
        EXPECT_EQ(std::stoi(m[1].str()), alg);
        struct stat st {};
        ASSERT_EQ(stat((path + ".private").c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0600u);

        std::string error;
        auto key = dnssec::Key::load(path, "glb.example.com", error);
        ASSERT_NE(key, nullptr) << error;
        EXPECT_EQ(key->algorithm(), alg);
        EXPECT_EQ(key->flags(), 257);
        EXPECT_TRUE(key->sep());
        EXPECT_EQ(key->tag(), std::stoi(m[2].str()));
        // flags 257, protocol 3, the algorithm, then a 64-byte (P-256) or 32-byte (Ed25519) public key.
        ASSERT_EQ(key->rdata().size(), 4u + (alg == dnssec::kEcdsaP256Sha256 ? 64 : 32));
        EXPECT_EQ(key->rdata().substr(0, 4), std::string("\x01\x01\x03", 3) + static_cast<char>(alg));
        EXPECT_TRUE(std::regex_match(
            key->ds(), std::regex("glb\\.example\\.com\\. IN DS " + std::to_string(std::stoi(m[2].str())) + " " +
                                  std::to_string(alg) + " 2 [0-9A-F]{64}")))
            << key->ds();
        EXPECT_EQ(key->describe().find(secret_of(path)), std::string::npos);
    }
    // Zone names compare without regard to case.
    std::string error;
    EXPECT_NE(dnssec::Key::load(make(dnssec::kEd25519), "GLB.Example.com", error), nullptr) << error;
}

// BIND's dnssec-keygen writes a P-256 scalar as the integer's minimal bytes: one key in 256 has a PrivateKey
// of 31 bytes (CI met one). Such a key loads. Here d = 1, one byte, whose public point is the curve's generator.
TEST_F(DnssecKeys, ShortP256ScalarsLoad) {
    const std::string g = " axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpZP40Li/hp/m47n60p8D54WK84zV2sxXs7LtkBoN79R9Q==";
    std::string rdata = std::string("\x01\x01\x03\x0d", 4);
    ldns_rdf* b64 = ldns_rdf_new_frm_str(LDNS_RDF_TYPE_B64, g.c_str());
    ASSERT_NE(b64, nullptr);
    rdata.append(reinterpret_cast<const char*>(ldns_rdf_data(b64)), ldns_rdf_size(b64));
    ldns_rdf_deep_free(b64);
    ASSERT_EQ(rdata.size(), 68u);
    uint16_t tag = ldns_calc_keytag_raw(reinterpret_cast<const uint8_t*>(rdata.data()), rdata.size());
    char name[64];
    snprintf(name, sizeof name, "/Kglb.example.com.+013+%05u", tag);
    std::string path = dir_ + name;
    write(path + ".key", "glb.example.com. 3600 IN DNSKEY 257 3 13 " + g + "\n");
    write(path + ".private", "Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: AQ==\n");
    chmod((path + ".private").c_str(), 0600);
    std::string error;
    auto key = dnssec::Key::load(path, "glb.example.com", error);
    ASSERT_NE(key, nullptr) << error;
    EXPECT_EQ(key->tag(), tag);
    EXPECT_EQ(key->sign_data("data").size(), 64u);
    // A scalar of 33 bytes is not one.
    write(path + ".private",
          "Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: " + std::string(44, 'A') + "\n");
    refused(path, "glb.example.com", "PrivateKey is not a key of algorithm ECDSAP256SHA256", "");
}

TEST_F(DnssecKeys, BadPairsAreRefusedByName) {
    std::string a = make(dnssec::kEcdsaP256Sha256), b = make(dnssec::kEcdsaP256Sha256);
    std::string secret = secret_of(a);

    refused(dir_ + "/Knothere", "glb.example.com", "cannot read " + dir_ + "/Knothere.key", "");
    refused(a, "other.example.com", "not the zone other.example.com", secret);

    // Another key's private half.
    fs::copy_file(b + ".private", dir_ + "/swapped.private");
    fs::copy_file(a + ".key", dir_ + "/swapped.key");
    refused(dir_ + "/swapped", "glb.example.com", "swapped.private: this private key is not the one", secret);

    // Open to every user.
    chmod((a + ".private").c_str(), 0644);
    refused(a, "glb.example.com", "must not be open to every user (mode 0644)", secret);
    chmod((a + ".private").c_str(), 0640);
    std::string error;
    EXPECT_NE(dnssec::Key::load(a, "glb.example.com", error), nullptr) << error;

    // A file name whose tag is not the key's.
    std::string wrong = dir_ + "/Kglb.example.com.+013+00001";
    fs::copy_file(a + ".key", wrong + ".key");
    fs::copy_file(a + ".private", wrong + ".private");
    refused(wrong, "glb.example.com", "the file name says algorithm 013, tag 00001", secret);

    // The .key file edited: revoked, other flags, another algorithm, two records, none.
    std::string pub = read(a + ".key");
    auto edited = [&](const std::string& name, const std::string& from, const std::string& to) {
        std::string text = pub;
        auto at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        if (at != std::string::npos) text.replace(at, from.size(), to);
        write(dir_ + "/" + name + ".key", text);
        fs::copy_file(a + ".private", dir_ + "/" + name + ".private");
        return dir_ + "/" + name;
    };
    refused(edited("revoked", "DNSKEY 257", "DNSKEY 385"), "glb.example.com", "revoked", secret);
    refused(edited("flags", "DNSKEY 257", "DNSKEY 1"), "glb.example.com", "flags must be 256", secret);
    refused(edited("protocol", "257 3 13", "257 2 13"), "glb.example.com", "protocol must be 3", secret);
    refused(edited("rsa", "257 3 13", "257 3 8"), "glb.example.com", "algorithm 8 is not one glbd signs with", secret);
    write(dir_ + "/two.key", pub + pub);
    refused(dir_ + "/two", "glb.example.com", "holds one DNSKEY record and nothing else", secret);
    write(dir_ + "/long.key", std::string(5000, ';') + "\n" + pub);
    refused(dir_ + "/long", "glb.example.com", "long.key: not a key file (too long)", secret);
    write(dir_ + "/huge.key", std::string(70000, ';'));
    refused(dir_ + "/huge", "glb.example.com", "huge.key: not a key file (not a regular file of at most 64 KB)",
            secret);
    write(dir_ + "/none.key", "; nothing\n");
    refused(dir_ + "/none", "glb.example.com", "no DNSKEY record", secret);
    write(dir_ + "/bad.private", "Private-key-format: v1.2\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: !!!\n");
    chmod((dir_ + "/bad.private").c_str(), 0600);
    fs::copy_file(a + ".key", dir_ + "/bad.key");
    refused(dir_ + "/bad", "glb.example.com", "bad.private: PrivateKey is not a key of algorithm ECDSAP256SHA256",
            secret);
}

TEST_F(DnssecKeys, GenerateRefusesWhatItCannotWrite) {
    std::string error;
    EXPECT_EQ(dnssec::generate("glb.example.com", 8, dir_, error), "");
    EXPECT_NE(error.find("use 13 (ECDSAP256SHA256) or 15 (ED25519)"), std::string::npos) << error;
    EXPECT_EQ(dnssec::generate("glb.example.com", 13, dir_ + "/missing", error), "");
    EXPECT_NE(error.find("cannot write " + dir_ + "/missing/Kglb.example.com.+013+"), std::string::npos) << error;
    EXPECT_TRUE(fs::is_empty(dir_));
}

// zones[].dnssec in a config: keys loaded at load time, so `glbd check` names a bad one with its line.
TEST_F(DnssecKeys, ConfigLoadsAndChecksTheZoneKeys) {
    std::string csk = make(dnssec::kEcdsaP256Sha256), ed = make(dnssec::kEd25519);
    auto config = [&](const std::string& dnssec, const std::string& records = "") {
        return "cluster: {id: a}\nlisten: {dns: [\"127.0.0.1:5353\"]}\nzones:\n  - origin: glb.example.com\n"
               "    nameservers: [{name: ns.glb.example.com, addresses: [192.0.2.53]}]\n" +
               records + "    dnssec:\n" + dnssec + "hosts: []\n";
    };
    auto r = conf::load_text(config("      keys: [" + csk + ", " + ed + "]\n      signatureValidity: 14d\n"), "g.yaml");
    ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0].str());
    const auto& d = r.config->zones[0].dnssec;
    ASSERT_TRUE(d);
    ASSERT_EQ(d->keys.size(), 2u);
    EXPECT_EQ(d->keys[0]->algorithm(), dnssec::kEcdsaP256Sha256);
    EXPECT_EQ(d->keys[1]->algorithm(), dnssec::kEd25519);
    EXPECT_EQ(d->signature_validity, std::chrono::hours(14 * 24));
    EXPECT_TRUE(d->parent.empty());
    auto asked = conf::load_text(
        config("      keys: [" + csk + "]\n      parent: [\"192.0.2.53:53\", \"[2001:db8::53]:5353\"]\n"), "g.yaml");
    ASSERT_TRUE(asked.config) << (asked.errors.empty() ? "" : asked.errors[0].str());
    ASSERT_EQ(asked.config->zones[0].dnssec->parent.size(), 2u);
    EXPECT_EQ(asked.config->zones[0].dnssec->parent[1].str(), "[2001:db8::53]:5353");
    auto plain = conf::load_text(config("      keys: [" + csk + "]\n"), "g.yaml");
    ASSERT_TRUE(plain.config);
    EXPECT_EQ(plain.config->zones[0].dnssec->signature_validity, std::chrono::hours(7 * 24));

    // A ZSK alone: its flags 256, so its tag and name change; the private half is the same key.
    std::string pub = read(csk + ".key");
    pub.replace(pub.find("DNSKEY 257"), 10, "DNSKEY 256");
    write(dir_ + "/zsk.key", pub);
    fs::copy_file(csk + ".private", dir_ + "/zsk.private");
    std::string error;
    auto zsk = dnssec::Key::load(dir_ + "/zsk", "glb.example.com", error);
    ASSERT_NE(zsk, nullptr) << error;
    EXPECT_FALSE(zsk->sep());

    struct Bad {
        std::string dnssec, records, want;
    };
    for (const Bad& b : std::vector<Bad>{
             {"      keys: [" + dir_ + "/zsk]\n", "", "g.yaml:7:13: zones[0].dnssec.keys: needs a key with flags 257"},
             {"      keys: [" + dir_ + "/nothere]\n", "", "g.yaml:7:14: zones[0].dnssec.keys[0]: cannot read"},
             {"      keys: [" + csk + ", " + csk + "]\n", "", "zones[0].dnssec.keys[1]: a second key with tag"},
             {"      keys: []\n", "", "zones[0].dnssec.keys: needs at least one key"},
             {"      signatureValidity: 7d\n", "", "zones[0].dnssec.keys: required"},
             {"      keys: [" + csk + "]\n      signatureValidity: 1h\n", "",
              "zones[0].dnssec.signatureValidity: must be"},
             {"      keys: [" + csk + "]\n      parent: [ns.example.org:53]\n", "",
              "zones[0].dnssec.parent[0]: \"ns.example.org\" is not an IP address"},
             {"      keys: [" + csk + "]\n      parent: [192.0.2.53]\n", "",
              "zones[0].dnssec.parent[0]: must be HOST:PORT"},
             {"      keys: [" + csk +
                  "]\n      parent: [1.1.1.1:53, 1.1.1.2:53, 1.1.1.3:53, 1.1.1.4:53, 1.1.1.5:53, 1.1.1.6:53, "
                  "1.1.1.7:53, 1.1.1.8:53, "
                  "1.1.1.9:53]\n",
              "", "zones[0].dnssec.parent: at most 8 servers"},
             {"      keys: [" + ed + ", " + dir_ + "/zsk]\n", "",
              "zones[0].dnssec.keys: algorithm ECDSAP256SHA256 would sign no DNSKEY set (no KSK or CSK is of it)"},
             {"      keys: [" + ed + ", " + dir_ + "/zsk]\n", "",
              "zones[0].dnssec.keys: algorithm ED25519 would sign no answer (the ZSKs sign them, and none is of it)"},
             {"      keys: [" + csk + "]\n", "    records: |\n      @ 300 IN DNSKEY 256 3 13 AAAA\n",
              "zones[0].dnssec: a signed zone's DNSKEY, RRSIG"},
         }) {
        auto bad = conf::load_text(config(b.dnssec, b.records), "g.yaml");
        EXPECT_FALSE(bad.config) << b.dnssec;
        std::string all;
        for (const auto& e : bad.errors) all += e.str() + "\n";
        EXPECT_NE(all.find(b.want), std::string::npos) << all;
    }
}

}  // namespace

namespace {

// An RR in wire form, as ldns reads it from a message.
ldns_rr* rr_of(const std::string& owner, uint16_t type, uint32_t ttl, const std::string& rdata) {
    std::string w = owner;
    for (uint16_t v : {type, uint16_t{1}, uint16_t(ttl >> 16), uint16_t(ttl & 0xffff), uint16_t(rdata.size())}) {
        w += static_cast<char>(v >> 8);
        w += static_cast<char>(v & 0xff);
    }
    w += rdata;
    ldns_rr* rr = nullptr;
    size_t pos = 0;
    EXPECT_EQ(ldns_wire2rr(&rr, reinterpret_cast<const uint8_t*>(w.data()), w.size(), &pos, LDNS_SECTION_ANSWER),
              LDNS_STATUS_OK);
    return rr;
}

// ldns's verdict on `rrsig` over the A records `addresses` at `owner`, with `key`'s DNSKEY.
ldns_status verify(const dnssec::Key& key, const std::string& owner, const std::vector<std::string>& addresses,
                   const std::string& rrsig) {
    ldns_rr_list* set = ldns_rr_list_new();
    for (const auto& a : addresses) ldns_rr_list_push_rr(set, rr_of(owner, 1, 60, a));
    ldns_rr* sig = rr_of(owner, 46, 60, rrsig);
    ldns_rr* dnskey = rr_of(*wire::name_to_wire("glb.example.com"), 48, 3600, key.rdata());
    ldns_status st = ldns_verify_rrsig(set, sig, dnskey);
    ldns_rr_list_deep_free(set);
    ldns_rr_free(sig);
    ldns_rr_free(dnskey);
    return st;
}

TEST_F(DnssecKeys, SignaturesVerifyWithLdns) {
    const uint32_t now = static_cast<uint32_t>(time(nullptr));
    const std::string zone = *wire::name_to_wire("glb.example.com");
    const std::string a1("\xc0\x00\x02\x0a", 4), a2("\xc0\x00\x02\x0b", 4), a3("\xc0\x00\x02\x0c", 4);
    for (uint8_t alg : {dnssec::kEcdsaP256Sha256, dnssec::kEd25519}) {
        std::string error;
        auto key = dnssec::Key::load(make(alg), "glb.example.com", error);
        ASSERT_NE(key, nullptr) << error;
        for (const char* name : {"shop.glb.example.com", "*.apps.glb.example.com", "glb.example.com"}) {
            std::string owner = *wire::name_to_wire(name);
            // Given out of order and with a duplicate: signed in canonical order, once each.
            dnssec::RRset set{owner, 1, 60, {a2, a1, a2}};
            std::string rrsig = dnssec::sign(*key, zone, set, now - 3600, now + 7 * 86400);
            ASSERT_GT(rrsig.size(), 18u + zone.size()) << name;
            EXPECT_EQ(rrsig.size(), 18 + zone.size() + 64);
            EXPECT_EQ(static_cast<uint8_t>(rrsig[2]), alg);
            unsigned labels = std::string(name) == "glb.example.com" ? 3 : 3 + 1;  // a wildcard's "*" not counted
            EXPECT_EQ(static_cast<uint8_t>(rrsig[3]), labels) << name;
            EXPECT_EQ(verify(*key, owner, {a1, a2}, rrsig), LDNS_STATUS_OK) << name << " " << int(alg);
            // The test can fail: another RRset, or a signature out of its window, does not verify.
            EXPECT_NE(verify(*key, owner, {a1, a3}, rrsig), LDNS_STATUS_OK) << name;
            std::string old = dnssec::sign(*key, zone, set, now - 7200, now - 3600);
            EXPECT_EQ(verify(*key, owner, {a1, a2}, old), LDNS_STATUS_CRYPTO_SIG_EXPIRED) << name;
        }
    }
}

// A key signs from several threads at once (the builder's threads, the query threads' online denials): each
// signature is made with a copy of the key's context made ready at load, and every one verifies.
TEST_F(DnssecKeys, OneKeySignsOnManyThreadsAtOnce) {
    const uint32_t now = static_cast<uint32_t>(time(nullptr));
    const std::string zone = *wire::name_to_wire("glb.example.com");
    for (uint8_t alg : {dnssec::kEcdsaP256Sha256, dnssec::kEd25519}) {
        std::string error;
        auto key = dnssec::Key::load(make(alg), "glb.example.com", error);
        ASSERT_NE(key, nullptr) << error;
        constexpr int kThreads = 4, kEach = 25;
        std::vector<std::vector<std::pair<std::string, std::string>>> made(kThreads);  // (address, RRSIG)
        const std::string owner = *wire::name_to_wire("shop.glb.example.com");
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < kEach; ++i) {
                    std::string a{'\xc0', '\x00', static_cast<char>(t), static_cast<char>(i)};
                    dnssec::RRset set{owner, 1, 60, {a}};
                    made[t].emplace_back(a, dnssec::sign(*key, zone, set, now - 3600, now + 86400));
                }
            });
        }
        for (auto& th : threads) th.join();
        for (const auto& each : made) {
            ASSERT_EQ(each.size(), size_t{kEach});
            for (const auto& [a, rrsig] : each) EXPECT_EQ(verify(*key, owner, {a}, rrsig), LDNS_STATUS_OK) << int(alg);
        }
    }
}

}  // namespace

// The id peers compare (sync reports, `glbd check`): the same for the same set in any order, from the keys
// or from the RDATAs a server answers; another for any other set.
TEST_F(DnssecKeys, PublishedIdNamesTheSetWhateverItsOrder) {
    std::string error;
    auto a = dnssec::Key::load(make(dnssec::kEcdsaP256Sha256), "glb.example.com", error);
    auto b = dnssec::Key::load(make(dnssec::kEd25519), "glb.example.com", error);
    ASSERT_TRUE(a && b) << error;
    std::string ab = dnssec::published_id({a, b});
    EXPECT_EQ(ab, dnssec::published_id({b, a}));
    EXPECT_EQ(ab, dnssec::published_id(std::vector<std::string>{b->rdata(), a->rdata()}));
    auto lo = std::min(a->tag(), b->tag()), hi = std::max(a->tag(), b->tag());
    EXPECT_TRUE(std::regex_match(ab, std::regex(std::to_string(lo) + "," + std::to_string(hi) + " [0-9a-f]{16}")))
        << ab;
    EXPECT_NE(ab, dnssec::published_id({a}));
    EXPECT_NE(dnssec::published_id({a}), dnssec::published_id({b}));
    // The same tags over other key material: the digest tells them apart.
    std::string other = a->rdata();
    other.back() = static_cast<char>(other.back() ^ 1);
    std::string a_id = dnssec::published_id({a}), other_id = dnssec::published_id(std::vector<std::string>{other});
    EXPECT_NE(a_id.substr(a_id.find(' ')), other_id.substr(other_id.find(' ')));
}

// The key changes a reload may make (RFC 7583, double signature), with an hour of hold time: adding a key
// beside one that signs now is allowed at once; removing one only once every key that stays has been
// published for the hold time; a key that would sign alone must have been; a swap in one step is refused.
TEST_F(DnssecKeys, KeyChangesKeepEveryResolverValidating) {
    std::string error;
    auto load = [&](const std::string& path) {
        auto k = dnssec::Key::load(path, "glb.example.com", error);
        EXPECT_NE(k, nullptr) << error;
        return k;
    };
    int zsks = 0;
    auto zsk = [&]() {  // a pair with flags 256 (its tag changes with the flags, so the files are renamed)
        std::string made = make(dnssec::kEcdsaP256Sha256), pub = read(made + ".key");
        pub.replace(pub.find("DNSKEY 257"), 10, "DNSKEY 256");
        std::string path = dir_ + "/zsk" + std::to_string(++zsks);
        write(path + ".key", pub);
        fs::rename(made + ".private", path + ".private");
        fs::remove(made + ".key");
        return load(path);
    };
    auto k1 = load(make(dnssec::kEcdsaP256Sha256)), k2 = load(make(dnssec::kEcdsaP256Sha256));
    auto z1 = zsk(), z2 = zsk();
    ASSERT_TRUE(k1 && k2 && z1 && z2);
    ASSERT_FALSE(z1->sep());
    const uint64_t hour = 3'600'000, t0 = 1'000'000'000;
    const std::string zone = "glb.example.com";
    auto has = [](const std::string& why, const std::string& part) {
        return why.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                                   : ::testing::AssertionFailure() << why;
    };
    dnssec::KeyHistory h;
    EXPECT_EQ(h.check(zone, {k1}, t0, hour), "");  // a zone not signed before: anything
    h.update({{zone, {k1, z1}}}, t0);
    EXPECT_EQ(h.published_at(zone, *z1), t0);

    // A ZSK roll: Z2 beside Z1 at once (both sign); Z1 out an hour later, not before.
    EXPECT_EQ(h.check(zone, {k1, z1, z2}, t0 + 1, hour), "");
    h.update({{zone, {k1, z1, z2}}}, t0 + hour);
    EXPECT_EQ(h.published_at(zone, *z1), t0);  // kept
    std::string why = h.check(zone, {k1, z2}, t0 + hour + 1000, hour);
    EXPECT_TRUE(has(why, "removing key tag " + std::to_string(z1->tag()) + " now would break validation"));
    EXPECT_TRUE(has(why, "key tag " + std::to_string(z2->tag()) + " was published 1 s ago"));
    EXPECT_TRUE(has(why, "in 3599 s or later"));
    EXPECT_EQ(h.check(zone, {k1, z2}, t0 + 2 * hour, hour), "");
    // Two keys that stay are both too young: the youngest is named, with the wait until it has been
    // published for the hold time (not the older one's shorter wait).
    dnssec::KeyHistory young;
    young.update({{zone, {k1, z1}}}, t0);
    young.update({{zone, {k1, z1, z2}}}, t0 + 1000);
    why = young.check(zone, {k1, z2}, t0 + 2000, hour);
    EXPECT_TRUE(has(why, "key tag " + std::to_string(z2->tag()) + " was published 1 s ago"));
    EXPECT_TRUE(has(why, "in 3599 s or later"));
    // A swap in one step: the new key would sign alone, and no key that signs now would stay.
    EXPECT_TRUE(has(h.check(zone, {k1, z2}, t0 + hour, hour), "was published 0 s ago"));
    EXPECT_TRUE(has(h.check(zone, {k2, z1, z2}, t0 + 5 * hour, hour), "would sign the DNSKEY set alone"));
    // A KSK roll: K2 beside K1 at once, K1 out once K2 has been published an hour.
    h.update({{zone, {k1, k2, z1, z2}}}, t0 + 2 * hour);
    EXPECT_TRUE(has(h.check(zone, {k2, z1, z2}, t0 + 2 * hour + 10, hour), "removing key tag"));
    EXPECT_EQ(h.check(zone, {k2, z1, z2}, t0 + 3 * hour, hour), "");
    // From KSK + ZSK to a CSK alone: answers held, signed by the ZSKs alone, would fail however long after.
    h.update({{zone, {k1, z1}}}, t0 + 3 * hour);
    EXPECT_TRUE(has(h.check(zone, {k1}, t0 + 9 * hour, hour), "no key that signs the answers now"));
    // From a CSK alone to KSK + ZSK: the new ZSK would sign the answers alone.
    dnssec::KeyHistory csk;
    csk.update({{zone, {k1}}}, t0);
    EXPECT_TRUE(has(csk.check(zone, {k1, z1}, t0 + 9 * hour, hour), "would sign the answers alone"));
    // A key removed and published again starts over.
    h.update({{zone, {k1}}}, t0 + 10 * hour);
    h.update({{zone, {k1, z1}}}, t0 + 11 * hour);
    EXPECT_EQ(h.published_at(zone, *z1), t0 + 11 * hour);
    // A zone no longer signed is forgotten, its keys with it.
    h.update({}, t0 + 12 * hour);
    EXPECT_EQ(h.published_at(zone, *k1), 0u);
    EXPECT_EQ(h.check(zone, {k2}, t0 + 12 * hour, hour), "");
}

// The history kept in stateDir: what to_text() writes reads back the same, and a file that is anything else
// is refused whole (a restart is then not checked, rather than checked against a wrong history).
TEST_F(DnssecKeys, KeyHistoryTravelsThroughStateDirText) {
    std::string error;
    auto k1 = dnssec::Key::load(make(dnssec::kEcdsaP256Sha256), "glb.example.com", error);
    auto k2 = dnssec::Key::load(make(dnssec::kEd25519), "glb.example.com", error);
    auto k3 = dnssec::Key::load(make(dnssec::kEcdsaP256Sha256), "glb.example.com", error);
    ASSERT_TRUE(k1 && k2 && k3) << error;
    dnssec::KeyHistory h;
    h.update({{"glb.example.com", {k1}}, {"other.example.org", {k3}}}, 1000);
    h.update({{"glb.example.com", {k1, k2}}, {"other.example.org", {k3}}}, 5000);
    const std::string text = h.to_text();
    EXPECT_EQ(text.substr(0, text.find('\n')), "glbd-dnssec-keys 2");
    dnssec::KeyHistory back;
    ASSERT_TRUE(back.from_text(text, error)) << error;
    EXPECT_EQ(back.published_at("glb.example.com", *k1), 1000u);
    EXPECT_EQ(back.published_at("glb.example.com", *k2), 5000u);
    EXPECT_EQ(back.published_at("other.example.org", *k3), 1000u);
    EXPECT_EQ(back.published_at("glb.example.com", *k3), 0u);
    EXPECT_EQ(back.to_text(), text);
    // Checked as the history it was: removing k1 four seconds after k2 came, with a hold of an hour.
    EXPECT_NE(back.check("glb.example.com", {k2}, 9000, 3'600'000), "");

    const std::string line = text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n'));
    const std::string head = "glbd-dnssec-keys 2\n", v1 = "glbd-dnssec-keys 1\n";
    struct Bad {
        std::string text, why;
    };
    const std::vector<Bad> bad = {
        {"", "empty"},
        {"glbd-dnssec-keys 3\n", "line 1: not \"glbd-dnssec-keys 2\""},
        {head + "glb.example.com 1000\n", "line 2: not ZONE MS DNSKEY [ds=MS]"},
        {head + "glb.example.com 1000 AQMNAAAA ds=5 x\n", "line 2: not ZONE MS DNSKEY [ds=MS]"},
        {v1 + "glb.example.com 1000 AQMNAAAA ds=5\n", "line 2: not ZONE MS DNSKEY"},
        {head + "glb.example.com 1000 AQMNAAAA AAAA\n", "line 2: not ds=MS after the DNSKEY"},
        {head + "glb.example.com 1000 AQMNAAAA ds=0\n", "line 2: not ds=MS after the DNSKEY"},
        {head + "glb.example.com 1000 AQMNAAAA ds=\n", "line 2: not ds=MS after the DNSKEY"},
        {head + "glb..example.com 1000 AQMNAAAA\n", "line 2: not a zone name"},
        {head + "glb.example.com -5 AQMNAAAA\n", "line 2: not a time in ms"},
        {head + "glb.example.com 99999999999999999999999 AQMNAAAA\n", "line 2: not a time in ms"},
        {head + "glb.example.com 1000 AQM\n", "line 2: not a DNSKEY RDATA in base64"},
        {head + "glb.example.com 1000 AQ==\n", "line 2: not a DNSKEY RDATA in base64"},
        {head + line + line, "line 3: a key listed twice"},
        {head + "glb.example.com 1000 AQMNAAAA", "line 2: not ended by a newline (a file cut short?)"},
    };
    for (const auto& b : bad) {
        dnssec::KeyHistory kept = back;
        error.clear();
        EXPECT_FALSE(kept.from_text(b.text, error)) << b.text;
        EXPECT_EQ(error, b.why) << b.text;
        EXPECT_EQ(kept.to_text(), text) << "a refused file changed the history: " << b.text;
    }
    std::string many = head;
    for (size_t i = 0; i <= dnssec::KeyHistory::kMaxKeys; ++i) {
        many += "z" + std::to_string(i) + ".example 1000 AQMNAAAA\n";
    }
    EXPECT_FALSE(back.from_text(many, error));
    EXPECT_EQ(error, "line " + std::to_string(dnssec::KeyHistory::kMaxKeys + 2) + ": more than 1024 keys");
    // A version 1 file (before ds=) still reads.
    dnssec::KeyHistory old;
    EXPECT_TRUE(old.from_text(v1 + line, error)) << error;
    EXPECT_NE(old.published_at("glb.example.com", *k1), 0u);
}

// A KSK roll's last step waits for the parent: its DS set must point at a KSK that stays (any of digest
// types 1, 2 and 4), on every server asked, and have for the DS set's TTL; what was seen is kept in the text.
TEST_F(DnssecKeys, TheParentsDsSetGatesAKskRemoval) {
    std::string error;
    auto k1 = dnssec::Key::load(make(dnssec::kEcdsaP256Sha256), "glb.example.com", error);
    auto k2 = dnssec::Key::load(make(dnssec::kEd25519), "glb.example.com", error);
    ASSERT_TRUE(k1 && k2) << error;
    const std::string zone = "glb.example.com", t1 = std::to_string(k1->tag()), t2 = std::to_string(k2->tag());
    // k2's DS with a SHA-384 digest (type 4), made here: over the owner's wire form and the DNSKEY RDATA.
    const std::string owner("\003glb\007example\003com\000", 17);
    std::string data = owner + k2->rdata(), ds384 = k2->ds_rdata().substr(0, 3) + '\4';
    unsigned char md[48];
    unsigned int md_len = 0;
    ASSERT_EQ(EVP_Digest(data.data(), data.size(), md, &md_len, EVP_sha384(), nullptr), 1);
    ds384.append(reinterpret_cast<const char*>(md), md_len);
    EXPECT_TRUE(k2->names_ds(ds384));
    EXPECT_TRUE(k2->names_ds(k2->ds_rdata()));
    EXPECT_FALSE(k1->names_ds(k2->ds_rdata()));
    std::string tampered = ds384;
    tampered.back() ^= 1;
    EXPECT_FALSE(k2->names_ds(tampered));

    const uint64_t hour = 3'600'000, t0 = 1'000'000'000;
    dnssec::KeyHistory h;
    h.update({{zone, {k1}}}, t0);
    h.update({{zone, {k1, k2}}}, t0 + hour);
    EXPECT_TRUE(h.dropped_ksks(zone, {k1, k2}).empty());
    ASSERT_EQ(h.dropped_ksks(zone, {k2}), std::vector<std::string>{k1->rdata()});
    using Answer = dnssec::KeyHistory::ParentAnswer;
    auto has = [](const std::string& why, const std::string& part) {
        return why.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                                   : ::testing::AssertionFailure() << why;
    };
    const uint64_t t = t0 + 3 * hour;  // k2 published long enough for the DNSKEY set's hold
    ASSERT_EQ(h.check(zone, {k2}, t, hour), "");
    // The parent still points at k1 alone: refused, whatever the time.
    std::vector<Answer> old_ds = {{"192.0.2.53:53", "", {k1->ds_rdata()}, 3600}};
    h.note_parent(zone, {k2}, old_ds, t);
    std::string why = h.check_parent(zone, {k2}, old_ds, t + 100 * hour);
    EXPECT_TRUE(has(why, "removing KSK tag " + t1 +
                             " would break the chain of trust: the parent's DS set at "
                             "192.0.2.53:53 points at key tag " +
                             t1 + " and at no KSK that stays (tag " + t2 + ")"));
    // A server that does not answer: refused, and nothing noted.
    std::vector<Answer> silent = {{"192.0.2.53:53", "", {k1->ds_rdata(), ds384}, 3600},
                                  {"192.0.2.54:53", "timeout", {}, 0}};
    h.note_parent(zone, {k2}, silent, t);
    EXPECT_TRUE(has(h.check_parent(zone, {k2}, silent, t), "its server 192.0.2.54:53 gave no DS set (timeout)"));
    EXPECT_EQ(h.to_text().find(" ds="), std::string::npos);
    // Two servers that disagree: the one without k2's DS is named.
    std::vector<Answer> split = {{"192.0.2.53:53", "", {k1->ds_rdata(), ds384}, 3600},
                                 {"192.0.2.54:53", "", {k1->ds_rdata()}, 3600}};
    h.note_parent(zone, {k2}, split, t);
    EXPECT_TRUE(
        has(h.check_parent(zone, {k2}, split, t), "the parent's DS set at 192.0.2.54:53 points at key tag " + t1));
    // Both hold k2's DS (one as SHA-384): it may go once the DS set's TTL has passed since it was first seen.
    std::vector<Answer> both = {{"192.0.2.53:53", "", {k1->ds_rdata(), ds384}, 3600},
                                {"192.0.2.54:53", "", {k2->ds_rdata()}, 600}};
    h.note_parent(zone, {k2}, both, t);
    h.note_parent(zone, {k2}, both, t + 1000);  // seen again: still since t
    why = h.check_parent(zone, {k2}, both, t + 1000);
    EXPECT_TRUE(has(why, "has pointed at key tag " + t2 + " for 1 s"));
    EXPECT_TRUE(has(why, "for its TTL, 3600 s: remove it in 3599 s or later"));
    EXPECT_EQ(h.check_parent(zone, {k2}, both, t + hour), "");
    // Kept through the text, so that a restart is checked alike.
    dnssec::KeyHistory back;
    ASSERT_TRUE(back.from_text(h.to_text(), error)) << error;
    EXPECT_EQ(back.to_text(), h.to_text());
    EXPECT_TRUE(has(back.check_parent(zone, {k2}, both, t + 1000), "remove it in 3599 s or later"));
    EXPECT_EQ(back.check_parent(zone, {k2}, both, t + hour), "");
    // The DS withdrawn and back: the wait starts over.
    h.note_parent(zone, {k2}, old_ds, t + 2 * hour);
    h.note_parent(zone, {k2}, both, t + 3 * hour);
    EXPECT_TRUE(has(h.check_parent(zone, {k2}, both, t + 3 * hour), "for 0 s"));
    // An insecure delegation (no DS at all): no chain of trust to break.
    std::vector<Answer> none = {{"192.0.2.53:53", "", {}, 0}};
    EXPECT_EQ(h.check_parent(zone, {k2}, none, t), "");
    // Nothing to ask when no KSK goes.
    EXPECT_EQ(h.check_parent(zone, {k1, k2}, old_ds, t), "");
}
