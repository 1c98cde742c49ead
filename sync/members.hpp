// sync/members — the members learnt from peers (docs/sync.md, "Members learnt"): the addresses other
// instances say they are reached at (`reach=` in their signed reports and heartbeats), so that a new cluster
// given one member (or a name) is found by every other, and finds them, without editing their configs.
// Pure: the sync service calls it on the sync thread under its lock, with the time.
//
// Must never: hold more than kMaxLearnt addresses; let a claim make this instance contact an address that
// never answered a signed exchange more than once per kTryEveryMs (a peer holding the key cannot turn the
// fleet against an address); keep an address that has not answered for forgetAfter.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/address.hpp"

namespace glbd::sync {

// The addresses an instance advertises, as its report and beats carry them: "192.0.2.1:53,[2001:db8::1]:53".
std::string join_reach(const std::vector<SocketAddress>& reach);
// Back from that text: false (and `bad` set) for a part that is not a numeric address with a port, or one no
// peer could reach (an unspecified or multicast address, port 0), or more than kMaxReach parts.
bool parse_reach(std::string_view text, std::vector<SocketAddress>& out, std::string* bad = nullptr);
inline constexpr size_t kMaxReach = conf::Peers::kMaxAdvertise;

class LearntMembers {
public:
    static constexpr size_t kMaxLearnt = 64;
    static constexpr uint64_t kTryEveryMs = 60'000;

    struct Entry {
        std::string origin;        // the instance that claimed the address (printable), the latest claim
        uint64_t claimed_ms = 0;   // last claimed (a live origin advertises it)
        uint64_t tried_ms = 0;     // the last exchange begun while it was not answering (0: none yet)
        uint64_t answered_ms = 0;  // the last signed exchange it answered, or its beats (0: never)
    };
    enum class Claim : uint8_t { added, known, full };
    // An instance says it is reached at `a`. `full`: kMaxLearnt are held, and `a` is not one of them.
    Claim claim(const SocketAddress& a, const std::string& origin, uint64_t now);
    // A pull from `a` succeeded (a signed answer), or, for one that answered before, a signed beat of its
    // origin arrived: it is a member while it goes on answering.
    void answered(const SocketAddress& a, uint64_t now);
    // A signed beat of the origin at `a`: keeps an address that answered before a member (no effect on one
    // that never answered: a beat does not show that the address answers).
    void heard(const SocketAddress& a, uint64_t now);
    // No longer learnt: it turned out to be this instance, or it is a configured member now.
    void erase(const SocketAddress& a) { entries_.erase(a); }

    struct Plan {
        std::vector<SocketAddress> members;  // answered within alive_ms: members like configured ones
        std::vector<SocketAddress> try_now;  // the others, due one exchange (marked tried)
        std::vector<SocketAddress> dropped;  // silent for forget_ms: forgotten
    };
    // Each round: which learnt addresses are members, which are tried once more, which are forgotten: neither
    // answering nor claimed for forget_ms (one that never answered is kept a minute past its last try, so
    // that a claim made again cannot have it tried sooner).
    Plan plan(uint64_t now, uint64_t alive_ms, uint64_t forget_ms);
    // A first contact (a beat from an instance we do not pull yet): whether `a` may be tried now (then it
    // is marked tried); false for an address not learnt, or tried within kTryEveryMs.
    bool try_once(const SocketAddress& a, uint64_t now);

    [[nodiscard]] const std::map<SocketAddress, Entry>& entries() const { return entries_; }

private:
    std::map<SocketAddress, Entry> entries_;
};

}  // namespace glbd::sync
