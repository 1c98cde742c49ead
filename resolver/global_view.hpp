// resolver/global_view — the global view the resolver answers from: every cluster's entries for every host,
// with endpoint health. Built by sync/ and health (or by tests) and frozen into a Snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conf/config.hpp"

namespace glbd {

struct EndpointState {
    std::string target;  // IPv4, IPv6 or a host name (no trailing dot)
    bool healthy = true;
    bool operator==(const EndpointState&) const = default;
};

struct HostEntry {
    std::string host;  // the load-balanced name, lower case, may start with "*."
    uint32_t ttl = 60;
    std::optional<conf::LoadBalancing> load_balancing;  // absent: a simple host
    std::vector<EndpointState> endpoints;
    bool operator==(const HostEntry&) const = default;
};

struct ClusterView {
    std::string id;
    bool alive = true;
    std::vector<HostEntry> hosts;
    std::optional<conf::Coordinates> location = std::nullopt;  // cluster.location as its newest report says
};

using GlobalView = std::vector<ClusterView>;
// The same, each cluster shared and immutable: a cluster that did not change is the same object in the next
// view, which is how the snapshot builder knows what it may keep (resolver/snapshot: SnapshotBuilder).
using SharedView = std::vector<std::shared_ptr<const ClusterView>>;
SharedView share(GlobalView view);

// This cluster's part of the view as the config describes it, every endpoint healthy.
ClusterView local_cluster_view(const conf::Config& config);

}  // namespace glbd
