#include "tests/view_builder.hpp"

#include <algorithm>

#include "resolver/model/names.hpp"
#include "tests/dns_util.hpp"

namespace glbd::test {

ViewBuilder& ViewBuilder::add(const std::string& host, const TestEntry& e) {
    auto cv = std::find_if(view_.begin(), view_.end(), [&](const ClusterView& c) { return c.id == e.cluster; });
    if (cv == view_.end()) cv = view_.insert(view_.end(), ClusterView{e.cluster, true, {}, std::nullopt});
    cv->alive = e.alive;
    cv->location = e.location;
    HostEntry he{host, e.ttl, std::nullopt, {}};
    if (e.load_balanced) he.load_balancing = model::LoadBalancing{e.weight, e.geo, e.default_geo};
    for (const auto& [target, healthy] : e.endpoints)
        he.endpoints.push_back(
            EndpointState{endpoint_of(model::canonical_name(target)), healthy});  // as conf/ holds names
    cv->hosts.push_back(std::move(he));
    return *this;
}

ViewBuilder& ViewBuilder::add(const std::string& host, const std::vector<TestEntry>& entries) {
    for (const auto& e : entries) add(host, e);
    return *this;
}

std::shared_ptr<const Snapshot> ViewBuilder::snapshot(const conf::Config& config,
                                                      const std::vector<geo::Network>& networks, uint32_t serial,
                                                      const CounterIds& counter_ids) const {
    return build_snapshot(config, view_, test_geo(networks), serial, counter_ids);
}

std::shared_ptr<const geo::GeoDb> test_geo(const std::vector<geo::Network>& networks) {
    return std::make_shared<const geo::GeoDb>(fixture_path("test.mmdb"), networks);
}

}  // namespace glbd::test
