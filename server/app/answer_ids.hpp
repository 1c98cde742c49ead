// server/app/answer_ids — the answers counter id of each (host, cluster) pair: given out once and kept for
// the process's life, since the query threads count answers by id and /metrics and /v1/state name them.
// Each name is kept once (at 10,000 hosts x 20 clusters that is 200,000 pairs over 10,020 names), a pair
// as two numbers. A host's pairs are one short list of (cluster number, id), asked for a whole host at a
// time: a build asks for a host's clusters in the same order each time, so each is found where the last
// one ended (at 10,000 x 20 a start's 200,000 ids took 33 ms of two threads' time, and contention for the
// lock, when each pair was found through a table of its own: two cache misses a pair). Some 16 bytes a pair
// in all. Control thread only; SharedAnswerIds lends it to other threads under its lock.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "resolver/base/mutex.hpp"

namespace glbd {

class AnswerIds {
public:
    static constexpr uint32_t kNone = UINT32_MAX;
    // The ids of `host`'s pairs with each of `clusters`, into `ids` (as many), given out now to pairs that have
    // none.
    void ids(std::string_view host, std::span<const std::string_view> clusters, std::span<uint32_t> ids);
    uint32_t id(std::string_view host, std::string_view cluster);  // one pair's
    // The pair's id, or kNone.
    [[nodiscard]] uint32_t find(std::string_view host, std::string_view cluster) const;
    [[nodiscard]] uint32_t size() const { return static_cast<uint32_t>(pairs_.size()); }
    // f(cluster, id) for every pair, in no set order (cheap: no sorting).
    template <class F>
    void each_cluster(F&& f) const {
        for (uint32_t i = 0; i < pairs_.size(); ++i) f(*cluster_names_[pairs_[i].cluster], i);
    }
    // f(host, cluster, id) for every pair, by host name, then cluster name.
    template <class F>
    void each_sorted(F&& f) const {
        for (uint32_t i : sorted()) f(*host_names_[pairs_[i].host], *cluster_names_[pairs_[i].cluster], i);
    }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using Index = std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>>;
    struct Pair {
        uint32_t host, cluster;
    };
    struct Held {
        uint32_t cluster, id;
    };
    static uint32_t intern(Index& index, std::vector<const std::string*>& names, std::string_view name);
    static uint32_t number(const Index& index, std::string_view name);  // kNone when unknown
    [[nodiscard]] std::vector<uint32_t> sorted() const;
    Index hosts_, clusters_;
    std::vector<const std::string*> host_names_, cluster_names_;  // the maps' keys, by number (nodes do not move)
    std::vector<std::vector<Held>> of_host_;                      // by host number, in the order given out
    std::vector<Pair> pairs_;                                     // by id
    std::vector<uint32_t> recent_;  // the cluster numbers last asked for, by position in `clusters`
};

// AnswerIds behind a mutex: the control thread numbers pairs as it builds snapshots; /v1/state's stream
// reads them on the admin thread (one lock for each piece it writes).
class SharedAnswerIds {
public:
    void ids(std::string_view host, std::span<const std::string_view> clusters, std::span<uint32_t> out) {
        MutexLock lock(mu_);
        ids_.ids(host, clusters, out);
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
