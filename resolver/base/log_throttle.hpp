// resolver/base/log_throttle — how often one kind of event from one source may be logged: at most `lines` lines
// per key in each window (a second by default). A key's window begins with the event that opens it, not
// at a boundary of the clock, so "once a minute" never logs twice a few milliseconds apart across a
// minute's turn. The events left out are counted and reported with the next line logged for that key. At
// most kMaxKeys keys are tracked at once (a flood from many sources cannot grow it); events of further keys
// are left out and counted in `overflow`. One thread per instance (no lock).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace glbd {

// `s` with each byte `escaped(byte)` says written as \xNN.
template <class Pred>
std::string escape_bytes(const std::string& s, Pred escaped) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    for (unsigned char ch : s) {
        if (escaped(ch))
            out += std::string("\\x") + hex[ch >> 4] + hex[ch & 15];
        else
            out += static_cast<char>(ch);
    }
    return out;
}

// `s` for a text log line: bytes outside printable ASCII (and the backslash) become \xNN, so a peer's bytes
// cannot forge lines or break a terminal.
inline std::string printable(const std::string& s) {
    return escape_bytes(s, [](unsigned char ch) { return ch < 0x20 || ch >= 0x7f || ch == '\\'; });
}

class LogThrottle {
public:
    static constexpr size_t kMaxKeys = 256;
    explicit LogThrottle(unsigned lines = 2, uint64_t window_ms = 1000) : lines_(lines), window_ms_(window_ms) {}

    // Whether an event of `key` at `now_ms` may be logged; if so, `*left_out` is how many events of that key
    // were not logged since its last line.
    bool allow(const std::string& key, uint64_t now_ms, uint64_t* left_out) {
        if (now_ms - swept_ >= window_ms_) sweep(now_ms);
        auto it = keys_.find(key);
        if (it == keys_.end()) {
            if (keys_.size() >= kMaxKeys) {
                ++overflow_;
                return false;
            }
            it = keys_.emplace(key, Entry{now_ms, 0, 0, now_ms}).first;
        }
        Entry& e = it->second;
        if (now_ms - e.start >= window_ms_) e.start = now_ms, e.lines = 0;  // also when the clock went back
        e.last = now_ms;
        if (e.lines >= lines_) {
            ++e.left_out;
            return false;
        }
        ++e.lines;
        *left_out = e.left_out;
        e.left_out = 0;
        return true;
    }
    // Events not logged because too many keys were active at once.
    [[nodiscard]] uint64_t overflow() const { return overflow_; }

private:
    struct Entry {
        uint64_t start = 0;     // when the key's current window began
        unsigned lines = 0;     // logged in it
        uint64_t left_out = 0;  // not logged since the last line
        uint64_t last = 0;      // the key's last event
    };

    // Forgets the keys whose window has ended with nothing left out (their next event is logged anyway),
    // and those quiet for 60 windows; the others keep their count for their next line.
    void sweep(uint64_t now_ms) {
        swept_ = now_ms;
        for (auto it = keys_.begin(); it != keys_.end();) {
            const Entry& e = it->second;
            bool ended = now_ms - e.start >= window_ms_;
            if ((ended && e.left_out == 0) || now_ms - e.last > 60 * window_ms_)
                it = keys_.erase(it);
            else
                ++it;
        }
    }

    unsigned lines_;
    uint64_t window_ms_;
    uint64_t swept_ = 0;
    uint64_t overflow_ = 0;
    std::unordered_map<std::string, Entry> keys_;
};

}  // namespace glbd
