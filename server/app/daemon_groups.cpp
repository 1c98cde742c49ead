// Failover groups (dns-operator's active groups) at the daemon: GET and PUT /v1/groups, the TXT record
// `kuadrant-active-groups.<zone>` it serves in every zone, and the set taken from a DNSRecord holding that
// record. Control thread.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "resolver/base/metrics.hpp"
#include "resolver/wire/consts.hpp"
#include "server/app/daemon.hpp"
#include "sync/groups.hpp"

namespace glbd {

using nlohmann::json;

// One TXT per zone while a set is in force; none before any was set (dns-operator then finds no record and
// takes every group as inactive, as glbd does).
std::vector<ZoneRecord> Daemon::served_records() const {
    std::vector<ZoneRecord> out;
    auto active = sync_->active_groups();
    if (!active) return out;
    for (const auto& z : config_.zones) {
        out.push_back(ZoneRecord{sync::active_groups_name(z.origin),
                                 wire::type::TXT,
                                 sync::kActiveGroupsTtl,
                                 {sync::format_active_groups(active->groups)}});
    }
    return out;
}

// A DNSRecord of this cluster that holds `kuadrant-active-groups.<zone>` (a user's record, as dns-operator's
// CoreDNS set-up has them) sets the active groups when its text changes. Its text at start sets them only
// when no set is in force: a set made later through the admin API is not undone by a restart.
void Daemon::adopt_groups_record(const RecordList& records) {
    std::string text;  // "" when no record holds it
    for (const auto& r : records) {
        if (r.type != wire::type::TXT || r.name.rfind("kuadrant-active-groups.", 0) != 0) continue;
        for (const auto& s : r.data) text += s;
        break;
    }
    if (text == groups_record_) return;
    bool first = !groups_record_.has_value();
    groups_record_ = text;
    if (text.empty() || (first && sync_->active_groups())) return;
    auto groups = sync::parse_active_groups(text);
    if (auto err = sync_->set_active_groups(groups); !err.empty()) {
        spdlog::warn("groups: the DNSRecord's active groups \"{}\" are not taken: {}", text, err);
        return;
    }
    spdlog::info("groups: active groups set from a DNSRecord: \"{}\"", sync::format_active_groups(groups));
}

// A sample per grouped cluster and per active group: a few at any number of hosts.
void Daemon::group_metrics(metrics::Writer& m) const {
    m.family("glbd_cluster_standby", "gauge",
             "Per cluster with a failover group: 1 while its group is not active (its entries answered only when no "
             "active one is usable), else 0.");
    for (const auto& cv : sync_->shared_view()) {
        if (!cv->group.empty()) {
            m.sample("glbd_cluster_standby",
                     metrics::label("cluster", cv->id) + "," + metrics::label("group", cv->group), cv->standby ? 1 : 0);
        }
    }
    m.family("glbd_active_group", "gauge", "1 for each active failover group (none before a set is made).");
    if (auto active = sync_->active_groups()) {
        for (const auto& g : active->groups) m.sample("glbd_active_group", metrics::label("group", g), 1);
    }
}

std::string Daemon::groups_json() const {
    auto active = sync_->active_groups();
    json clusters = json::array();
    for (const auto& cv : sync_->shared_view()) {
        clusters.push_back(
            {{"id", cv->id}, {"group", cv->group.empty() ? json(nullptr) : json(cv->group)}, {"standby", cv->standby}});
    }
    json out = {{"active", active ? json(active->groups) : json(nullptr)},
                {"setAt", active ? json(active->at_ms) : json(nullptr)},
                {"record", active ? json(sync::format_active_groups(active->groups)) : json(nullptr)},
                {"clusters", clusters}};
    return out.dump() + "\n";
}

// PUT /v1/groups: {"active": [..]} sets the whole set, {"add": "g"} or {"remove": "g"} changes it (applied
// here, on the control thread: two clients adding at once both count).
admin::Response Daemon::groups_route(const admin::Request& req) {
    admin::Response r;
    r.content_type = "application/json";
    if (req.method == "GET") {
        r.body = groups_json();
        return r;
    }
    auto fail = [&](const std::string& why) {
        r.status = 400;
        r.content_type = "text/plain; charset=utf-8";
        r.body = why + "\n";
        return r;
    };
    auto j = json::parse(req.body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.size() != 1) {
        return fail(R"(expected JSON {"active": ["GROUP", ...]} or {"add": "GROUP"} or {"remove": "GROUP"})");
    }
    auto in_force = sync_->active_groups();
    std::vector<std::string> groups = in_force ? in_force->groups : std::vector<std::string>{};
    if (j.contains("active") && j["active"].is_array()) {
        groups.clear();
        for (const auto& g : j["active"]) {
            if (!g.is_string()) return fail("\"active\" holds something that is not a string");
            groups.push_back(g.get<std::string>());
        }
    } else if (j.contains("add") && j["add"].is_string()) {
        groups.push_back(j["add"].get<std::string>());
    } else if (j.contains("remove") && j["remove"].is_string()) {
        std::erase(groups, j["remove"].get<std::string>());
    } else {
        return fail(R"(expected JSON {"active": ["GROUP", ...]} or {"add": "GROUP"} or {"remove": "GROUP"})");
    }
    if (auto err = sync_->set_active_groups(groups); !err.empty()) return fail(err);
    auto now = sync_->active_groups();
    spdlog::info("groups: active groups set: \"{}\"", sync::format_active_groups(now ? now->groups : groups));
    rebuild();
    r.body = groups_json();
    return r;
}

}  // namespace glbd
