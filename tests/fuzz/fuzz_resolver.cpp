// libFuzzer target: query bytes -> answer(), over UDP and TCP, from IPv4 and IPv6 sources, against a
// snapshot with static data, wildcards, a delegation and load-balanced hosts with geo (ECS exercised),
// a custom network code longer than eight bytes and a hostname endpoint, in a signed zone (DO exercises
// the RRSIGs, compact denial and wildcards signed while answering).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "resolver/dnssec/keys.hpp"

#include "resolver/resolver.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

using namespace glbd;

static std::shared_ptr<const Snapshot> snapshot() {
    char dir[] = "/tmp/glbd-fuzz-XXXXXX";
    if (!mkdtemp(dir)) abort();
    std::string error, key = dnssec::generate("glb.example.test", dnssec::kEcdsaP256Sha256, dir, error);
    if (key.empty()) abort();
    std::string text = R"(cluster: {id: ie}
listen: {dns: ["127.0.0.1:5353"]}
zones:
  - origin: glb.example.test
    nameservers: [{name: ns1.glb.example.test, addresses: [192.0.2.53, "2001:db8::53"]}]
    records: |
      www    IN A     192.0.2.10
      alias  IN CNAME www
      *.wild IN TXT   "wild"
      child  IN NS    ns.child
      ns.child IN A   192.0.2.90
      @      IN MX    10 www
    dnssec: {keys: [KEY]}
)";
    text.replace(text.find("KEY"), 3, key);
    auto c = test::config_from(text);  // the keys are loaded: their files may go
    std::filesystem::remove_all(dir);
    test::ViewBuilder v;
    const char* geos[] = {"IE", "US", "GEO-OC", "dc-north-long"};
    for (int i = 0; i < 4; ++i) {
        test::TestEntry e{std::string("c") + char('0' + i),
                          geos[i],
                          static_cast<uint16_t>(i * 50),
                          i == 1,
                          {{"10.0.0." + std::to_string(i + 1), i != 0}, {"2001:db8::" + std::to_string(i + 1), true}}};
        if (i == 3) e.endpoints = {{"edge.example.net", true}};  // a hostname endpoint: answered with a CNAME
        e.alive = i != 2;
        v.add("shop.glb.example.test", e);
        v.add("*.apps.glb.example.test",
              test::TestEntry{e.cluster, "", 100, false, {{"lb.example.net", true}}, e.alive, false, std::nullopt, 30});
    }
    return v.snapshot(c, test::networks_of({{"10.9.0.0/16", "GEO-EU"}, {"10.8.0.0/16", "dc-north-long"}}));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static auto snap = snapshot();
    static uint8_t out[65535];
    Client c;
    c.address = test::address_of(size % 2 ? "10.1.2.3" : "2001:db8:2::1");
    c.transport = size % 3 ? Transport::udp : Transport::tcp;
    size_t n = answer(*snap, data, size, c, out, sizeof out);
    if (n > sizeof out) __builtin_trap();
    if (n == 0) return 0;
    if (size >= 2 && (out[0] != data[0] || out[1] != data[1])) __builtin_trap();  // the ID is echoed
    // Every answer is a well-formed message to ldns: its section counts match the records it holds.
    ldns_pkt* p = nullptr;
    if (ldns_wire2pkt(&p, out, n) != LDNS_STATUS_OK) __builtin_trap();
    if (ldns_pkt_qdcount(p) > 1 || !ldns_pkt_qr(p)) __builtin_trap();
    // Over UDP without EDNS in the answer (so none in the query, or a FORMERR), at most 512 bytes.
    if (c.transport == Transport::udp && !ldns_pkt_edns(p) && n > 512) __builtin_trap();
    // A truncated answer carries no answer records.
    if (ldns_pkt_tc(p) && ldns_pkt_ancount(p) != 0) __builtin_trap();
    ldns_pkt_free(p);
    return 0;
}
