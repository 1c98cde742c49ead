// resolver/model/host — a load-balanced name as one cluster gives it (conf/ parses its hosts into it, sync/kube
// maps Kuadrant DNSRecords into it; sync/ shares it as HostEntry, global_view.hpp): its endpoints, the load
// balancing of Kuadrant's DNSPolicy (weight, geo, defaultGeo), its health check, and a cluster's place on Earth.
// Plain data; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resolver/base/shared_text.hpp"
#include "resolver/model/endpoint.hpp"

namespace glbd::model {

// A point on Earth in degrees (latitude -90..90, longitude -180..180).
struct Coordinates {
    float lat = 0, lon = 0;
    bool operator==(const Coordinates&) const = default;
};

// GCC 12 takes the moves of a disengaged std::optional<LoadBalancing> (inlined) for reads of its unset payload, a
// false positive (optional moves the payload only when engaged): not a warning for this type's members.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
struct LoadBalancing {
    LoadBalancing() = default;
    LoadBalancing(uint16_t weight_, SharedText geo_, bool default_geo_)
        : weight(weight_), default_geo(default_geo_), geo(std::move(geo_)) {}
    uint16_t weight = 100;
    bool default_geo = false;  // (beside the weight: 16 bytes in all, an entry holds one)
    SharedText geo;            // "" = none (a code is held inline: no heap)
    bool operator==(const LoadBalancing&) const = default;
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

enum class Protocol { http, https, tcp };

struct HealthCheck {
    Protocol protocol = Protocol::http;
    uint16_t port = 80;
    std::string path = "/";
    std::chrono::milliseconds interval{5000};
    std::chrono::milliseconds timeout{2000};
    unsigned failure_threshold = 3;
    unsigned success_threshold = 1;
    std::vector<int> expected_status{200, 201};
    std::vector<std::pair<std::string, std::string>> headers;
    bool insecure_skip_verify = false;
    bool operator==(const HealthCheck&) const = default;
};

// One entry of this cluster for a load-balanced name. A cluster may give a name several entries (several
// gateways, each its own geo, weight and endpoints), told apart by `entry`.
struct Host {
    std::string name;  // fqdn, lower case, may start with "*."
    uint32_t ttl = 60;
    std::vector<Endpoint> endpoints;
    std::optional<LoadBalancing> load_balancing;
    std::optional<HealthCheck> health_check;
    std::string entry;  // "" for a name's only entry; else what names it (a gateway, a DNSRecord's target)
};

}  // namespace glbd::model
