// resolver/snapshot — everything a query needs, frozen: zones as name -> node tables with records
// pre-encoded in wire form, load-balanced hosts with their entries, geo groups and cumulative weights
// precomputed, and the geo database. Built off the hot path; immutable once published.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/cookie.hpp"
#include "resolver/global_view.hpp"
#include "resolver/wire/wire.hpp"
#include "resolver/base/mutex.hpp"

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

// The cluster ids and geo codes of built entries, each string kept once and numbered: an Entry holds the
// numbers of its two (200,000 entries of 20 clusters name some 30 strings). Strings are added by the
// building threads, under the lock, and never changed or removed; whoever was given a number may read its
// string on any thread without the lock. Number 0 is "". A HostBlock holds the Labels its entries number
// into; a full build starts new ones.
class Labels {
public:
    static constexpr uint32_t kChunk = 1024, kChunks = 4096;  // up to 4M strings
    Labels();
    static const Labels& empty();
    // The number of `s`, given now if it has none; throws std::runtime_error when all are given.
    uint32_t get(std::string_view s) GLBD_EXCLUDES(mu_);
    [[nodiscard]] const std::string& at(uint32_t i) const { return chunks_[i / kChunk][i % kChunk]; }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    Mutex mu_;
    std::unordered_map<std::string_view, uint32_t, Hash> numbers_ GLBD_GUARDED_BY(mu_);  // views into chunks_
    uint32_t size_ GLBD_GUARDED_BY(mu_) = 0;
    // Written under the lock before a number in them is given out; read without it (see above).
    std::array<std::unique_ptr<std::string[]>, kChunks> chunks_;
};

// One cluster's entry of a host: what the admin API and the answer counters name (Host::cluster() and
// geo() give its strings). What the resolver reads at query time is the host's plan (below).
struct Entry {
    uint32_t cluster = 0;           // in the host's Labels
    uint32_t geo = 0;               // 0: none
    uint32_t counter = kNoCounter;  // id of its answers counter (see Snapshot::counters)
    uint16_t weight = 0;
    bool default_geo : 1 = false;
    bool load_balanced : 1 = false;  // the cluster gave loadBalancing for this host
    bool usable : 1 = false;         // alive and at least one healthy endpoint
};
static_assert(sizeof(Entry) == 16);

struct Host {
    std::string name;  // wire form
    uint32_t ttl = 60;
    bool simple = true;  // no entry has loadBalancing: the answer is every alive cluster's endpoints
    std::vector<Entry> entries;
    uint32_t counter = kNoCounter;            // simple hosts: id of its answers counter
    const Labels* labels = &Labels::empty();  // what entries number into (its HostBlock holds them)
    [[nodiscard]] const std::string& cluster(const Entry& e) const { return labels->at(e.cluster); }
    [[nodiscard]] const std::string& geo(const Entry& e) const { return labels->at(e.geo); }
    // Equal by value: the same name, TTL and entries naming the same strings (wherever they are numbered).
    bool operator==(const Host& o) const;
};

// A host's answer plan: everything answering it reads, in one block that follows the host's name in its
// zone's index, so a load-balanced answer touches a few neighbouring cache lines on one page rather than
// a dozen objects spread over the heap. Offsets are from the plan's start; 0 means none. Layout: Head;
// then, side by side, a Group for each geo group, one for the defaultGeo entries if there are any and one
// for all entries (choosing a group reads these lines in order); then, group by group, the answers of
// its entries not written before and its picks, so what a query reads after choosing lies together.
namespace plan {
struct alignas(8) Head {
    uint32_t ttl = 60;
    uint32_t counter = kNoCounter;  // simple hosts: id of its answers counter
    uint8_t simple = 1;
    uint8_t geo_dependent = 0;
    uint16_t geo_groups = 0;  // the first Groups; the defaultGeo group (if has_default) and all follow
    uint32_t answers = 0;     // simple hosts: every alive cluster's endpoints (Answers)
    uint8_t has_default = 0;
    uint8_t nearest = 0;                  // geoip.fallback: nearest (the geo groups carry points)
    uint8_t pad[6] = {0, 0, 0, 0, 0, 0};  // padding made explicit: a plan's bytes depend on its data alone
};
// Group::pick[qtype][mode]: qtype 0 = A (also ANY and CNAME), 1 = AAAA; mode 0 = healthy entries,
// 1 = every entry (fail-open). Each is a Pick followed by its Choices, or 0 when nothing can answer.
struct Group {
    uint64_t code = 0;       // geo::code_key(geo); 0 for the defaultGeo and all groups
    uint16_t continent = 0;  // for a GEO-XX group, geo::code_key("XX"); else 0
    uint16_t len = 0;        // geo.size()
    uint16_t entries = 0;    // entries in the group (a group of none is skipped)
    uint8_t usable = 0;      // some entry is alive with a healthy endpoint
    uint8_t has_point = 0;   // lat/lon hold the geo code's point (geo/points): nearest-cluster fallback
    uint32_t long_code = 0;  // for codes longer than 8 bytes: where their bytes are
    uint32_t pick[2][2] = {{0, 0}, {0, 0}};
    float lat = 0, lon = 0;
    uint32_t pad = 0;
};
static_assert(sizeof(Head) % alignof(Group) == 0, "the Groups start right after the Head");
struct Pick {
    uint32_t total = 0;  // sum of weights; 0 => uniform
    uint32_t count = 0;  // Choices that follow
};
struct Choice {
    uint32_t cumulative = 0;  // running sum of weights
    uint32_t answers = 0;     // the entry's Answers
    uint32_t counter = kNoCounter;
    uint16_t entry = 0;  // index into Host::entries
    uint16_t pad = 0;
};
// An entry's (or a simple host's) endpoints by mode: [0] healthy, [1] every one. Each mode's addresses
// follow in one run, packed (IPv4, 4 bytes each, then IPv6, 16 each, in endpoint order), then its host name
// endpoint if any (a length byte and the wire name): mode 0's right after this header, mode 1's at `every`
// (0: the same as mode 0's, as when every endpoint is healthy). Offsets are from the plan's start; `self`
// is where this header is.
struct Answers {
    uint16_t n4[2] = {0, 0}, n6[2] = {0, 0};
    uint8_t cname[2] = {0, 0};  // 1: the mode has a host name endpoint
    uint16_t pad = 0;
    uint32_t every = 0;
    [[nodiscard]] uint32_t v4(uint32_t self, int mode) const {
        return mode == 1 && every != 0 ? every : self + static_cast<uint32_t>(sizeof(Answers));
    }
    [[nodiscard]] uint32_t v6(uint32_t self, int mode) const { return v4(self, mode) + 4u * n4[mode]; }
    [[nodiscard]] uint32_t name(uint32_t self, int mode) const {
        return cname[mode] != 0 ? v6(self, mode) + 16u * n6[mode] : 0;
    }
};
// No padding anywhere (the sizes are the members' sum): equal plans are equal bytes.
static_assert(sizeof(Head) == 24 && sizeof(Group) == 48 && sizeof(Pick) == 8 && sizeof(Choice) == 16 &&
              sizeof(Answers) == 16);
}  // namespace plan

// A host as built: its entries, and its name (wire form) followed by its plan in one buffer, so that
// confirming a lookup and answering it read neighbouring bytes. Immutable once built: every snapshot in
// which the host did not change shares it (SnapshotBuilder rebuilds only the hosts a change touches).
struct HostBlock {
    Host host;
    std::shared_ptr<const Labels> labels;  // what host.entries point into
    std::string key;                       // the name as the view spells it (HostEntry::host)
    uint64_t hash = 0;                     // wire::name_hash(host.name)
    size_t zone = 0;                       // index into Snapshot::zones
    std::unique_ptr<uint64_t[]> bytes;     // the name, zero-padded to 8 bytes, then the plan
    uint32_t plan_at = 0, plan_len = 0;
    uint32_t counters = 0;  // above every answers counter id the host uses
    uint8_t name_len = 0;   // host.name.size()
    uint8_t below = 0;      // labels below the zone's origin

    [[nodiscard]] const char* name() const { return reinterpret_cast<const char*>(bytes.get()); }
    [[nodiscard]] const std::byte* plan() const { return reinterpret_cast<const std::byte*>(bytes.get()) + plan_at; }
    [[nodiscard]] std::string_view plan_bytes() const { return {reinterpret_cast<const char*>(plan()), plan_len}; }
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

struct Snapshot {
    uint32_t serial = 0;
    std::vector<Zone> zones;
    std::vector<std::shared_ptr<const HostBlock>> hosts;  // Zone::Ref::host indexes this (in no set order)
    std::shared_ptr<const geo::GeoDb> geo;
    uint16_t udp_payload = 1232;
    cookie::Secret cookie_secret{};  // the server's DNS cookie secret (random per process)
    // Load-balanced answers are counted by the query threads per counter id (an entry's or a simple
    // host's `counter`, from build_snapshot's counter_ids); every id is below `counters`.
    uint32_t counters = 0;

    // The zone whose origin is the longest suffix of `qname` (wire, lower case), or null.
    [[nodiscard]] const Zone* find_zone(std::string_view qname) const {
        return find_zone(qname, wire::label_count(qname));
    }
    [[nodiscard]] const Zone* find_zone(std::string_view qname, unsigned labels) const;
};

// The answers counter id for a host name (presentation form) and a cluster id ("all" for a simple host).
using CounterIds = std::function<uint32_t(const std::string& host, const std::string& cluster)>;

// Builds snapshots one after another, each from the one before: a host is built again only when a change
// touches it (its entry in some cluster changed, appeared or went; its cluster's liveness or location
// changed), every other host's block is shared with the previous snapshot. What decides which clusters
// changed is the SharedView: a cluster that is the same object as in the last build did not change. A
// different config (zones, this cluster's id, the nearest fallback) or counting where the last did not
// builds everything. The result is the same as a first build from the same view (tests/snapshot_test).
// Control thread only; not thread-safe. A build of kParallelFrom hosts or more (a first build, a reload)
// shares them out among up to kMaxThreads threads (the calling one and helpers it joins before returning).
class SnapshotBuilder {
public:
    static constexpr size_t kParallelFrom = 2048;
    static constexpr size_t kInOrderFrom = 256;  // hosts built in the clusters' list order (see build())
    static constexpr size_t kMaxThreads = 4;
    // At most `threads` threads (and no more than the CPUs the process may run on) build one snapshot.
    explicit SnapshotBuilder(size_t threads = kMaxThreads) : threads_(std::max<size_t>(threads, 1)) {}
    // Throws std::runtime_error on data that cannot be served (then the next build is a full one).
    std::shared_ptr<Snapshot> build(const conf::Config& config, const SharedView& view,
                                    std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                    const CounterIds& counter_ids = {});
    // Forgets everything: the next build is a full one.
    void reset();
    // What the last build did.
    struct Stats {
        bool full = false;
        size_t hosts = 0;  // hosts in the snapshot
        size_t built = 0;  // hosts built (the rest shared)
    };
    [[nodiscard]] const Stats& last() const { return last_; }

    // A host name with its hash, computed once: a build looks each name up in every cluster.
    struct NameKey {
        std::string_view name;
        size_t hash;
        explicit NameKey(std::string_view n) : name(n), hash(std::hash<std::string_view>{}(n)) {}
        NameKey(std::string_view n, size_t h) : name(n), hash(h) {}
        bool operator==(const NameKey& o) const { return name == o.name; }
        struct Hash {
            size_t operator()(const NameKey& k) const noexcept { return k.hash; }
        };
    };

private:
    // A cluster's host names -> their places in its view's hosts (the first, for a name given twice):
    // open addressing over (hash, place), the names read from the view itself, so a view with the same
    // names in the same places (the common change) keeps the table as it is.
    class Places {
    public:
        static constexpr uint32_t kNone = UINT32_MAX;
        void build(const std::vector<HostEntry>& hosts);
        [[nodiscard]] uint32_t find(const std::vector<HostEntry>& hosts, const NameKey& name) const;
        template <class F>
        void each(F&& f) const {  // f(name, place) for each distinct name, the hosts the table was built over
            for (const auto& s : slots_) {
                if (s.place != kNone) f(NameKey((*hosts_)[s.place].host), s.place);
            }
        }
        // The table stays right for another vector with the same names in the same places.
        void rebase(const std::vector<HostEntry>& hosts) { hosts_ = &hosts; }

    private:
        const std::vector<HostEntry>* hosts_ = nullptr;
        struct Slot {
            uint32_t check = 0;  // the hash's high half (its low bits chose the slot)
            uint32_t place = kNone;
        };
        std::vector<Slot> slots_;
        size_t mask_ = 0;
    };
    struct Cluster {
        std::shared_ptr<const ClusterView> view;
        Places places;
    };
    void full_reset(const std::string& key, bool counted);
    std::map<std::string, Cluster, std::less<>> clusters_;  // by id: the cluster order
    // The hosts in our zones (the next snapshot's Snapshot::hosts) and where each is in it.
    std::vector<std::shared_ptr<const HostBlock>> hosts_;
    std::unordered_map<std::string, size_t> host_at_;
    std::string config_key_;
    std::shared_ptr<Labels> labels_ = std::make_shared<Labels>();  // the entries' cluster ids and geo codes
    bool counted_ = false;
    Stats last_;
    size_t threads_;
};

// One snapshot from a view, built whole; `counter_ids`, when given, numbers the answer counters (else
// none are counted). Throws std::runtime_error on data that cannot be served.
std::shared_ptr<Snapshot> build_snapshot(const conf::Config& config, const GlobalView& view,
                                         std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                         const CounterIds& counter_ids = {});

// RData in wire form from text, for building views and tests: "192.0.2.1" (A), "2001:db8::1" (AAAA).
bool address_rdata(std::string_view ip, RData& out, uint16_t& type);

}  // namespace glbd
