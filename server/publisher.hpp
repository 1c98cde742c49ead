// server/publisher — hands the current Snapshot to query threads without a lock on their path.
// publish() stores the next snapshot and bumps a generation counter; each reader checks the counter
// (one atomic load) and only when it moved takes the mutex to copy the new pointer. Old snapshots die
// when the last reader lets go of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "resolver/snapshot.hpp"

namespace glbd {

class Publisher {
public:
    void publish(std::shared_ptr<const Snapshot> next);
    [[nodiscard]] std::shared_ptr<const Snapshot> current() const;
    [[nodiscard]] uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

    // One per query thread.
    class Reader {
    public:
        explicit Reader(const Publisher& p) : pub_(p) {}
        const Snapshot* get() {
            uint64_t g = pub_.generation();
            if (g != seen_) {
                snap_ = pub_.current();
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
    mutable std::mutex mu_;
    std::shared_ptr<const Snapshot> snap_;
    std::atomic<uint64_t> generation_{0};
};

}  // namespace glbd
