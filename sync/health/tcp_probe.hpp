// sync/health/tcp_probe — TCP connect probes on the checker's loop: a connection to an address and port
// that succeeds within the timeout is healthy; it is then closed with a reset. Checker thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "resolver/base/address.hpp"

namespace glbd::health {

// A probe's result: ok, or why not ("timeout", "connection refused", a libuv or libcurl message). Called once
// per probe on the loop's thread, never after stop().
using ProbeDone = std::function<void(bool ok, const std::string& reason)>;

// A probe's connection ends with a reset when closed (SO_LINGER 0), as HAProxy's health checks do: no FIN
// exchange, and no socket left in TIME_WAIT for a minute per probe (10,000 endpoints every 5 s would keep
// some 120,000). A hint: if it cannot be set, the close is an orderly one.
void close_with_reset(int fd);

class TcpProber {
public:
    // `source`: the local address probes of its family leave from (health.sourceAddress); none: the kernel's.
    explicit TcpProber(uv_loop_t* loop, std::optional<Address> source = std::nullopt);
    ~TcpProber();  // after stop() and the loop's last callbacks
    TcpProber(const TcpProber&) = delete;
    TcpProber& operator=(const TcpProber&) = delete;

    void probe(const Address& address, uint16_t port, std::chrono::milliseconds timeout, ProbeDone done);
    // Ends every probe under way without a result (their handles close on the loop).
    void stop();

private:
    struct Probe;
    static void finish(Probe* p, bool ok, const std::string& reason);
    uv_loop_t* loop_;
    std::optional<Address> source_;
    // Every probe until its handles have closed (the loop's callbacks point into it); those under way are
    // also in `running_`.
    std::map<Probe*, std::unique_ptr<Probe>> all_;
    std::set<Probe*> running_;
    bool stopping_ = false;
};

}  // namespace glbd::health
