// The admin routes over hosts: GET /v1/summary (this cluster, peers, clusters and counts, never a host), GET
// /v1/hosts (hosts by name in pages, with the filters an operator asks for) and GET /v1/state (every host,
// streamed). The first two answer on the control thread and cost what they return; /v1/state takes what it
// needs there (shared lists, no copy of the view's entries) and is written piece by piece on the admin thread.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "server/app/admin_routes.hpp"
#include "server/app/daemon.hpp"
#include "sync/state.hpp"

namespace glbd {

using nlohmann::json;

namespace {

constexpr size_t kDefaultPage = 100, kMaxPage = 1000;
constexpr size_t kStreamPiece = size_t{64} * 1024;  // /v1/state is written in pieces of about this many bytes

bool unhealthy(const HostEntry& h) {
    return std::any_of(h.endpoints.begin(), h.endpoints.end(), [](const EndpointState& e) { return !e.healthy; });
}

// One host entry's endpoints, with their overrides and (this cluster's) probe results.
json endpoints_json(const ClusterView& cv, const HostEntry& h, const HostFacts& facts) {
    json eps = json::array();
    const std::string host = h.host.str();
    for (const auto& ep : h.endpoints) {
        json je{{"target", ep.target.str()}, {"healthy", ep.healthy}};
        const sync::OverrideEntry* ov = sync::override_for(facts.in_force, cv.id, ep.target);
        je["override"] = ov ? json(sync::state_name(ov->state)) : json(nullptr);
        if (cv.id == facts.self) {
            if (auto it = facts.probes.find({host, ep.target}); it != facts.probes.end()) {
                je["probe"] = {
                    {"known", it->second.known}, {"healthy", it->second.healthy}, {"reason", it->second.reason}};
            }
        }
        if (auto it = facts.outside.find({cv.id, host, ep.target}); it != facts.outside.end())
            je["outside"] = it->second;
        eps.push_back(std::move(je));
    }
    return eps;
}

}  // namespace

std::string host_source(const HostSources& sources, const std::string& host) {
    auto src = sources.find(host);
    return src != sources.end() ? "dnsrecord:" + src->second : std::string("file");
}

// One host: each cluster's entry, and the answers this server gave from each.
void append_host_json(std::string& out, const HostEntries& entries, const HostFacts& facts) {
    const HostEntry& first = *entries.front().second;
    const std::string name = first.host.str();  // every entry's
    json jh{{"name", name}, {"loadBalanced", first.load_balancing.has_value()}, {"entries", json::array()}};
    facts.ids->read([&](const AnswerIds& ids) {
        auto answers = [&](const std::string& host, const std::string& cluster) -> uint64_t {
            uint32_t id = ids.find(host, cluster);
            return id < facts.counts.size() ? facts.counts[id] : 0;
        };
        for (const auto& [cv, h] : entries) {
            json entry{{"cluster", cv->id},
                       {"alive", cv->alive},
                       {"ttl", h->ttl},
                       {"endpoints", endpoints_json(*cv, *h, facts)}};
            if (!h->entry.empty()) entry["entry"] = h->entry.str();
            if (cv->id == facts.self) entry["source"] = host_source(*facts.sources, name);
            if (h->load_balancing) {
                entry["geo"] = h->load_balancing->geo.str();
                entry["weight"] = h->load_balancing->weight;
                entry["defaultGeo"] = h->load_balancing->default_geo;
                entry["answers"] = answers(name, cv->id);
            }
            jh["entries"].push_back(std::move(entry));
        }
        if (!first.load_balancing) jh["answers"] = answers(name, "all");
    });
    // Names and endpoints may come from peers: bytes that are not UTF-8 become U+FFFD, never an exception.
    out += jh.dump(-1, ' ', false, json::error_handler_t::replace);
}

HostWalk::HostWalk(const GlobalView& view, std::string_view from, bool after) {
    for (const auto& cv : view) {
        const HostList& list = cv.hosts;
        auto it = after ? std::upper_bound(list.begin(), list.end(), from,
                                           [](std::string_view v, const HostEntry& h) { return v.compare(h.host) < 0; })
                        : std::lower_bound(list.begin(), list.end(), from, [](const HostEntry& h, std::string_view v) {
                              return v.compare(h.host) > 0;
                          });
        at_.emplace_back(&cv, static_cast<size_t>(it - list.begin()));
    }
}

const HostEntries* HostWalk::next() {
    const SharedText* next = nullptr;
    for (const auto& [cv, i] : at_) {
        if (i < cv->hosts.size() && (!next || cv->hosts[i].host < *next)) next = &cv->hosts[i].host;
    }
    if (!next) return nullptr;
    const SharedText name = *next;
    entries_.clear();
    for (auto& [cv, i] : at_) {
        while (i < cv->hosts.size() && cv->hosts[i].host == name) entries_.emplace_back(cv, &cv->hosts[i++]);
    }
    return &entries_;
}

HostFacts AdminRoutes::host_facts(health::States probes) const {
    HostFacts f{
        d_.config_.cluster.id, d_.sync_->overrides(), std::move(probes), {}, d_.kube_sources(), d_.counter_ids_, {}};
    if (d_.server_)
        f.counts = d_.server_->answers(d_.counter_ids_->read([](const AnswerIds& ids) { return ids.size(); }));
    return f;
}

void AdminRoutes::fleet_facts(HostFacts& facts, const std::vector<std::string>* names) const {
    if (!d_.config_.peers) return;
    const auto fleet = d_.outside_.fleet();
    for (const auto* by_cluster : {&fleet->failed, &fleet->kept, &fleet->disputed}) {
        for (const auto& [cluster, endpoints] : *by_cluster) {
            for (const auto& [host, ep] : endpoints) {
                if (names && !std::binary_search(names->begin(), names->end(), host)) continue;
                if (!facts.outside.count({cluster, host, ep}))
                    facts.outside.emplace(std::tuple{cluster, host, ep}, fleet_json(cluster, host, ep));
            }
        }
    }
}

namespace {
// With peers: this instance's outside probes and the fleet's verdict, in counts.
json outside_summary(const OutsideProbes& outside) {
    const auto fleet = outside.fleet();
    auto count = [](const sync::EndpointsByCluster& by_cluster) {
        size_t n = 0;
        for (const auto& [c, set] : by_cluster) n += set.size();
        return n;
    };
    return {{"targets", outside.targets().size()}, {"intervalStretch", outside.stretch()},
            {"failed", count(fleet->failed)},      {"kept", count(fleet->kept)},
            {"disputed", count(fleet->disputed)},  {"cutOff", fleet->cut_off}};
}
}  // namespace

std::string AdminRoutes::summary_json() const {
    uint64_t now = sync::now_ms();
    const sync::OverrideMap in_force = d_.sync_->overrides();
    const GlobalView view = d_.sync_->view();
    auto snap = d_.publisher_.current();
    size_t entries = 0, endpoints = 0, down = 0;
    json clusters = clusters_json(view, d_.sync_->instances(), in_force, now);
    // Each cluster's counts, made when its view was merged (a view made otherwise is counted here).
    std::vector<std::shared_ptr<const HostTally>> tallies;
    std::vector<const HostTally*> of;
    for (size_t i = 0; i < view.size(); ++i) {  // clusters_json keeps the view's order
        const auto& t =
            tallies.emplace_back(view[i].tally ? view[i].tally : std::make_shared<HostTally>(view[i].hosts));
        of.push_back(t.get());
        const size_t all = t->endpoints(), up = t->healthy();
        entries += view[i].hosts.size(), endpoints += all, down += all - up;
        if (i < clusters.size()) clusters[i]["endpoints"] = {{"up", up}, {"all", all}};  // the page's colours
    }
    const size_t hosts = HostTally::distinct(of);
    json out{{"cluster", d_.config_.cluster.id},
             {"instance", d_.config_.cluster.instance},
             {"serial", snap ? snap->serial : 0},
             {"ready", d_.ready()},
             {"peers", peers_json(*d_.sync_, now)},
             {"clusters", clusters},
             {"dnssec", d_.keys_.json_of(*d_.sync_)},
             {"counts",
              {{"hosts", hosts},
               {"entries", entries},
               {"endpoints", endpoints},
               {"unhealthyEndpoints", down},
               {"overrides", in_force.size()}}}};
    if (d_.kube_) out["kubernetes"] = d_.kube_->json_of(now);
    if (d_.config_.peers) out["outside"] = outside_summary(d_.outside_);
    if (auto c = d_.sync_->identity_conflict(); c.last_ms && now - std::min(now, c.last_ms) < sync::kConflictShownMs) {
        out["identityConflict"] = {{"where", c.where}, {"lastMsAgo", now - std::min(now, c.last_ms)}};
    }
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// GET /v1/hosts?limit=N&cursor=C&prefix=P&unhealthy=1&overridden=1&cluster=ID&source=S: the hosts after C (a
// name: the last of the previous page) by name that pass every filter given, at most N (100; up to 1000),
// each as /v1/state shows it, one a line; "next" is the cursor of the page after, or null at the end.
admin::Response AdminRoutes::hosts_route(const std::string& query) const {
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
    // "file", or a record's "dnsrecord:namespace/name": hosts from the file are those with no record.
    const bool want_file = source == "file";
    const std::string record = source.rfind("dnsrecord:", 0) == 0 ? source.substr(10) : "";
    HostFacts facts = host_facts({});
    const GlobalView view = d_.sync_->view();
    auto passes = [&](const HostEntries& entries) {
        bool in_cluster = cluster.empty(), sick = !want_unhealthy, overridden = !want_overridden;
        bool from_source = source.empty();
        for (const auto& [cv, h] : entries) {
            in_cluster |= cv->id == cluster;
            sick |= unhealthy(*h);
            for (const auto& e : h->endpoints) {
                overridden |= sync::override_for(facts.in_force, cv->id, e.target) != nullptr;
            }
            if (!from_source && cv->id == facts.self) {
                auto it = facts.sources->find(h->host.str());
                from_source =
                    want_file ? it == facts.sources->end() : it != facts.sources->end() && it->second == record;
            }
        }
        return in_cluster && sick && overridden && from_source;
    };
    // The page's hosts first, then their probe results (one lookup each), then the JSON.
    std::vector<HostEntries> page;
    std::optional<std::string> next;
    HostWalk walk(view, cursor.empty() ? prefix : cursor, !cursor.empty());
    for (const HostEntries* entries = walk.next(); entries; entries = walk.next()) {
        const std::string name = entries->front().second->host.str();
        if (name.compare(0, prefix.size(), prefix) != 0) {
            if (name.compare(prefix) < 0) continue;  // before it: go on
            break;
        }
        if (!passes(*entries)) continue;
        if (page.size() == limit) {
            next = page.back().front().second->host.str();
            break;
        }
        page.push_back(*entries);
    }
    std::vector<std::string> names;
    names.reserve(page.size());
    for (const auto& entries : page) names.push_back(entries.front().second->host.str());
    facts.probes = d_.checker_->states_of(names);
    fleet_facts(facts, &names);  // (names: the walk's order, by name)
    r.content_type = "application/json";
    r.body = "{\"hosts\": [";
    for (size_t i = 0; i < page.size(); ++i) {
        r.body += i ? ",\n" : "\n";
        append_host_json(r.body, page[i], facts);
    }
    r.body += page.empty() ? "], \"next\": " : "\n], \"next\": ";
    r.body += next ? json(*next).dump(-1, ' ', false, json::error_handler_t::replace) : "null";
    r.body += "}\n";
    return r;
}

namespace {

// One of the kMaxStateStreams places, given back when the stream (or the request that failed to make one)
// lets go of it.
class StreamSlot {
public:
    explicit StreamSlot(std::shared_ptr<std::atomic<int>> streams) : streams_(std::move(streams)) {}
    ~StreamSlot() {
        if (streams_) streams_->fetch_sub(1);
    }
    StreamSlot(StreamSlot&& o) noexcept : streams_(std::move(o.streams_)) {}
    StreamSlot(const StreamSlot&) = delete;
    StreamSlot& operator=(const StreamSlot&) = delete;
    StreamSlot& operator=(StreamSlot&&) = delete;

private:
    std::shared_ptr<std::atomic<int>> streams_;
};

// /v1/state's body, piece by piece on the admin thread: its head (this cluster, peers, clusters, overrides,
// Kubernetes), then every host, one a line, from a view taken on the control thread.
class StateStream {
public:
    StateStream(std::string head, GlobalView view, HostFacts facts, StreamSlot slot)
        : head_(std::move(head)), view_(std::move(view)), facts_(std::move(facts)), slot_(std::move(slot)) {}
    StateStream(const StateStream&) = delete;
    StateStream& operator=(const StateStream&) = delete;

    bool next(std::string& out) {
        if (!head_.empty()) {
            out = std::move(head_);
            head_.clear();
            out += "\"hosts\": [";
        }
        while (out.size() < kStreamPiece) {
            const HostEntries* entries = walk_.next();
            if (!entries) {
                out += hosts_ ? "\n]}\n" : "]}\n";
                return false;
            }
            out += hosts_++ ? ",\n" : "\n";
            append_host_json(out, *entries, facts_);
        }
        return true;
    }

private:
    std::string head_;
    GlobalView view_;  // the lists are shared with the sync store's: nothing copied
    HostFacts facts_;
    HostWalk walk_{view_, "", false};
    size_t hosts_ = 0;
    StreamSlot slot_;
};

}  // namespace

admin::Response AdminRoutes::state_route() {
    admin::Response r;
    if (state_streams_->fetch_add(1) >= kMaxStateStreams) {
        state_streams_->fetch_sub(1);
        r.status = 503;
        r.headers.emplace_back("Retry-After", "1");
        r.body = "already streaming " + std::to_string(kMaxStateStreams) +
                 " copies of /v1/state; try again, or use /v1/summary and /v1/hosts\n";
        return r;
    }
    StreamSlot slot(state_streams_);
    uint64_t now = sync::now_ms();
    GlobalView view = d_.sync_->view();
    HostFacts facts = host_facts(d_.checker_->states());
    fleet_facts(facts, nullptr);
    json overrides = json::object();
    for (const auto& [target, e] : facts.in_force) overrides[target] = sync::state_name(e.state);
    auto snap = d_.publisher_.current();
    json head{{"cluster", d_.config_.cluster.id},
              {"instance", d_.config_.cluster.instance},
              {"serial", snap ? snap->serial : 0},
              {"ready", d_.ready()},
              {"peers", peers_json(*d_.sync_, now)},
              {"clusters", clusters_json(view, d_.sync_->instances(), facts.in_force, now)},
              {"overrides", overrides},
              {"dnssec", d_.keys_.json_of(*d_.sync_)}};
    if (d_.kube_) head["kubernetes"] = d_.kube_->json_of(now);
    std::string text = head.dump(-1, ' ', false, json::error_handler_t::replace);
    text.back() = ',';  // the object stays open for "hosts"
    auto stream = std::make_shared<StateStream>(std::move(text), std::move(view), std::move(facts), std::move(slot));
    r.content_type = "application/json";
    r.stream = [stream](std::string& out) { return stream->next(out); };
    return r;
}

}  // namespace glbd
