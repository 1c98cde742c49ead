// The admin endpoint (admin_routes.hpp): its server and queue, and the routes / (the status page), /healthz,
// /readyz, /metrics, /v1/explain; the routes that change the view are in admin_changes.cpp.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "geo/points.hpp"
#include "resolver/base/metrics.hpp"
#include "resolver/explain.hpp"
#include "resolver/wire/consts.hpp"
#include "server/app/admin_routes.hpp"
#include "server/app/daemon.hpp"
#include "server/app/page/page.hpp"
#include "sync/state.hpp"

namespace glbd {

// Load-balanced answers by chosen cluster, from the query threads' counts by counter id: one series per
// cluster whatever the number of hosts. By host and cluster too only when metrics.perHost asks (a series per
// pair: 200,000 at 10,000 hosts x 20 clusters, more than most Prometheus setups take from one target).
void AdminRoutes::answer_metrics(metrics::Writer& m) const {
    d_.counter_ids_->read([&](const AnswerIds& ids) {
        auto counts = d_.server_->answers(ids.size());
        auto count = [&](uint32_t id) { return static_cast<double>(id < counts.size() ? counts[id] : 0); };
        std::map<std::string, double> by_cluster;
        ids.each_cluster([&](const std::string& cluster, uint32_t id) { by_cluster[cluster] += count(id); });
        m.family("glbd_answers_total", "counter",
                 "Load-balanced answers by chosen cluster (\"all\": simple hosts, answered with every cluster).");
        for (const auto& [cluster, v] : by_cluster) {
            m.sample("glbd_answers_total", metrics::label("cluster", cluster), v);
        }
        if (!d_.config_.metrics.per_host) return;
        m.family("glbd_host_answers_total", "counter",
                 "Load-balanced answers by host and chosen cluster (metrics.perHost; \"all\" for simple hosts).");
        ids.each_sorted([&](const std::string& host, const std::string& cluster, uint32_t id) {
            m.sample("glbd_host_answers_total", metrics::label("host", host) + "," + metrics::label("cluster", cluster),
                     count(id));
        });
    });
}

bool Daemon::ready() const {
    return serving_ && publisher_.current() && (checker_->targets() == 0 || checker_->first_round_done());
}

void AdminRoutes::open(uv_loop_t* loop, const SocketAddress& listen, const std::string& token) {
    uv_async_init(loop, &wake_, [](uv_async_t* a) { static_cast<AdminRoutes*>(a->data)->answer_calls(); });
    wake_.data = this;
    server_ = std::make_unique<admin::Server>(
        listen, token, [this](const admin::Request& r, admin::Reply reply) { on_admin_thread(r, std::move(reply)); });
    server_->start();
}

void AdminRoutes::run() {
    if (server_) server_->run();
}

void AdminRoutes::close() {
    if (!server_) return;
    server_->stop();  // its thread first: no call is queued after this
    uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
    server_.reset();
}

// On the admin thread: the static page and /healthz at once (they read nothing of the daemon, so liveness is
// answered whatever the control thread is doing); every other route on the control thread.
void AdminRoutes::on_admin_thread(const admin::Request& req, admin::Reply reply) {
    if ((req.path == "/" || req.path == "/healthz") && (req.method == "GET" || req.method == "HEAD")) {
        admin::Response r;
        if (req.path == "/") {
            r = page::status_page();
        } else {
            r.body = "ok\n";
        }
        return reply(std::move(r));
    }
    {
        MutexLock lock(mu_);
        calls_.push_back({req, std::move(reply)});
    }
    uv_async_send(&wake_);
}

// On the control thread: the admin requests queued since the last turn, each answered.
void AdminRoutes::answer_calls() {
    std::vector<Call> calls;
    {
        MutexLock lock(mu_);
        calls.swap(calls_);
    }
    for (auto& call : calls) {
        admin::Response r;
        try {
            r = route(call.request);
        } catch (const std::exception& e) {
            r.status = 500;
            r.body = std::string("internal error: ") + e.what() + "\n";
        }
        call.reply(std::move(r));
    }
}

admin::Response AdminRoutes::route(const admin::Request& req) {
    admin::Response r;
    auto method_is = [&](const char* m) {
        if (req.method == m) return true;
        r.status = 405;
        r.body = std::string("use ") + m + "\n";
        return false;
    };
    if (req.path == "/") {
        if (req.method == "HEAD" || method_is("GET")) r = page::status_page();
    } else if (req.path == "/healthz") {
        if (method_is("GET")) r.body = "ok\n";
    } else if (req.path == "/readyz") {
        if (method_is("GET")) {
            bool ok = d_.ready();
            r.status = ok ? 200 : 503;
            r.body = ok ? "ready\n" : "not ready: waiting for the first health round\n";
        }
    } else if (req.path == "/metrics") {
        if (method_is("GET")) {
            r.content_type = "text/plain; version=0.0.4; charset=utf-8";
            r.body = metrics();
        }
    } else if (req.path == "/v1/state") {
        if (method_is("GET")) r = state_route();
    } else if (req.path == "/v1/summary") {
        if (method_is("GET")) {
            r.content_type = "application/json";
            r.body = summary_json();
        }
    } else if (req.path == "/v1/hosts") {
        if (method_is("GET")) r = hosts_route(req.query);
    } else if (req.path == "/v1/explain") {
        if (method_is("GET")) r = explain_route(req.query);
    } else if (req.path == "/v1/groups") {
        if (req.method == "GET" || method_is("PUT")) r = groups_route(req);
    } else if (req.path == "/v1/overrides") {
        if (method_is("PUT")) r = overrides_route(req);
    } else if (req.path == "/v1/forget") {
        if (method_is("POST")) r = forget_route(req);
    } else {
        r.status = 404;
        r.body =
            "not found; try /, /healthz, /readyz, /metrics, /v1/state, /v1/explain, PUT /v1/overrides, /v1/groups, "
            "POST /v1/forget\n";
    }
    return r;
}

std::string AdminRoutes::metrics() const {
    metrics::Writer m;
    if (d_.server_) {
        write_metrics(m, *d_.server_->totals());
        if (d_.server_->dnstap()) write_metrics(m, *d_.server_->dnstap());
        answer_metrics(m);
    }
    if (d_.kube_) d_.kube_->write_metrics(m);
    health::write_metrics(m, *d_.checker_, d_.config_.metrics.per_host);
    d_.outside_.write_metrics(m);
    sync::write_metrics(m, *d_.sync_);
    group_metrics(m);
    d_.keys_.write_metrics(m, *d_.sync_, d_.config_.zones);
    m.some("glbd_reloads_total", "counter", "Config reloads (SIGHUP), by result.",
           {{"result=\"ok\"", static_cast<double>(d_.reloads_ok_)},
            {"result=\"failed\"", static_cast<double>(d_.reloads_failed_)}});
    m.one("glbd_snapshot_serial", "gauge", "SOA serial of the data being served.",
          d_.publisher_.current() ? d_.publisher_.current()->serial : 0);
    m.one("glbd_snapshot_build_seconds", "gauge", "Time the last snapshot took to build from the global view.",
          static_cast<double>(d_.last_build_cost_us_) / 1e6);
    m.one("glbd_snapshot_builds_total", "counter", "Snapshots built since start (each change of the view, coalesced).",
          static_cast<double>(d_.builds_));
    m.one("glbd_snapshot_build_cpu_seconds_total", "counter",
          "CPU time the control thread spent building snapshots since start.",
          static_cast<double>(d_.build_cpu_us_) / 1e6);
    m.one("glbd_snapshot_builds_held_total", "counter",
          "Snapshot builds that waited for peers' pulls under way to end (at most 1 s; never for this cluster's "
          "own change).",
          static_cast<double>(d_.builds_held_));
    m.one("glbd_snapshot_hosts_built", "gauge",
          "Hosts the last snapshot built (a change builds only the hosts it touches; the rest are shared).",
          static_cast<double>(d_.builder_.last().built));
    m.one("glbd_snapshot_hosts", "gauge", "Load-balanced hosts in the snapshot being served.",
          static_cast<double>(d_.builder_.last().hosts));
    m.some("glbd_snapshot_signed_sets", "gauge",
           "The last snapshot's built hosts' RRsets in signed zones: signed anew, or kept with their signatures "
           "(unchanged since the build before).",
           {{"result=\"made\"", static_cast<double>(d_.builder_.last().signed_sets.made)},
            {"result=\"kept\"", static_cast<double>(d_.builder_.last().signed_sets.kept)}});
    m.one("glbd_ready", "gauge", "1 once the first health round is done and the sockets are bound.",
          d_.ready() ? 1 : 0);
    return m.str();
}

namespace {

using nlohmann::json;

// Where a cluster is drawn and measured from: its cluster.location, else the point of the geo code most of
// its entries carry; null when neither is known.
json cluster_location(const ClusterView& cv) {
    if (cv.location) return {{"lat", cv.location->lat}, {"lon", cv.location->lon}, {"from", "cluster.location"}};
    // The most common among its first 1,000 entries (a cluster's entries nearly always share one code; all
    // 10,000 of a large view took tens of milliseconds per request).
    std::map<std::string, int> codes;
    size_t seen = 0;
    for (const auto& h : cv.hosts) {
        if (++seen > 1000) break;
        if (h.load_balancing && !h.load_balancing->geo.empty()) ++codes[h.load_balancing->geo.str()];
    }
    const std::string* best = nullptr;
    for (const auto& [code, n] : codes) {
        if (!best || n > codes[*best]) best = &code;
    }
    geo::Point p;
    if (!best || !geo::point_of(*best, p)) return nullptr;
    return {{"lat", p.lat}, {"lon", p.lon}, {"from", "geo " + *best}};
}

}  // namespace

json peers_json(const sync::Service& sync, uint64_t now) {
    auto known = sync.known();
    json peers = json::array();
    for (const auto& p : sync.peers()) {
        json jp{{"address", p.address},
                {"id", p.origin},
                {"alive", p.reachable},
                {"exchanges", p.exchanges},
                {"failures", p.failures}};
        jp["lastSeenMsAgo"] = p.last_ok_ms ? json(now - std::min(now, p.last_ok_ms)) : json(nullptr);
        for (const auto& k : known) {
            if (k.state.origin() == p.origin) jp["version"] = k.state.version;
        }
        if (!p.last_error.empty()) jp["lastError"] = p.last_error;
        if (p.learnt) jp["learnt"] = true;             // learnt from peers, not one of peers.members
        if (p.key_mismatch) jp["keyMismatch"] = true;  // its last exchange failed on the key (lastError says how)
        jp["suspect"] = p.suspect;
        if (p.suspect) jp["suspectReason"] = p.suspect_reason, jp["suspectLimitMs"] = p.suspect_limit_ms;
        const uint64_t direct = std::max(p.last_beat_ms, p.last_ok_ms);
        jp["lastDirectMsAgo"] = direct ? json(now - std::min(now, direct)) : json(nullptr);
        jp["beatsReceived"] = p.beats_received;
        jp["beatsLost"] = p.beats_lost;
        jp["lossRatio"] = p.beats_received ? json(std::round(p.loss_ratio * 1000) / 1000) : json(nullptr);
        jp["rttMs"] = p.rtt_samples ? json(std::round(p.rtt_ms * 10) / 10) : json(nullptr);
        jp["lastBeatMsAgo"] = p.last_beat_ms ? json(now - std::min(now, p.last_beat_ms)) : json(nullptr);
        peers.push_back(jp);
    }
    return peers;
}

json clusters_json(const GlobalView& view, const std::vector<sync::Service::InstanceStatus>& statuses,
                   const sync::OverrideMap& in_force, uint64_t now) {
    json clusters = json::array();
    for (const auto& cv : view) {
        json instances = json::array();
        for (const auto& st : statuses) {
            const sync::Known& k = st.known;
            if (k.state.cluster != cv.id) continue;
            uint64_t ago = now - std::min(now, k.last_heard_ms);
            instances.push_back({{"instance", k.state.instance},
                                 {"version", k.state.version},
                                 {"lastHeardMsAgo", st.self ? 0 : ago},
                                 {"alive", st.alive},
                                 {"self", st.self}});
        }
        auto ov = in_force.find(cv.id);
        clusters.push_back(
            {{"id", cv.id},
             {"alive", cv.alive},
             {"instances", instances},
             {"location", cluster_location(cv)},
             {"group", cv.group.empty() ? json(nullptr) : json(cv.group)},
             {"standby", cv.standby},
             {"override", ov != in_force.end() ? json(sync::state_name(ov->second.state)) : json(nullptr)}});
    }
    return clusters;
}

}  // namespace glbd

namespace glbd {

namespace {
const char* seen_name(health::outside::Seen s) {
    return s == health::outside::Seen::fails ? "fails" : s == health::outside::Seen::reaches ? "reaches" : "none";
}

// The cluster whose entry of `host` lists `endpoint` (an explanation names a simple host's one candidate
// "all": every cluster's endpoints), or "".
std::string cluster_of(const GlobalView& view, const std::string& host, const Endpoint& endpoint) {
    for (const ClusterView& cv : view) {
        const auto& hosts = cv.hosts.vec();
        auto h = std::lower_bound(hosts.begin(), hosts.end(), host,
                                  [](const HostEntry& x, const std::string& name) { return x.host < name; });
        for (; h != hosts.end() && h->host == host; ++h) {
            for (const EndpointState& ep : h->endpoints) {
                if (ep.target == endpoint) return cv.id;
            }
        }
    }
    return "";
}
}  // namespace

// The fleet's verdict on an endpoint (docs/answers.md): each vantage's, whether it counts, and the outcome.
nlohmann::json AdminRoutes::fleet_json(const std::string& cluster, const std::string& host,
                                       const Endpoint& endpoint) const {
    auto x = d_.outside_.explain(cluster, host, endpoint, d_.config_.health.outside.vantages);
    nlohmann::json vantages = nlohmann::json::array();
    for (const auto& v : x.vantages) {
        vantages.push_back({{"cluster", v.cluster}, {"verdict", seen_name(v.seen)}, {"counts", v.counts()}});
        if (v.cut_off) vantages.back()["cutOff"] = true;
    }
    return {{"cluster", x.cluster},
            {"vantages", vantages},
            {"fleet", x.kept     ? "kept"
                      : x.failed ? "failed"
                                 : "as its cluster says"}};
}

// An explanation's candidates with their endpoints' health, and, with peers, the fleet's verdict on each.
nlohmann::json AdminRoutes::candidates_json(const Explanation& e) const {
    using nlohmann::json;
    json candidates = json::array();
    std::string host = e.host;  // as the view names it: lower case, no final dot
    if (!host.empty() && host.back() == '.') host.pop_back();
    std::transform(host.begin(), host.end(), host.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const GlobalView view = d_.config_.peers ? d_.sync_->view() : GlobalView{};
    for (const auto& c : e.candidates) {
        json eps = json::array();
        for (const auto& ep : c.endpoints) {
            eps.push_back({{"target", ep.target}, {"healthy", ep.healthy}});
            auto target = Endpoint::parse(ep.target);
            if (!target || !d_.config_.peers) continue;
            eps.back()["outside"] =
                fleet_json(c.cluster == "all" ? cluster_of(view, host, *target) : c.cluster, host, *target);
        }
        candidates.push_back({{"cluster", c.cluster},
                              {"geo", c.geo},
                              {"weight", c.weight},
                              {"usable", c.usable},
                              {"endpoints", eps},
                              {"standby", c.standby}});
        if (!c.entry.empty()) candidates.back()["entry"] = c.entry;
    }
    return candidates;
}

// GET /v1/explain?name=NAME&type=A&client=IP or &subnet=CIDR: the decision for that client, as JSON.
admin::Response AdminRoutes::explain_route(const std::string& query) const {
    admin::Response r;
    auto bad = [&](const std::string& why) {
        r.status = 400;
        r.body = why + "; use /v1/explain?name=NAME[&type=A|AAAA|CNAME|ANY]&client=IP|&subnet=CIDR\n";
        return r;
    };
    ExplainRequest req;
    auto name = admin::query_param(query, "name");
    if (!name || name->empty()) return bad("name is required");
    req.name = *name;
    std::string type = admin::query_param(query, "type").value_or("A");
    auto qtype = wire::type_from_name(type);
    if (!qtype || (*qtype != wire::type::A && *qtype != wire::type::AAAA && *qtype != wire::type::CNAME &&
                   *qtype != wire::type::ANY)) {
        return bad("type must be A, AAAA, CNAME or ANY");
    }
    req.qtype = *qtype;
    auto client = admin::query_param(query, "client");
    auto subnet = admin::query_param(query, "subnet");
    if (!client && !subnet) return bad("client or subnet is required");
    if (client && !geo::Address::parse(*client, req.client)) return bad("client is not an IP address");
    if (subnet) {
        Prefix p;  // host bits allowed, as a client may send them in ECS (the query masks them)
        if (!Prefix::parse(*subnet, p, false)) return bad("subnet is not a CIDR network");
        req.subnet = p.address, req.subnet_len = p.length;
        if (!client) req.client = p.address;
    }
    auto snap = d_.publisher_.current();
    if (!snap) {
        r.status = 503;
        r.body = "no snapshot yet\n";
        return r;
    }
    Explanation e = explain(*snap, req);
    using nlohmann::json;
    json steps = json::array(), candidates = candidates_json(e);
    for (const auto& s : e.steps) {
        steps.push_back({{"group", s.role}, {"geo", s.geo}, {"result", s.result}});
        if (s.km >= 0) steps.back()["km"] = std::lround(s.km);
    }
    json out{{"name", req.name}, {"type", type}, {"serial", e.serial}};
    if (client) out["client"] = *client;
    if (subnet) out["subnet"] = *subnet;
    if (!e.cnames.empty()) out["cnames"] = e.cnames;
    if (!e.error.empty()) {
        out["error"] = e.error;
    } else {
        out["zone"] = e.zone, out["host"] = e.host, out["loadBalanced"] = e.load_balanced;
        out["location"] =
            e.located
                ? json{{"country", e.country}, {"continent", e.continent}, {"prefix", e.prefix}, {"from", e.located_by}}
                : json(nullptr);
        if (e.located && e.has_point) {
            out["location"]["point"] = {
                {"lat", e.lat}, {"lon", e.lon}, {"from", e.point_from_database ? e.located_by : "country"}};
        }
        out["steps"] = steps, out["fallback"] = e.fallback, out["failOpen"] = e.fail_open;
        out["candidates"] = candidates;
        out["answer"] = {{"rcode", e.rcode}, {"records", e.answers}, {"ttl", e.ttl}, {"ecsScope", e.scope}};
    }
    r.content_type = "application/json";
    r.body = out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    return r;
}

}  // namespace glbd
