// The one way tests build a global view: each host's entries as a test writes them, clusters in the order
// first named, then the snapshot of it (with the test MaxMind DB, fixtures/test.mmdb).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/model/global_view.hpp"
#include "resolver/snapshot/builder.hpp"

namespace glbd::test {

// One cluster's entry for a host. `alive` and `location` are its cluster's (the last entry that names the
// cluster sets them).
struct TestEntry {
    std::string cluster;
    std::string geo;  // "" none
    uint16_t weight = 100;
    bool default_geo = false;
    std::vector<std::pair<std::string, bool>> endpoints;  // target, healthy
    bool alive = true;
    bool load_balanced = true;                                  // false: no loadBalancing (a simple host's entry)
    std::optional<model::Coordinates> location = std::nullopt;  // its cluster's cluster.location
    uint32_t ttl = 60;
};

class ViewBuilder {
public:
    ViewBuilder& add(const std::string& host, const TestEntry& entry);
    ViewBuilder& add(const std::string& host, const std::vector<TestEntry>& entries);
    [[nodiscard]] const GlobalView& view() const { return view_; }
    // The snapshot of the view for `config` (zones, nearest fallback), the test database with `networks`.
    [[nodiscard]] std::shared_ptr<const Snapshot> snapshot(const conf::Config& config,
                                                           const std::vector<geo::Network>& networks = {},
                                                           uint32_t serial = 1,
                                                           const CounterIds& counter_ids = {}) const;

private:
    GlobalView view_;
};

// fixtures/test.mmdb with `networks` over it.
std::shared_ptr<const geo::GeoDb> test_geo(const std::vector<geo::Network>& networks = {});

}  // namespace glbd::test
