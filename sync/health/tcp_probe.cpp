#include "sync/health/tcp_probe.hpp"

#include <sys/socket.h>

namespace glbd::health {

void close_with_reset(int fd) {
    linger l{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

// One connection attempt; its two handles close before it is freed.
struct TcpProber::Probe {
    TcpProber* owner = nullptr;
    uv_tcp_t tcp{};
    uv_connect_t req{};
    uv_timer_t timer{};
    ProbeDone done;
    bool finished = false;
    int open = 2;
};

TcpProber::TcpProber(uv_loop_t* loop, std::optional<Address> source) : loop_(loop), source_(source) {}
TcpProber::~TcpProber() = default;

void TcpProber::probe(const Address& address, uint16_t port, std::chrono::milliseconds timeout, ProbeDone done) {
    auto owned = std::make_unique<Probe>();
    Probe* p = owned.get();
    all_.emplace(p, std::move(owned));
    running_.insert(p);
    p->owner = this;
    p->done = std::move(done);
    sockaddr_storage ss{};
    address.to_sockaddr(port, ss);
    uv_tcp_init(loop_, &p->tcp);
    uv_timer_init(loop_, &p->timer);
    p->tcp.data = p->timer.data = p->req.data = p;
    uv_timer_start(
        &p->timer, [](uv_timer_t* t) { finish(static_cast<Probe*>(t->data), false, "timeout"); },
        static_cast<uint64_t>(timeout.count()), 0);
    int rc = 0;
    if (source_ && source_->family == address.family) {
        sockaddr_storage local{};
        source_->to_sockaddr(0, local);
        rc = uv_tcp_bind(&p->tcp, reinterpret_cast<sockaddr*>(&local), 0);
        if (rc != 0) return finish(p, false, std::string("cannot bind to the source address: ") + uv_strerror(rc));
    }
    rc = uv_tcp_connect(&p->req, &p->tcp, reinterpret_cast<sockaddr*>(&ss), [](uv_connect_t* req, int status) {
        const char* why = status == 0 ? "ok" : status == UV_ECONNREFUSED ? "connection refused" : uv_strerror(status);
        finish(static_cast<Probe*>(req->data), status == 0, why);
    });
    if (rc != 0) finish(p, false, uv_strerror(rc));
}

void TcpProber::stop() {
    stopping_ = true;
    auto running = running_;
    for (Probe* p : running) finish(p, false, "stopping");
}

void TcpProber::finish(Probe* p, bool ok, const std::string& reason) {
    if (p->finished) return;
    p->finished = true;
    TcpProber* owner = p->owner;
    owner->running_.erase(p);
    uv_timer_stop(&p->timer);
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&p->tcp), &fd) == 0) close_with_reset(fd);
    auto closed = [](uv_handle_t* h) {
        auto* probe = static_cast<Probe*>(h->data);
        if (--probe->open == 0) probe->owner->all_.erase(probe);
    };
    ProbeDone done = std::move(p->done);
    uv_close(reinterpret_cast<uv_handle_t*>(&p->timer), closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&p->tcp), closed);
    if (!owner->stopping_) done(ok, reason);
}

}  // namespace glbd::health
