// server/app/options — the config's sections as the options of the layers below, which know no config
// file: the network layer's (listen, threads, rateLimit) and geo's (geoip).
#pragma once

#include <memory>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "server/net/server.hpp"

namespace glbd {

ServerOptions server_options(const conf::Config& config);
// The geo database the config names with its networks; throws std::runtime_error as geo::GeoDb does.
std::shared_ptr<const geo::GeoDb> open_geo(const conf::Config& config);

}  // namespace glbd
