#include "server/app/cookies.hpp"

namespace glbd {

void CookieSecrets::start(uv_loop_t* loop, const std::optional<cookie::Secret>& configured,
                          std::function<void()> rotated, uint64_t every_ms) {
    rotated_ = std::move(rotated);
    if (configured) current_ = *configured, configured_ = true;
    uv_timer_init(loop, &timer_);
    timer_.data = this;
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<CookieSecrets*>(t->data)->rotate(); }, every_ms, every_ms);
    started_ = true;
}

void CookieSecrets::configure(const std::optional<cookie::Secret>& configured) {
    configured_ = configured.has_value();
    if (!configured || *configured == current_) return;
    previous_ = current_;
    current_ = *configured;
}

void CookieSecrets::rotate() {
    if (configured_) return;  // the file's secret changes with the file
    previous_ = current_;
    current_ = cookie::random_secret();
    if (rotated_) rotated_();
}

void CookieSecrets::close() {
    if (started_) uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
    started_ = false;
}

}  // namespace glbd
