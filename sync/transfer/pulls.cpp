// sync/transfer/pulls — which peers are pulled when (sync thread): a round every syncInterval (its lead first,
// the others when that pull ends), the NOTIFYs of this instance's changes, the pulls a beat or a NOTIFY asked for
// while one was out, relayed news that waits its rounds. The exchanges themselves are in exchange.cpp.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "sync/service_impl.hpp"

namespace glbd::sync {

namespace {
// Whether a version shown is ahead of what is held: a later life, or a newer version in the same one.
bool is_newer(const Held& shown, const InstanceState& held) {
    return shown.incarnation > held.incarnation ||
           (shown.incarnation == held.incarnation && shown.version > held.version);
}
}  // namespace

void Pulls::start() {
    uv_timer_init(&core_.loop, &timer_);
    timer_.data = this;
    round_lead_.reset();
    round_rest_.clear();
    auto interval = static_cast<uint64_t>(core_.config.peers->sync_interval.count());
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<Pulls*>(t->data)->round(); }, 0, interval);
}

void Pulls::stop() {
    std::vector<Exchange*> live;
    for (const auto& [x, owned] : exchanges_) live.push_back(x);
    for (Exchange* x : live) finish(x, "stopping");
}

bool Pulls::pulling() const { return pulls_open_.load() > 0 && core_.mono() < pull_heard_ms_.load() + kPullQuietMs; }

// Every syncInterval: resolve the members again, then pull from each (the lead first, see round_lead_).
void Pulls::round() {
    s_.membership.resolve();
    ++rounds_;
    bool notify;
    {
        MutexLock lock(core_.mu);
        notify = core_.notify_pending;
        core_.notify_pending = false;
    }
    if (!notify) s_.beats.send_all();
    notify_still_unheard();
    pull_rest();  // the last round's lead is still out (a slow peer): the others wait no longer
    take_relayed_news();
    RoundPlan plan;
    {
        MutexLock lock(core_.mu);
        plan = plan_round(s_.membership.members(), core_.peer_status, want_relay_, core_.now(),
                          static_cast<uint64_t>(core_.config.peers->sync_interval.count()), leads_);
    }
    if (plan.lead) {
        round_lead_ = plan.lead;
        round_rest_.insert(round_rest_.end(), plan.rest.begin(), plan.rest.end());
        exchange(*round_lead_, false);
        if (!in_flight_.count({*round_lead_, false})) pull_rest();  // ended at once, or never began
    }
    if (notify) announce();
}

Pulls::RoundPlan Pulls::plan_round(const std::vector<SocketAddress>& members,
                                   const std::map<SocketAddress, PeerStatus>& status,
                                   const std::set<SocketAddress>& want_relay, uint64_t now, uint64_t interval,
                                   size_t& leads) {
    std::vector<SocketAddress> due;
    for (const SocketAddress& m : members) {
        auto st = status.find(m);
        if (st == status.end() || want_relay.count(m) || st->second.last_beat_ms + 2 * interval < now ||
            st->second.last_ok_ms + kPullAtLeastEvery * interval < now) {
            due.push_back(m);
        }
    }
    RoundPlan plan;
    if (due.empty()) return plan;
    const size_t lead = leads++ % due.size();
    plan.lead = due[lead];
    for (size_t i = 0; i < due.size(); ++i) {
        if (i != lead) plan.rest.push_back(due[i]);
    }
    return plan;
}

// This instance's own change, to every member: by beats (a beat now and two more soon), and by a NOTIFY over
// TCP to the members whose beats we have not heard lately (an older glbd, or a path without UDP). A member
// that beats hears ours too: a second connection per change would only add to what a lost SYN can delay.
void Pulls::announce() {
    s_.beats.announce_change();
    std::vector<SocketAddress> silent;
    {
        MutexLock lock(core_.mu);
        uint64_t now = core_.now(), lately = core_.suspect_after();
        for (const auto& m : s_.membership.members()) {
            // A member never heard at all is starting too (its first round pulls us, our beat shows it the
            // change) or not up yet: at a fleet's cold start, NOTIFYs to all of them cost every server CPU
            // for nothing. It gets one at the next round if it is still unheard then (notify_unheard_).
            if (core_.never_heard(m)) {
                notify_unheard_ = true;
                continue;
            }
            if (core_.peer_status.at(m).last_beat_ms + lately < now) silent.push_back(m);
        }
    }
    for (const auto& m : silent) exchange(m, true);
}

// The NOTIFY announce() held back from the members never heard, to those still unheard a round later.
void Pulls::notify_still_unheard() {
    if (!notify_unheard_) return;
    notify_unheard_ = false;
    std::vector<SocketAddress> unheard;
    {
        MutexLock lock(core_.mu);
        for (const auto& m : s_.membership.members()) {
            if (core_.never_heard(m)) unheard.push_back(m);
        }
    }
    for (const auto& m : unheard) exchange(m, true);
}

void Pulls::pull_rest() {
    round_lead_.reset();
    std::vector<SocketAddress> rest;
    rest.swap(round_rest_);
    for (const auto& m : rest) exchange(m, false);
    // What was wanted while the lead was out, and that it did not bring.
    std::vector<SocketAddress> waiting;
    for (const auto& [m, w] : wanted_) {
        if (!in_flight_.count({m, false})) waiting.push_back(m);
    }
    for (const auto& m : waiting) {
        if (take_wanted(m)) exchange(m, false);
    }
}

void Pulls::want_pull(const SocketAddress& peer, const std::map<std::string, Held>& versions) {
    // While a round's lead pull is out, the others wait for it (pull_rest()): it brings what its member
    // relays, and a fresh node would otherwise fetch the same origins from their own members too.
    const bool lead_out = round_lead_ && in_flight_.count({*round_lead_, false});
    if (!lead_out && !in_flight_.count({peer, false})) {
        exchange(peer, false);
        return;
    }
    Wanted& w = wanted_[peer];
    if (versions.empty()) w.again = true;
    for (const auto& [origin, held] : versions) {
        if (w.versions.size() < ReportLimits::kMaxOrigins) w.versions[origin] = held;
    }
}

// Whether a pull of `peer` is still wanted (and forgets the wish): asked for again, or a version shown
// that is still newer than the store's.
bool Pulls::take_wanted(const SocketAddress& peer) {
    auto it = wanted_.find(peer);
    if (it == wanted_.end()) return false;
    Wanted w = std::move(it->second);
    wanted_.erase(it);
    if (w.again) return true;
    MutexLock lock(core_.mu);
    for (const auto& [origin, held] : w.versions) {
        if (still_news(origin, held)) return true;
    }
    return false;
}

void Pulls::note_relayed(const std::string& origin, const Held& held, const SocketAddress& from) {
    if (relayed_news_.size() >= ReportLimits::kMaxOrigins && !relayed_news_.count(origin)) return;
    auto [it, added] = relayed_news_.try_emplace(origin, RelayedNews{held, from, rounds_});
    if (!added) it->second.held = held;
}

// At a round: relayed news of an origin we do not know (or of its new life) that is still news after
// kRelayedNewsRounds rounds makes the member that relayed it due for a pull of everything it relays
// (want_relay_); news that is no longer news is dropped.
void Pulls::take_relayed_news() {
    const std::vector<SocketAddress>& members = s_.membership.members();
    MutexLock lock(core_.mu);
    for (auto it = relayed_news_.begin(); it != relayed_news_.end();) {
        const RelayedNews& n = it->second;
        if (!still_news(it->first, n.held)) {
            it = relayed_news_.erase(it);
        } else if (rounds_ - n.round >= kRelayedNewsRounds) {
            if (std::find(members.begin(), members.end(), n.from) != members.end()) want_relay_.insert(n.from);
            it = relayed_news_.erase(it);
        } else {
            ++it;
        }
    }
}

bool Pulls::still_news(const std::string& origin, const Held& shown) const {
    auto k = core_.store.known().find(origin);
    return k == core_.store.known().end() || is_newer(shown, k->second.state);
}

void Pulls::forget(const std::function<bool(const SocketAddress&)>& former) {
    std::erase_if(wanted_, [&](const auto& kv) { return former(kv.first); });
    std::erase_if(want_relay_, former);
}

}  // namespace glbd::sync
