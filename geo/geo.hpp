// geo/ — a binary client address (or ECS subnet) in, a location out: {code, continent, prefix}.
// Sources, in order: the operator's networks (longest prefix wins), then a database: a location (libloc)
// database or a MaxMind DB. Read-only once constructed, so any number of threads may call locate() at
// once; locate() never allocates or formats strings.
#pragma once

#include <maxminddb.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/base/address.hpp"

namespace glbd::geo {

using glbd::Address;  // resolver/base/address.hpp

// Up to the first 8 bytes of a code, for comparing codes with one integer test (codes hold no NUL).
inline uint64_t code_key(std::string_view s) {
    uint64_t k = 0;
    for (size_t i = 0; i < s.size() && i < 8; ++i) k |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * i);
    return k;
}

struct Location {
    std::string_view code;       // country ISO code or a custom network code; empty when unknown
    std::string_view continent;  // two letters (EU, NA, ...) or empty
    uint8_t prefix = 0;          // length of the network that decided the location, in the family's bits
    uint64_t code_key = 0;       // geo::code_key(code), code_key(continent)
    uint64_t continent_key = 0;
    // The client's coordinates when the database has them (a MaxMind City database's location), else unset:
    // the nearest-cluster fallback then measures from its country's point.
    bool has_coordinates = false;
    float lat = 0, lon = 0;
    // Which data placed the client (for explanations; the answer path does not read it).
    enum class Source : uint8_t { none, networks, location_db, maxmind } source = Source::none;
};

class LocationDb;

// An operator's network and the code its clients get (geoip.networks).
struct Network {
    Prefix prefix;
    std::string code;
};

struct DatabaseOptions {
    bool verify = false;  // a location database must be signed by signing_key (a MaxMind DB cannot be)
    std::string signing_key = "/var/lib/location/signing-key.pem";
};

class GeoDb {
public:
    // `database` is a MaxMind DB or a location (libloc) database, told apart by its header. Throws
    // std::runtime_error naming the file and the problem (missing, damaged, badly signed).
    GeoDb(const std::string& database, const std::vector<Network>& networks, const DatabaseOptions& options = {});
    ~GeoDb();
    GeoDb(const GeoDb&) = delete;
    GeoDb& operator=(const GeoDb&) = delete;

    // Answers repeat per client and per ECS subnet: each thread keeps the last results in a small
    // direct-mapped cache keyed by this database and the address, so a repeat costs one probe.
    [[nodiscard]] Location locate(const Address& addr) const noexcept;
    // What was loaded, for `glbd check` and the log: the database's kind, its date and size.
    [[nodiscard]] std::string describe() const;

private:
    struct Node {
        int32_t child[2] = {-1, -1};
        int32_t code = -1;  // index into codes_
    };
    void insert(const Address& a, unsigned prefix, int32_t code);
    [[nodiscard]] Location locate_uncached(const Address& addr) const noexcept;
    [[nodiscard]] Location locate_mmdb(const Address& addr, uint8_t trie_prefix, Location loc) const noexcept;

    std::vector<Node> trie_;  // over 128 bits; IPv4 lives under ::ffff:0:0/96
    std::vector<std::string> codes_;
    MMDB_s mmdb_{};
    bool has_mmdb_ = false;
    std::unique_ptr<const LocationDb> loc_;
    std::string database_;
    uint64_t id_;  // unique per instance: keys the per-thread caches (an address may be reused)
};

}  // namespace glbd::geo
