#include "resolver/model/global_view.hpp"

#include <algorithm>
#include <unordered_set>

namespace glbd {

ClusterView local_cluster_view(const model::Served& served) {
    ClusterView v{std::string(served.cluster_id), true, {}, served.location};
    v.hosts.reserve(served.hosts.size());
    for (const auto& h : served.hosts) {
        HostEntry e{h.name, h.ttl, h.load_balancing, {}, h.entry};
        for (const auto& ep : h.endpoints) e.endpoints.push_back(EndpointState{ep, true});
        v.hosts.push_back(std::move(e));
    }
    order_entries(v.hosts);
    return v;
}

size_t share_names(HostList& hosts, const HostList& reference) {
    const std::vector<HostEntry>& list = hosts;
    // Which entries take a text, found without touching the list (one that shares its texts already, as a report
    // made whole from the list held before, stays shared).
    NameSharer names(reference);
    std::vector<std::pair<size_t, const SharedText*>> take;
    for (size_t i = 0; i < list.size(); ++i) {
        const SharedText* held = names.find(list[i].host);
        if (held && !held->same_block(list[i].host)) take.emplace_back(i, held);
    }
    if (take.empty()) return 0;
    auto it = hosts.begin();  // the list made its own
    for (const auto& [i, held] : take) it[static_cast<ptrdiff_t>(i)].host = *held;
    return take.size();
}

void order_entries(HostList& hosts) {
    const std::vector<HostEntry>& list = hosts;
    auto before = [](const HostEntry& a, const HostEntry& b) { return a.before(b); };
    if (std::is_sorted(list.begin(), list.end(), before)) return;
    std::stable_sort(hosts.begin(), hosts.end(), before);
}

bool targets_repeat(const std::vector<EndpointState>& eps) {
    constexpr size_t kPairwiseUpTo = 16;
    if (eps.size() <= kPairwiseUpTo) {
        for (size_t i = 0; i < eps.size(); ++i) {
            for (size_t j = 0; j < i; ++j) {
                if (eps[i].target == eps[j].target) return true;
            }
        }
        return false;
    }
    std::unordered_set<Endpoint> seen;
    seen.reserve(eps.size());
    for (const auto& ep : eps) {
        if (!seen.insert(ep.target).second) return true;
    }
    return false;
}

bool strictly_ordered(const std::vector<HostEntry>& hosts) {
    return std::adjacent_find(hosts.begin(), hosts.end(),
                              [](const HostEntry& a, const HostEntry& b) { return !a.before(b); }) == hosts.end();
}

HostTally::HostTally(const std::vector<HostEntry>& hosts) {
    for (const HostEntry& h : hosts) {
        // The list is in order by name (order_entries), so a name's entries are together.
        if (ends_.empty() || name(ends_.size() - 1) != h.host) {
            text_ += h.host;
            ends_.push_back(static_cast<uint32_t>(text_.size()));
        }
        endpoints_ += h.endpoints.size();
        for (const EndpointState& e : h.endpoints) healthy_ += e.healthy ? 1 : 0;
    }
}

size_t HostTally::distinct(const std::vector<const HostTally*>& tallies) {
    // The union of sorted lists, one list at a time (each cluster mostly holds the same names).
    std::vector<std::string_view> all, next;
    for (const HostTally* t : tallies) {
        next.clear();
        next.reserve(all.size() + t->names());
        size_t i = 0, j = 0;
        while (i < all.size() || j < t->names()) {
            if (j == t->names() || (i < all.size() && all[i] < t->name(j))) {
                next.push_back(all[i++]);
            } else {
                std::string_view n = t->name(j++);
                if (i < all.size() && all[i] == n) ++i;
                next.push_back(n);
            }
        }
        all.swap(next);
    }
    return all.size();
}

SharedView share(GlobalView view) {
    SharedView out;
    out.reserve(view.size());
    for (auto& c : view) out.push_back(std::make_shared<const ClusterView>(std::move(c)));
    return out;
}

}  // namespace glbd
