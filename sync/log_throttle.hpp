// sync/log_throttle — how often one kind of event from one source may be logged: at most `per_second`
// lines per key and second; the events left out are counted and reported with the next line that is
// logged for that key. At most kMaxKeys keys are tracked in a second (a flood from many sources cannot grow
// it); events of further keys in that second are left out and counted in `overflow`. One thread per
// instance (no lock).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace glbd::sync {

class LogThrottle {
public:
    static constexpr size_t kMaxKeys = 256;
    explicit LogThrottle(unsigned per_second = 2) : per_second_(per_second) {}

    // Whether an event of `key` at `now_ms` may be logged; if so, `*left_out` is how many events of that key
    // were not logged since its last line.
    bool allow(const std::string& key, uint64_t now_ms, uint64_t* left_out) {
        uint64_t second = now_ms / 1000;
        if (second != second_) {
            second_ = second;
            for (auto it = keys_.begin(); it != keys_.end();) {
                // A key with nothing left out to report is forgotten, and so is one quiet for a minute; the
                // others keep their count for their next line.
                if (it->second.left_out == 0 || second - it->second.second > 60) it = keys_.erase(it);
                else it->second.lines = 0, ++it;
            }
        }
        auto it = keys_.find(key);
        if (it == keys_.end()) {
            if (keys_.size() >= kMaxKeys) return ++overflow_, false;
            it = keys_.emplace(key, Entry{}).first;
        }
        it->second.second = second;
        if (it->second.lines >= per_second_) return ++it->second.left_out, false;
        ++it->second.lines;
        *left_out = it->second.left_out;
        it->second.left_out = 0;
        return true;
    }
    // Events not logged because too many keys were active at once.
    [[nodiscard]] uint64_t overflow() const { return overflow_; }

private:
    struct Entry {
        unsigned lines = 0;     // logged in the current second
        uint64_t left_out = 0;  // not logged since the last line
        uint64_t second = 0;    // of the last event
    };
    unsigned per_second_;
    uint64_t second_ = 0;
    uint64_t overflow_ = 0;
    std::unordered_map<std::string, Entry> keys_;
};

}  // namespace glbd::sync
