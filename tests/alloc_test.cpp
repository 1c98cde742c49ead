// (GCC cannot see that our operator new is malloc: its mismatched-new-delete warning is wrong here.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// The query path does not allocate: every operator new in this binary is counted, and answering
// static, load-balanced (with ECS, geo, weights, CNAME to a hostname), NXDOMAIN, NODATA, REFUSED,
// FORMERR and truncated queries must not move the count, nor must the same queries with DO in a signed
// zone: RRSIGs made when the snapshot was built, and those made while answering (compact denial, wildcards),
// whose only allocations are OpenSSL's own (malloc, inside the signature; not counted here).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "geo/location_db.hpp"
#include "resolver/dnssec/keys.hpp"
#include "resolver/resolver.hpp"
#include "server/net/answer_cache.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

namespace {
std::atomic<uint64_t> g_allocations{0};
}

void* operator new(std::size_t n) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace glbd;
using namespace glbd::test;

namespace {

const char* kConfig = R"(cluster: {id: ie}
listen: {dns: ["127.0.0.1:5353"]}
zones:
  - origin: glb.example.test
    nameservers: [{name: ns1.glb.example.test, addresses: [192.0.2.53]}]
    records: |
      www   IN A     192.0.2.10
      alias IN CNAME www
      *.wild IN TXT  "wildcard"
      big   IN TXT   "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      big   IN TXT   "1123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      big   IN TXT   "2123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      big   IN TXT   "3123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      big   IN TXT   "4123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
      big   IN TXT   "5123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
    dnssec: {keys: [KEY]}
)";

TEST(Allocation, NoHeapAllocationPerQuery) {
    char dir[] = "/tmp/glbd-alloc-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string error, key = dnssec::generate("glb.example.test", dnssec::kEcdsaP256Sha256, dir, error);
    ASSERT_FALSE(key.empty()) << error;
    std::string text = kConfig;
    text.replace(text.find("KEY"), 3, key);
    auto c = config_from(text);
    std::filesystem::remove_all(dir);
    ViewBuilder view;
    const char* geos[] = {"IE", "US", "GEO-OC"};
    const char* ids[] = {"ie", "us", "oc"};
    for (int i = 0; i < 3; ++i) {
        std::string n = std::to_string(i + 1);
        view.add("shop.glb.example.test", {ids[i],
                                           geos[i],
                                           static_cast<uint16_t>(100 * (i + 1)),
                                           i == 1,
                                           {{"10.0.0." + n, true}, {"2001:db8::" + n, true}}});
        view.add("lb.glb.example.test", {ids[i],
                                         geos[i],
                                         100,
                                         i == 1,
                                         {{"lb-" + std::to_string(i) + ".elb.example-long-provider-name.net", true}}});
        view.add("simple.glb.example.test",
                 TestEntry{ids[i], "", 100, false, {{"10.1.0." + n, i != 0}}, true, false, std::nullopt, 30});
    }
    auto networks = networks_of({{"192.168.7.0/24", "dc-north"}});
    uint64_t before_build = g_allocations.load();
    auto snap = view.snapshot(c, networks);
    ASSERT_GT(g_allocations.load(), before_build + 10) << "the counting operator new is not in use";

    QueryOpts ie, au, v6, no_edns;
    ie.ecs = ecs_payload("10.1.0.0/16");
    au.ecs = ecs_payload("10.2.0.0/24");
    v6.ecs = ecs_payload("2001:db8:2::/56");
    no_edns.edns = false;
    std::vector<std::pair<const char*, std::vector<uint8_t>>> queries = {
        {"static A", make_query("www.glb.example.test", 1)},
        {"CNAME chase", make_query("alias.glb.example.test", 1)},
        {"load-balanced A, ECS IE", make_query("shop.glb.example.test", 1, ie)},
        {"load-balanced AAAA, ECS AU", make_query("shop.glb.example.test", 28, au)},
        {"load-balanced, IPv6 ECS", make_query("shop.glb.example.test", 1, v6)},
        {"load-balanced, no ECS", make_query("shop.glb.example.test", 1)},
        {"hostname endpoint CNAME", make_query("lb.glb.example.test", 1, ie)},
        {"simple host union", make_query("simple.glb.example.test", 1)},
        {"NXDOMAIN", make_query("nope.glb.example.test", 1)},
        {"NODATA", make_query("www.glb.example.test", 16)},
        {"REFUSED", make_query("www.example.org", 1)},
        {"NS with glue", make_query("glb.example.test", 2)},
        {"truncated", make_query("big.glb.example.test", 16, no_edns)},
    };
    auto formerr = make_query("www.glb.example.test", 1);
    formerr[5] = 2;  // qdcount 2
    queries.emplace_back("FORMERR", formerr);
    // The same with DO: the signed zone's answers carry their RRSIGs.
    std::vector<std::string> signed_names;
    for (size_t i = 0, n = queries.size(); i < n; ++i) signed_names.push_back(std::string(queries[i].first) + " +DO");
    QueryOpts with_do;
    with_do.do_bit = true;
    with_do.payload = 4096;
    QueryOpts ie_do = ie;
    ie_do.do_bit = true;
    queries.emplace_back(signed_names[0].c_str(), make_query("www.glb.example.test", 1, with_do));
    queries.emplace_back(signed_names[1].c_str(), make_query("alias.glb.example.test", 1, with_do));
    queries.emplace_back(signed_names[2].c_str(), make_query("shop.glb.example.test", 1, ie_do));
    queries.emplace_back(signed_names[6].c_str(), make_query("lb.glb.example.test", 1, ie_do));
    queries.emplace_back(signed_names[7].c_str(), make_query("simple.glb.example.test", 1, with_do));
    queries.emplace_back(signed_names[8].c_str(), make_query("nope.glb.example.test", 1, with_do));
    queries.emplace_back(signed_names[9].c_str(), make_query("www.glb.example.test", 16, with_do));
    queries.emplace_back(signed_names[11].c_str(), make_query("glb.example.test", 2, with_do));
    queries.emplace_back("DNSKEY +DO", make_query("glb.example.test", 48, with_do));
    // Signed when answered: a wildcard's answer at the name asked, and compact denials (RFC 9824).
    queries.emplace_back("wildcard +DO", make_query("x.wild.glb.example.test", 16, with_do));
    queries.emplace_back("wildcard NODATA +DO", make_query("x.wild.glb.example.test", 1, with_do));
    queries.emplace_back("host NODATA +DO", make_query("simple.glb.example.test", 28, with_do));

    Client client;
    client.address = test::address_of("10.2.0.9");
    uint8_t out[4096];
    AnswerCache cache;  // its slots are allocated here, once
    for (const auto& [name, q] : queries) {
        size_t n = answer(*snap, q.data(), q.size(), client, out, sizeof out);  // warm up
        ASSERT_GT(n, 0u) << name;
        if (std::string_view(name).ends_with("+DO")) {  // signed: an RRSIG in the answer or authority section
            Parsed p = parse(out, n);
            size_t sigs = 0;
            for (const auto* section : {&p.answer, &p.authority}) {
                for (const auto& rr : *section) sigs += rr.find(" IN RRSIG ") != std::string::npos ? 1 : 0;
            }
            EXPECT_GT(sigs, 0u) << name;
        }
        uint64_t before = g_allocations.load();
        for (int i = 0; i < 1000; ++i) answer(*snap, q.data(), q.size(), client, out, sizeof out);
        EXPECT_EQ(g_allocations.load() - before, 0u) << name << ": allocations in 1000 answers";
        // The UDP path through the answer cache: a store, then hits (or misses, for varying answers).
        before = g_allocations.load();
        for (int i = 0; i < 1000; ++i) {
            QueryInfo qi;
            size_t len = cache.find(1, client.address, q.data(), q.size(), out, sizeof out, qi);
            if (len == 0) {
                len = answer(*snap, q.data(), q.size(), client, out, sizeof out, &qi);
                cache.store(1, client.address, q.data(), q.size(), out, len, qi);
            }
        }
        EXPECT_EQ(g_allocations.load() - before, 0u) << name << ": allocations in 1000 cached answers";
    }
}

}  // namespace

namespace {

// Geo lookups in Debian's location database: many distinct clients, so the per-thread cache misses and
// every lookup is a search of the flattened table.
TEST(Allocation, NoHeapAllocationPerLocationDbLookup) {
    const char* path = "/var/lib/location/database.db";
    ASSERT_TRUE(geo::is_location_db(path)) << path << " is missing: apt-get install libloc-database";
    geo::GeoDb db(path, {});
    std::vector<geo::Address> clients;
    for (uint32_t i = 0; i < 4096; ++i) {
        geo::Address a;
        uint32_t v = i * 2654435761u;
        a.family = i % 2 ? 6 : 4;
        a.bytes = {static_cast<uint8_t>(a.family == 6 ? 0x20 : v >> 24), static_cast<uint8_t>(v >> 16),
                   static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 3)};
        clients.push_back(a);
    }
    for (const auto& a : clients) (void)db.locate(a);  // warm up (thread-local caches are allocated once)
    uint64_t before = g_allocations.load();
    size_t known = 0;
    for (int round = 0; round < 4; ++round) {
        for (const auto& a : clients) known += db.locate(a).code.empty() ? 0 : 1;
    }
    EXPECT_EQ(g_allocations.load() - before, 0u) << "allocations in 16,384 lookups";
    EXPECT_GT(known, 1000u);
}

}  // namespace
