// sync/liveness (sync thread): which known instances count as alive, how long a lossy path may stretch deadAfter
// (accrual) and how long this loop was away (time in which nothing could be heard is nobody's silence), which
// members are suspect, and the log lines that say so with what was heard.
#include "sync/liveness.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "sync/service_impl.hpp"

namespace glbd::sync {

void Liveness::start() {
    uv_timer_init(&core_.loop, &timer_);
    timer_.data = this;
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<Liveness*>(t->data)->check(); }, kTurnMs, kTurnMs);
}

uint64_t Liveness::max_grace() const {
    const auto& p = *core_.config.peers;
    const uint64_t dead = core_.dead_after();
    const uint64_t most = p.dead_after_max.count() ? static_cast<uint64_t>(p.dead_after_max.count()) : dead + dead / 10;
    return most > dead ? most - dead : 0;
}

// A turn of the loop later than kOnTimeMs after the last one: the rest of the time it was away, and beats that
// came meanwhile waited unread or were dropped (the hand-off socket holds a few dozen). On two cores with a
// hundred servers a sync loop was seen away for up to 15 s at a time, and took every peer for dead on its
// return, before reading the beats that waited.
void Liveness::note_away(uint64_t now, uint64_t mono) {
    const uint64_t last = std::exchange(last_turn_mono_, mono);
    if (last == 0 || mono <= last + kOnTimeMs) return;
    const uint64_t ms = mono - last - kOnTimeMs;
    away_.push_back({now, ms});
    if (away_.size() > kAwayKept) away_.pop_front();
    core_.counters.loop_away_ms.fetch_add(ms);
    uint64_t left_out = 0;
    if (ms >= 1000 && core_.report_log.allow("loop away", now, &left_out)) {
        spdlog::warn(
            "sync: this server's sync loop was away for {} ms (a busy CPU?); that time counts as no "
            "peer's silence{}",
            ms, left_out ? " (and " + std::to_string(left_out) + " more times not logged)" : std::string());
    }
}

uint64_t Liveness::away_since(uint64_t from_ms, uint64_t now_ms) const {
    uint64_t sum = 0;
    for (const Away& a : away_) {
        const uint64_t back = std::min(a.back_ms, now_ms);
        const uint64_t left = std::max(a.back_ms - std::min(a.back_ms, a.ms), from_ms);
        if (back > left) sum += back - left;
    }
    return sum;
}

void Liveness::check() {
    bool changed = false;
    uint64_t now = core_.now();
    {
        MutexLock lock(core_.mu);
        note_away(now, core_.mono());
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
            // counts as dead, deadAfter x (1 + the share lost), within peers.deadAfterMax; and as long again as
            // this loop was away since it was last heard.
            const uint64_t most = max_grace();
            for (const auto& [origin, k] : store.known()) {
                uint64_t grace = away_since(k.last_heard_ms, now);
                if (auto link = core_.beat_links.find(origin); link != core_.beat_links.end())
                    grace += std::min(static_cast<uint64_t>(static_cast<double>(dead_after) * link->second.loss), most);
                store.set_grace(origin, grace);
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
                    const uint64_t away = std::min(away_since(k.last_heard_ms, now), k.grace_ms);
                    spdlog::warn(
                        "sync: {} is dead: not heard for {} ms (deadAfter {} ms, {} ms for a lossy path and {} ms "
                        "this server was away), directly or through a peer; {}",
                        origin, dead_after + k.grace_ms, dead_after, k.grace_ms - away, away, evidence(origin, k, now));
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
        const bool suspect = now > since + after + away_since(since, now);
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
