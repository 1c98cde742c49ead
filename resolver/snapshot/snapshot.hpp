// resolver/snapshot/snapshot — everything a query needs, frozen: the zones (zone.hpp) with their name index,
// the load-balanced hosts as blocks of entries and answer plans (plan.hpp), and the geo database. Built by
// SnapshotBuilder (builder.hpp) off the hot path on the control thread; immutable once published.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "geo/geo.hpp"
#include "resolver/base/mutex.hpp"
#include "resolver/cookie.hpp"
#include "resolver/snapshot/plan.hpp"
#include "resolver/snapshot/zone.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd {

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
    uint32_t cluster = 0;  // in the host's Labels
    uint32_t geo = 0;      // 0: none
    uint32_t key = 0;      // the entry's name in its cluster (HostEntry::entry), 0: ""
    uint32_t ttl = 60;
    uint32_t counter = kNoCounter;  // id of its answers counter (see Snapshot::counters)
    uint16_t weight = 0;
    bool default_geo : 1 = false;
    bool load_balanced : 1 = false;  // the cluster gave loadBalancing for this host
    bool usable : 1 = false;         // alive and at least one healthy endpoint (and not standing by)
    bool standby : 1 = false;        // its cluster's failover group is not active, and an active entry is usable
};
static_assert(sizeof(Entry) == 24);

struct Host {
    std::string name;  // wire form
    uint32_t ttl = 60;
    bool simple = true;  // no entry has loadBalancing: the answer is every alive cluster's endpoints
    std::vector<Entry> entries;
    uint32_t counter = kNoCounter;            // simple hosts: id of its answers counter
    const Labels* labels = &Labels::empty();  // what entries number into (its HostBlock holds them)
    [[nodiscard]] const std::string& cluster(const Entry& e) const { return labels->at(e.cluster); }
    [[nodiscard]] const std::string& geo(const Entry& e) const { return labels->at(e.geo); }
    [[nodiscard]] const std::string& key(const Entry& e) const { return labels->at(e.key); }
    // Equal by value: the same name, TTL and entries naming the same strings (wherever they are numbered).
    bool operator==(const Host& o) const;
};

// A signed zone's host: the RRSIGs of every RRset its plan can answer with (an Answers block's addresses of
// one family, or its CNAME, in each mode), made when the host is built (signed.hpp). Read on the query path:
// a binary search over `sets`, no allocation.
struct HostSignatures {
    struct Set {
        uint64_t key = 0;  // key(answers, mode, type)
        uint32_t at = 0;   // in `bytes`: a count byte, then each RRSIG RDATA as a 2-byte length and its bytes
        uint32_t len = 0;
    };
    std::vector<Set> sets;  // by key
    std::string bytes;
    uint32_t refresh_at = 0;  // when these are to be made again (0: none made): the oldest's
    uint64_t signer = 0;      // a hash of the ZoneSigner's id(): whose keys and validity made them
    // The address types any of the host's answers holds (kHasA, kHasAaaa): what an NSEC at its name lists.
    static constexpr uint8_t kHasA = 1, kHasAaaa = 2;
    uint8_t types = 0;
    // None made yet (defer_host: a start's first build): the resolver signs the host's answers as it gives
    // them (online::sign), until the next build, due at once (refresh_at), signs them.
    bool deferred = false;

    // The set's key: an Answers block (its offset in the plan), a mode (1 only where it differs from 0) and
    // the RRset's type.
    static uint64_t key(uint32_t answers, int mode, uint16_t type) noexcept {
        return (uint64_t{answers} << 20) | (uint64_t(mode) << 16) | type;
    }
    // Appends RRSIG RDATAs to `out` in the stored form: a count byte, then each after its 2-byte length.
    static void store(const std::vector<std::string>& rrsigs, std::string& out) {
        out += static_cast<char>(rrsigs.size());
        for (const std::string& r : rrsigs) {
            out += static_cast<char>(r.size() >> 8), out += static_cast<char>(r.size() & 0xff);
            out += r;
        }
    }
    // f(rdata, len) for each RRSIG of a set as find() gives it (or as a zone's RRset holds it).
    template <class F>
    static void each(std::string_view stored, F&& f) noexcept {
        const auto* p = reinterpret_cast<const uint8_t*>(stored.data());
        size_t at = 1;
        for (unsigned i = 0; !stored.empty() && i < p[0] && at + 2 <= stored.size(); ++i) {
            const size_t len = size_t{p[at]} << 8 | p[at + 1];
            if (at + 2 + len > stored.size()) return;
            f(p + at + 2, len);
            at += 2 + len;
        }
    }
    // The RRSIGs of a set as stored (count byte first), or an empty view.
    [[nodiscard]] std::string_view find(uint64_t key) const noexcept {
        size_t lo = 0, hi = sets.size();
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sets[mid].key < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo == sets.size() || sets[lo].key != key) return {};
        return std::string_view(bytes).substr(sets[lo].at, sets[lo].len);
    }
};

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
    HostSignatures sigs;    // when its zone is signed

    [[nodiscard]] const char* name() const { return reinterpret_cast<const char*>(bytes.get()); }
    [[nodiscard]] const std::byte* plan() const { return reinterpret_cast<const std::byte*>(bytes.get()) + plan_at; }
    [[nodiscard]] std::string_view plan_bytes() const { return {reinterpret_cast<const char*>(plan()), plan_len}; }
};

struct Snapshot {
    uint32_t serial = 0;
    uint32_t signed_at = 0;  // when the build began (seconds since the epoch): the time its signatures are made
    uint32_t resign_at = 0;  // the first of its signatures' refresh times (0: none): a full build is due then
    std::vector<Zone> zones;
    std::vector<std::shared_ptr<const HostBlock>> hosts;  // Zone::Ref::host indexes this (in no set order)
    std::shared_ptr<const geo::GeoDb> geo;
    uint16_t udp_payload = 1232;
    cookie::Secret cookie_secret{};  // the server's DNS cookie secret: server cookies are made with it
    // The one before a rotation (RFC 9018 section 5): cookies made with it are still good while they last.
    std::optional<cookie::Secret> cookie_previous;
    // Load-balanced answers are counted by the query threads per counter id (an entry's or a simple
    // host's `counter`, from build_snapshot's counter_ids); every id is below `counters`.
    uint32_t counters = 0;

    // The zone whose origin is the longest suffix of `qname` (wire, lower case), or null.
    [[nodiscard]] const Zone* find_zone(std::string_view qname) const {
        return find_zone(qname, wire::label_count(qname));
    }
    [[nodiscard]] const Zone* find_zone(std::string_view qname, unsigned labels) const;
};

// The answers counter ids for a host name (presentation form): one for each of `clusters` (cluster ids; "all"
// for a simple host) into `ids`, as many. Asked once for each host built.
using CounterIds =
    std::function<void(std::string_view host, std::span<const std::string_view> clusters, std::span<uint32_t> ids)>;

}  // namespace glbd
