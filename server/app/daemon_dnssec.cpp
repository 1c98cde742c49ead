// Whether every instance publishes the DNSKEY sets this one does (each report carries its sets): shown in
// /v1/state and /v1/summary ("dnssec"), `glbd status`, a metric, and logged when it changes. Control thread.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "resolver/base/metrics.hpp"
#include "server/app/daemon.hpp"

namespace glbd {

using nlohmann::json;

std::vector<std::string> Daemon::served_zones() const {
    std::vector<std::string> out;
    for (const auto& z : config_.zones) out.push_back(z.origin);
    return out;
}

json Daemon::dnssec_json() const {
    json zones = json::object();
    for (const auto& [zone, id] : sync_->own_zone_keys()) zones[zone] = id;
    json mismatches = json::array();
    for (const auto& m : sync_->key_mismatches(served_zones())) {
        mismatches.push_back({{"instance", m.origin},
                              {"zone", m.zone},
                              {"alive", m.alive},
                              {"ours", m.ours.empty() ? json(nullptr) : json(m.ours)},
                              {"theirs", m.theirs.empty() ? json(nullptr) : json(m.theirs)}});
    }
    return {{"zones", zones}, {"keyMismatches", mismatches}};
}

// Per zone served: a few samples at any number of hosts.
void Daemon::dnssec_metrics(metrics::Writer& m) const {
    m.family("glbd_dnssec_key_mismatch", "gauge",
             "Per zone served: the live instances that publish another DNSKEY set than this one (other keys, or "
             "signed on one side only). Anything but 0 breaks validation of some answers.");
    auto mismatches = sync_->key_mismatches(served_zones());
    for (const auto& zone : served_zones()) {
        size_t n = 0;
        for (const auto& mm : mismatches) n += mm.alive && mm.zone == zone ? 1 : 0;
        m.sample("glbd_dnssec_key_mismatch", metrics::label("zone", zone), static_cast<double>(n));
    }
}

// After each build: a warning when a live instance starts publishing other keys than ours, a note when it
// stops (or is no longer alive).
void Daemon::log_key_mismatches() {
    std::set<std::string> now;
    for (const auto& m : sync_->key_mismatches(served_zones())) {
        if (!m.alive) continue;
        std::string line = "zone " + m.zone + ": " + m.origin + " publishes " +
                           (m.theirs.empty() ? "no DNSKEY (unsigned)" : "DNSKEY " + m.theirs) + ", this server " +
                           (m.ours.empty() ? "none (unsigned)" : m.ours);
        if (!key_mismatches_.count(line)) {
            spdlog::warn("dnssec: {}: resolvers that ask both will fail to validate", line);
        }
        now.insert(std::move(line));
    }
    for (const auto& line : key_mismatches_) {
        if (!now.count(line)) spdlog::info("dnssec: no longer: {}", line);
    }
    key_mismatches_ = std::move(now);
}

}  // namespace glbd
