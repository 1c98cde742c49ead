// sync/log_throttle — how often one kind of event from one source may be logged: at most `lines` lines
// per key in each window (a second by default); the events left out are counted and reported with the
// next line that is logged for that key. At most kMaxKeys keys are tracked in a window (a flood from many
// sources cannot grow it); events of further keys in that window are left out and counted in `overflow`.
// One thread per instance (no lock).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace glbd::sync {

// `s` for a text log line: bytes outside printable ASCII become \xNN, so a peer's bytes cannot forge
// lines or break a terminal.
inline std::string printable(const std::string& s) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char ch : s) {
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') out += static_cast<char>(ch);
        else out += std::string("\\x") + hex[ch >> 4] + hex[ch & 15];
    }
    return out;
}

class LogThrottle {
public:
    static constexpr size_t kMaxKeys = 256;
    explicit LogThrottle(unsigned lines = 2, uint64_t window_ms = 1000) : lines_(lines), window_ms_(window_ms) {}

    // Whether an event of `key` at `now_ms` may be logged; if so, `*left_out` is how many events of that key
    // were not logged since its last line.
    bool allow(const std::string& key, uint64_t now_ms, uint64_t* left_out) {
        uint64_t second = now_ms / window_ms_;  // the window's number
        if (second != second_) {
            second_ = second;
            for (auto it = keys_.begin(); it != keys_.end();) {
                // A key with nothing left out to report is forgotten, and so is one quiet for a minute; the
                // others keep their count for their next line.
                if (it->second.left_out == 0 || second - it->second.second > 60) it = keys_.erase(it);  // 60 windows
                else it->second.lines = 0, ++it;
            }
        }
        auto it = keys_.find(key);
        if (it == keys_.end()) {
            if (keys_.size() >= kMaxKeys) return ++overflow_, false;
            it = keys_.emplace(key, Entry{}).first;
        }
        it->second.second = second;
        if (it->second.lines >= lines_) return ++it->second.left_out, false;
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
    unsigned lines_;
    uint64_t window_ms_;
    uint64_t second_ = 0;
    uint64_t overflow_ = 0;
    std::unordered_map<std::string, Entry> keys_;
};

}  // namespace glbd::sync
