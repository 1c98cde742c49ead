#include "server/app/answer_ids.hpp"

#include <algorithm>
#include <numeric>

#include "resolver/base/find_from.hpp"

namespace glbd {

uint32_t AnswerIds::intern(Index& index, std::vector<const std::string*>& names, std::string_view name) {
    if (uint32_t n = number(index, name); n != kNone) return n;
    auto it = index.emplace(std::string(name), static_cast<uint32_t>(names.size())).first;
    names.push_back(&it->first);
    return it->second;
}

uint32_t AnswerIds::number(const Index& index, std::string_view name) {
    auto it = index.find(name);
    return it == index.end() ? kNone : it->second;
}

void AnswerIds::ids(std::string_view host, std::span<const std::string_view> clusters, std::span<uint32_t> ids) {
    uint32_t h = intern(hosts_, host_names_, host);
    if (h == of_host_.size()) of_host_.emplace_back();
    std::vector<Held>& held = of_host_[h];
    if (held.empty()) held.reserve(clusters.size());  // a host's first build asks for all its clusters at once
    size_t from = 0;  // where the last cluster was found: the next is most often just after it
    if (recent_.size() < clusters.size()) recent_.resize(clusters.size(), kNone);
    for (size_t k = 0; k < clusters.size(); ++k) {
        // Most hosts have their entries in the same clusters, in the same order: the number at this position last
        // time is looked at first (a short compare, where the index would hash the name).
        uint32_t& c = recent_[k];
        if (c == kNone || *cluster_names_[c] != clusters[k]) c = intern(clusters_, cluster_names_, clusters[k]);
        uint32_t id = kNone;
        if (size_t at = find_from(held, from, [c](const Held& x) { return x.cluster == c; }); at < held.size()) {
            id = held[at].id, from = at + 1;
        } else {
            id = static_cast<uint32_t>(pairs_.size());
            pairs_.push_back(Pair{h, c});
            held.push_back(Held{c, id});
            from = 0;
        }
        ids[k] = id;
    }
}

uint32_t AnswerIds::id(std::string_view host, std::string_view cluster) {
    uint32_t out = kNone;
    ids(host, std::span(&cluster, 1), std::span(&out, 1));
    return out;
}

uint32_t AnswerIds::find(std::string_view host, std::string_view cluster) const {
    uint32_t h = number(hosts_, host), c = number(clusters_, cluster);
    if (h == kNone || c == kNone) return kNone;
    for (const Held& at : of_host_[h]) {
        if (at.cluster == c) return at.id;
    }
    return kNone;
}

std::vector<uint32_t> AnswerIds::sorted() const {
    // Rank the names once, then order the pairs by two numbers.
    auto ranks = [](const std::vector<const std::string*>& names) {
        std::vector<uint32_t> order(names.size()), rank(names.size());
        std::iota(order.begin(), order.end(), 0u);
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return *names[a] < *names[b]; });
        for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
        return rank;
    };
    auto host_rank = ranks(host_names_), cluster_rank = ranks(cluster_names_);
    std::vector<uint32_t> ids(pairs_.size());
    std::iota(ids.begin(), ids.end(), 0u);
    auto key = [&](uint32_t i) { return uint64_t{host_rank[pairs_[i].host]} << 32 | cluster_rank[pairs_[i].cluster]; };
    std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    return ids;
}

}  // namespace glbd
