// sync/tombstones — the Store's tombstones (sync/state.hpp, Forgotten): instances forgotten fleet-wide
// through `glbd forget`, carried in the reports of the origins they were set through.
#include <charconv>
#include <tuple>

#include "sync/state.hpp"

namespace glbd::sync {

bool Forgotten::covers(const InstanceState& s) const {
    return s.incarnation < incarnation || (s.incarnation == incarnation && s.heartbeat <= heartbeat);
}

bool Store::covered(const InstanceState& s) const {
    auto t = tombstones_.find(s.origin());
    return t != tombstones_.end() && t->second.covers(s);
}

void Store::bury(const ForgottenMap& forgotten) {
    constexpr size_t kMaxTombstones = 4 * ReportLimits::kMaxOrigins;
    for (const auto& [origin, t] : forgotten) {
        if (origin == own_) continue;  // our heartbeat moves on: a tombstone of us never covers us for long
        auto it = tombstones_.find(origin);
        if (it == tombstones_.end()) {
            if (tombstones_.size() >= kMaxTombstones) continue;
            it = tombstones_.emplace(origin, t).first;
        } else if (std::tie(t.incarnation, t.heartbeat) > std::tie(it->second.incarnation, it->second.heartbeat)) {
            it->second = t;
        }
        if (auto k = known_.find(origin); k != known_.end() && it->second.covers(k->second.state)) {
            known_.erase(k);
            ++generation_;
            buried_.push_back(origin);
        }
    }
}

std::string format_forgotten(const std::string& origin, const Forgotten& t) {
    return origin + ' ' + std::to_string(t.incarnation) + ' ' + std::to_string(t.heartbeat) + ' ' +
           std::to_string(t.at_ms);
}

bool parse_forgotten(std::string_view text, ForgottenMap& map) {
    const size_t space = text.find(' ');
    if (space == 0 || space == std::string_view::npos) return false;
    Forgotten t;
    const char* p = text.data() + space + 1;
    const char* end = text.data() + text.size();
    for (uint64_t* field : {&t.incarnation, &t.heartbeat, &t.at_ms}) {
        auto [next, ec] = std::from_chars(p, end, *field);
        if (ec != std::errc() || next == p) return false;
        p = next;
        if (field != &t.at_ms) {
            if (p == end || *p != ' ') return false;
            ++p;
        }
    }
    if (p != end) return false;
    auto [it, fresh] = map.try_emplace(std::string(text.substr(0, space)), t);
    if (!fresh && std::tie(t.incarnation, t.heartbeat) > std::tie(it->second.incarnation, it->second.heartbeat))
        it->second = t;
    return true;
}

}  // namespace glbd::sync
