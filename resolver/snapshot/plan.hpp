// resolver/snapshot/plan — the layout of a host's answer plan: what the query path reads to answer a
// load-balanced or simple host (select.hpp), written once per host by the builder (host.cpp). Plain structs
// of fixed size with no padding, so that equal plans are equal bytes (tests/snapshot_test relies on it).
#pragma once

#include <cstdint>

namespace glbd {

constexpr uint32_t kNoCounter = UINT32_MAX;

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
    // At most kMaxAddresses of each family and mode (the builder keeps the first ones), so that the whole
    // set always fits one TCP message (2,048 AAAA records are 57,344 bytes of 65,535, with room for the
    // question, a CNAME and OPT) and a count never wraps. More would be answered with TC and no addresses.
    static constexpr uint16_t kMaxAddresses = 2048;
    uint16_t n4[2] = {0, 0}, n6[2] = {0, 0};
    uint8_t cname[2] = {0, 0};  // 1: the mode has a host name endpoint
    uint16_t pad = 0;
    uint32_t every = 0;
    uint32_t ttl = 60;  // the entry's TTL (a simple host's: the host's)
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
              sizeof(Answers) == 20);
}  // namespace plan

}  // namespace glbd
