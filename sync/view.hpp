// sync/view — this cluster's entries with health and operator overrides applied.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "conf/config.hpp"
#include "resolver/view.hpp"
#include "sync/health.hpp"

namespace glbd {

enum class Override { up, down };

// Operator drains: "eu-1" (a whole cluster) or "eu-1/192.0.2.10" (one endpoint of it, on every host).
class Overrides {
public:
    // state is "up", "down" or "auto" (removes the override). Returns an error message, or "" when set.
    std::string set(const std::string& target, const std::string& state);
    [[nodiscard]] std::optional<Override> find(const std::string& cluster, const std::string& endpoint) const;
    [[nodiscard]] const std::map<std::string, Override>& all() const { return map_; }
    bool operator==(const Overrides& o) const { return map_ == o.map_; }

private:
    std::map<std::string, Override> map_;
};

// The config's hosts for this cluster, each endpoint's health from `health` (healthy when unknown or
// not probed), then the overrides.
ClusterView local_view(const conf::Config& config, const health::States& health, const Overrides& overrides);

// Applies overrides to every cluster of a view (drained endpoints become unhealthy, forced ones healthy).
void apply_overrides(GlobalView& view, const Overrides& overrides);

}  // namespace glbd
