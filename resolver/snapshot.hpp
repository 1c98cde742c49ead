// resolver/snapshot — everything a query needs, frozen: zones as name -> node tables with records
// pre-encoded in wire form, load-balanced hosts with their entries, geo groups and cumulative weights
// precomputed, and the geo database. Built off the hot path; immutable once published.
#pragma once

#include <array>
#include <atomic>
#include <cstring>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/view.hpp"
#include "resolver/wire.hpp"

namespace glbd {

struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return wire::name_hash(s); }
};
struct NameEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

constexpr uint32_t kNoCounter = UINT32_MAX;

// One record's data in wire form, with the places of names that may be compressed.
struct RData {
    std::string wire;
    uint8_t name_at[2] = {0, 0};  // offsets of compressible names (NS, CNAME, PTR, MX, SOA)
    uint8_t names = 0;
};

struct RRset {
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::vector<RData> rdata;
};

// An IPv4 or IPv6 endpoint address, in wire form, with its health.
struct Address {
    std::array<uint8_t, 16> bytes{};
    uint8_t len = 4;  // 4 (A) or 16 (AAAA)
    bool healthy = true;
};

// The answers an entry (or a simple host's union) can give. Modes: 0 = healthy endpoints only,
// 1 = every endpoint (fail-open).
struct Answers {
    std::vector<Address> v4, v6;
    uint16_t healthy4 = 0, healthy6 = 0;
    std::string cname[2];  // the first hostname endpoint (healthy / any), wire form; empty when none
    [[nodiscard]] bool has(uint16_t qtype, int mode) const;
    [[nodiscard]] bool any_healthy() const { return healthy4 + healthy6 > 0 || !cname[0].empty(); }
};

// One cluster's entry of a host.
struct Entry {
    std::string cluster;
    std::string geo;
    uint16_t weight = 0;
    bool default_geo = false;
    bool load_balanced = false;  // the cluster gave loadBalancing for this host
    bool usable = false;         // alive and at least one healthy endpoint
    Answers answers;
    uint32_t counter = kNoCounter;  // id of its answers counter (see Snapshot::counters)
};

// The entries of one geo group, with a weighted pick precomputed per (qtype A/AAAA, mode).
struct Group {
    std::string geo;  // "" for the default and all groups
    std::vector<uint16_t> entries;
    bool usable = false;
    struct Choice {
        uint16_t entry;
        uint32_t cumulative;  // running sum of weights; all 0 => uniform
    };
    struct Pick {
        std::vector<Choice> choices;
        uint32_t total = 0;
    };
    Pick pick[2][2];  // [A=0/AAAA=1][mode]
};

struct Host {
    std::string name;  // wire form
    uint32_t ttl = 60;
    bool simple = true;
    bool geo_dependent = false;  // whether the answer can depend on the client's location
    std::vector<Entry> entries;
    std::vector<Group> geo_groups;  // one per distinct geo
    // The geo groups' codes side by side, so choosing one reads a few cache lines rather than every Group.
    struct GeoKey {
        uint64_t code = 0;       // geo::code_key(geo)
        uint64_t continent = 0;  // for a GEO-XX group, geo::code_key("XX"); else 0
        uint32_t len = 0;        // geo.size()
    };
    std::vector<GeoKey> geo_keys;
    Group default_group, all;
    Answers union_answers;  // simple hosts: every alive cluster's endpoints
    uint32_t counter = kNoCounter;  // simple hosts: id of its answers counter
};

struct Node {
    std::vector<RRset> rrsets;
    int host = -1;  // index into Snapshot::hosts
    [[nodiscard]] const RRset* find(uint16_t type) const {
        for (const auto& r : rrsets) {
            if (r.type == type) return &r;
        }
        return nullptr;
    }
};

struct Zone {
    Zone() = default;
    Zone(Zone&&) = default;  // a move keeps the map's nodes where they are, so the index stays valid
    Zone& operator=(Zone&&) = default;
    Zone(const Zone&) = delete;
    Zone& operator=(const Zone&) = delete;

    std::string origin;  // wire form
    unsigned labels = 0;
    RRset soa;
    uint32_t negative_ttl = 0;  // min(SOA TTL, SOA minimum)
    // The negative-answer SOA as it follows an owner pointer to the origin inside the question: type,
    // class, TTL, length and data, MNAME and RNAME ending in a pointer to that same origin, to be
    // filled in at the offsets in soa_tail_ptrs. Empty when MNAME or RNAME is outside the zone.
    std::string soa_tail;
    uint8_t soa_tail_ptrs[2] = {0, 0};
    std::unordered_map<std::string, Node, NameHash, NameEq> nodes;  // every name, empty non-terminals too

    // Looks a name up in the index that freeze() built: open addressing over a power-of-two table
    // at most half full, so a miss ends at the first empty slot after a probe or two. The names sit
    // end to end in one string, so confirming a hit reads one place.
    [[nodiscard]] const Node* node(std::string_view wire) const {
        if (index_.empty()) return nullptr;
        uint64_t h = wire::name_hash(wire);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = index_[i];
            if (!s.node) return nullptr;
            if (s.hash == h && s.name_len == wire.size() && wire::same_bytes(names_.data() + s.name_at, wire.data(), wire.size())) {
                return s.node;
            }
        }
    }
    // Builds the lookup index over `nodes`; call once no more nodes will be added.
    void freeze();

private:
    struct Slot {
        uint64_t hash = 0;
        uint32_t name_at = 0, name_len = 0;  // in names_
        const Node* node = nullptr;
    };
    std::vector<Slot> index_;
    std::string names_;
    size_t mask_ = 0;
};

struct Snapshot {
    uint32_t serial = 0;
    std::vector<Zone> zones;
    std::vector<Host> hosts;
    std::shared_ptr<const geo::GeoDb> geo;
    uint16_t udp_payload = 1232;
    // Load-balanced answers are counted by the query threads per counter id (an entry's or a simple
    // host's `counter`); ids are assigned by whoever publishes the snapshot and are below `counters`.
    uint32_t counters = 0;
    // The counter id of what `info` says was answered, or kNoCounter.
    [[nodiscard]] uint32_t counter_of(int host, int entry) const {
        if (host < 0) return kNoCounter;
        const Host& h = hosts[static_cast<size_t>(host)];
        return entry < 0 ? h.counter : h.entries[static_cast<size_t>(entry)].counter;
    }

    // The zone whose origin is the longest suffix of `qname` (wire, lower case), or null.
    [[nodiscard]] const Zone* find_zone(std::string_view qname) const { return find_zone(qname, wire::label_count(qname)); }
    [[nodiscard]] const Zone* find_zone(std::string_view qname, unsigned labels) const;
};

// Builds a snapshot. Throws std::runtime_error on data that cannot be served.
std::shared_ptr<Snapshot> build_snapshot(const conf::Config& config, const GlobalView& view,
                                               std::shared_ptr<const geo::GeoDb> geo, uint32_t serial);

// RData in wire form from text, for building views and tests: "192.0.2.1" (A), "2001:db8::1" (AAAA).
bool address_rdata(std::string_view ip, RData& out, uint16_t& type);

}  // namespace glbd
