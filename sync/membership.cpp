// sync/membership — the service's members: the config's (names looked up again each round) and those learnt from
// peers (sync/members.hpp, docs/sync.md "Members learnt"). Sync thread.
#include "sync/membership.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "resolver/base/lookup.hpp"
#include "sync/service_impl.hpp"

namespace glbd::sync {

std::vector<SocketAddress> Membership::own_reach() const {
    const conf::Config& config = core_.config;
    if (!config.peers) return {};
    if (!config.peers->advertise.empty()) return config.peers->advertise;
    std::vector<SocketAddress> reach;
    for (const SocketAddress& a : config.listen.dns) {
        if (!a.address.is_unspecified() && reach.size() < kMaxReach) reach.push_back(a);
    }
    return reach;
}

std::set<Address> Membership::literal_members() const {
    std::set<Address> out;
    if (!core_.networked) return out;
    for (const auto& m : core_.config.peers->members) {
        if (Address a; Address::parse(m.host, a)) out.insert(a);
    }
    return out;
}

bool Membership::is_own_listen(const SocketAddress& addr) const {
    const auto& dns = core_.config.listen.dns;
    return std::find(dns.begin(), dns.end(), addr) != dns.end();
}

std::optional<Address> Membership::source_for(const Address& to) const {
    for (const SocketAddress& l : core_.config.listen.dns) {
        const Address& a = l.address;
        if (a.family != to.family || a.is_loopback() != to.is_loopback() || a.is_unspecified()) continue;
        return a;
    }
    return std::nullopt;
}

void Membership::drop(const SocketAddress& m) {
    members_.erase(std::remove(members_.begin(), members_.end(), m), members_.end());
}

// The members' addresses, names looked up again (each of their addresses is a member), then the learnt ones
// that answer; without this server's own listen addresses and those that answered as this instance. The
// learnt ones that do not answer (yet) get one pull, at most once a minute each.
void Membership::resolve() {
    if (resolving_) return;  // the last round's lookups are still under way
    struct Pending {
        std::set<SocketAddress> found;
        int left = 1;  // the lookups under way, and this call until it has started them all
    };
    auto pending = std::make_shared<Pending>();
    auto one_done = [this, pending] {
        if (--pending->left > 0) return;
        std::vector<SocketAddress> next, tries;
        {
            MutexLock lock(core_.mu);
            core_.member_addresses.clear();
            core_.configured.clear();
            for (const auto& a : pending->found) {
                if (is_own_listen(a) || core_.self_addresses.count(a)) continue;
                next.push_back(a), core_.member_addresses.insert(a.address), core_.configured.insert(a);
            }
            tries = plan_learnt(next);
        }
        members_ = std::move(next);
        forget_former_members();
        for (const auto& a : tries) s_.pulls.exchange(a, false);
        --resolving_;
    };
    ++resolving_;
    for (const auto& m : core_.config.peers->members) {
        if (SocketAddress a{{}, m.port}; Address::parse(m.host, a.address)) {
            pending->found.insert(a);
            continue;
        }
        ++pending->left;
        lookup(&core_.loop, m.host, [pending, one_done, port = m.port](int status, const std::vector<Address>& addrs) {
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
std::vector<SocketAddress> Membership::plan_learnt(std::vector<SocketAddress>& next) {
    const auto& peers = *core_.config.peers;
    if (!peers.learn_members) return {};
    const uint64_t now = core_.now();
    const std::set<std::string> reached = reached_origins();
    for (const auto& [origin, k] : core_.store.known()) {
        if (origin == core_.own.origin() || !core_.store.alive(k, now, core_.dead_after()) ||
            reached.count(printable(origin)))
            continue;
        claim(origin, k.state.reach, now);
    }
    LearntMembers::Plan plan =
        core_.learnt.plan(now, core_.dead_after(), static_cast<uint64_t>(peers.forget_after.count()));
    for (const auto& a : plan.members) next.push_back(a), core_.member_addresses.insert(a.address);
    for (const auto& a : plan.dropped) {
        spdlog::info("sync: forgot the learnt member {} (not answering for peers.forgetAfter)", a.str());
        core_.peer_status.erase(a);
    }
    return plan.try_now;
}

std::set<std::string> Membership::reached_origins() const {
    std::set<std::string> reached;  // printable, as peer_status holds them
    for (const auto& m : core_.configured) {
        if (auto st = core_.peer_status.find(m); st != core_.peer_status.end() && st->second.reachable)
            reached.insert(st->second.origin);
    }
    return reached;
}

void Membership::claim(const std::string& origin, const std::vector<SocketAddress>& reach, uint64_t now) {
    const auto& own_reach = core_.own.reach;
    for (const SocketAddress& a : reach) {
        if (core_.configured.count(a) || is_own_listen(a) || core_.self_addresses.count(a) ||
            std::find(own_reach.begin(), own_reach.end(), a) != own_reach.end()) {
            continue;
        }
        switch (core_.learnt.claim(a, printable(origin), now)) {
            case LearntMembers::Claim::added:
                spdlog::info("sync: learnt the member {} from {}", a.str(), printable(origin));
                break;
            case LearntMembers::Claim::full:
                core_.counters.learnt_refused.fetch_add(1);
                if (uint64_t left_out = 0; core_.report_log.allow("learnt", now, &left_out)) {
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
std::vector<SocketAddress> Membership::first_contact(const Beat& beat) {
    std::vector<SocketAddress> tries;
    if (!core_.config.peers->learn_members || beat.reach.empty()) return tries;
    const uint64_t now = core_.now();
    MutexLock lock(core_.mu);
    if (reached_origins().count(printable(beat.from))) return tries;  // a configured member's, not matched yet
    claim(beat.from, beat.reach, now);
    for (const SocketAddress& a : beat.reach) {
        if (core_.learnt.try_once(a, now)) tries.push_back(a);
    }
    return tries;
}

// What is kept per member goes with it (a reload, a name that resolves elsewhere now, a forgotten instance).
void Membership::forget_former_members() {
    auto former = [this](const SocketAddress& m) {
        return std::find(members_.begin(), members_.end(), m) == members_.end();
    };
    s_.beats.forget(former);
    s_.pulls.forget(former);
    MutexLock lock(core_.mu);
    auto& pulled_at = core_.pulled_at;
    for (auto it = pulled_at.begin(); it != pulled_at.end();) {  // (a loop: the analysis sees no lock in a lambda)
        it = core_.member_addresses.count(it->first) ? std::next(it) : pulled_at.erase(it);
    }
    // The status of an address neither a member nor learnt any more (a forgotten instance's, a member a reload
    // removed) goes too: the status shows the members there are.
    auto& status = core_.peer_status;
    for (auto it = status.begin(); it != status.end();) {
        it = !former(it->first) || core_.learnt.entries().count(it->first) ? std::next(it) : status.erase(it);
    }
}

}  // namespace glbd::sync
