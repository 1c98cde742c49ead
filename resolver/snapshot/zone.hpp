// resolver/snapshot/zone — a zone's static data and its frozen name index: records pre-encoded in wire
// form under every name (empty non-terminals included), the negative-answer SOA prepared, and one lookup
// table over the zone's names and its load-balanced hosts, built once per snapshot and read-only after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "resolver/dnssec/sign.hpp"
#include "resolver/model/zone.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd {

struct HostBlock;

struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return wire::name_hash(s); }
};
struct NameEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

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
    std::string rrsigs;  // a signed zone's RRSIGs over this set as HostSignatures stores them (signed.hpp); else ""
};

struct Node {
    std::vector<RRset> rrsets;
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
    // zones[].dnssec: the keys that sign the zone's answers (its DNSKEY RRset is at the apex); null: unsigned.
    std::shared_ptr<const dnssec::ZoneSigner> signer;

    // What the index knows of a name without reading its Node (a name that only a host brings, or an empty
    // non-terminal above one, has an empty Node).
    struct Ref {
        const Node* node = nullptr;
        const std::byte* plan = nullptr;  // a host's plan (see plan::), or null
        int host = -1;                    // index into Snapshot::hosts, or -1
        bool has_ns = false;              // the node holds NS: a zone cut below the origin
    };

    // Looks a name up in the index that freeze() built: open addressing over a power-of-two table
    // at most half full, so a miss ends at the first empty slot after a probe or two. A host's plan
    // lies right after its name (HostBlock), so confirming a hit and answering it read neighbouring bytes.
    [[nodiscard]] Ref find(std::string_view wire) const {
        if (!index_) return {};
        uint64_t h = wire::name_hash(wire);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = index_[i];
            if (!s.node) return {};
            if (s.hash == h && s.name_len == wire.size() && wire::same_bytes(s.name, wire.data(), wire.size())) {
                return Ref{s.node, s.plan, s.host, s.has_ns != 0};
            }
        }
    }
    [[nodiscard]] const Node* node(std::string_view wire) const { return find(wire).node; }
    // Whether a name below the origin, from `name` (wire, in this zone) up to the origin's child (`name`
    // itself too when `inclusive`), holds NS: `name` is at or below a zone cut. Reads `nodes`, not the index.
    [[nodiscard]] bool under_cut(std::string_view name, bool inclusive) const;
    // Builds the lookup index over `nodes` and the hosts of this zone (`hosts`: the snapshot's, each with
    // its index in Snapshot::hosts) with the empty non-terminals above them; call once no more nodes
    // will be added. The index points into `nodes` and into the host blocks: both must outlive it.
    void freeze(const std::vector<std::pair<const HostBlock*, int>>& hosts);

private:
    struct Slot {
        uint64_t hash = 0;
        const char* name = nullptr;  // in `nodes` or in a HostBlock
        const Node* node = nullptr;
        const std::byte* plan = nullptr;  // a host's
        int32_t host = -1;
        uint8_t name_len = 0;
        uint8_t has_ns = 0;
    };
    // The index, in one mapping that asks for transparent huge pages once it spans megabytes, so a lookup
    // in a large view does not also miss the TLB on the page it reads.
    struct Memory {
        void* at = nullptr;
        size_t size = 0;
        Memory() = default;
        Memory(Memory&& o) noexcept : at(std::exchange(o.at, nullptr)), size(std::exchange(o.size, 0)) {}
        Memory& operator=(Memory&& o) noexcept {
            std::swap(at, o.at), std::swap(size, o.size);
            return *this;
        }
        ~Memory();
    };
    Memory memory_;
    const Slot* index_ = nullptr;
    size_t mask_ = 0;
};

// A zone's static part as the config gives it (SOA with `serial`, NS with glue, records), not yet frozen.
// Throws std::runtime_error on a name that cannot be served.
Zone build_zone(const model::Zone& zone, uint32_t serial);

// Adds a record (owner and RDATA in uncompressed wire form) to a zone not yet frozen, with the names above it;
// a set gets the TTL of its first record, and the same RDATA twice is one record.
void add_zone_record(Zone& z, const std::string& owner, uint16_t type, uint32_t ttl, std::string rdata);

// RData in wire form from text, for building views and tests: "192.0.2.1" (A), "2001:db8::1" (AAAA).
bool address_rdata(std::string_view ip, RData& out, uint16_t& type);

}  // namespace glbd
