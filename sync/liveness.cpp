// Liveness (sync thread): which known instances count as alive, how long a lossy path may stretch deadAfter
// (accrual), which members are suspect, and the log lines that say so with what was heard.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "sync/service_impl.hpp"

namespace glbd::sync {

uint64_t Service::Impl::max_grace() const {
    const auto& p = *config.peers;
    const uint64_t dead = dead_after();
    const uint64_t most = p.dead_after_max.count() ? static_cast<uint64_t>(p.dead_after_max.count()) : dead + dead / 10;
    return most > dead ? most - dead : 0;
}

uint64_t Service::Impl::suspect_after() const {
    return std::max(3 * static_cast<uint64_t>(config.peers->sync_interval.count()), dead_after() / 2);
}

void Service::Impl::check_liveness() {
    bool changed = false;
    uint64_t now = now_ms();
    {
        MutexLock lock(mu);
        if (networked) {
            for (const auto& origin : store.forget(now, static_cast<uint64_t>(config.peers->forget_after.count()))) {
                spdlog::info("sync: forgot {}: not heard from for peers.forgetAfter", origin);
                last_alive.erase(origin);
                beat_links.erase(origin);
                changed = true;
                request_save();
            }
            judge_members(now);
            // Accrual: an origin whose beats have been arriving through a lossy path gets longer before it
            // counts as dead, deadAfter x (1 + the share lost), within peers.deadAfterMax.
            const uint64_t most = max_grace();
            for (const auto& [origin, link] : beat_links) {
                auto grace = static_cast<uint64_t>(static_cast<double>(dead_after()) * link.loss);
                store.set_grace(origin, std::min(grace, most));
            }
        }
        for (const auto& [origin, k] : store.known()) {
            bool alive = store.alive(k, now, dead_after());
            // A first sighting changes nothing: the view that brought the origin judged it the same way.
            auto [it, fresh] = last_alive.try_emplace(origin, alive);
            if (!fresh && it->second != alive) {
                if (alive) {
                    spdlog::warn("sync: {} is alive again", origin);
                } else {
                    spdlog::warn(
                        "sync: {} is dead: not heard for {} ms (deadAfter {} ms and {} ms for a lossy path), "
                        "directly or through a peer; {}",
                        origin, dead_after() + k.grace_ms, dead_after(), k.grace_ms, evidence(origin, k, now));
                }
                it->second = alive;
                changed = true;
            }
        }
    }
    if (changed && on_change) on_change();
}

// What was last heard of `origin`: from the member that is it (heartbeats, their loss, transfers) and
// through the others.
std::string Service::Impl::evidence(const std::string& origin, const Known& k, uint64_t now) const {
    auto ago = [now](uint64_t at) {
        return at ? fmt::format("{:.1f} s ago", static_cast<double>(now - std::min(now, at)) / 1000.0)
                  : std::string("never");
    };
    std::string out;
    auto link = beat_links.find(origin);
    const double lost = link != beat_links.end() ? 100 * link->second.loss : 0.0;
    for (const auto& [addr, st] : peer_status) {
        if (st.origin != origin) continue;
        out += fmt::format("at {}: last heartbeat {} ({:.0f} % of them lost lately), last transfer {}; ", st.address,
                           ago(st.last_beat_ms), lost, ago(st.last_ok_ms));
    }
    return out + "last heard at all " + ago(k.last_heard_ms);
}

// Each member is suspect while nothing has come from it directly for max(3 x syncInterval, deadAfter / 2);
// a change is logged with what was heard (throttled per member).
void Service::Impl::judge_members(uint64_t now) {
    const uint64_t after = suspect_after();
    for (const SocketAddress& m : members) {
        PeerStatus& st = peer_status[m];
        if (st.address.empty()) st.address = m.str();
        const uint64_t direct = std::max(st.last_beat_ms, st.last_ok_ms);
        const uint64_t since = direct ? direct : started_ms;
        const bool suspect = now > since + after;
        if (suspect == st.suspect) continue;
        st.suspect = suspect;
        const Known* k = nullptr;
        if (auto it = store.known().find(st.origin); !st.origin.empty() && it != store.known().end()) k = &it->second;
        st.suspect_reason =
            suspect ? fmt::format("nothing directly for {} ms", now - since) +
                          (k && k->last_heard_ms > direct ? "; heard through others" : "; nor through others")
                    : "";
        uint64_t left_out = 0;
        if (report_log.allow((suspect ? "suspect " : "direct ") + st.address, now, &left_out)) {
            if (suspect) {
                spdlog::warn("sync: peer {} ({}) is suspect: {}; {}", st.address,
                             st.origin.empty() ? "not known yet" : st.origin, st.suspect_reason,
                             k ? evidence(st.origin, *k, now) : std::string("never heard"));
            } else {
                spdlog::info("sync: peer {} ({}) is heard directly again", st.address, st.origin);
            }
        }
    }
}

}  // namespace glbd::sync
