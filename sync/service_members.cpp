// sync/service_members — the service's members: the config's (names looked up again each round) and those
// learnt from peers (sync/members.hpp, docs/sync.md "Members learnt"). Sync thread.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "sync/service_impl.hpp"

namespace glbd::sync {

std::vector<SocketAddress> Service::Impl::own_reach() const {
    if (!config.peers) return {};
    if (!config.peers->advertise.empty()) return config.peers->advertise;
    std::vector<SocketAddress> reach;
    for (const SocketAddress& a : config.listen.dns) {
        if (!a.address.is_unspecified() && reach.size() < kMaxReach) reach.push_back(a);
    }
    return reach;
}

// The members' addresses, names looked up again (each of their addresses is a member), then the learnt ones
// that answer; without this server's own listen addresses and those that answered as this instance. The
// learnt ones that do not answer (yet) get one pull, at most once a minute each.
void Service::Impl::resolve_members() {
    struct Pending {
        std::set<SocketAddress> found;
        int left = 1;  // the lookups under way, and this call until it has started them all
    };
    auto pending = std::make_shared<Pending>();
    auto one_done = [this, pending] {
        if (--pending->left > 0) return;
        std::vector<SocketAddress> next, tries;
        {
            MutexLock lock(mu);
            member_addresses.clear();
            configured.clear();
            for (const auto& a : pending->found) {
                if (is_own_listen(a) || self_addresses.count(a)) continue;
                next.push_back(a), member_addresses.insert(a.address), configured.insert(a);
            }
            tries = plan_learnt(next);
        }
        members = std::move(next);
        forget_former_members();
        for (const auto& a : tries) exchange(a, false);
        --resolving;
    };
    ++resolving;
    for (const auto& m : config.peers->members) {
        if (SocketAddress a{{}, m.port}; Address::parse(m.host, a.address)) {
            pending->found.insert(a);
            continue;
        }
        ++pending->left;
        lookup(&loop, m.host, [pending, one_done, port = m.port](int status, const std::vector<Address>& addrs) {
            for (const auto& a : addrs) pending->found.insert(SocketAddress{a, port});
            if (status != 0) spdlog::warn("sync: cannot resolve a peer member: {}", uv_strerror(status));
            one_done();
        });
    }
    one_done();
}

// Every live origin's advertised addresses are claims (a dead one's would only keep its address once it is
// forgotten), but for origins a configured member reaches already (through a proxy or a NAT, say); those that answer
// join `next`, the others due a try are returned, those silent for forgetAfter are forgotten (with their status).
std::vector<SocketAddress> Service::Impl::plan_learnt(std::vector<SocketAddress>& next) {
    if (!config.peers->learn_members) return {};
    const uint64_t now = now_ms();
    const std::set<std::string> reached = reached_origins();
    for (const auto& [origin, k] : store.known()) {
        if (origin == own.origin() || !store.alive(k, now, dead_after()) || reached.count(printable(origin))) continue;
        claim(origin, k.state.reach, now);
    }
    LearntMembers::Plan plan =
        learnt.plan(now, dead_after(), static_cast<uint64_t>(config.peers->forget_after.count()));
    for (const auto& a : plan.members) next.push_back(a), member_addresses.insert(a.address);
    for (const auto& a : plan.dropped) {
        spdlog::info("sync: forgot the learnt member {} (not answering for peers.forgetAfter)", a.str());
        peer_status.erase(a);
    }
    return plan.try_now;
}

std::set<std::string> Service::Impl::reached_origins() const {
    std::set<std::string> reached;  // printable, as peer_status holds them
    for (const auto& m : configured) {
        if (auto st = peer_status.find(m); st != peer_status.end() && st->second.reachable)
            reached.insert(st->second.origin);
    }
    return reached;
}

void Service::Impl::claim(const std::string& origin, const std::vector<SocketAddress>& reach, uint64_t now) {
    for (const SocketAddress& a : reach) {
        if (configured.count(a) || is_own_listen(a) || self_addresses.count(a) ||
            std::find(own.reach.begin(), own.reach.end(), a) != own.reach.end()) {
            continue;
        }
        switch (learnt.claim(a, printable(origin), now)) {
            case LearntMembers::Claim::added:
                spdlog::info("sync: learnt the member {} from {}", a.str(), printable(origin));
                break;
            case LearntMembers::Claim::full:
                counters.learnt_refused.fetch_add(1);
                if (uint64_t left_out = 0; report_log.allow("learnt", now, &left_out)) {
                    spdlog::warn("sync: {} learnt members held: {} (from {}) not added{}", LearntMembers::kMaxLearnt,
                                 a.str(), printable(origin),
                                 left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
                }
                break;
            case LearntMembers::Claim::known: break;
        }
    }
}

// A signed beat from an instance that is not a member: its advertised addresses are claims, and one not
// tried within a minute is pulled now (its beat is not proof that the address answers).
std::vector<SocketAddress> Service::Impl::first_contact(const Beat& beat) {
    std::vector<SocketAddress> tries;
    if (!config.peers->learn_members || beat.reach.empty()) return tries;
    const uint64_t now = now_ms();
    MutexLock lock(mu);
    if (reached_origins().count(printable(beat.from))) return tries;  // a configured member's, not matched yet
    claim(beat.from, beat.reach, now);
    for (const SocketAddress& a : beat.reach) {
        if (learnt.try_once(a, now)) tries.push_back(a);
    }
    return tries;
}

// What is kept per member goes with it (a reload or a name that resolves elsewhere now).
void Service::Impl::forget_former_members() {
    auto former = [this](const SocketAddress& m) {
        return std::find(members.begin(), members.end(), m) == members.end();
    };
    std::erase_if(member_beats, [&](const auto& kv) { return former(kv.first); });
    std::erase_if(wanted, [&](const auto& kv) { return former(kv.first); });
    std::erase_if(want_relay, former);
    MutexLock lock(mu);
    for (auto it = pulled_at.begin(); it != pulled_at.end();) {  // (a loop: the analysis sees no lock in a lambda)
        it = member_addresses.count(it->first) ? std::next(it) : pulled_at.erase(it);
    }
}

}  // namespace glbd::sync
