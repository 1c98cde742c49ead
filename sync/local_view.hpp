// sync/local_view — this cluster's entries as this instance sees them: the config's hosts with each
// endpoint's health from the checker (healthy when not probed or not yet known), and each host's number
// among the health checks its report carries (own_checks, `checks` when given).
#pragma once

#include "conf/config.hpp"
#include "resolver/model/global_view.hpp"
#include "sync/health/checker.hpp"
#include "sync/state.hpp"

namespace glbd {

ClusterView local_view(const conf::Config& config, const health::States& health,
                       std::vector<sync::SharedCheck>* checks = nullptr);

}  // namespace glbd
