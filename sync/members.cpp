// sync/members — see members.hpp.
#include "sync/members.hpp"

#include <algorithm>

namespace glbd::sync {

std::string join_reach(const std::vector<SocketAddress>& reach) {
    std::string out;
    for (const auto& a : reach) {
        if (!out.empty()) out += ',';
        out += a.str();
    }
    return out;
}

bool parse_reach(std::string_view text, std::vector<SocketAddress>& out, std::string* bad) {
    out.clear();
    for (bool more = !text.empty(); more;) {  // "a,b": two parts; "a,": a second, empty one
        size_t comma = text.find(',');
        std::string_view part = text.substr(0, comma);
        more = comma != std::string_view::npos;
        text = more ? text.substr(comma + 1) : std::string_view();
        SocketAddress a;
        const bool ok = SocketAddress::parse(part, a) && a.reachable();
        if (!ok || out.size() == kMaxReach) {
            if (bad) *bad = ok ? "more than " + std::to_string(kMaxReach) + " addresses" : std::string(part);
            out.clear();
            return false;
        }
        out.push_back(a);
    }
    return true;
}

LearntMembers::Claim LearntMembers::claim(const SocketAddress& a, const std::string& origin, uint64_t now) {
    auto it = entries_.find(a);
    if (it != entries_.end()) {
        it->second.origin = origin;
        it->second.claimed_ms = std::max(it->second.claimed_ms, now);
        return Claim::known;
    }
    if (entries_.size() >= kMaxLearnt) return Claim::full;
    entries_.emplace(a, Entry{origin, now, 0, 0});
    return Claim::added;
}

void LearntMembers::answered(const SocketAddress& a, uint64_t now) {
    if (auto it = entries_.find(a); it != entries_.end()) it->second.answered_ms = now;
}

void LearntMembers::heard(const SocketAddress& a, uint64_t now) {
    if (auto it = entries_.find(a); it != entries_.end() && it->second.answered_ms) it->second.answered_ms = now;
}

LearntMembers::Plan LearntMembers::plan(uint64_t now, uint64_t alive_ms, uint64_t forget_ms) {
    Plan p;
    for (auto it = entries_.begin(); it != entries_.end();) {
        Entry& e = it->second;
        const bool retried_soon = !e.answered_ms && e.tried_ms && now < e.tried_ms + kTryEveryMs;
        if (now >= std::max(e.answered_ms, e.claimed_ms) + forget_ms && !retried_soon) {
            p.dropped.push_back(it->first);
            it = entries_.erase(it);
            continue;
        }
        if (e.answered_ms && now < e.answered_ms + alive_ms) {
            p.members.push_back(it->first);
        } else if (e.tried_ms == 0 || now >= e.tried_ms + kTryEveryMs) {
            e.tried_ms = now;
            p.try_now.push_back(it->first);
        }
        ++it;
    }
    return p;
}

bool LearntMembers::try_once(const SocketAddress& a, uint64_t now) {
    auto it = entries_.find(a);
    if (it == entries_.end()) return false;
    Entry& e = it->second;
    if (e.tried_ms != 0 && now < e.tried_ms + kTryEveryMs) return false;
    e.tried_ms = now;
    return true;
}

}  // namespace glbd::sync
