// The admin routes that stay small at any size (10,000 hosts x 20 clusters): GET /v1/summary (this cluster,
// peers, clusters and counts, never a host) and GET /v1/hosts (hosts by name in pages, with the filters an
// operator asks for). Control thread; each builds JSON for what it returns, never for the whole view.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "server/app/daemon.hpp"
#include "sync/state.hpp"

namespace glbd {

using nlohmann::json;

namespace {

constexpr size_t kDefaultPage = 100, kMaxPage = 1000;

// Calls f(entries) for each host name of the view in order, from `from` (after it when `after`), until f
// returns false: a merge of the clusters' lists (each sorted by name), so that a page costs what it
// returns and its place, never an index of the whole view.
template <class F>
void walk_hosts(const GlobalView& view, std::string_view from, bool after, F&& f) {
    std::vector<std::pair<const ClusterView*, size_t>> at;
    for (const auto& cv : view) {
        const HostList& list = cv.hosts;
        auto it = after ? std::upper_bound(list.begin(), list.end(), from,
                                           [](std::string_view v, const HostEntry& h) { return v.compare(h.host) < 0; })
                        : std::lower_bound(list.begin(), list.end(), from, [](const HostEntry& h, std::string_view v) {
                              return v.compare(h.host) > 0;
                          });
        at.emplace_back(&cv, static_cast<size_t>(it - list.begin()));
    }
    Daemon::HostEntries entries;
    for (;;) {
        const std::string* next = nullptr;
        for (const auto& [cv, i] : at) {
            if (i < cv->hosts.size() && (!next || cv->hosts[i].host < *next)) next = &cv->hosts[i].host;
        }
        if (!next) return;
        const std::string name = *next;
        entries.clear();
        for (auto& [cv, i] : at) {
            while (i < cv->hosts.size() && cv->hosts[i].host == name) entries.emplace_back(cv, &cv->hosts[i++]);
        }
        if (!f(entries)) return;
    }
}

bool unhealthy(const HostEntry& h) {
    return std::any_of(h.endpoints.begin(), h.endpoints.end(), [](const EndpointState& e) { return !e.healthy; });
}

}  // namespace

std::string Daemon::summary_json() const {
    uint64_t now = sync::now_ms();
    const sync::OverrideMap in_force = sync_->overrides();
    GlobalView view = sync_->view();
    auto snap = publisher_.current();
    size_t hosts = 0, entries = 0, endpoints = 0, down = 0;
    walk_hosts(view, "", false, [&](const HostEntries&) { return ++hosts, true; });
    json clusters = clusters_json(view, sync_->instances(), in_force, now);
    for (size_t i = 0; i < view.size(); ++i) {  // clusters_json keeps the view's order
        size_t all = 0, up = 0;
        for (const auto& h : view[i].hosts) {
            all += h.endpoints.size();
            for (const auto& e : h.endpoints) up += e.healthy ? 1 : 0;
        }
        entries += view[i].hosts.size(), endpoints += all, down += all - up;
        if (i < clusters.size()) clusters[i]["endpoints"] = {{"up", up}, {"all", all}};  // the page's colours
    }
    json out{{"cluster", config_.cluster.id},
             {"instance", config_.cluster.instance},
             {"serial", snap ? snap->serial : 0},
             {"ready", ready()},
             {"peers", peers_json(*sync_, now)},
             {"clusters", clusters},
             {"counts",
              {{"hosts", hosts},
               {"entries", entries},
               {"endpoints", endpoints},
               {"unhealthyEndpoints", down},
               {"overrides", in_force.size()}}}};
    if (kube_) out["kubernetes"] = kube_json(now);
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// GET /v1/hosts?limit=N&cursor=C&prefix=P&unhealthy=1&overridden=1&cluster=ID&source=S: the hosts after C (a
// name: the last of the previous page) by name that pass every filter given, at most N (100; up to 1000),
// each as /v1/state shows it; "next" is the cursor of the page after, or null at the end.
admin::Response Daemon::hosts_route(const std::string& query) const {
    admin::Response r;
    size_t limit = kDefaultPage;
    if (auto v = admin::query_param(query, "limit")) {
        char* end = nullptr;
        unsigned long n = std::strtoul(v->c_str(), &end, 10);
        if (v->empty() || *end || n == 0 || n > kMaxPage) {
            r.status = 400;
            r.body = "limit must be 1.." + std::to_string(kMaxPage) + "\n";
            return r;
        }
        limit = n;
    }
    std::string cursor = admin::query_param(query, "cursor").value_or("");
    std::string prefix = admin::query_param(query, "prefix").value_or("");
    std::string cluster = admin::query_param(query, "cluster").value_or("");
    std::string source = admin::query_param(query, "source").value_or("");
    const bool want_unhealthy = admin::query_param(query, "unhealthy").has_value();
    const bool want_overridden = admin::query_param(query, "overridden").has_value();
    const sync::OverrideMap in_force = sync_->overrides();
    GlobalView view = sync_->view();
    auto passes = [&](const HostEntries& entries) {
        bool in_cluster = cluster.empty(), sick = !want_unhealthy, overridden = !want_overridden;
        bool from_source = source.empty();
        for (const auto& [cv, h] : entries) {
            in_cluster |= cv->id == cluster;
            sick |= unhealthy(*h);
            for (const auto& e : h->endpoints) overridden |= sync::override_for(in_force, cv->id, e.target) != nullptr;
            from_source |= cv->id == config_.cluster.id && host_source(h->host) == source;
        }
        return in_cluster && sick && overridden && from_source;
    };
    auto probes = checker_->states();
    std::vector<uint64_t> counts;
    if (server_) counts = server_->answers(counter_ids_.size());
    json hosts = json::array();
    json next = nullptr;
    walk_hosts(view, cursor.empty() ? prefix : cursor, !cursor.empty(), [&](const HostEntries& entries) {
        const std::string& name = entries.front().second->host;
        if (name.compare(0, prefix.size(), prefix) != 0) return name.compare(prefix) < 0;  // before it: go on
        if (!passes(entries)) return true;
        if (hosts.size() == limit) {
            next = hosts.back()["name"];
            return false;
        }
        hosts.push_back(host_json(entries, in_force, probes, counts));
        return true;
    });
    r.content_type = "application/json";
    r.body = json{{"hosts", hosts}, {"next", next}}.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    return r;
}

}  // namespace glbd
