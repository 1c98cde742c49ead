// sync/health/probes — how the checker's probes reach endpoints (the checker's thread and loop): HTTP(S) through
// libcurl and TCP connects (NetworkProbes: HttpProber, TcpProber), or what a test gives in their place (answers of
// its choosing, no sockets: tests/health_test.cpp). Made on the checker's loop when it starts.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "resolver/base/address.hpp"
#include "sync/health/http_probe.hpp"
#include "sync/health/tcp_probe.hpp"

namespace glbd::health {

class Probes {
public:
    virtual ~Probes() = default;
    // HTTP(S): the pool of connections a new target's probes use.
    virtual size_t assign_pool() = 0;
    virtual void http(size_t pool, const HttpRequest& request, const Address& address, ProbeDone done) = 0;
    virtual void tcp(const Address& address, uint16_t port, std::chrono::milliseconds timeout, ProbeDone done) = 0;
    // Ends every probe under way without a result (the checker stops).
    virtual void stop() = 0;
};

// The probes on `loop`: what the checker makes when it is given none.
using ProbesFactory = std::function<std::unique_ptr<Probes>(uv_loop_t* loop)>;
// `source`: health.sourceAddress (a probe of the other family leaves from the kernel's choice).
std::unique_ptr<Probes> network_probes(uv_loop_t* loop, std::optional<Address> source = std::nullopt);

}  // namespace glbd::health
