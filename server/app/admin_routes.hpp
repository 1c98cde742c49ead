// server/app/admin_routes — the admin endpoint's routes (docs/config.md): the admin server on its own thread
// answers `/` and `/healthz` itself; every other request is queued to the control thread, answered there from the
// daemon's state (read, never kept), and handed back. /v1/state is only started there and written piece by piece
// on the admin thread. The routes over hosts are in admin_hosts.cpp, the groups' in admin_groups.cpp.
// Owns: the admin server, the queue of calls and its wake-up, the count of /v1/state streams under way.
// Never: keep a view, a snapshot or the daemon's state between requests; block the control thread on a client.
#pragma once

#include <uv.h>

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/base/mutex.hpp"
#include "resolver/explain.hpp"
#include "resolver/model/global_view.hpp"
#include "server/app/admin.hpp"
#include "server/app/answer_ids.hpp"
#include "server/app/kube_feed.hpp"
#include "sync/health/checker.hpp"
#include "sync/service.hpp"

namespace glbd {
class Daemon;
namespace metrics {
class Writer;
}

// The parts of the routes' JSON that /v1/summary, /v1/hosts and /v1/state share.
nlohmann::json peers_json(const sync::Service& sync, uint64_t now);
nlohmann::json clusters_json(const GlobalView& view, const std::vector<sync::Service::InstanceStatus>& statuses,
                             const sync::OverrideMap& in_force, uint64_t now);

// A host's entries in every cluster (views into a GlobalView).
using HostEntries = std::vector<std::pair<const ClusterView*, const HostEntry*>>;

// What a host's JSON (in /v1/state and /v1/hosts) needs beside its entries, owned, so that /v1/state's
// stream can take it to the admin thread.
struct HostFacts {
    std::string self;  // this cluster's id
    sync::OverrideMap in_force;
    health::States probes;                       // this cluster's probe results (at least the hosts shown)
    std::vector<uint64_t> counts;                // answers by counter id
    std::shared_ptr<const HostSources> sources;  // never null
    std::shared_ptr<const SharedAnswerIds> ids;  // never null
    // With peers, the fleet's verdict (/v1/explain's "outside") on the endpoints shown where it is more than
    // their cluster's: failed or kept by their vantages, or failed by some vantage. By (cluster, host, endpoint).
    std::map<std::tuple<std::string, std::string, Endpoint>, nlohmann::json> outside;
};
// Appends one host as compact JSON (bytes that are not UTF-8 become U+FFFD).
void append_host_json(std::string& out, const HostEntries& entries, const HostFacts& facts);
// Where this cluster's entry of a host comes from: "file", or "dnsrecord:namespace/name".
std::string host_source(const HostSources& sources, const std::string& host);

// The hosts of a view by name, each with its entries in every cluster: a merge of the clusters' lists (each
// sorted by name), so that a page costs what it returns and its place, never an index of the whole view.
// The view must outlive the walk.
class HostWalk {
public:
    // From the first name at or after `from` (after it when `after`).
    HostWalk(const GlobalView& view, std::string_view from, bool after);
    // The next host's entries, or null after the last (valid until the next call).
    const HostEntries* next();

private:
    std::vector<std::pair<const ClusterView*, size_t>> at_;
    HostEntries entries_;
};

class AdminRoutes {
public:
    explicit AdminRoutes(Daemon& daemon) : d_(daemon) {}
    // Binds admin.listen (throws when it cannot) with its wake-up on the control thread's `loop`.
    void open(uv_loop_t* loop, const SocketAddress& listen, const std::string& token);
    void run();    // its thread
    void close();  // its thread first, then its wake-up (the loop completes the close)

    // One request, on the control thread (tests and the queue).
    admin::Response route(const admin::Request& req);
    // GET /metrics: every module's families.
    [[nodiscard]] std::string metrics() const;

private:
    void on_admin_thread(const admin::Request& req, admin::Reply reply);
    void answer_calls();  // the control thread's turn: every call queued
    void answer_metrics(metrics::Writer& out) const;
    [[nodiscard]] HostFacts host_facts(health::States probes) const;  // what host JSON needs
    // The fleet's verdicts for facts.outside: of the hosts in `names` (sorted), or of every host (null).
    void fleet_facts(HostFacts& facts, const std::vector<std::string>* names) const;
    // GET /v1/state: the whole view, streamed by the admin thread from what this takes (never built whole).
    [[nodiscard]] admin::Response state_route();
    // GET /v1/summary and GET /v1/hosts (admin_hosts.cpp): the view in parts that stay small at any size.
    [[nodiscard]] std::string summary_json() const;
    [[nodiscard]] admin::Response hosts_route(const std::string& query) const;
    [[nodiscard]] admin::Response explain_route(const std::string& query) const;
    [[nodiscard]] nlohmann::json candidates_json(const Explanation& e) const;
    [[nodiscard]] nlohmann::json fleet_json(const std::string& cluster, const std::string& host,
                                            const Endpoint& endpoint) const;
    // PUT /v1/overrides and POST /v1/forget (admin_changes.cpp).
    [[nodiscard]] std::string override_names_nothing(const std::string& target) const;
    [[nodiscard]] admin::Response overrides_route(const admin::Request& req);
    [[nodiscard]] admin::Response forget_route(const admin::Request& req);
    // GET and PUT /v1/groups (admin_groups.cpp).
    [[nodiscard]] admin::Response groups_route(const admin::Request& req);
    [[nodiscard]] std::string groups_json() const;
    void group_metrics(metrics::Writer& m) const;

    Daemon& d_;
    std::unique_ptr<admin::Server> server_;
    struct Call {
        admin::Request request;
        admin::Reply reply;
    };
    Mutex mu_;
    std::vector<Call> calls_ GLBD_GUARDED_BY(mu_);
    uv_async_t wake_{};
    // /v1/state streams under way (each holds a view): at most kMaxStateStreams at once.
    static constexpr int kMaxStateStreams = 2;
    std::shared_ptr<std::atomic<int>> state_streams_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace glbd
