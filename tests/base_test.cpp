// resolver/base: the address types every layer shares, judged against the C library (inet_pton, inet_ntop); and the
// model's Endpoint, an address or a name, built on them.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include <string>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/base/find_from.hpp"
#include "resolver/model/global_view.hpp"
#include "resolver/wire/consts.hpp"
#include "tests/dns_util.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

using namespace glbd;

// Address::parse agrees with the C library's inet_pton, and refuses what inet_pton refuses.
TEST(Address, ParseAgreesWithInetPton) {
    for (const char* text : {"0.0.0.0", "10.1.2.3", "255.255.255.255", "::", "::1", "2001:db8::10",
                             "2001:db8:0:0:1:0:0:1", "fe80::1:2:3:4", "::ffff:192.0.2.1"}) {
        Address a;
        ASSERT_TRUE(Address::parse(text, a)) << text;
        Address b = test::address_of(text);
        EXPECT_EQ(a.family, b.family) << text;
        EXPECT_EQ(a.bytes, b.bytes) << text;
    }
    for (const char* text :
         {"", "1.2.3", "1.2.3.256", "01.2.3.4x", "2001:db8::1::2", "example.com", "1.2.3.4/8", " 1.2.3.4", "[::1]"}) {
        Address a;
        EXPECT_FALSE(Address::parse(text, a)) << text;
    }
}

// What is printed is inet_ntop's text (IPv4 is printed without it), also appended to what is there.
TEST(Address, PrintsAsInetNtop) {
    std::mt19937 rng(5);
    for (int i = 0; i < 2000; ++i) {
        Address a;
        a.family = i % 2 ? 4 : 6;
        for (size_t k = 0; k < (a.family == 4 ? 4u : 16u); ++k)
            a.bytes[k] = static_cast<uint8_t>(rng() % (i % 3 ? 256 : 3));
        char want[INET6_ADDRSTRLEN] = {};
        ASSERT_TRUE(inet_ntop(a.family == 4 ? AF_INET : AF_INET6, a.bytes.data(), want, sizeof want));
        EXPECT_EQ(a.str(), want);
        std::string out = "ep=";
        a.append_to(out);
        EXPECT_EQ(out, std::string("ep=") + want);
    }
    for (const char* text : {"::", "::1", "::2", "::0.0.0.2", "::ffff:192.0.2.1", "::ffff:0.0.0.0",
                             "1::", "1:0:0:2::", "0:1::", "1:0:0:1:0:0:1:0", "2001:db8::1:0:0:1",
                             "fe80::", "::ffff:1:2", "0:0:0:0:0:1:2:3"}) {
        Address a;
        ASSERT_TRUE(Address::parse(text, a)) << text;
        char want[INET6_ADDRSTRLEN] = {};
        ASSERT_TRUE(inet_ntop(AF_INET6, a.bytes.data(), want, sizeof want));
        EXPECT_EQ(a.str(), want) << text;
    }
}

TEST(Address, LoopbackAndUnspecified) {
    EXPECT_TRUE(test::address_of("127.0.0.1").is_loopback());
    EXPECT_TRUE(test::address_of("127.255.0.9").is_loopback());
    EXPECT_TRUE(test::address_of("::1").is_loopback());
    EXPECT_FALSE(test::address_of("128.0.0.1").is_loopback());
    EXPECT_FALSE(test::address_of("::2").is_loopback());
    EXPECT_FALSE(test::address_of("::ffff:127.0.0.1").is_loopback());  // mapped: not unmapped here
    EXPECT_TRUE(test::address_of("0.0.0.0").is_unspecified());
    EXPECT_TRUE(test::address_of("::").is_unspecified());
    EXPECT_FALSE(test::address_of("0.0.0.1").is_unspecified());
}

// "ip:port" and "[ipv6]:port", as listen addresses and peers are written; anything else is refused.
TEST(SocketAddress, ParsesAndPrintsBothFamilies) {
    struct Case {
        const char* text;
        const char* ip;
        uint16_t port;
    };
    for (const Case& c : {Case{"192.0.2.1:53", "192.0.2.1", 53}, Case{"[2001:db8::1]:5353", "2001:db8::1", 5353},
                          Case{"127.0.0.1:0", "127.0.0.1", 0}, Case{"[::1]:65535", "::1", 65535}}) {
        SocketAddress a;
        ASSERT_TRUE(SocketAddress::parse(c.text, a)) << c.text;
        EXPECT_EQ(a.address, test::address_of(c.ip)) << c.text;
        EXPECT_EQ(a.port, c.port) << c.text;
        EXPECT_EQ(a.str(), c.text);
        sockaddr_storage ss{};
        a.to_sockaddr(ss);
        SocketAddress back;
        ASSERT_TRUE(SocketAddress::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), back));
        EXPECT_EQ(back, a);
    }
    for (const char* text : {"", "192.0.2.1", "192.0.2.1:", "192.0.2.1:65536", "192.0.2.1:5x", "2001:db8::1:53",
                             "[192.0.2.1]:53", "[2001:db8::1]", "host.example:53", "[::1]:+53", "192.0.2.1:123456"}) {
        SocketAddress a;
        EXPECT_FALSE(SocketAddress::parse(text, a)) << text;
    }
}

TEST(SocketAddress, OrdersByAddressThenPort) {
    SocketAddress a, b, c;
    ASSERT_TRUE(SocketAddress::parse("192.0.2.1:53", a));
    ASSERT_TRUE(SocketAddress::parse("192.0.2.1:54", b));
    ASSERT_TRUE(SocketAddress::parse("192.0.2.2:53", c));
    EXPECT_LT(a, b);
    EXPECT_LT(b, c);
    EXPECT_EQ(a, a);
}

// A network has no host bits set; loose parsing (an ECS subnet as a client gives it) allows them.
TEST(Prefix, NetworksAreStrictUnlessAsked) {
    Prefix p;
    ASSERT_TRUE(Prefix::parse("10.1.0.0/16", p));
    EXPECT_EQ(p.address, test::address_of("10.1.0.0"));
    EXPECT_EQ(p.length, 16);
    EXPECT_EQ(p.str(), "10.1.0.0/16");
    ASSERT_TRUE(Prefix::parse("2001:db8::/32", p));
    EXPECT_EQ(p.length, 32);
    ASSERT_TRUE(Prefix::parse("0.0.0.0/0", p));
    EXPECT_FALSE(Prefix::parse("10.1.2.0/16", p));
    ASSERT_TRUE(Prefix::parse("10.1.2.0/16", p, false));
    EXPECT_EQ(p.address, test::address_of("10.1.2.0"));
    for (const char* text :
         {"10.1.0.0", "10.1.0.0/33", "2001:db8::/129", "10.1.0.0/", "10.1.0.0/1x", "/8", "x/8", "10.1.0.0/0008"}) {
        EXPECT_FALSE(Prefix::parse(text, p, false)) << text;
    }
}

// The wire layer's names for types and response codes agree with ldns's (an independent table).
TEST(WireConsts, NamesAgreeWithLdns) {
    for (uint16_t t : {wire::type::A, wire::type::NS, wire::type::CNAME, wire::type::SOA, wire::type::TXT,
                       wire::type::AAAA, wire::type::OPT, wire::type::RRSIG, wire::type::NSEC, wire::type::DNSKEY,
                       wire::type::AXFR, wire::type::ANY, wire::type::CAA, uint16_t{65000}}) {
        char* theirs = ldns_rr_type2str(static_cast<ldns_rr_type>(t));
        EXPECT_EQ(wire::type_name(t), theirs) << t;
        if (t != 65000) {
            EXPECT_EQ(wire::type_from_name(theirs), t);
        }
        free(theirs);
    }
    EXPECT_FALSE(wire::type_from_name("BOGUS"));
    for (uint16_t rc = 0; rc <= 10; ++rc) {
        const ldns_lookup_table* l = ldns_lookup_by_id(ldns_rcodes, rc);
        ASSERT_NE(l, nullptr);
        std::string theirs = l->name;
        if (theirs == "NOTIMPL") theirs = "NOTIMP";  // ldns's spelling; dig and IANA's NotImp have NOTIMP
        EXPECT_EQ(wire::rcode_name(rc), theirs) << rc;
    }
    EXPECT_EQ(wire::rcode_name(wire::rcode::BADVERS), "BADVERS");
    EXPECT_EQ(wire::rcode_name(12), "RCODE12");
    EXPECT_EQ(wire::opcode_of(wire::opcode_bits(wire::opcode::NOTIFY) | wire::flag::QR | wire::flag::AA),
              wire::opcode::NOTIFY);
    EXPECT_EQ(wire::rcode_of(0x8405), wire::rcode::REFUSED);
}

// ---- resolver/wire/opt: a query's OPT record read, the response's written
#include "resolver/wire/opt.hpp"

namespace {

// An OPT RDATA (options only) read with read_opt; the record's CLASS 1232 and TTL with DO and `version`.
bool read_rdata(const std::vector<uint8_t>& rdata, glbd::wire::Edns& e, uint8_t version = 0) {
    return glbd::wire::read_opt(rdata.data(), 0, rdata.size(), 1232, uint32_t{version} << 16 | 0x8000, e);
}

TEST(Opt, ReadsEcsAndCookieAndWritesThemBack) {
    using namespace glbd::wire;
    // ECS 192.0.2.0/24 (scope 0), an option glbd ignores (code 65001, 2 bytes), a client cookie with an 8-byte
    // server cookie.
    std::vector<uint8_t> rdata = {0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2, 0xfd, 0xe9, 0, 2, 0xaa, 0xbb, 0, 10, 0, 16};
    for (uint8_t b = 1; b <= 16; ++b) rdata.push_back(b);
    Edns e;
    ASSERT_TRUE(read_rdata(rdata, e));
    EXPECT_TRUE(e.present && e.do_bit);
    EXPECT_EQ(e.payload, 1232);
    ASSERT_TRUE(e.ecs);
    EXPECT_EQ(e.ecs_family, edns::kFamilyIpv4);
    EXPECT_EQ(e.ecs_source, 24);
    ASSERT_EQ(e.ecs_addr_len, 3);
    EXPECT_EQ(std::vector<uint8_t>(e.ecs_addr, e.ecs_addr + 3), (std::vector<uint8_t>{192, 0, 2}));
    ASSERT_TRUE(e.cookie);
    EXPECT_EQ(std::vector<uint8_t>(e.client_cookie, e.client_cookie + 8),
              (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    ASSERT_EQ(e.server_cookie_len, 8);
    EXPECT_EQ(e.server_cookie[0], 9);

    const uint8_t server[16] = {0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
                                0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f, 0x60};
    uint8_t out[128];
    Writer w(out, sizeof out);
    ASSERT_TRUE(write_opt(w, e, 1400, rcode::BADVERS, 20, server, sizeof server));
    std::vector<uint8_t> want = {0, 0,  41,   0x05, 0x78,  // root, OPT, payload 1400
                                 1, 0,  0x80, 0,           // BADVERS (16) >> 4, version 0, DO
                                 0, 39,                    // RDLENGTH: ECS 4 + 7, COOKIE 4 + 8 + 16
                                 0, 8,  0,    7,    0,    1, 24, 20, 192, 0, 2,  // ECS echoed with scope 20
                                 0, 10, 0,    24,   1,    2, 3,  4,  5,   6, 7, 8};
    want.insert(want.end(), server, server + 16);
    EXPECT_EQ(std::vector<uint8_t>(out, out + w.pos()), want);
    EXPECT_EQ(opt_size(e, sizeof server), want.size());
    // Without room it writes nothing and the writer overflows.
    Writer small(out, 20);
    EXPECT_FALSE(write_opt(small, e, 1400, 0, 20, server, sizeof server));
    EXPECT_TRUE(small.overflow());
}

TEST(Opt, RefusesMalformedOptions) {
    glbd::wire::Edns e;
    for (const std::vector<uint8_t>& bad :
         std::vector<std::vector<uint8_t>>{{0, 8, 0, 7, 0, 1, 25, 0, 192, 0, 2},      // /25 needs 4 address bytes
                                           {0, 8, 0, 7, 0, 1, 23, 0, 192, 0, 3},      // a bit set beyond /23
                                           {0, 8, 0, 7, 0, 3, 24, 0, 192, 0, 2},      // family 3
                                           {0, 8, 0, 8, 0, 1, 33, 0, 192, 0, 2, 1},   // /33 for IPv4
                                           {0, 10, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9},  // a 9-byte cookie
                                           {0, 10, 0, 41},                            // longer than what follows
                                           {0, 8, 0},                                 // a cut option header
                                           {0, 8, 0, 4, 0, 1, 0, 0, 0, 8, 0, 4, 0, 1, 0, 0}}) {  // two ECS options
        e = {};
        EXPECT_FALSE(read_rdata(bad, e)) << bad.size();
    }
    e = {};
    EXPECT_TRUE(read_rdata({0, 8, 0, 4, 0, 2, 0, 0}, e));  // ::/0: no address bytes
    EXPECT_TRUE(e.ecs && e.ecs_addr_len == 0);
    e = {};
    EXPECT_TRUE(read_rdata({}, e, 1));
    EXPECT_EQ(e.version, 1);  // read; BADVERS is the answer path's call
}

}  // namespace

// ---- resolver/base/curl: probe URLs built part by part
#include "resolver/base/curl.hpp"

namespace {

std::string url_text(const glbd::curl::Url& u, CURLUPart part = CURLUPART_URL) {
    char* out = nullptr;
    if (!u || curl_url_get(u.get(), part, &out, 0) != CURLUE_OK) return "(none)";
    std::string s = out;
    curl_free(out);
    return s;
}

TEST(CurlUrl, ThePathNeverChangesHostOrPort) {
    using glbd::curl::url;
    EXPECT_EQ(url_text(url(true, "shop.example.com", 8443, "/healthz?probe=1&x=%20")),
              "https://shop.example.com:8443/healthz?probe=1&x=%20");
    EXPECT_EQ(url_text(url(false, "shop.example.com", 80, "?only-a-query")),
              "http://shop.example.com:80/?only-a-query");
    for (const char* hostile : {"/@127.0.0.1:18081/metrics", "//127.0.0.1:18081/", "/..;@evil:1/", "/#@evil:1"}) {
        auto u = url(true, "shop.example.com", 443, hostile);
        EXPECT_EQ(url_text(u, CURLUPART_HOST), "shop.example.com") << hostile;
        EXPECT_EQ(url_text(u, CURLUPART_PORT), "443") << hostile;
    }
    EXPECT_FALSE(url(true, "shop.example.com", 443, "@127.0.0.1:18081/metrics"));  // must start with / or ?
    EXPECT_FALSE(url(true, "shop.example.com", 443, ""));
}

// The forwarders (resolver/base/curl.cpp) hand libcurl each option's argument as its type: a string, a pointer, a
// function, a long, an off_t; and getinfo's pointer. A file of ten digits read from offset 4, then from 7.
TEST(CurlForwarders, EveryKindOfArgumentReachesLibcurl) {
    auto path = std::filesystem::temp_directory_path() / ("glbd-curl-" + std::to_string(::getpid()));
    std::ofstream(path) << "0123456789";
    std::string file_url = "file://" + path.string(), got;
    glbd::curl::Easy easy = glbd::curl::easy();
    ASSERT_TRUE(easy);
    CURL* e = easy.get();
    EXPECT_EQ(curl_easy_setopt(e, CURLOPT_URL, file_url.c_str()), CURLE_OK);
    EXPECT_EQ(curl_easy_setopt(e, CURLOPT_WRITEDATA, &got), CURLE_OK);
    EXPECT_EQ(curl_easy_setopt(
                  e, CURLOPT_WRITEFUNCTION,
                  +[](char* p, size_t size, size_t n, void* out) {
                      static_cast<std::string*>(out)->append(p, size * n);
                      return size * n;
                  }),
              CURLE_OK);
    EXPECT_EQ(curl_easy_setopt(e, CURLOPT_RESUME_FROM, 4L), CURLE_OK);
    EXPECT_EQ(curl_easy_perform(e), CURLE_OK);
    EXPECT_EQ(got, "456789");
    curl_off_t size = 0;
    EXPECT_EQ(curl_easy_getinfo(e, CURLINFO_SIZE_DOWNLOAD_T, &size), CURLE_OK);
    EXPECT_EQ(size, 6);
    got.clear();
    EXPECT_EQ(curl_easy_setopt(e, CURLOPT_RESUME_FROM_LARGE, curl_off_t{7}), CURLE_OK);
    EXPECT_EQ(curl_easy_perform(e), CURLE_OK);
    EXPECT_EQ(got, "789");
    std::filesystem::remove(path);
}

}  // namespace

// ---- resolver/base/shared_library: a library opened at its first use
#include "resolver/base/shared_library.hpp"

namespace {

// zlib (on every machine that has libcurl; not linked by glbd) computes CRC-32's check value of "123456789".
TEST(SharedLibrary, FindsTheFunctionsOfALibraryOpenedWhenAsked) {
    glbd::SharedLibrary zlib("libz.so.1");
    using Crc32 = unsigned long(unsigned long, const unsigned char*, unsigned int);
    auto* crc32 = zlib.function<Crc32>("crc32");
    ASSERT_NE(crc32, nullptr) << zlib.error();
    const unsigned char digits[] = "123456789";
    EXPECT_EQ(crc32(0, digits, 9), 0xCBF43926UL);
    EXPECT_EQ(zlib.error(), "");
    EXPECT_EQ(zlib.function<Crc32>("glbd_no_such_function"), nullptr);
}

TEST(SharedLibrary, AMissingLibraryGivesNoFunctionAndSaysWhy) {
    glbd::SharedLibrary absent("libglbd-absent.so.9");
    EXPECT_EQ(absent.function<int()>("anything"), nullptr);
    EXPECT_NE(absent.error().find("libglbd-absent.so.9"), std::string::npos) << absent.error();
}

}  // namespace

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "resolver/base/read_file.hpp"

namespace {

// read_file: a regular file whole, or nothing with the reason: missing (and said so), a directory, a FIFO (never
// blocked on), one byte over the bound. A file bigger than its first read is read whole.
TEST(ReadFile, WholeRegularFilesWithinTheirBoundOnly) {
    char tmpl[] = "/tmp/glbd-read-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    bool missing = false;

    std::string big(3 << 20, 'x');
    big[12345] = 'y';
    std::ofstream(dir + "/big", std::ios::binary) << big;
    auto text = glbd::read_file(dir + "/big", big.size(), &missing);
    ASSERT_TRUE(text) << text.error();
    EXPECT_EQ(*text, big);
    EXPECT_FALSE(missing);

    auto refused = glbd::read_file(dir + "/big", big.size() - 1, &missing);
    EXPECT_FALSE(refused);
    EXPECT_EQ(refused.error(), "larger than " + std::to_string(big.size() - 1) + " bytes");
    EXPECT_FALSE(missing);

    std::ofstream(dir + "/empty").close();
    text = glbd::read_file(dir + "/empty", 0);
    ASSERT_TRUE(text) << text.error();
    EXPECT_EQ(*text, "");

    refused = glbd::read_file(dir + "/nope", 10, &missing);
    EXPECT_FALSE(refused);
    EXPECT_EQ(refused.error(), "No such file or directory");
    EXPECT_TRUE(missing);

    refused = glbd::read_file(dir, 10, &missing);
    EXPECT_FALSE(refused);
    EXPECT_EQ(refused.error(), "not a regular file");
    EXPECT_FALSE(missing);

    ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);  // no writer: a blocking open would wait for ever
    refused = glbd::read_file(dir + "/fifo", 10);
    EXPECT_FALSE(refused);
    EXPECT_EQ(refused.error(), "not a regular file");
    std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// An endpoint is an address or a name in 24 bytes (the name held once, whatever the copies): copies, moves and
// assignments between the two kinds keep each its value, and the order puts addresses first.
TEST(Endpoint, AddressesAndNamesCopyMoveAndCompareByValue) {
    static_assert(sizeof(glbd::Endpoint) == 24 && sizeof(glbd::EndpointState) == 24);
    auto a = *glbd::Endpoint::parse("192.0.2.1");
    auto b = *glbd::Endpoint::parse("2001:db8::1");
    auto n = *glbd::Endpoint::parse("lb.example.net");
    auto m = *glbd::Endpoint::parse("lb.example.org");
    EXPECT_FALSE(glbd::Endpoint::parse("Upper.example.net"));
    EXPECT_TRUE(a.is_address());
    EXPECT_FALSE(n.is_address());
    EXPECT_EQ(n.str(), "lb.example.net");
    glbd::Endpoint copy = n;  // shares the name
    EXPECT_EQ(copy, n);
    EXPECT_EQ(&copy.name(), &n.name());
    EXPECT_EQ(*glbd::Endpoint::parse("lb.example.net"), n);  // another copy of the text: equal by value
    EXPECT_EQ(std::hash<glbd::Endpoint>{}(*glbd::Endpoint::parse("lb.example.net")), std::hash<glbd::Endpoint>{}(n));
    copy = a;  // a name replaced by an address
    EXPECT_TRUE(copy.is_address());
    EXPECT_EQ(copy, a);
    copy = m;  // and by a name again
    EXPECT_EQ(copy.str(), "lb.example.org");
    glbd::Endpoint moved = std::move(copy);
    EXPECT_EQ(moved, m);
    copy = b;  // a moved-from endpoint takes a new value
    EXPECT_EQ(copy, b);
    glbd::Endpoint& same = moved;
    moved = std::move(same);  // to itself: unchanged
    EXPECT_EQ(moved, m);
    std::vector<glbd::Endpoint> all{m, n, b, a};
    std::sort(all.begin(), all.end());
    const bool a_first = a.address() < b.address();  // addresses in Address's order, then names by text
    EXPECT_EQ(all, (std::vector<glbd::Endpoint>{a_first ? a : b, a_first ? b : a, n, m}));
    EXPECT_LT(b, n);
    EXPECT_NE(a, n);
    EXPECT_EQ(glbd::Endpoint(), *glbd::Endpoint::parse("0.0.0.0"));
}

}  // namespace

#include <thread>

#include "resolver/base/shared_text.hpp"

namespace {

// A text of every length from 0 (all zero) through 7 (inline) to past them (one block the copies share) keeps its
// value through copies, moves and assignment, compares with literals and std::strings as they do with each
// other, and hashes as its characters do.
TEST(SharedText, InlineAndSharedTextsKeepTheirValue) {
    static_assert(sizeof(glbd::SharedText) == 8);
    const std::string all = "gw-a.klb.shop.glb.test";
    std::vector<glbd::SharedText> texts;
    for (size_t n = 0; n <= all.size(); ++n) texts.emplace_back(std::string_view(all).substr(0, n));
    for (size_t n = 0; n <= all.size(); ++n) {
        const std::string want = all.substr(0, n);
        const glbd::SharedText& t = texts[n];
        EXPECT_EQ(t.view(), want);
        EXPECT_EQ(t.size(), n);
        EXPECT_EQ(t.empty(), n == 0);
        EXPECT_EQ(t, want);
        EXPECT_EQ(t.str(), want);
        EXPECT_EQ(std::hash<glbd::SharedText>{}(t), std::hash<std::string_view>{}(want));
        glbd::SharedText copy = t;
        EXPECT_EQ(copy, t);
        if (n > 0) {  // past 7: one block; else each its own
            EXPECT_EQ(copy.view().data() == t.view().data(), n > 7) << n;
        }
        glbd::SharedText moved = std::move(copy);
        EXPECT_EQ(moved, want);
        EXPECT_TRUE(copy.empty());     // NOLINT(bugprone-use-after-move): a moved-from text is empty
        copy = texts[all.size() - n];  // a moved-from text takes a new value
        EXPECT_EQ(copy, all.substr(0, all.size() - n));
        glbd::SharedText& same = moved;
        moved = same;  // to itself: unchanged
        EXPECT_EQ(moved, want);
        if (n > 0) {
            EXPECT_LT(texts[n - 1], t);  // a prefix orders first, as with std::string
        }
    }
    EXPECT_EQ(glbd::SharedText("IE"), "IE");
    EXPECT_NE(glbd::SharedText("IE"), "IEE");
    EXPECT_LT(glbd::SharedText("GEO-EU"), std::string("US"));
    EXPECT_EQ(std::string("k=") + glbd::SharedText("gw-a.klb.shop"), "k=gw-a.klb.shop");
    const std::string nul("a\0b", 3);  // any byte, as a string holds it
    EXPECT_EQ(glbd::SharedText(nul).view(), nul);
}

// Copies of one block made and dropped on several threads at once leave it whole (ThreadSanitizer runs this too).
TEST(SharedText, CopiesOnManyThreadsShareOneBlock) {
    const glbd::SharedText text("an upstream name past seven bytes");
    std::vector<std::thread> threads;
    threads.reserve(4);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&text] {
            for (int i = 0; i < 20000; ++i) {
                glbd::SharedText copy = text;
                glbd::SharedText moved = std::move(copy);
                if (moved != text) std::abort();
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(text, "an upstream name past seven bytes");
}

}  // namespace

// A search from where the last match was: the first match at or after `from`, else round from the start; the
// list's size when nothing matches (an empty list too), and `from` past the end taken round.
TEST(FindFrom, LooksFromWhereItIsToldThenRound) {
    const std::vector<int> list{5, 7, 5, 9};
    auto is = [](int want) { return [want](int x) { return x == want; }; };
    EXPECT_EQ(glbd::find_from(list, 0, is(5)), 0u);
    EXPECT_EQ(glbd::find_from(list, 1, is(5)), 2u);
    EXPECT_EQ(glbd::find_from(list, 3, is(5)), 0u);  // round: past 9, from the start
    EXPECT_EQ(glbd::find_from(list, 3, is(7)), 1u);
    EXPECT_EQ(glbd::find_from(list, 6, is(5)), 2u);  // 6 is position 2
    EXPECT_EQ(glbd::find_from(list, 2, is(4)), list.size());
    EXPECT_EQ(glbd::find_from(std::vector<int>{}, 0, is(4)), 0u);
}
