// server/app/cookies — the secret DNS server cookies are made with (RFC 7873, RFC 9018): listen.cookieSecretFile's,
// or a random one rotated daily with the one before it still accepted (RFC 9018 section 5); a configured one
// changes with the file (at a reload). Control thread: its timer runs on the daemon's loop, and each rotation asks
// for a rebuild (a snapshot carries the secrets to the query threads).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "resolver/cookie.hpp"

namespace glbd {

class CookieSecrets {
public:
    static constexpr uint64_t kRotateMs = uint64_t{24} * 3600 * 1000;

    // The config's secret (none: a random one, rotated every `every_ms`), and its timer on `loop`; `rotated` runs
    // on each rotation.
    void start(uv_loop_t* loop, const std::optional<cookie::Secret>& configured, std::function<void()> rotated,
               uint64_t every_ms = kRotateMs);
    // A reload's: a configured secret that is not the one in use becomes it, the one in use the previous.
    void configure(const std::optional<cookie::Secret>& configured);
    [[nodiscard]] const cookie::Secret& current() const { return current_; }
    [[nodiscard]] const std::optional<cookie::Secret>& previous() const { return previous_; }
    void close();  // its timer (the loop completes the close)

private:
    void rotate();
    cookie::Secret current_ = cookie::random_secret();
    std::optional<cookie::Secret> previous_;
    bool configured_ = false;
    std::function<void()> rotated_;
    uv_timer_t timer_{};
    bool started_ = false;
};

}  // namespace glbd
