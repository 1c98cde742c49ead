// resolver/model/served — what a snapshot is built from besides the global view: this server's zones and the
// settings that shape its answers (resolver/snapshot). conf::Config converts to it; it refers into the config
// and is valid while the config is.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "resolver/model/host.hpp"
#include "resolver/model/zone.hpp"

namespace glbd::model {

struct Served {
    std::string_view cluster_id;          // cluster.id
    std::optional<Coordinates> location;  // cluster.location
    bool nearest = false;                 // geoip.nearest: the nearest usable geo group as the last fallback
    uint16_t udp_payload = 1232;          // listen.udpPayloadSize
    std::span<const Zone> zones;
    std::span<const Host> hosts;  // this cluster's, as the config gives them (local_cluster_view)
};

}  // namespace glbd::model
