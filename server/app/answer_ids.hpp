// server/app/answer_ids — the answers counter id of each (host, cluster) pair: given out once and kept for
// the process's life, since the query threads count answers by id and /metrics and /v1/state name them.
// Each name is kept once (at 10,000 hosts x 20 clusters that is 200,000 pairs over 10,020 names), a pair
// as two numbers, found through an open-addressing table of ids (4 bytes a slot, at most half full: some
// 20 bytes a pair in all, where a node-based map took some 50). Control thread only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "resolver/base/mutex.hpp"

namespace glbd {

class AnswerIds {
public:
    static constexpr uint32_t kNone = UINT32_MAX;
    // The pair's id, given out now if it has none.
    uint32_t id(const std::string& host, const std::string& cluster);
    // The pair's id, or kNone.
    [[nodiscard]] uint32_t find(const std::string& host, const std::string& cluster) const;
    [[nodiscard]] uint32_t size() const { return static_cast<uint32_t>(pairs_.size()); }
    // f(cluster, id) for every pair, in no set order (cheap: no sorting).
    template <class F>
    void each_cluster(F&& f) const {
        for (uint32_t i = 0; i < pairs_.size(); ++i) f(*cluster_names_[pairs_[i] & 0xffffffffu], i);
    }
    // f(host, cluster, id) for every pair, by host name, then cluster name.
    template <class F>
    void each_sorted(F&& f) const {
        for (uint32_t i : sorted()) f(*host_names_[pairs_[i] >> 32], *cluster_names_[pairs_[i] & 0xffffffffu], i);
    }

private:
    static uint32_t intern(std::unordered_map<std::string, uint32_t>& index, std::vector<const std::string*>& names,
                           const std::string& name);
    [[nodiscard]] std::vector<uint32_t> sorted() const;
    std::unordered_map<std::string, uint32_t> hosts_, clusters_;
    std::vector<const std::string*> host_names_, cluster_names_;  // the maps' keys, by number (nodes do not move)
    [[nodiscard]] size_t slot_of(uint64_t pair) const;            // the pair's slot, or the empty one where it would go
    void grow();
    std::vector<uint32_t> slots_;  // ids (kNone: empty), by the pair's hash
    std::vector<uint64_t> pairs_;  // host number << 32 | cluster number, by id
};

// AnswerIds behind a mutex: the control thread numbers pairs as it builds snapshots; /v1/state's stream
// reads them on the admin thread (one lock for each piece it writes).
class SharedAnswerIds {
public:
    uint32_t id(const std::string& host, const std::string& cluster) {
        MutexLock lock(mu_);
        return ids_.id(host, cluster);
    }
    // f(const AnswerIds&) with the lock held.
    template <class F>
    auto read(F&& f) const {
        MutexLock lock(mu_);
        return f(ids_);
    }

private:
    mutable Mutex mu_;
    AnswerIds ids_ GLBD_GUARDED_BY(mu_);
};

}  // namespace glbd
