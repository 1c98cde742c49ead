// resolver/select — the load-balanced choice within a host's plan (plan:: in snapshot/plan.hpp), as pure
// functions: which group answers a client, and the weighted draw within it. Header-only so that answer()
// inlines them; nothing here allocates, locks or throws.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "geo/geo.hpp"
#include "geo/points.hpp"
#include "resolver/snapshot/snapshot.hpp"
#include "resolver/wire/opt.hpp"

namespace glbd::select {

// A piece of a host's plan.
template <class T>
inline const T& at(const std::byte* plan, uint32_t offset) {
    return *reinterpret_cast<const T*>(plan + offset);
}

// Where a client is for geo answers: the ECS subnet it sent (RFC 7871), else its own address.
inline geo::Location client_location(const geo::GeoDb& db, const geo::Address& client, const wire::Edns& opt) {
    geo::Address a = client;
    if (opt.ecs && opt.ecs_source > 0) {
        a = geo::Address{};
        a.family = opt.ecs_family == wire::edns::kFamilyIpv4 ? 4 : 6;
        std::memcpy(a.bytes.data(), opt.ecs_addr, opt.ecs_addr_len);
        uint8_t source = opt.ecs_source;
        a.unmap(&source);
    } else {
        a.unmap();
    }
    return db.locate(a);
}

struct Choice {
    const plan::Group* group = nullptr;  // null: the host has no entry at all
    bool fallback = false;               // a preferred group had no usable entry
    bool fail_open = false;              // nothing usable: every entry is answered as if healthy
    const char* role = nullptr;          // why `group` was in line: "country", "continent", "nearest", ...
};

// The client's point for the nearest fallback: its database coordinates, else its country's point; false
// when it has neither (unknown, or a custom code without coordinates).
inline bool client_point(const geo::Location& loc, geo::Point& out) {
    if (loc.has_coordinates) {
        out = geo::Point{loc.lat, loc.lon};
        return true;
    }
    return loc.code.size() == 2 && geo::country_point(loc.code_key, out);
}

// geoip.fallback: nearest: the geo group with an entry whose point is nearest the client's (only usable ones
// with `usable_only`; ties to the first in the plan), or null when the client has no point.
inline const plan::Group* nearest_group(const plan::Group* groups, size_t count, const geo::Location& loc,
                                        bool usable_only) {
    geo::Point client;
    if (!client_point(loc, client)) return nullptr;
    const plan::Group* best = nullptr;
    double best_km = 0;
    for (size_t i = 0; i < count; ++i) {
        const plan::Group& g = groups[i];
        if (!g.has_point || (usable_only && !g.usable) || g.entries == 0) continue;
        double km = geo::distance_km(client, geo::Point{g.lat, g.lon});
        if (!best || km < best_km) best = &g, best_km = km;
    }
    return best;
}

// The groups choose() considered, in order, with the role of each (an explanation reads it; answer() passes
// none, and the compiler drops the bookkeeping).
struct Trace {
    const plan::Group* order[6] = {};
    const char* role[6] = {};
    int n = 0;
    geo::Location loc;
    bool located = false;
};

// The group of a host's plan that answers a client (docs/answers.md): its country or custom
// code, then its continent, then (geoip.fallback: nearest) the nearest usable geo group, then the default
// geo, then every entry; the first with an entry, and of those
// the first usable one (health fallback); none usable is fail-open, answered from the first. `locate` is
// called only when the plan has geo groups; `scope` rises to the deciding prefix when the answer depends
// on it. Pure: answer() and any explanation of an answer compute the same choice with it.
template <class Locate>
Choice choose(const std::byte* plan, Locate&& locate, uint8_t& scope, Trace* trace = nullptr) {
    const auto& h = at<plan::Head>(plan, 0);
    const auto* groups = &at<plan::Group>(plan, sizeof(plan::Head));
    const plan::Group* order[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    const char* role[6] = {"country", "continent", nullptr, nullptr, nullptr, nullptr};
    int n = 0;
    const plan::Group* nearest = nullptr;       // the nearest group, usable or not
    const plan::Group* next_nearest = nullptr;  // when it is not usable: the nearest usable one
    if (h.geo_groups > 0) {
        geo::Location loc = locate();
        if (trace) trace->loc = loc, trace->located = true;
        if (h.geo_dependent) scope = std::max(scope, loc.prefix);
        for (size_t i = 0; i < h.geo_groups; ++i) {
            const plan::Group& g = groups[i];
            if (g.code == loc.code_key && g.len == loc.code.size() && !loc.code.empty() &&
                (g.len <= 8 || std::memcmp(plan + g.long_code, loc.code.data(), g.len) == 0)) {
                order[0] = &g;
            }
            if (g.continent != 0 && g.continent == loc.continent_key) order[1] = &g;
        }
        if (order[0] == order[1]) order[1] = nullptr;
        n = 2;
        auto usable = [](const plan::Group* g) { return g && g->entries > 0 && g->usable; };
        if (h.nearest && !usable(order[0]) && !usable(order[1])) {
            // The nearest first, usable or not: an answer from another than the one every usable cluster
            // would give is a fallback (a short TTL, so that the client comes back when it recovers).
            nearest = nearest_group(groups, h.geo_groups, loc, false);
            if (nearest) role[n] = "nearest", order[n++] = nearest;
            if (nearest && !nearest->usable) next_nearest = nearest_group(groups, h.geo_groups, loc, true);
            if (next_nearest) role[n] = "next nearest", order[n++] = next_nearest;
        }
    }
    if (h.has_default) role[n] = "defaultGeo", order[n++] = &groups[h.geo_groups];
    role[n] = "all", order[n++] = &groups[h.geo_groups + h.has_default];
    if (trace) {
        trace->n = n;
        for (int i = 0; i < n; ++i) trace->order[i] = order[i], trace->role[i] = role[i];
    }
    int first = -1;
    for (int i = 0; i < n; ++i) {
        if (!order[i] || order[i]->entries == 0) continue;
        if (first < 0) first = i;
        if (order[i]->usable) return Choice{order[i], order[i] != order[first], false, role[i]};
    }
    return first < 0 ? Choice{nullptr, false, true, nullptr} : Choice{order[first], false, true, role[first]};
}

// xorshift64*, one state per thread: fast, good enough for picking among weighted entries.
inline thread_local uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
inline uint64_t next_random() {
    uint64_t x = rng_state;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

// The index of the choice a weighted draw picks among `p.count` (all weights 0: uniformly).
inline uint32_t draw(const plan::Pick& p, const plan::Choice* choices) {
    if (p.count <= 1) return 0;
    uint32_t choice = 0;
    if (p.total == 0) return static_cast<uint32_t>(next_random() % p.count);
    auto r = static_cast<uint32_t>(next_random() % p.total);
    while (choices[choice].cumulative <= r) ++choice;
    return choice;
}

}  // namespace glbd::select
