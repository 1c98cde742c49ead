#include "sync/health/outside/fleet.hpp"

#include <algorithm>
#include <utility>

#include "resolver/base/fnv.hpp"

namespace glbd::health::outside {

uint64_t rank(std::string_view endpoint, std::string_view who) {
    // the 0 between the two: ("ab", "c") and ("a", "bc") rank apart
    uint64_t h = Fnv1a().add(endpoint).add_byte(0).add(who).value();
    h ^= h >> 30;  // splitmix64's finalizer: FNV's low bits alone would rank poorly
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

namespace {

// `candidates` ranked for `endpoint`, best first; ties (equal hashes) by name, so that the order never
// depends on the list's.
std::vector<std::pair<uint64_t, const std::string*>> ranked(std::string_view endpoint,
                                                            const std::vector<std::string>& candidates,
                                                            std::string_view skip) {
    std::vector<std::pair<uint64_t, const std::string*>> r;
    r.reserve(candidates.size());
    for (const std::string& c : candidates) {
        if (c != skip) r.emplace_back(rank(endpoint, c), &c);
    }
    std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : *a.second < *b.second;
    });
    r.erase(std::unique(r.begin(), r.end(), [](const auto& a, const auto& b) { return *a.second == *b.second; }),
            r.end());
    return r;
}

}  // namespace

std::vector<std::string> vantages(std::string_view endpoint, std::string_view own,
                                  const std::vector<std::string>& candidates, unsigned n) {
    std::vector<std::string> out;
    for (const auto& [h, name] : ranked(endpoint, candidates, own)) {
        if (out.size() == n) break;
        out.push_back(*name);
    }
    return out;
}

bool is_vantage(std::string_view endpoint, std::string_view own, std::string_view cluster,
                const std::vector<std::string>& candidates, unsigned n) {
    if (cluster == own || n == 0) return false;
    const uint64_t mine = rank(endpoint, cluster);
    unsigned above = 0;
    for (const std::string& c : candidates) {  // each listed once (the caller's list of distinct clusters)
        if (c == own || c == cluster) continue;
        const uint64_t r = rank(endpoint, c);
        if ((r > mine || (r == mine && c < cluster)) && ++above >= n) return false;
    }
    return true;
}

std::optional<std::string> prober(std::string_view endpoint, const std::vector<std::string>& instances) {
    auto r = ranked(endpoint, instances, {});
    if (r.empty()) return std::nullopt;
    return *r.front().second;
}

bool cut_off(const std::map<std::string, Probed>& by_cluster) {
    uint64_t endpoints = 0, failing = 0;
    unsigned clusters_failing = 0;
    for (const auto& [cluster, p] : by_cluster) {
        endpoints += p.endpoints;
        failing += std::min(p.failing, p.endpoints);
        if (p.failing > 0) ++clusters_failing;
    }
    return failing >= kCutOffLeast && failing * 100 >= endpoints * kCutOffPercent &&
           clusters_failing >= kCutOffClusters;
}

unsigned needed(unsigned quorum, unsigned counted) { return std::max(2U, quorum ? quorum : counted / 2 + 1); }

Verdict decide(bool inside_healthy, const std::vector<Vantage>& vantages, unsigned quorum) {
    Verdict v;
    for (const Vantage& x : vantages) {
        if (!x.counts()) continue;
        ++v.counted;
        if (x.seen == Seen::fails) ++v.failing;
    }
    v.needed = needed(quorum, v.counted);
    v.withdrawn = inside_healthy && v.failing >= v.needed;
    v.healthy = inside_healthy && !v.withdrawn;
    return v;
}

bool keep_dead(const std::vector<Vantage>& vantages, unsigned quorum, std::chrono::milliseconds dead_for,
               std::chrono::milliseconds keep_dead) {
    if (dead_for >= keep_dead) return false;
    unsigned counted = 0, reach = 0;
    for (const Vantage& x : vantages) {
        if (!x.counts()) continue;
        ++counted;
        if (x.seen == Seen::reaches) ++reach;
    }
    return reach >= 1 && reach >= (quorum ? quorum : counted / 2 + 1);
}

double stretch(double probes_per_second, unsigned max_per_second) {
    if (max_per_second == 0 || probes_per_second <= max_per_second) return 1.0;
    return probes_per_second / max_per_second;
}

}  // namespace glbd::health::outside
