// server/net/signing_budget — how many signatures a query thread makes while answering (resolver's
// SigningBudget), counted before each one is made, so that a flood costs what its budget allows and no more:
// per second, at most kPerThread for the thread, kPerSource for a client prefix (/24 IPv4, /56 IPv6), or
// kPerCookieSource for one whose DNS cookie proves its address, and kPerConnection for a TCP connection.
// The query's thread only (a UDP worker's, the TCP thread's): no lock, no allocation after construction.
#pragma once

#include <cstdint>

#include "resolver/resolver.hpp"
#include "server/net/rrl.hpp"

namespace glbd {

class ThreadSigningBudget final : public SigningBudget {
public:
    static constexpr unsigned kPerThread = 5000;        // about 0.17 s of a core a second (ECDSA P-256)
    static constexpr unsigned kPerSource = 100;         // a resolver's misses for random names, and more
    static constexpr unsigned kPerCookieSource = 1000;  // a proven address: ten times that
    ThreadSigningBudget()
        : plain_(RrlOptions{kPerSource, 0, 24, 56}), cookied_(RrlOptions{kPerCookieSource, 0, 24, 56}) {}
    // The second the next answers are given in (mono); the thread's count starts again with each.
    void set_second(uint32_t now_s) noexcept {
        if (now_s != second_) second_ = now_s, used_ = 0;
    }
    bool take(const geo::Address& client, bool cookie_valid) noexcept override {
        if (used_ >= kPerThread) return false;
        auto& limiter = cookie_valid ? cookied_ : plain_;
        if (limiter.check(client, Outcome::answer, second_) != RateLimiter::Action::send) return false;
        ++used_;
        return true;
    }

private:
    RateLimiter plain_, cookied_;
    uint32_t second_ = 0;
    unsigned used_ = 0;
};

// A TCP connection's: its own count a second, within its thread's budget.
class ConnectionSigningBudget final : public SigningBudget {
public:
    static constexpr unsigned kPerConnection = 200;
    explicit ConnectionSigningBudget(ThreadSigningBudget& thread) : thread_(thread) {}
    void set_second(uint32_t now_s) noexcept {
        thread_.set_second(now_s);
        if (now_s != second_) second_ = now_s, used_ = 0;
    }
    bool take(const geo::Address& client, bool cookie_valid) noexcept override {
        if (used_ >= kPerConnection || !thread_.take(client, cookie_valid)) return false;
        ++used_;
        return true;
    }

private:
    ThreadSigningBudget& thread_;
    uint32_t second_ = 0;
    unsigned used_ = 0;
};

}  // namespace glbd
