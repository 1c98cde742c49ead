// sync/local_view — this cluster's entries as this instance sees them: the config's hosts with each
// endpoint's health from the checker (healthy when not probed or not yet known).
#pragma once

#include "conf/config.hpp"
#include "resolver/model/global_view.hpp"
#include "sync/health/checker.hpp"

namespace glbd {

ClusterView local_view(const conf::Config& config, const health::States& health);

}  // namespace glbd
