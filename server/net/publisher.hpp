// server/net/publisher — hands the current Snapshot to query threads without a lock on their path.
// publish() stores the next snapshot and bumps a generation counter; each reader checks the counter
// (one atomic load) and only when it moved takes the mutex to copy the new pointer. A reader hands the
// snapshot it lets go of back to the publisher, and reclaim() frees those on the publishing thread: a
// query thread never stalls for the milliseconds that freeing a large view takes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "resolver/base/mutex.hpp"
#include "resolver/snapshot/snapshot.hpp"

namespace glbd {

// How often an idle query thread takes the current snapshot (letting go of one replaced), and how often the
// publishing thread reclaims those let go of. At 10,000 hosts x 20 clusters a snapshot is some 30 MB: full
// rebuilds a few hundred milliseconds apart must not find the one before last still alive.
constexpr long kLetGoMs = 100;

class Publisher {
public:
    void publish(std::shared_ptr<const Snapshot> next);  // also reclaims
    [[nodiscard]] std::shared_ptr<const Snapshot> current() const;
    // Drops the snapshots readers have let go of (those no one else holds are freed here). Call it on
    // the publishing thread, after a publish and then every kLetGoMs: a reader lets go within that.
    void reclaim();
    [[nodiscard]] uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

    // One per query thread.
    class Reader {
    public:
        explicit Reader(const Publisher& p) : pub_(p) {}
        const Snapshot* get() {
            uint64_t g = pub_.generation();
            if (g != seen_) {
                pub_.retire(std::exchange(snap_, pub_.current()));
                seen_ = g;
            }
            return snap_.get();
        }
        // The generation of the snapshot get() returned last.
        [[nodiscard]] uint64_t generation() const { return seen_; }

    private:
        const Publisher& pub_;
        uint64_t seen_ = UINT64_MAX;
        std::shared_ptr<const Snapshot> snap_;
    };

private:
    void retire(std::shared_ptr<const Snapshot> old) const;

    mutable Mutex mu_;
    std::shared_ptr<const Snapshot> snap_ GLBD_GUARDED_BY(mu_);
    mutable std::vector<std::shared_ptr<const Snapshot>> retired_ GLBD_GUARDED_BY(mu_);  // let go of by readers
    std::atomic<uint64_t> generation_{0};
};

}  // namespace glbd
