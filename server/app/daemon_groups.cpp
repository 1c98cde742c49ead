// Failover groups (dns-operator's active groups) at the daemon: GET and PUT /v1/groups, the TXT record
// `kuadrant-active-groups.<zone>` it serves in every zone while the admin's set holds, and the log of where the
// set in force comes from. Control thread.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "resolver/base/log_throttle.hpp"
#include "resolver/base/metrics.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/consts.hpp"
#include "server/app/daemon.hpp"
#include "sync/groups.hpp"

namespace glbd {

using nlohmann::json;

// While the admin's set is in force, its TXT in every zone (taking the name from any record's). Otherwise the
// groups records the clusters' DNSRecords publish are served as they wrote them (zone data), and a zone
// without one has none: dns-operator then finds no record, as glbd then has every group active.
std::vector<ZoneRecord> Daemon::served_records() const {
    std::vector<ZoneRecord> out;
    auto in_force = sync_->groups_in_force();
    if (!in_force || !in_force->pinned) return out;
    for (const auto& z : config_.zones) {
        out.push_back(ZoneRecord{model::active_groups_name(z.origin),
                                 wire::type::TXT,
                                 sync::kActiveGroupsTtl,
                                 {sync::format_active_groups(in_force->groups)}});
    }
    return out;
}

namespace {
std::string describe(const std::optional<sync::GroupsInForce>& g, const HostSources& sources) {
    if (!g) return "none set: every group is active";
    std::string out = "\"" + sync::join_groups(g->groups) + "\"";
    if (g->pinned) return out + ", set through the admin API (glbd groups set; glbd groups clear hands it back)";
    out += " from the groups record of ";
    for (size_t i = 0; i < g->records.size(); ++i) {
        const auto& [cluster, text] = g->records[i];
        out += (i ? ", " : "") + std::string("cluster ") + cluster + " (\"" + printable(text) + "\")";
    }
    for (const auto& [name, key] : sources) {
        if (name.rfind("kuadrant-active-groups.", 0) == 0)
            out += "; here DNSRecord " + printable(key) + " holds " + name;
    }
    return out;
}
}  // namespace

// Says when the set in force changes, and where it comes from.
void Daemon::log_groups() {
    auto now = sync_->groups_in_force();
    if (groups_logged_ && *groups_logged_ == now) return;
    bool first = !groups_logged_;
    groups_logged_ = now;
    if (first && !now) return;
    spdlog::info("groups: active groups: {}", describe(now, *kube_sources()));
}

}  // namespace glbd
