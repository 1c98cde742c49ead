// Test helpers: queries built by hand (independent of the server's writer), responses parsed with ldns.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/resolver.hpp"
#include "resolver/snapshot/builder.hpp"

namespace glbd::test {

struct QueryOpts {
    uint16_t id = 0x1234;
    uint8_t opcode = 0;
    bool rd = false;
    bool edns = true;
    uint16_t payload = 1232;
    uint8_t version = 0;
    bool do_bit = false;
    bool co_bit = false;  // Compact Answers OK (RFC 9824)
    uint16_t qclass = 1;
    // ECS: family 1/2, source prefix, address bytes already truncated
    std::optional<std::vector<uint8_t>> ecs;
    // COOKIE option (RFC 7873): the client cookie, then a server cookie if any (sent as they are)
    std::optional<std::vector<uint8_t>> cookie;
};

std::vector<uint8_t> make_query(const std::string& name, uint16_t qtype, const QueryOpts& o = {});
// ECS option payload for "10.1.0.0/16" style subnets (address truncated to the prefix).
std::vector<uint8_t> ecs_payload(const std::string& subnet, uint8_t scope = 0);

struct Parsed {
    bool ok = false;
    uint16_t id = 0;
    uint8_t rcode = 0;  // including the extended bits from OPT
    bool aa = false, tc = false, qr = false, rd = false;
    std::string question;
    std::vector<std::string> answer, authority, additional;  // "owner ttl IN TYPE rdata"
    bool edns = false;
    uint16_t edns_payload = 0;
    bool ecs = false;
    uint16_t ecs_family = 0;
    uint8_t ecs_source = 0, ecs_scope = 0;
    std::vector<uint8_t> cookie;  // the COOKIE option's bytes, if the response has one
    size_t size = 0;
};

Parsed parse(const uint8_t* data, size_t len);

// An address for a test input, parsed by the C library's inet_pton (never by the code under test).
geo::Address address_of(const std::string& text);
// An endpoint from a test's text (a failure of the test when it is not one).
Endpoint endpoint_of(std::string_view text);

// A geoip network for a test input ("10.1.0.0/16"), its address parsed by inet_pton.
geo::Network network_of(const std::string& cidr, const std::string& code);
// Networks, as network_of() makes each.
std::vector<geo::Network> networks_of(const std::vector<std::pair<std::string, std::string>>& cidr_code);

// Answers one query against a snapshot, from `source` (default 192.0.2.200) over `transport`.
Parsed ask(const Snapshot& snap, const std::vector<uint8_t>& query, Transport t = Transport::udp,
           const std::string& source = "192.0.2.200", QueryInfo* info = nullptr);

// Loads YAML text that must be valid.
conf::Config config_from(const std::string& yaml);

// Cluster ie serving zone glb.test (ns1.glb.test at 192.0.2.53) with one record, static A 192.0.2.1:
// the zone load-balanced hosts are added to in tests that build their own view.
inline constexpr const char* kGlbTestConfig = R"(cluster: {id: ie}
listen: {dns: ["127.0.0.1:5353"]}
zones:
  - origin: glb.test
    nameservers: [{name: ns1.glb.test, addresses: [192.0.2.53]}]
    records: |
      static IN A 192.0.2.1
)";

// Fields of "owner ttl IN TYPE rdata": field(rr, 1) is the TTL, field(rr, 3) the type, 4.. rdata.
std::string field(const std::string& rr, int index);
// The same for record `i` of a section; a test failure (and "") when the section has no record `i`.
std::string field(const std::vector<std::string>& section, size_t i, int index);
// The first RDATA field of each answer record, in order (the addresses of an A or AAAA answer).
std::vector<std::string> answer_rdata(const Parsed& p);

std::string fixture_path(const std::string& name);

// Polls `done` every `step` until it is true or `limit` has passed; its last answer. Tests wait for an event
// this way, with a limit well above the time it should take, never with a fixed sleep.
bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(10),
              std::chrono::milliseconds step = std::chrono::milliseconds(10));

// A fresh directory under /tmp, removed with everything in it at the end of the scope.
struct TempDir {
    std::string path;
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] std::string operator/(const std::string& name) const { return path + "/" + name; }
};

}  // namespace glbd::test
