#include "resolver/snapshot/snapshot.hpp"

#include <stdexcept>

namespace glbd {

Labels::Labels() {
    MutexLock lock(mu_);
    chunks_[0] = std::make_unique<std::string[]>(kChunk);
    numbers_.emplace(chunks_[0][0], 0);  // ""
    size_ = 1;
}

const Labels& Labels::empty() {
    static const Labels kEmpty;
    return kEmpty;
}

uint32_t Labels::get(std::string_view s) {
    MutexLock lock(mu_);
    if (auto it = numbers_.find(s); it != numbers_.end()) return it->second;
    if (size_ == kChunk * kChunks)
        throw std::runtime_error("more than " + std::to_string(kChunk * kChunks) +
                                 " distinct cluster ids and geo codes");
    uint32_t n = size_++;
    auto& chunk = chunks_[n / kChunk];
    if (!chunk) chunk = std::make_unique<std::string[]>(kChunk);
    chunk[n % kChunk] = std::string(s);
    numbers_.emplace(chunk[n % kChunk], n);
    return n;
}

bool Host::operator==(const Host& o) const {
    if (name != o.name || ttl != o.ttl || simple != o.simple || counter != o.counter ||
        entries.size() != o.entries.size())
        return false;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry &a = entries[i], &b = o.entries[i];
        if (cluster(a) != o.cluster(b) || geo(a) != o.geo(b) || key(a) != o.key(b) || a.ttl != b.ttl ||
            a.counter != b.counter || a.weight != b.weight || a.default_geo != b.default_geo ||
            a.load_balanced != b.load_balanced || a.usable != b.usable) {
            return false;
        }
    }
    return true;
}

const Zone* Snapshot::find_zone(std::string_view qname, unsigned labels) const {
    const Zone* best = nullptr;
    for (const auto& z : zones) {
        if (z.labels > labels || (best && best->labels >= z.labels)) continue;
        std::string_view suffix = qname.substr(wire::suffix_offset(qname, labels - z.labels));
        if (suffix.size() == z.origin.size() && wire::same_bytes(suffix.data(), z.origin.data(), suffix.size()))
            best = &z;
    }
    return best;
}

}  // namespace glbd
