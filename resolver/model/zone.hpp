// resolver/model/zone — a zone glbd serves as the config gives it (conf/ parses into it; resolver/snapshot builds
// the zone's data from it): origin, SOA fields, name servers with their addresses, static records in wire form, and
// its DNSSEC keys. Plain data; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/dnssec/keys.hpp"

namespace glbd::model {

using Millis = std::chrono::milliseconds;

// A resource record from a zone's `records` or `file`, in wire form.
struct StaticRecord {
    std::string owner;  // uncompressed wire name, lower case
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::string rdata;  // uncompressed wire rdata (names inside lower case)
};

struct Soa {
    std::string mname;  // default: the first nameserver
    std::string rname = "hostmaster";
    uint32_t refresh = 3600, retry = 600, expire = 86400, minimum = 60;
};

struct Nameserver {
    std::string name;                    // fqdn, no trailing dot
    std::vector<std::string> addresses;  // numeric IPv4/IPv6
};

// zones[].dnssec: the zone is signed online with these keys, which every cluster holds (resolver/dnssec).
struct ZoneDnssec {
    std::vector<std::shared_ptr<const dnssec::Key>> keys;  // loaded and checked; at least one KSK or CSK
    Millis signature_validity{7 * 86'400'000};             // RRSIG expiration - inception
    // The parent zone's servers (IP:PORT), asked for the zone's DS before a KSK is removed; none: not asked.
    std::vector<SocketAddress> parent;
    static constexpr size_t kMaxParentServers = 8;
    [[nodiscard]] uint32_t validity_seconds() const {
        return static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(signature_validity).count());
    }
};

struct Zone {
    std::string origin;  // fqdn, lower case, no trailing dot
    uint32_t ttl = 300;
    Soa soa;
    std::vector<Nameserver> nameservers;
    std::vector<StaticRecord> records;  // parsed `records` and `file`, SOA and NS excluded
    std::optional<ZoneDnssec> dnssec;
};

}  // namespace glbd::model
