#include "server/net/publisher.hpp"

namespace glbd {

void Publisher::publish(std::shared_ptr<const Snapshot> next) {
    {
        MutexLock lock(mu_);
        std::swap(snap_, next);
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
    next.reset();  // the previous snapshot, if no reader holds it
    reclaim();
}

void Publisher::retire(std::shared_ptr<const Snapshot> old) const {
    if (!old) return;
    MutexLock lock(mu_);
    retired_.push_back(std::move(old));
}

void Publisher::reclaim() {
    std::vector<std::shared_ptr<const Snapshot>> dead;
    {
        MutexLock lock(mu_);
        dead.swap(retired_);
    }
    // `dead` is freed here, outside the lock.
}

std::shared_ptr<const Snapshot> Publisher::current() const {
    MutexLock lock(mu_);
    return snap_;
}

}  // namespace glbd
