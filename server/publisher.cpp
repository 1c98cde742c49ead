#include "server/publisher.hpp"

namespace glbd {

void Publisher::publish(std::shared_ptr<const Snapshot> next) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        snap_ = std::move(next);
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const Snapshot> Publisher::current() const {
    std::lock_guard<std::mutex> lock(mu_);
    return snap_;
}

}  // namespace glbd
