// sync/state_dir — the sync service's stateDir: what is known loaded at start (our own overrides, active groups
// and last hosts too), and written after changes, at most once a second and never on the control thread's time.
#include "sync/state_dir.hpp"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "sync/service_impl.hpp"
#include "sync/state_file.hpp"

namespace glbd::sync {

std::string StateDir::path() const { return core_.config.state_dir + "/" + kStateFileName; }

void StateDir::load(uint64_t now, std::optional<StateFileRead> read) {
    if (core_.config.state_dir.empty()) return;
    if (!read) read = read_state_dir(core_.config.state_dir);
    if (!read->error.empty()) {
        spdlog::warn("sync: ignoring {}: {}", path(), read->error);
        return;
    }
    if (read->missing) return;
    try {
        std::vector<InstanceState> origins = std::move(read->origins);
        read.reset();
        size_t n = 0;
        MutexLock lock(core_.mu);
        InstanceState& own = core_.own;
        for (auto& s : origins) {
            CheckResult checked = check_report(s, now, s.origin() != own.origin());
            if (!checked.error.empty()) {
                spdlog::warn("sync: ignoring {} in {}: {}", printable(s.origin()), path(), checked.error);
                continue;
            }
            if (checked.dropped) {
                spdlog::warn("sync: {} host(s) or record(s) of {} in {} left out: {}", checked.dropped,
                             printable(s.origin()), path(), printable(checked.dropped_why));
            }
            if (s.origin() == own.origin()) {
                // Our own overrides, active groups and tombstones survive a restart; a new life begins above the saved
                // one, so its versions may start from the clock whatever the last life's clock said.
                own.overrides = std::move(s.overrides);
                own.active_groups = std::move(s.active_groups);
                own.forgotten = std::move(s.forgotten);
                if (core_.own_group().empty()) core_.records_group = s.group;  // until the DNSRecords are read again
                own.group = core_.own_group();
                own.incarnation = std::max(own.incarnation, s.incarnation + 1);
                core_.saved_own_hosts = std::move(s.hosts);
                core_.saved_own_records = std::move(s.records);
                continue;
            }
            core_.store.share_names(s);  // (those the reader shared already are left as they are)
            core_.store.load(std::move(s), now);
            ++n;
        }
        spdlog::info("sync: loaded {} known instance(s) from {}", n, path());
    } catch (const std::exception& e) {
        spdlog::warn("sync: ignoring {}: {}", path(), e.what());
    }
}

void StateDir::start() {
    uv_timer_init(&core_.loop, &timer_);
    timer_.data = this;
    // At start the control thread is building the first snapshot, and a large view's write (a second of work at
    // 10,000 hosts x 20 clusters) would take CPU from it before the first answer. The file on disk is what was
    // just loaded.
    uv_update_time(&core_.loop);
    last_save_ms_ = uv_now(&core_.loop);
    schedule_save();
}

void StateDir::schedule_save() {  // sync thread
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(&timer_))) return;
    {
        MutexLock lock(core_.mu);
        if (!core_.save_pending) return;
    }
    uv_update_time(&core_.loop);
    uint64_t now = uv_now(&core_.loop);
    uint64_t gap = std::max<uint64_t>(1000, 4 * last_save_cost_ms_);
    uint64_t delay = last_save_ms_ + gap > now ? last_save_ms_ + gap - now : 0;
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<StateDir*>(t->data)->save_now(); }, delay, 0);
}

void StateDir::save_now() {  // sync thread
    uv_update_time(&core_.loop);
    uint64_t start = uv_now(&core_.loop);
    std::vector<InstanceState> states;
    {
        MutexLock lock(core_.mu);
        if (!core_.save_pending) return;
        core_.save_pending = false;
        states = core_.known_states();
    }
    core_.write_states(states);
    states = {};
    malloc_trim(0);  // a large view's copy is hundreds of MB, gone now: give it back
    uv_update_time(&core_.loop);
    last_save_ms_ = uv_now(&core_.loop);
    last_save_cost_ms_ = last_save_ms_ - start;
}

}  // namespace glbd::sync
