#include "server/app/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace glbd {

ServerOptions server_options(const conf::Config& c) {
    ServerOptions o;
    o.listen = c.listen.dns;
    o.threads = c.threads ? c.threads : std::max(1u, std::thread::hardware_concurrency());
    o.tcp_max_connections = c.listen.tcp_max_connections;
    o.tcp_max_per_source = c.listen.tcp_max_per_source;
    o.tcp_max_inflight = c.listen.tcp_max_inflight;
    o.tcp_idle_timeout = c.listen.tcp_idle_timeout;
    o.rrl = RrlOptions{c.rate_limit.responses_per_second, c.rate_limit.slip, c.rate_limit.ipv4_prefix,
                       c.rate_limit.ipv6_prefix};
    if (c.dnstap) {
        dnstap::Options d;
        d.unix_socket = c.dnstap->unix_socket, d.path = c.dnstap->path;
        d.identity = c.dnstap->identity;
        if (d.identity.empty()) {
            char host[256] = {};
            if (gethostname(host, sizeof host - 1) == 0) d.identity = host;
        }
        d.version = "glbd " GLBD_VERSION;
        d.queries = c.dnstap->queries, d.responses = c.dnstap->responses, d.sample = c.dnstap->sample;
        o.dnstap = d;
    }
    return o;
}

std::shared_ptr<const geo::GeoDb> open_geo(const conf::Config& c) {
    std::vector<geo::Network> networks;
    networks.reserve(c.geoip.networks.size());
    for (const auto& n : c.geoip.networks) networks.push_back({n.network, n.code});
    return std::make_shared<const geo::GeoDb>(c.geoip.database, networks,
                                              geo::DatabaseOptions{c.geoip.verify, c.geoip.signing_key});
}

}  // namespace glbd
