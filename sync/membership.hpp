// sync/membership — the sync service's members each round (internal to sync/; the sync thread): the config's
// (names looked up again each round, every address a member, this instance's own skipped) and the learnt ones
// that answer; claims from live origins' reports and from a non-member's beat (first contact). Owns the list of
// members this round and the lookups under way.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sync/core.hpp"

namespace glbd::sync {

class Membership {
public:
    Membership(Service::Impl& s, Core& core) : s_(s), core_(core) {}
    void resolve();  // the round's start: the members again (unless the last round's lookups are still out)
    [[nodiscard]] const std::vector<SocketAddress>& members() const { return members_; }
    void drop(const SocketAddress& m);                           // one that turned out to be this instance
    [[nodiscard]] std::vector<SocketAddress> own_reach() const;  // peers.advertise, else the listen addresses
    [[nodiscard]] std::set<Address> literal_members() const;     // the members given as addresses
    [[nodiscard]] bool is_own_listen(const SocketAddress& addr) const;
    // The address an exchange with `to` leaves from: this server's first DNS listen address of the same
    // family that is not a wildcard and is loopback exactly when `to` is; none (the kernel picks) otherwise.
    [[nodiscard]] std::optional<Address> source_for(const Address& to) const;
    // A signed beat from an instance that is not a member: its advertised addresses are claims; those to try now.
    std::vector<SocketAddress> first_contact(const Beat& beat) GLBD_EXCLUDES(core_.mu);

private:
    void claim(const std::string& origin, const std::vector<SocketAddress>& reach, uint64_t now)
        GLBD_REQUIRES(core_.mu);
    void forget_former_members() GLBD_EXCLUDES(core_.mu);
    std::vector<SocketAddress> plan_learnt(std::vector<SocketAddress>& next) GLBD_REQUIRES(core_.mu);
    // The origins (printable) a configured member answers as: their advertised addresses are not learnt.
    [[nodiscard]] std::set<std::string> reached_origins() const GLBD_REQUIRES(core_.mu);

    Service::Impl& s_;
    Core& core_;
    std::vector<SocketAddress> members_;  // resolved addresses, refreshed each round
    int resolving_ = 0;                   // lookups under way
};

}  // namespace glbd::sync
