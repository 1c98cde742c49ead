// The sync service's stateDir: what is known loaded at start (our own overrides, active groups and last
// hosts too), and written after changes, at most once a second and never on the control thread's time.
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "resolver/base/read_file.hpp"
#include "sync/service.hpp"
#include "sync/service_impl.hpp"
#include "sync/state_file.hpp"

namespace glbd::sync {

// ---- stateDir
std::string Service::Impl::state_path() const { return config.state_dir + "/" + kStateFileName; }

void Service::Impl::load_state_dir(uint64_t now) {
    if (config.state_dir.empty()) return;
    bool missing = false;
    auto text = read_file(state_path(), kMaxStateFileBytes, &missing);
    if (!text) {
        if (!missing) spdlog::warn("sync: ignoring {}: {}", state_path(), text.error());
        return;
    }
    try {
        std::vector<InstanceState> origins = read_state_file(*text);
        std::string().swap(*text);  // the parsed origins are what is kept
        size_t n = 0;
        for (auto& s : origins) {
            CheckResult checked = check_report(s, now, s.origin() != own.origin());
            if (!checked.error.empty()) {
                spdlog::warn("sync: ignoring {} in {}: {}", printable(s.origin()), state_path(), checked.error);
                continue;
            }
            if (checked.dropped) {
                spdlog::warn("sync: {} host(s) or record(s) of {} in {} left out: {}", checked.dropped,
                             printable(s.origin()), state_path(), printable(checked.dropped_why));
            }
            if (s.origin() == own.origin()) {
                // Our own overrides and active groups survive a restart; a new life begins above the saved one, so its
                // versions may start from the clock whatever the last life's clock said.
                own.overrides = std::move(s.overrides);
                own.active_groups = std::move(s.active_groups);
                if (own_group().empty()) records_group = s.group;  // until the DNSRecords are read again
                own.group = own_group();
                own.incarnation = std::max(own.incarnation, s.incarnation + 1);
                saved_own_hosts = std::move(s.hosts);
                saved_own_records = std::move(s.records);
                continue;
            }
            store.load(std::move(s), now);
            ++n;
        }
        spdlog::info("sync: loaded {} known instance(s) from {}", n, state_path());
    } catch (const std::exception& e) {
        spdlog::warn("sync: ignoring {}: {}", state_path(), e.what());
    }
}

// stateDir is written on the sync thread, at most every max(1 s, 4 x the last write's cost): at
// 10,000 hosts x 20 clusters one write is about a second of work. The known states are copied
// under the lock; serializing and writing happen outside it. A stop writes what is pending.
void Service::Impl::request_save() {
    if (config.state_dir.empty()) return;
    save_pending = true;
    if (!networked) save_locked();  // no sync thread: write now
}

void Service::Impl::schedule_save() {  // sync thread
    if (uv_is_active(reinterpret_cast<uv_handle_t*>(&save_timer))) return;
    {
        MutexLock lock(mu);
        if (!save_pending) return;
    }
    uv_update_time(&loop);
    uint64_t now = uv_now(&loop);
    uint64_t gap = std::max<uint64_t>(1000, 4 * last_save_cost_ms);
    uint64_t delay = last_save_ms + gap > now ? last_save_ms + gap - now : 0;
    uv_timer_start(
        &save_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->save_now(); }, delay, 0);
}

void Service::Impl::save_now() {  // sync thread
    uv_update_time(&loop);
    uint64_t start = uv_now(&loop);
    std::vector<InstanceState> states;
    {
        MutexLock lock(mu);
        if (!save_pending) return;
        save_pending = false;
        states = known_states();
    }
    write_state(states);
    states = {};
    malloc_trim(0);  // a large view's copy is hundreds of MB, gone now: give it back
    uv_update_time(&loop);
    last_save_ms = uv_now(&loop);
    last_save_cost_ms = last_save_ms - start;
}

void Service::Impl::save_locked() {
    save_pending = false;
    write_state(known_states());
}

std::vector<InstanceState> Service::Impl::known_states() const {
    std::vector<InstanceState> out;
    out.reserve(store.known().size());
    for (const auto& [o, k] : store.known()) out.push_back(k.state);
    return out;
}

// {"saved": ms, "origins": [...]}: see state_file.hpp.
void Service::Impl::write_state(const std::vector<InstanceState>& states) const {
    if (auto saved = save_state_file(config.state_dir, states, now_ms()); !saved)
        spdlog::warn("sync: {}", saved.error());
}

}  // namespace glbd::sync
