// sync/liveness (sync thread): which known instances count as alive, how long a lossy path may stretch deadAfter
// (accrual), which members are suspect, and the log lines that say so with what was heard.
#include "sync/liveness.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "sync/service_impl.hpp"

namespace glbd::sync {

void Liveness::start() {
    uv_timer_init(&core_.loop, &timer_);
    timer_.data = this;
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<Liveness*>(t->data)->check(); }, 100, 100);
}

uint64_t Liveness::max_grace() const {
    const auto& p = *core_.config.peers;
    const uint64_t dead = core_.dead_after();
    const uint64_t most = p.dead_after_max.count() ? static_cast<uint64_t>(p.dead_after_max.count()) : dead + dead / 10;
    return most > dead ? most - dead : 0;
}

void Liveness::check() {
    bool changed = false;
    uint64_t now = core_.now();
    {
        MutexLock lock(core_.mu);
        const uint64_t dead_after = core_.dead_after();
        Store& store = core_.store;
        for (const auto& origin : store.take_buried()) {
            spdlog::warn("sync: forgot {}: forgotten fleet-wide (glbd forget)", origin);
            drop(origin);
            changed = true;
        }
        if (core_.networked) {
            auto forget_after = static_cast<uint64_t>(core_.config.peers->forget_after.count());
            for (const auto& origin : store.forget(now, forget_after)) {
                spdlog::info("sync: forgot {}: not heard from for peers.forgetAfter", origin);
                drop(origin);
                changed = true;
            }
            // Our tombstones go after forgetAfter too: by then every server has forgotten the instance anyway.
            if (std::erase_if(core_.own.forgotten,
                              [&](const auto& t) { return now > forget_after && t.second.at_ms < now - forget_after; }))
                core_.bump_own();
            judge_members(now);
            // Accrual: an origin whose beats have been arriving through a lossy path gets longer before it
            // counts as dead, deadAfter x (1 + the share lost), within peers.deadAfterMax.
            const uint64_t most = max_grace();
            for (const auto& [origin, link] : core_.beat_links) {
                auto grace = static_cast<uint64_t>(static_cast<double>(dead_after) * link.loss);
                store.set_grace(origin, std::min(grace, most));
            }
        }
        for (const auto& [origin, k] : store.known()) {
            bool alive = store.alive(k, now, dead_after);
            // A first sighting changes nothing: the view that brought the origin judged it the same way.
            auto [it, fresh] = last_alive_.try_emplace(origin, alive);
            if (!fresh && it->second != alive) {
                if (alive) {
                    spdlog::warn("sync: {} is alive again", origin);
                } else {
                    spdlog::warn(
                        "sync: {} is dead: not heard for {} ms (deadAfter {} ms and {} ms for a lossy path), "
                        "directly or through a peer; {}",
                        origin, dead_after + k.grace_ms, dead_after, k.grace_ms, evidence(origin, k, now));
                }
                it->second = alive;
                changed = true;
            }
        }
    }
    if (changed && core_.on_change) core_.on_change();
}

// What is kept of an origin the store forgot goes with it: its beats, what it held of us, the addresses it
// claimed (learnt members: their status too). A configured member's status stays, as the config names it.
void Liveness::drop(const std::string& origin) {
    last_alive_.erase(origin);
    core_.beat_links.erase(origin);
    core_.own_held.erase(origin);
    std::vector<SocketAddress> claimed;
    for (const auto& [a, e] : core_.learnt.entries()) {
        if (e.origin == origin) claimed.push_back(a);
    }
    for (const auto& a : claimed) core_.learnt.erase(a), core_.peer_status.erase(a);
    core_.request_save();
}

// What was last heard of `origin`: from the member that is it (heartbeats, their loss, transfers) and
// through the others.
std::string Liveness::evidence(const std::string& origin, const Known& k, uint64_t now) const {
    auto ago = [now](uint64_t at) {
        return at ? fmt::format("{:.1f} s ago", static_cast<double>(now - std::min(now, at)) / 1000.0)
                  : std::string("never");
    };
    std::string out;
    auto link = core_.beat_links.find(origin);
    const double lost = link != core_.beat_links.end() ? 100 * link->second.loss : 0.0;
    for (const auto& [addr, st] : core_.peer_status) {
        if (st.origin != origin) continue;
        out += fmt::format("at {}: last heartbeat {} ({:.0f} % of them lost lately), last transfer {}; ", st.address,
                           ago(st.last_beat_ms), lost, ago(st.last_ok_ms));
    }
    return out + "last heard at all " + ago(k.last_heard_ms);
}

// Each member is suspect while nothing has come from it directly for max(3 x syncInterval, deadAfter / 2);
// a change is logged with what was heard (throttled per member). While suspect, whether others still relay it
// is judged again each time.
void Liveness::judge_members(uint64_t now) {
    const uint64_t after = core_.suspect_after();
    for (const SocketAddress& m : s_.membership.members()) {
        PeerStatus& st = core_.peer_status[m];
        if (st.address.empty()) st.address = m.str();
        const uint64_t direct = std::max(st.last_beat_ms, st.last_ok_ms);
        const uint64_t since = direct ? direct : core_.started_ms;
        const bool suspect = now > since + after;
        const Known* k = nullptr;
        if (auto it = core_.store.known().find(st.origin); !st.origin.empty() && it != core_.store.known().end())
            k = &it->second;
        const bool relayed = suspect && k && k->last_heard_ms > direct;
        if (suspect) {
            st.suspect_limit_ms = after;
            if (st.suspect && relayed == st.heard_through_others) continue;
            st.heard_through_others = relayed;
            st.suspect_reason = fmt::format("nothing directly for over {} ms; {}", after,
                                            relayed ? "heard through others" : "nor through others");
        }
        if (suspect == st.suspect) continue;
        st.suspect = suspect;
        if (!suspect) st.suspect_reason.clear(), st.heard_through_others = false;
        uint64_t left_out = 0;
        if (core_.report_log.allow((suspect ? "suspect " : "direct ") + st.address, now, &left_out)) {
            if (suspect) {
                spdlog::warn("sync: peer {} ({}) is suspect: nothing directly for {} ms; {}; {}", st.address,
                             st.origin.empty() ? "not known yet" : st.origin, now - since,
                             relayed ? "heard through others" : "nor through others",
                             k ? evidence(st.origin, *k, now) : std::string("never heard"));
            } else {
                spdlog::info("sync: peer {} ({}) is heard directly again", st.address, st.origin);
            }
        }
    }
}

}  // namespace glbd::sync
