// The admin routes of failover groups: GET and PUT /v1/groups, and their metrics. Control thread.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "resolver/base/metrics.hpp"
#include "resolver/model/names.hpp"
#include "server/app/admin_routes.hpp"
#include "server/app/daemon.hpp"
#include "sync/groups.hpp"

namespace glbd {

using nlohmann::json;

// A sample per grouped cluster and per active group: a few at any number of hosts.
void AdminRoutes::group_metrics(metrics::Writer& m) const {
    m.family("glbd_cluster_standby", "gauge",
             "Per cluster with a failover group: 1 while its group is not active (its entries answered only when no "
             "active one is usable), else 0.");
    for (const auto& cv : d_.sync_->shared_view()) {
        if (!cv->group.empty()) {
            m.sample("glbd_cluster_standby",
                     metrics::label("cluster", cv->id) + "," + metrics::label("group", cv->group), cv->standby ? 1 : 0);
        }
    }
    auto in_force = d_.sync_->groups_in_force();
    m.family("glbd_active_group", "gauge", "1 for each active failover group (none while no set is in force).");
    if (in_force) {
        for (const auto& g : in_force->groups) m.sample("glbd_active_group", metrics::label("group", g), 1);
    }
    m.one("glbd_active_groups_pinned", "gauge",
          "1 while the admin's set of active groups (glbd groups set) holds, whatever the groups records say.",
          in_force && in_force->pinned ? 1 : 0);
}

namespace {

// The active groups that no cluster of the view is in: a set naming only those stands every grouped cluster by.
std::vector<std::string> unmatched_groups(const std::vector<std::string>& active, const SharedView& view) {
    std::vector<std::string> out;
    for (const auto& g : active) {
        if (std::none_of(view.begin(), view.end(), [&](const auto& cv) { return cv->group == g; })) out.push_back(g);
    }
    return out;
}

}  // namespace

std::string AdminRoutes::groups_json() const {
    auto in_force = d_.sync_->groups_in_force();
    const SharedView view = d_.sync_->shared_view();
    json clusters = json::array();
    for (const auto& cv : view) {
        clusters.push_back(
            {{"id", cv->id}, {"group", cv->group.empty() ? json(nullptr) : json(cv->group)}, {"standby", cv->standby}});
    }
    json records = json::array();
    if (in_force) {
        for (const auto& [cluster, text] : in_force->records) records.push_back({{"cluster", cluster}, {"text", text}});
    }
    json out = {
        {"active", in_force ? json(in_force->groups) : json(nullptr)},
        {"pinned", in_force && in_force->pinned},
        {"setAt", in_force && in_force->pinned ? json(in_force->at_ms) : json(nullptr)},
        {"record", in_force && in_force->pinned ? json(sync::format_active_groups(in_force->groups)) : json(nullptr)},
        {"records", records},
        {"clusters", clusters},
        {"unmatched", in_force ? json(unmatched_groups(in_force->groups, view)) : json::array()}};
    return out.dump() + "\n";
}

// PUT /v1/groups: {"active": [..]} sets the whole set, {"add": "g"} or {"remove": "g"} changes it (applied
// here, on the control thread: two clients adding at once both count).
admin::Response AdminRoutes::groups_route(const admin::Request& req) {
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
    const char* expected =
        R"(expected JSON {"active": ["GROUP", ...]}, {"add": "GROUP"}, {"remove": "GROUP"} or {"clear": true})";
    auto j = json::parse(req.body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail(expected);
    const bool force = j.contains("force") && j["force"].is_boolean() && j["force"].get<bool>();
    if (j.contains("force") && !j["force"].is_boolean()) return fail(R"("force" is true or false)");
    if (j.size() != (j.contains("force") ? 2U : 1U)) return fail(expected);
    if (j.contains("clear")) {
        if (!j["clear"].is_boolean() || !j["clear"].get<bool>()) return fail(expected);
        d_.sync_->clear_active_groups();
        spdlog::info("groups: the admin's set of active groups cleared: the groups records decide again");
        d_.rebuild();
        r.body = groups_json();
        return r;
    }
    auto in_force = d_.sync_->groups_in_force();
    std::vector<std::string> groups = in_force ? in_force->groups : std::vector<std::string>{};
    std::vector<std::string> named;  // the groups this request makes active
    if (j.contains("active") && j["active"].is_array()) {
        groups.clear();
        for (const auto& g : j["active"]) {
            if (!g.is_string()) return fail("\"active\" holds something that is not a string");
            groups.push_back(g.get<std::string>());
        }
        named = groups;
    } else if (j.contains("add") && j["add"].is_string()) {
        groups.push_back(j["add"].get<std::string>());
        named = {groups.back()};
    } else if (j.contains("remove") && j["remove"].is_string()) {
        std::erase(groups, j["remove"].get<std::string>());
    } else {
        return fail(expected);
    }
    // A group no cluster is in is a typo, or one that has yet to join: refused unless the request insists.
    std::erase_if(named, [](const std::string& g) { return !model::is_group_name(g); });  // refused below, 400
    if (auto nothing = unmatched_groups(named, d_.sync_->shared_view()); !nothing.empty() && !force) {
        r.status = 409;
        r.content_type = "text/plain; charset=utf-8";
        r.body = "refused: no cluster is in the group \"" + nothing[0] +
                 R"(" (glbd groups lists each cluster's); send "force": true, or --force, to set it all the same)"
                 "\n";
        return r;
    }
    if (auto set = d_.sync_->set_active_groups(groups); !set) return fail(set.error());
    auto now = d_.sync_->groups_in_force();
    spdlog::info("groups: active groups set through the admin API: \"{}\"",
                 sync::format_active_groups(now ? now->groups : groups));
    for (const auto& g : unmatched_groups(now ? now->groups : groups, d_.sync_->shared_view())) {
        spdlog::warn("groups: no cluster is in the active group \"{}\" (yet)", g);
    }
    d_.rebuild();
    r.body = groups_json();
    return r;
}

}  // namespace glbd
