// The admin routes that change what the fleet serves, each shared with every peer through this instance's
// report: PUT /v1/overrides (drain or force a cluster or an endpoint) and POST /v1/forget (a dead instance).
// Control thread.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "server/app/admin_routes.hpp"
#include "server/app/daemon.hpp"

namespace glbd {

namespace {

admin::Response refuse(int status, const std::string& why) {
    admin::Response r;
    r.status = status;
    r.body = why + "\n";
    return r;
}

}  // namespace

// Why an override's target names nothing in the view now ("" when it names a cluster, or an endpoint of one):
// a typo, refused unless the request insists (a cluster that has yet to join).
std::string AdminRoutes::override_names_nothing(const std::string& target) const {
    const size_t slash = target.find('/');
    const std::string cluster = target.substr(0, slash);
    const SharedView view = d_.sync_->shared_view();
    auto cv = std::find_if(view.begin(), view.end(), [&](const auto& c) { return c->id == cluster; });
    if (cv == view.end()) return "no cluster \"" + cluster + "\" is in the view";
    if (slash == std::string::npos) return "";
    const std::string endpoint = target.substr(slash + 1);
    for (const auto& h : (*cv)->hosts) {
        for (const auto& e : h.endpoints) {
            if (e.target.str() == endpoint) return "";
        }
    }
    return "cluster \"" + cluster + "\" has no endpoint \"" + endpoint + "\"";
}

// PUT /v1/overrides {"target", "state", "force"}: "auto" always clears; a drain or force of something the view
// does not hold is refused (409) unless "force" keeps it for a cluster or endpoint that has yet to appear.
admin::Response AdminRoutes::overrides_route(const admin::Request& req) {
    auto o = admin::parse_override(req.body);
    if (!o) return refuse(400, R"(expected JSON {"target": "CLUSTER[/ENDPOINT]", "state": "down|up|auto"})");
    std::string nothing = o->state == "auto" ? "" : override_names_nothing(o->target);
    if (!nothing.empty() && !o->force && sync::is_override_target(o->target)) {
        return refuse(409, "refused: " + nothing + R"(; send "force": true to keep it for one that has yet to join)");
    }
    if (auto set = d_.set_override(o->target, o->state); !set) return refuse(400, set.error());
    admin::Response r;
    r.content_type = "application/json";
    nlohmann::json out{{"target", o->target}, {"state", o->state}};
    if (!nothing.empty()) {
        nothing += ": the override waits for one";
        spdlog::warn("override: {}", nothing);
        out["warning"] = nothing;
    }
    r.body = out.dump() + "\n";
    return r;
}

// POST /v1/forget {"instance": "CLUSTER/INSTANCE"}: a dead instance forgotten fleet-wide (sync/service.hpp).
admin::Response AdminRoutes::forget_route(const admin::Request& req) {
    auto j = nlohmann::json::parse(req.body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.size() != 1 || !j.contains("instance") || !j["instance"].is_string())
        return refuse(400, R"(expected JSON {"instance": "CLUSTER/INSTANCE"})");
    const auto origin = j["instance"].get<std::string>();
    if (auto done = d_.forget_instance(origin); !done) return refuse(409, "refused: " + done.error());
    admin::Response r;
    r.content_type = "application/json";
    r.body = nlohmann::json{{"forgotten", origin}}.dump() + "\n";
    return r;
}

}  // namespace glbd
