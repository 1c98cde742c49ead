// resolver/snapshot/host — one host built: its entries from every cluster that names it, and its name
// followed by its answer plan (plan.hpp) in one block, a HostBlock. A building thread keeps its buffers and
// label numbers from one host to the next in a HostWriter; several threads may build hosts at once.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "resolver/base/mutex.hpp"
#include "resolver/model/global_view.hpp"
#include "resolver/model/served.hpp"
#include "resolver/snapshot/signed.hpp"
#include "resolver/snapshot/snapshot.hpp"

namespace glbd {

// The entries of one host in every cluster that names it, in cluster order.
using Contributions = std::vector<std::pair<const ClusterView*, const HostEntry*>>;

// The answer counter ids, asked for by every building thread: the numbering (CounterIds: the daemon's
// AnswerIds hands out ids as it goes and is not thread-safe) is reachable only under the lock, taken once
// per host.
class SharedIds {
public:
    explicit SharedIds(const CounterIds& ids) : counted_(static_cast<bool>(ids)), ids_(ids) {}
    explicit operator bool() const { return counted_; }
    template <class F>
    void with(F&& f) GLBD_EXCLUDES(mu_) {
        MutexLock lock(mu_);
        f(ids_);
    }

private:
    Mutex mu_;
    const bool counted_;  // whether there is a numbering at all (fixed at construction)
    const CounterIds& ids_ GLBD_GUARDED_BY(mu_);
};

// A building thread's labels last used at each entry position: most hosts of a cluster have its entry at
// the same position with the same geo, so the shared Labels (and their lock) are asked only on a change.
class LabelCache {
public:
    explicit LabelCache(Labels& labels) : labels_(labels) {}
    uint32_t get(size_t slot, std::string_view s) {
        if (s.empty()) return 0;
        if (slot >= recent_.size()) recent_.resize(slot + 1, 0);
        uint32_t& r = recent_[slot];
        if (r == 0 || labels_.at(r) != s) r = labels_.get(s);
        return r;
    }

private:
    Labels& labels_;
    std::vector<uint32_t> recent_;
};

struct Endpoints;  // host.cpp: an entry's endpoints while its plan is written

// One building thread's scratch: its label cache, endpoint lists and plan buffer, reused host after host.
class HostWriter {
public:
    explicit HostWriter(Labels& labels);
    ~HostWriter();
    HostWriter(HostWriter&&) noexcept;
    HostWriter(const HostWriter&) = delete;
    HostWriter& operator=(const HostWriter&) = delete;

    // The host `name` (as the view spells it) from its contributions, numbering its entries' strings in
    // `labels` (which the block keeps); null when the name is in none of `snap`'s zones. In a signed zone,
    // the sets it shares with `before` (the host as built last, or null) keep their signatures (sign_host),
    // and its answer counter ids are those `before` was given, where it had them for the same clusters.
    std::shared_ptr<const HostBlock> build(const model::Served& served, const Snapshot& snap, const std::string& name,
                                           const Contributions& contributions, SharedIds& counter_ids,
                                           const std::shared_ptr<Labels>& labels, const HostBlock* before = nullptr);
    // The RRsets this writer's hosts signed anew and kept.
    [[nodiscard]] const SignCount& signed_sets() const { return signed_; }
    // Hosts of signed zones built from now on are left to sign (defer_host), not signed.
    void defer_signing(bool defer) { defer_ = defer; }

private:
    LabelCache cache_;
    std::vector<Endpoints> eps_;
    std::unique_ptr<Endpoints> joined_;  // a simple host's union of its entries' endpoints
    std::string plan_bytes_;
    std::vector<std::string_view> clusters_;  // a host's counters asked for: its entries' clusters
    std::vector<uint32_t> ids_;               // and their ids
    SignCount signed_;
    bool defer_ = false;
};

}  // namespace glbd
