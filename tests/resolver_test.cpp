// Resolver behaviour without sockets: one table of authoritative cases (issue #2, item 6).
#include <gtest/gtest.h>

#include "resolver/resolver.hpp"
#include "resolver/snapshot/builder.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;
using namespace glbd::test;

namespace {

constexpr uint32_t kSerial = 3000000001u;

std::string big_txt() {
    std::string s;
    for (int i = 0; i < 12; ++i) s += "      big IN TXT \"" + std::string(200, static_cast<char>('a' + i)) + "\"\n";
    return s;
}

const std::string kZoneConfig = R"(cluster: {id: t1}
listen: {dns: ["127.0.0.1:5353"]}
zones:
  - origin: example.test
    ttl: 300
    soa: {rname: hostmaster.example.test, minimum: 60}
    nameservers:
      - name: ns1.example.test
        addresses: [192.0.2.53, "2001:db8::53"]
      - name: ns.other.net
    records: |
      @          IN MX    10 mail
      mail       IN A     192.0.2.25
      www        IN A     192.0.2.10
      www        IN AAAA  2001:db8::10
      alias      IN CNAME www
      chain1     IN CNAME chain2
      chain2  60 IN CNAME www
      outside    IN CNAME www.elsewhere.net.
      txt        IN TXT   "hello world"
      _sip._tcp  IN SRV   10 20 5060 sip
      sip        IN A     192.0.2.60
      caa        IN CAA   0 issue "ca.example.net"
      ptr        IN PTR   www
      unk        IN TYPE65534 \# 4 0a000001
      *.wild     IN A     192.0.2.77
      *.wild     IN TXT   "wild"
      sub.wild   IN TXT   "exists"
      deep.ent.a IN A     192.0.2.80
      child      IN NS    ns.child
      ns.child   IN A     192.0.2.90
      loop1      IN CNAME loop2
      loop2      IN CNAME loop1
)" + big_txt();

struct Case {
    const char* name;
    std::string qname;
    uint16_t qtype;
    uint8_t rcode;
    bool aa;
    int answers, authority, additional;  // additional excludes OPT
    std::vector<std::string> contains;   // "AN|NS|AR <rr text>" substrings
    QueryOpts opts = {};
    Transport transport = Transport::udp;
};

std::string sections(const Parsed& p) {
    std::string s;
    for (const auto& r : p.answer) s += "AN " + r + "\n";
    for (const auto& r : p.authority) s += "NS " + r + "\n";
    for (const auto& r : p.additional) s += "AR " + r + "\n";
    return s;
}

class ResolverTable : public ::testing::TestWithParam<Case> {
protected:
    static void SetUpTestSuite() {
        auto c = config_from(kZoneConfig);
        snap_ = build_snapshot(c, {local_cluster_view(c)}, nullptr, kSerial);
    }
    static std::shared_ptr<const Snapshot> snap_;
};
std::shared_ptr<const Snapshot> ResolverTable::snap_;

TEST_P(ResolverTable, Answers) {
    const Case& c = GetParam();
    auto p = ask(*snap_, make_query(c.qname, c.qtype, c.opts), c.transport);
    ASSERT_TRUE(p.ok) << "no parsable response";
    EXPECT_TRUE(p.qr);
    EXPECT_EQ(p.id, c.opts.id);
    EXPECT_EQ(p.rcode, c.rcode);
    EXPECT_EQ(p.aa, c.aa);
    std::string all = sections(p);
    EXPECT_EQ(static_cast<int>(p.answer.size()), c.answers) << all;
    EXPECT_EQ(static_cast<int>(p.authority.size()), c.authority) << all;
    EXPECT_EQ(static_cast<int>(p.additional.size()), c.additional) << all;
    for (const auto& want : c.contains)
        EXPECT_NE(all.find(want), std::string::npos) << "missing: " << want << "\n" << all;
}

QueryOpts no_edns() {
    QueryOpts o;
    o.edns = false;
    return o;
}

const Case kCases[] = {
    {"A", "www.example.test", 1, 0, true, 1, 0, 0, {"AN www.example.test. 300 IN A 192.0.2.10"}},
    {"AAAA", "www.example.test", 28, 0, true, 1, 0, 0, {"AN www.example.test. 300 IN AAAA 2001:db8::10"}},
    {"CasePreserved", "WwW.ExAmple.TEST", 1, 0, true, 1, 0, 0, {"AN WwW.ExAmple.TEST. 300 IN A 192.0.2.10"}},
    {"CnameChasedInZone",
     "alias.example.test",
     1,
     0,
     true,
     2,
     0,
     0,
     {"AN alias.example.test. 300 IN CNAME www.example.test.", "AN www.example.test. 300 IN A 192.0.2.10"}},
    {"CnameChainKeepsEachTtl",
     "chain1.example.test",
     1,
     0,
     true,
     3,
     0,
     0,
     {"AN chain2.example.test. 60 IN CNAME www.example.test.", "AN www.example.test. 300 IN A"}},
    {"CnameOutOfZoneNotChased",
     "outside.example.test",
     1,
     0,
     true,
     1,
     0,
     0,
     {"AN outside.example.test. 300 IN CNAME www.elsewhere.net."}},
    {"CnameQueriedDirectly", "alias.example.test", 5, 0, true, 1, 0, 0, {"AN alias.example.test. 300 IN CNAME"}},
    {"NxdomainHasSoaWithNegativeTtl",
     "nope.example.test",
     1,
     3,
     true,
     0,
     1,
     0,
     {"NS example.test. 60 IN SOA ns1.example.test. hostmaster.example.test. 3000000001 3600 600 86400 60"}},
    {"NodataHasSoa", "www.example.test", 16, 0, true, 0, 1, 0, {"NS example.test. 60 IN SOA"}},
    {"ApexNsWithGlue",
     "example.test",
     2,
     0,
     true,
     2,
     0,
     2,
     {"AN example.test. 300 IN NS ns1.example.test.", "AN example.test. 300 IN NS ns.other.net.",
      "AR ns1.example.test. 300 IN A 192.0.2.53", "AR ns1.example.test. 300 IN AAAA 2001:db8::53"}},
    // The snapshot's serial, above 2^31 so that a signed 32-bit encoding would show; how the daemon chooses it
    // (rising on every change and across restarts) is tested with the real binary (system.serial).
    {"SoaCarriesSnapshotSerial",
     "example.test",
     6,
     0,
     true,
     1,
     0,
     0,
     {"AN example.test. 300 IN SOA ns1.example.test. hostmaster.example.test. 3000000001 "}},
    {"MxWithAdditional",
     "example.test",
     15,
     0,
     true,
     1,
     0,
     1,
     {"AN example.test. 300 IN MX 10 mail.example.test.", "AR mail.example.test. 300 IN A 192.0.2.25"}},
    {"Txt", "txt.example.test", 16, 0, true, 1, 0, 0, {"AN txt.example.test. 300 IN TXT \"hello world\""}},
    {"SrvWithAdditional",
     "_sip._tcp.example.test",
     33,
     0,
     true,
     1,
     0,
     1,
     {"IN SRV 10 20 5060 sip.example.test.", "AR sip.example.test. 300 IN A 192.0.2.60"}},
    {"Caa", "caa.example.test", 257, 0, true, 1, 0, 0, {"IN CAA 0 issue \"ca.example.net\""}},
    {"Ptr", "ptr.example.test", 12, 0, true, 1, 0, 0, {"AN ptr.example.test. 300 IN PTR www.example.test."}},
    {"UnknownTypeRfc3597",
     "unk.example.test",
     65534,
     0,
     true,
     1,
     0,
     0,
     {"unk.example.test. 300 IN TYPE65534 \\# 4 0a000001"}},
    {"WildcardSynthesisesOwner",
     "x.wild.example.test",
     1,
     0,
     true,
     1,
     0,
     0,
     {"AN x.wild.example.test. 300 IN A 192.0.2.77"}},
    {"WildcardCoversSeveralLabels",
     "a.b.wild.example.test",
     16,
     0,
     true,
     1,
     0,
     0,
     {"AN a.b.wild.example.test. 300 IN TXT \"wild\""}},
    {"WildcardNodata", "x.wild.example.test", 28, 0, true, 0, 1, 0, {"NS example.test. 60 IN SOA"}},
    {"WildcardBlockedByExistingName", "x.sub.wild.example.test", 1, 3, true, 0, 1, 0, {}},
    {"ExistingNameNotWildcarded", "sub.wild.example.test", 1, 0, true, 0, 1, 0, {}},
    {"EmptyNonTerminalIsNodata", "ent.a.example.test", 1, 0, true, 0, 1, 0, {}},
    {"DelegationReferral",
     "www.child.example.test",
     1,
     0,
     false,
     0,
     1,
     1,
     {"NS child.example.test. 300 IN NS ns.child.example.test.", "AR ns.child.example.test. 300 IN A 192.0.2.90"}},
    {"OutsideZonesRefused", "example.com", 1, 5, false, 0, 0, 0, {}},
    {"AxfrRefused", "example.test", 252, 5, false, 0, 0, 0, {}, {}, Transport::tcp},
    {"IxfrRefused", "example.test", 251, 5, false, 0, 0, 0, {}},
    {"ChaosClassRefused",
     "example.test",
     16,
     5,
     false,
     0,
     0,
     0,
     {},
     [] {
         QueryOpts o;
         o.qclass = 3;
         return o;
     }()},
    {"StatusOpcodeNotImp",
     "example.test",
     6,
     4,
     false,
     0,
     0,
     0,
     {},
     [] {
         QueryOpts o;
         o.opcode = 2;
         return o;
     }()},
    {"EdnsVersion1Badvers",
     "www.example.test",
     1,
     16,
     false,
     0,
     0,
     0,
     {},
     [] {
         QueryOpts o;
         o.version = 1;
         return o;
     }()},
    {"AnyIsMinimal", "www.example.test", 255, 0, true, 1, 0, 0, {}},
    {"NoEdnsStillAnswers", "www.example.test", 1, 0, true, 1, 0, 0, {}, no_edns()},
    {"CnameLoopBounded",
     "loop1.example.test",
     1,
     0,
     true,
     8,
     0,
     0,
     {"AN loop1.example.test. 300 IN CNAME loop2.example.test."}},
    {"TcpCarriesBigAnswer", "big.example.test", 16, 0, true, 12, 0, 0, {}, no_edns(), Transport::tcp},
};

INSTANTIATE_TEST_SUITE_P(Static, ResolverTable, ::testing::ValuesIn(kCases),
                         [](const auto& tpi) { return std::string(tpi.param.name); });

class Resolver : public ::testing::Test {
protected:
    void SetUp() override {
        auto c = config_from(kZoneConfig);
        snap_ = build_snapshot(c, {local_cluster_view(c)}, nullptr, 7);
    }
    std::shared_ptr<const Snapshot> snap_;
};

TEST_F(Resolver, OptEchoedWithOurPayloadAndNoUnknownOptions) {
    auto q = make_query("www.example.test", 1);
    // Add an unknown option (code 65001, 2 bytes) to the OPT record.
    q[q.size() - 2] = 0, q[q.size() - 1] = 6;
    for (uint8_t b : {0xfd, 0xe9, 0x00, 0x02, 0xab, 0xcd}) q.push_back(b);
    Client c;
    c.address = address_of("192.0.2.1");
    uint8_t out[4096];
    size_t n = answer(*snap_, q.data(), q.size(), c, out, sizeof out);
    auto p = parse(out, n);
    ASSERT_TRUE(p.edns);
    EXPECT_EQ(p.edns_payload, 1232);
    // The OPT record is the last 11 bytes: no options echoed (RDLENGTH 0).
    EXPECT_EQ(out[n - 2], 0);
    EXPECT_EQ(out[n - 1], 0);
    EXPECT_EQ(out[n - 11], 0);  // root owner
    EXPECT_EQ(out[n - 10], 0);  // type 41 high byte
    EXPECT_EQ(out[n - 9], 41);
}

// Opcodes other than QUERY get NOTIMP, with or without a question; a QUERY without one is FORMERR.
TEST_F(Resolver, UnknownOpcodesAreNotImplemented) {
    for (uint8_t opcode : {1, 2, 4, 5, 6, 15}) {
        QueryOpts o;
        o.opcode = opcode;
        auto p = ask(*snap_, make_query("www.example.test", 1, o));
        ASSERT_TRUE(p.ok) << "opcode " << int(opcode);
        EXPECT_EQ(p.rcode, 4) << "opcode " << int(opcode);  // NOTIMP
        EXPECT_TRUE(p.answer.empty()) << "opcode " << int(opcode);
        EXPECT_FALSE(p.aa) << "opcode " << int(opcode);
        // The same header with no question at all.
        auto bare = make_query("www.example.test", 1, o);
        bare.resize(12);
        bare[4] = bare[5] = bare[10] = bare[11] = 0;
        auto b = ask(*snap_, bare);
        ASSERT_TRUE(b.ok) << "opcode " << int(opcode) << " without a question";
        EXPECT_EQ(b.rcode, 4) << "opcode " << int(opcode) << " without a question";
    }
}

TEST_F(Resolver, QueryWithoutQuestionIsFormerr) {
    auto bare = make_query("www.example.test", 1, no_edns());
    bare.resize(12);
    bare[4] = bare[5] = 0;
    auto p = ask(*snap_, bare);
    ASSERT_TRUE(p.ok);
    EXPECT_EQ(p.rcode, 1);
    EXPECT_TRUE(p.question.empty());
    // Two questions are FORMERR too.
    auto two = make_query("www.example.test", 1, no_edns());
    two[5] = 2;
    EXPECT_EQ(ask(*snap_, two).rcode, 1);
}

// NXNAME (128) exists only in an NSEC's bitmap: a query for it is FORMERR (RFC 9824 section 3.5), as one for
// OPT is; with or without DO, for a name that exists or not.
TEST_F(Resolver, AQueryForNxnameIsFormerr) {
    for (const char* name : {"www.example.test", "nothing.example.test"}) {
        auto p = ask(*snap_, make_query(name, 128));
        ASSERT_TRUE(p.ok) << name;
        EXPECT_EQ(p.rcode, 1) << name;
        EXPECT_TRUE(p.answer.empty()) << name;
        EXPECT_EQ(ask(*snap_, make_query(name, 41)).rcode, 1) << name << " OPT";
    }
}

TEST_F(Resolver, NoOptWithoutEdns) {
    auto p = ask(*snap_, make_query("www.example.test", 1, no_edns()));
    EXPECT_FALSE(p.edns);
}

TEST_F(Resolver, DoBitEchoed) {
    QueryOpts o;
    o.do_bit = true;
    Client c;
    auto q = make_query("www.example.test", 1, o);
    uint8_t out[4096];
    size_t n = answer(*snap_, q.data(), q.size(), c, out, sizeof out);
    ASSERT_GT(n, 11u);
    EXPECT_EQ(out[n - 4] & 0x80, 0x80);  // OPT: owner, type, class, ext-rcode, version, flags (DO = top bit), rdlen
}

TEST_F(Resolver, UdpWithoutEdnsTruncatesAt512) {
    auto p = ask(*snap_, make_query("big.example.test", 16, no_edns()));
    EXPECT_TRUE(p.tc);
    EXPECT_TRUE(p.answer.empty());
    EXPECT_LE(p.size, 512u);
    EXPECT_EQ(p.question.rfind("big.example.test.", 0), 0u);
}

TEST_F(Resolver, UdpHonoursClientPayloadUpToConfigured) {
    QueryOpts o;
    o.payload = 4096;  // more than we send: capped at 1232
    auto p = ask(*snap_, make_query("big.example.test", 16, o));
    EXPECT_TRUE(p.tc);
    EXPECT_LE(p.size, 1232u);
    EXPECT_TRUE(p.edns);
    o.payload = 600;
    auto small = ask(*snap_, make_query("www.example.test", 1, o));
    EXPECT_FALSE(small.tc);
}

TEST_F(Resolver, QdcountZeroIsFormerr) {
    auto q = make_query("www.example.test", 1, no_edns());
    q[5] = 0;
    auto p = ask(*snap_, q);
    EXPECT_EQ(p.rcode, 1);
}

TEST_F(Resolver, TwoOptRecordsIsFormerr) {
    auto q = make_query("www.example.test", 1);
    std::vector<uint8_t> opt(q.end() - 11, q.end());
    q.insert(q.end(), opt.begin(), opt.end());
    q[11] = 2;
    auto p = ask(*snap_, q);
    EXPECT_EQ(p.rcode, 1);
}

TEST_F(Resolver, TruncatedQuestionIsFormerr) {
    auto q = make_query("www.example.test", 1, no_edns());
    q.resize(q.size() - 3);
    auto p = ask(*snap_, q);
    EXPECT_EQ(p.rcode, 1);
}

TEST_F(Resolver, ResponsesAreNeverAnswered) {
    auto q = make_query("www.example.test", 1);
    q[2] |= 0x80;
    Client c;
    uint8_t out[512];
    EXPECT_EQ(answer(*snap_, q.data(), q.size(), c, out, sizeof out), 0u);
}

TEST_F(Resolver, ShortPacketDropped) {
    uint8_t q[5] = {1, 2, 3, 4, 5};
    Client c;
    uint8_t out[512];
    EXPECT_EQ(answer(*snap_, q, sizeof q, c, out, sizeof out), 0u);
}

TEST_F(Resolver, CompressionPointerInQuestionIsFormerr) {
    auto q = make_query("www.example.test", 1, no_edns());
    q[12] = 0xc0, q[13] = 12;  // a pointer to itself
    auto p = ask(*snap_, q);
    EXPECT_EQ(p.rcode, 1);
}

TEST_F(Resolver, NamesAreCompressed) {
    auto q = make_query("example.test", 2, no_edns());
    Client c;
    uint8_t out[4096];
    size_t n = answer(*snap_, q.data(), q.size(), c, out, sizeof out);
    // Uncompressed, the two NS targets and glue owners would repeat "example.test" (14 bytes) 4 times.
    EXPECT_LT(n, 140u);
    EXPECT_TRUE(parse(out, n).ok);
}

}  // namespace

// ---- DNS Cookies (RFC 7873, RFC 9018)
namespace {

// SipHash-2-4 reference vectors (the SipHash paper, appendix A / the reference vectors.h): key 00..0f,
// messages 00..(n-1).
TEST(Cookie, SipHashMatchesTheReferenceVectors) {
    cookie::Secret key;
    for (int i = 0; i < 16; ++i) key[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
    uint8_t msg[64];
    for (int i = 0; i < 64; ++i) msg[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(cookie::siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
    EXPECT_EQ(cookie::siphash24(key, msg, 1), 0x74f839c593dc67fdULL);
    EXPECT_EQ(cookie::siphash24(key, msg, 7), 0xab0200f58b01d137ULL);
    EXPECT_EQ(cookie::siphash24(key, msg, 8), 0x93f5f5799a932462ULL);
    EXPECT_EQ(cookie::siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);  // the paper's worked example
    EXPECT_EQ(cookie::siphash24(key, msg, 63), 0x958a324ceb064572ULL);
}

std::vector<uint8_t> with_server(const std::vector<uint8_t>& client, const std::vector<uint8_t>& server) {
    auto c = client;
    c.insert(c.end(), server.begin(), server.end());
    return c;
}

class Cookies : public ::testing::Test {
protected:
    void SetUp() override { snap_ = fresh(); }
    // A snapshot with the test's cookie secret.
    static std::shared_ptr<Snapshot> fresh() {
        auto c = config_from(kGlbTestConfig);
        auto s = build_snapshot(c, {local_cluster_view(c)}, nullptr, 7);
        for (size_t i = 0; i < s->cookie_secret.size(); ++i) s->cookie_secret[i] = static_cast<uint8_t>(0xa0 + i);
        return s;
    }
    Parsed ask_with(const std::optional<std::vector<uint8_t>>& cookie, const std::string& from, QueryInfo* qi) {
        QueryOpts o;
        o.cookie = cookie;
        return ask(*snap_, make_query("static.glb.test", 1, o), Transport::udp, from, qi);
    }
    std::shared_ptr<const Snapshot> snap_;
    const std::vector<uint8_t> client_ = {1, 2, 3, 4, 5, 6, 7, 8};
};

TEST_F(Cookies, ClientCookieGetsAServerCookieThatThenProvesTheAddress) {
    QueryInfo qi;
    auto p = ask_with(client_, "198.51.100.7", &qi);
    ASSERT_EQ(p.rcode, 0);
    ASSERT_EQ(p.answer.size(), 1u);
    ASSERT_EQ(p.cookie.size(), 24u);  // the client's 8 bytes, then a 16-byte RFC 9018 server cookie
    EXPECT_TRUE(std::equal(client_.begin(), client_.end(), p.cookie.begin()));
    EXPECT_EQ(p.cookie[8], 1);  // version
    EXPECT_FALSE(qi.cookie_valid);
    EXPECT_TRUE(qi.varies);  // a fresh cookie each time: never from the answer cache
    std::vector<uint8_t> server(p.cookie.begin() + 8, p.cookie.end());

    QueryInfo again;
    p = ask_with(with_server(client_, server), "198.51.100.7", &again);
    EXPECT_EQ(p.rcode, 0);
    EXPECT_TRUE(again.cookie_valid);
    // From another address, with another client cookie, or altered: not valid (still answered).
    QueryInfo other;
    ask_with(with_server(client_, server), "198.51.100.8", &other);
    EXPECT_FALSE(other.cookie_valid);
    auto other_client = client_;
    other_client[0] ^= 1;
    ask_with(with_server(other_client, server), "198.51.100.7", &other);
    EXPECT_FALSE(other.cookie_valid);
    server[15] ^= 1;
    p = ask_with(with_server(client_, server), "198.51.100.7", &other);
    EXPECT_FALSE(other.cookie_valid);
    EXPECT_EQ(p.rcode, 0);
}

TEST_F(Cookies, OldOrFutureServerCookieIsNotValid) {
    const auto client = address_of("198.51.100.7");
    uint32_t now = static_cast<uint32_t>(std::time(nullptr));
    uint8_t sc[16];
    for (auto [when, valid] :
         {std::pair{now - 3500, true}, {now - 3700, false}, {now + 200, true}, {now + 400, false}}) {
        cookie::make_server_cookie(snap_->cookie_secret, client_.data(), client, when, sc);
        QueryInfo qi;
        ask_with(with_server(client_, std::vector<uint8_t>(sc, sc + 16)), "198.51.100.7", &qi);
        EXPECT_EQ(qi.cookie_valid, valid) << static_cast<int64_t>(when) - now;
    }
}

// After a rotation (RFC 9018 section 5) a cookie made with the previous secret is still good; one made with
// a secret the snapshot does not hold is not.
TEST_F(Cookies, ACookieOfThePreviousSecretIsStillGood) {
    const auto client = address_of("198.51.100.7");
    uint32_t now = static_cast<uint32_t>(std::time(nullptr));
    cookie::Secret old_secret = snap_->cookie_secret, other{};
    other[0] = 7;
    uint8_t made_old[16], made_other[16];
    cookie::make_server_cookie(old_secret, client_.data(), client, now, made_old);
    cookie::make_server_cookie(other, client_.data(), client, now, made_other);
    auto rotated = fresh();
    rotated->cookie_previous = old_secret;
    rotated->cookie_secret[0] ^= 0xff;
    snap_ = rotated;
    QueryInfo qi;
    ask_with(with_server(client_, std::vector<uint8_t>(made_old, made_old + 16)), "198.51.100.7", &qi);
    EXPECT_TRUE(qi.cookie_valid);
    ask_with(with_server(client_, std::vector<uint8_t>(made_other, made_other + 16)), "198.51.100.7", &qi);
    EXPECT_FALSE(qi.cookie_valid);
    rotated->cookie_previous.reset();  // past the previous one's time: no longer good
    ask_with(with_server(client_, std::vector<uint8_t>(made_old, made_old + 16)), "198.51.100.7", &qi);
    EXPECT_FALSE(qi.cookie_valid);
}

TEST_F(Cookies, MalformedCookieOptionIsFormerr) {
    for (size_t len : {0u, 7u, 9u, 15u, 41u}) {
        auto p = ask_with(std::vector<uint8_t>(len, 0x42), "198.51.100.7", nullptr);
        EXPECT_EQ(p.rcode, 1) << len;  // FORMERR (RFC 7873 5.2.2)
    }
    for (size_t len : {8u, 16u, 40u})
        EXPECT_EQ(ask_with(std::vector<uint8_t>(len, 0x42), "198.51.100.7", nullptr).rcode, 0) << len;
}

}  // namespace
