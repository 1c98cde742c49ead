#include "server/app/answer_ids.hpp"

#include <algorithm>
#include <numeric>

namespace glbd {

uint32_t AnswerIds::intern(std::unordered_map<std::string, uint32_t>& index, std::vector<const std::string*>& names,
                           const std::string& name) {
    auto [it, added] = index.try_emplace(name, static_cast<uint32_t>(names.size()));
    if (added) names.push_back(&it->first);
    return it->second;
}

size_t AnswerIds::slot_of(uint64_t pair) const {
    uint64_t h = pair * 0x9e3779b97f4a7c15ull;  // Fibonacci hashing: the high bits are well mixed
    const size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(h >> 32) & mask;
    while (slots_[i] != kNone && pairs_[slots_[i]] != pair) i = (i + 1) & mask;
    return i;
}

void AnswerIds::grow() {
    slots_.assign(slots_.empty() ? 1024 : slots_.size() * 2, kNone);
    for (uint32_t id = 0; id < pairs_.size(); ++id) slots_[slot_of(pairs_[id])] = id;
}

uint32_t AnswerIds::id(const std::string& host, const std::string& cluster) {
    uint64_t pair = uint64_t{intern(hosts_, host_names_, host)} << 32 | intern(clusters_, cluster_names_, cluster);
    if ((pairs_.size() + 1) * 2 > slots_.size()) grow();
    size_t at = slot_of(pair);
    if (slots_[at] == kNone) {
        slots_[at] = static_cast<uint32_t>(pairs_.size());
        pairs_.push_back(pair);
    }
    return slots_[at];
}

uint32_t AnswerIds::find(const std::string& host, const std::string& cluster) const {
    auto h = hosts_.find(host);
    auto c = clusters_.find(cluster);
    if (h == hosts_.end() || c == clusters_.end() || slots_.empty()) return kNone;
    return slots_[slot_of(uint64_t{h->second} << 32 | c->second)];
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
    auto key = [&](uint32_t i) {
        return uint64_t{host_rank[pairs_[i] >> 32]} << 32 | cluster_rank[pairs_[i] & 0xffffffffu];
    };
    std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    return ids;
}

}  // namespace glbd
