#include "sync/health/probes.hpp"

namespace glbd::health {
namespace {

class NetworkProbes final : public Probes {
public:
    NetworkProbes(uv_loop_t* loop, std::optional<Address> source) : http_(loop, source), tcp_(loop, source) {}
    size_t assign_pool() override { return http_.assign_pool(); }
    void http(size_t pool, const HttpRequest& request, const Address& address, ProbeDone done) override {
        http_.probe(pool, request, address, std::move(done));
    }
    void tcp(const Address& address, uint16_t port, std::chrono::milliseconds timeout, ProbeDone done) override {
        tcp_.probe(address, port, timeout, std::move(done));
    }
    void stop() override {
        http_.stop();
        tcp_.stop();
    }

private:
    HttpProber http_;
    TcpProber tcp_;
};

}  // namespace

std::unique_ptr<Probes> network_probes(uv_loop_t* loop, std::optional<Address> source) {
    return std::make_unique<NetworkProbes>(loop, source);
}

}  // namespace glbd::health
