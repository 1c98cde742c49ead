#include "sync/state.hpp"

#include "conf/config.hpp"
#include "resolver/base/address.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/consts.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_set>

namespace glbd::sync {

Store::Merge Store::merge(const InstanceState& report, uint64_t age_ms, uint64_t now_ms) {
    Merge m = merge_one(report, age_ms, now_ms);
    if (m.data_changed && !report.forgotten.empty()) bury(report.forgotten);
    return m;
}

Store::Merge Store::merge_one(const InstanceState& report, uint64_t age_ms, uint64_t now_ms) {
    Merge m;
    std::string origin = report.origin();
    if (origin == own_ || covered(report)) return m;  // nobody speaks for us but us; a forgotten life stays so
    uint64_t heard_at = now_ms > age_ms ? now_ms - age_ms : 0;
    auto [it, fresh] = known_.try_emplace(origin);
    Known& k = it->second;
    if (fresh) {
        k.state = report;
        k.last_heard_ms = heard_at;
        k.changed_generation = ++generation_;
        m.data_changed = m.heard = true;
        return m;
    }
    if (report.incarnation < k.state.incarnation) return m;  // a report from the origin's earlier life
    if (report.incarnation > k.state.incarnation) {
        // The origin restarted (perhaps with its clock set back): its new life replaces the old one whole.
        k.state = report;
        k.last_heard_ms = std::max(k.last_heard_ms, heard_at);
        k.changed_generation = ++generation_;
        m.data_changed = m.heard = true;
        return m;
    }
    if (report.version > k.state.version) {
        uint64_t hb = k.state.heartbeat;
        k.state = report;
        k.state.heartbeat = hb;
        k.changed_generation = ++generation_;
        m.data_changed = true;
    }
    if (report.heartbeat > k.state.heartbeat) {
        k.state.heartbeat = report.heartbeat;
        if (heard_at > k.last_heard_ms) {
            k.last_heard_ms = heard_at;
            m.heard = true;
        }
    }
    return m;
}

bool Store::merge_heartbeat(const InstanceState& report, uint64_t age_ms, uint64_t now_ms, bool* heard) {
    auto it = known_.find(report.origin());
    if (report.origin() == own_ || covered(report)) return false;
    if (it == known_.end()) return true;  // never seen: needs its data
    Known& k = it->second;
    if (report.incarnation != k.state.incarnation) return report.incarnation > k.state.incarnation;
    if (report.heartbeat > k.state.heartbeat) {
        k.state.heartbeat = report.heartbeat;
        uint64_t heard_at = now_ms > age_ms ? now_ms - age_ms : 0;
        if (heard_at > k.last_heard_ms) {
            k.last_heard_ms = heard_at;
            if (heard) *heard = true;
        }
    }
    return report.version > k.state.version;
}

void Store::set_own(const InstanceState& own, uint64_t now_ms) {
    own_ = own.origin();
    Known& k = known_[own_];
    k.state = own;
    k.last_heard_ms = now_ms;
    k.changed_generation = ++generation_;
    if (!own.forgotten.empty()) bury(own.forgotten);
}

void Store::load(InstanceState&& s, uint64_t now_ms) {
    if (s.origin() == own_ || covered(s)) return;
    Known& k = known_[s.origin()];
    if (k.state.version > s.version) return;
    k.changed_generation = ++generation_;
    k.state = std::move(s);
    k.last_heard_ms = now_ms;  // a loaded cluster counts as just heard: it gets a full deadAfter
    if (!k.state.forgotten.empty()) bury(ForgottenMap(k.state.forgotten));  // (a copy: bury may erase k)
}

size_t Store::share_names(InstanceState& report) const {
    if (report.hosts.empty()) return 0;
    HostList names = names_for(report.origin());
    return glbd::share_names(report.hosts, names);
}

HostList Store::names_for(const std::string& origin) const {
    if (auto it = known_.find(origin); it != known_.end() && !it->second.state.hosts.empty()) {
        return it->second.state.hosts;
    }
    const HostList* most = nullptr;
    for (const auto& [o, k] : known_) {
        if (!most || k.state.hosts.size() > most->size()) most = &k.state.hosts;
    }
    return most ? *most : HostList{};
}

bool Store::alive(const Known& k, uint64_t now_ms, uint64_t dead_after_ms) const {
    return k.state.origin() == own_ || now_ms <= k.last_heard_ms + dead_after_ms + k.grace_ms;
}

void Store::set_grace(const std::string& origin, uint64_t grace_ms) {
    if (auto it = known_.find(origin); it != known_.end()) it->second.grace_ms = grace_ms;
}

OverrideMap Store::overrides() const {
    OverrideMap merged;
    for (const auto& [origin, k] : known_) {
        for (const auto& [target, e] : k.state.overrides) {
            auto& m = merged[target];
            if (e.at_ms >= m.at_ms) m = e;
        }
    }
    for (auto it = merged.begin(); it != merged.end();) {
        it = it->second.state == OverrideState::automatic ? merged.erase(it) : std::next(it);
    }
    return merged;
}

std::optional<ActiveGroups> Store::admin_groups() const {
    std::optional<ActiveGroups> latest;
    for (const auto& [origin, k] : known_) {
        const ActiveGroups& a = k.state.active_groups;
        if (a.at_ms == 0) continue;
        // The latest wins; at the same time a clear, then the greater set, so that every server picks the same.
        if (!latest ||
            std::tie(a.at_ms, a.cleared, a.groups) > std::tie(latest->at_ms, latest->cleared, latest->groups))
            latest = a;
    }
    return latest;
}

namespace {

// The reports a cluster's view is made from: its live instances' (all when none is), the newest first.
std::vector<const Known*> newest_first(const std::vector<const Known*>& instances,
                                       const std::vector<const Known*>& live) {
    std::vector<const Known*> use = live.empty() ? instances : live;
    std::sort(use.begin(), use.end(),
              [](const Known* a, const Known* b) { return a->state.version > b->state.version; });
    return use;
}

// One cluster's view from its reports (`use`, newest_first): host fields from the newest; an endpoint healthy
// when at least half of the replicas that report it say so. Then the overrides naming the cluster
// (`overrides`: its entries of the map in force, by target).
ClusterView merge_cluster(const std::string& id, bool alive, const std::vector<const Known*>& use,
                          const ClusterOverrides& overrides, bool standby) {
    ClusterView cv{id, alive, {}, std::nullopt};
    cv.standby = standby;
    if (!use.empty()) {
        cv.location = use.front()->state.location, cv.records = use.front()->state.records;
        cv.group = use.front()->state.group;
    }
    // One report in order, with no entry or endpoint twice (as a glbd sends it): a copy. The rest (two
    // replicas, or a report out of order) is merged below.
    bool plain = use.size() == 1;
    if (plain) {
        const auto& hosts = use.front()->state.hosts;
        plain = strictly_ordered(hosts) && std::none_of(hosts.begin(), hosts.end(),
                                                        [](const HostEntry& h) { return targets_repeat(h.endpoints); });
        if (plain) cv.hosts = hosts;
    }
    if (!plain) {
        std::map<std::pair<SharedText, SharedText>, size_t> host_index;        // (name, entry): copies of the texts
        std::vector<std::map<Endpoint, std::pair<unsigned, unsigned>>> votes;  // healthy, total
        for (const Known* k : use) {
            for (const auto& h : k->state.hosts) {
                auto [hit, added] = host_index.try_emplace(std::pair{h.host, h.entry}, cv.hosts.size());
                if (added) {
                    cv.hosts.push_back(HostEntry{h.host, h.ttl, h.load_balancing, {}, h.entry});
                    votes.emplace_back();
                }
                HostEntry& merged = cv.hosts[hit->second];
                auto& v = votes[hit->second];
                for (const auto& ep : h.endpoints) {
                    auto [vit, first] = v.try_emplace(ep.target, 0u, 0u);
                    if (first) merged.endpoints.push_back(EndpointState{ep.target, true});
                    vit->second.first += ep.healthy ? 1 : 0;
                    vit->second.second += 1;
                }
            }
        }
        for (size_t i = 0; i < cv.hosts.size(); ++i) {
            for (auto& ep : cv.hosts[i].endpoints) {
                auto [healthy, total] = votes[i][ep.target];
                ep.healthy = healthy * 2 >= total;
            }
        }
    }
    order_entries(cv.hosts);  // a report out of order (an older or a hostile peer) is put in order here
    apply_overrides(cv, overrides);
    cv.tally = std::make_shared<const HostTally>(cv.hosts);
    return cv;
}

}  // namespace

std::map<std::string, Store::ClusterReports> Store::by_cluster(uint64_t now_ms, uint64_t dead_after_ms) const {
    std::map<std::string, ClusterReports> out;
    for (const auto& [origin, k] : known_) {
        ClusterReports& c = out[k.state.cluster];
        c.instances.push_back(&k);
        c.alive.push_back(alive(k, now_ms, dead_after_ms));
    }
    for (auto& [id, c] : out) {
        std::vector<const Known*> live;
        for (size_t i = 0; i < c.instances.size(); ++i) {
            if (c.alive[i]) live.push_back(c.instances[i]);
        }
        c.use = newest_first(c.instances, live);
    }
    return out;
}

std::optional<GroupsInForce> Store::in_force(const std::map<std::string, ClusterReports>& clusters) const {
    GroupsInForce out;
    for (const auto& [id, c] : clusters) {
        if (c.use.empty()) continue;
        for (const ZoneRecord& z : c.use.front()->state.records) {
            if (z.type != wire::type::TXT ||
                std::find(groups_names_.begin(), groups_names_.end(), z.name) == groups_names_.end())
                continue;
            std::string text;
            for (const auto& part : z.data) text += part;
            out.records.emplace_back(id, text);
            for (auto& g : parse_active_groups(text)) out.groups.push_back(std::move(g));
        }
    }
    if (std::optional<ActiveGroups> admin = admin_groups(); admin && !admin->cleared) {
        out.groups = admin->groups, out.pinned = true, out.at_ms = admin->at_ms;  // the records wait
        return out;
    }
    if (out.records.empty()) return std::nullopt;  // no set anywhere: every group active
    std::sort(out.groups.begin(), out.groups.end());
    out.groups.erase(std::unique(out.groups.begin(), out.groups.end()), out.groups.end());
    return out;
}

std::optional<GroupsInForce> Store::groups_in_force(uint64_t now_ms, uint64_t dead_after_ms) const {
    return in_force(by_cluster(now_ms, dead_after_ms));
}

SharedView Store::shared_view(uint64_t now_ms, uint64_t dead_after_ms) const {
    std::map<std::string, ClusterReports> clusters = by_cluster(now_ms, dead_after_ms);
    OverrideMap overrides_in_force =
        overrides();  // "auto" entries are gone: what is left names a cluster or an endpoint
    std::optional<GroupsInForce> active = in_force(clusters);
    SharedView out;
    std::map<std::string, Cached> next;
    for (auto& [id, reports] : clusters) {
        ClusterKey key;
        bool any_alive = false;
        for (size_t i = 0; i < reports.instances.size(); ++i) {
            const Known* k = reports.instances[i];
            any_alive = any_alive || reports.alive[i];
            key.instances.emplace_back(k->state.origin(), k->changed_generation, reports.alive[i]);
        }
        key.overrides = overrides_naming(overrides_in_force, id);
        const std::vector<const Known*>& use = reports.use;
        key.standby = stands_by(use.empty() ? std::string() : use.front()->state.group, active);
        auto cached = cache_.find(id);
        std::shared_ptr<const ClusterView> view;
        if (cached != cache_.end() && cached->second.key == key) {
            view = cached->second.view;
        } else {
            view = std::make_shared<const ClusterView>(merge_cluster(id, any_alive, use, key.overrides, key.standby));
        }
        out.push_back(view);
        next.emplace(id, Cached{std::move(key), std::move(view)});
    }
    cache_ = std::move(next);
    return out;
}

GlobalView Store::view(uint64_t now_ms, uint64_t dead_after_ms) const {
    GlobalView out;
    for (const auto& c : shared_view(now_ms, dead_after_ms)) out.push_back(*c);
    return out;
}

const OverrideEntry* override_for(const OverrideMap& overrides, const std::string& cluster, const Endpoint& target) {
    auto it = overrides.find(cluster + "/" + target.str());
    if (it == overrides.end() || it->second.state == OverrideState::automatic) it = overrides.find(cluster);
    return it != overrides.end() && it->second.state != OverrideState::automatic ? &it->second : nullptr;
}

ClusterOverrides overrides_naming(const OverrideMap& overrides, const std::string& id) {
    ClusterOverrides out;
    for (auto it = overrides.lower_bound(id); it != overrides.end() && it->first.compare(0, id.size(), id) == 0; ++it) {
        bool names = it->first.size() == id.size() || it->first[id.size()] == '/';
        if (names && it->second.state != OverrideState::automatic) out.emplace_back(*it);
    }
    return out;
}

void apply_overrides(ClusterView& cluster, const ClusterOverrides& overrides) {
    if (overrides.empty()) return;
    // The cluster's own override, and its endpoints' by target (an endpoint's beats the cluster's).
    const OverrideEntry* whole = nullptr;
    std::map<Endpoint, OverrideState> by_target;
    for (const auto& [target, e] : overrides) {
        if (target.size() == cluster.id.size()) {
            whole = &e;
        } else if (auto ep = Endpoint::parse(std::string_view(target).substr(cluster.id.size() + 1))) {
            by_target[*ep] = e.state;
        }
    }
    for (auto& h : cluster.hosts) {
        for (auto& ep : h.endpoints) {
            auto it = by_target.find(ep.target);
            if (it != by_target.end()) {
                ep.healthy = it->second == OverrideState::up;
            } else if (whole) {
                ep.healthy = whole->state == OverrideState::up;
            }
        }
    }
}

bool is_override_target(std::string_view target) {
    auto slash = target.find('/');
    if (slash == std::string_view::npos) return model::is_cluster_id(target);
    return model::is_cluster_id(target.substr(0, slash)) && model::is_endpoint(target.substr(slash + 1));
}

bool Store::make_room(const std::string& origin, size_t max, uint64_t now_ms, uint64_t dead_after_ms,
                      std::string* evicted) {
    if (known_.count(origin) || known_.size() < max) return true;
    auto oldest = known_.end();
    for (auto it = known_.begin(); it != known_.end(); ++it) {
        if (alive(it->second, now_ms, dead_after_ms)) continue;
        if (oldest == known_.end() || it->second.last_heard_ms < oldest->second.last_heard_ms) oldest = it;
    }
    if (oldest == known_.end()) return false;
    if (evicted) *evicted = oldest->first;
    known_.erase(oldest);
    ++generation_;
    return true;
}

std::vector<std::string> Store::forget(uint64_t now_ms, uint64_t forget_after_ms) {
    std::vector<std::string> gone;
    for (auto it = known_.begin(); it != known_.end();) {
        if (it->first != own_ && now_ms > forget_after_ms && it->second.last_heard_ms < now_ms - forget_after_ms) {
            gone.push_back(it->first);
            it = known_.erase(it);
            ++generation_;
        } else {
            ++it;
        }
    }
    if (now_ms > forget_after_ms) {
        std::erase_if(tombstones_, [&](const auto& t) { return t.second.at_ms < now_ms - forget_after_ms; });
    }
    return gone;
}

Status set_override(OverrideMap& map, const std::string& target, const std::string& state, uint64_t now_ms) {
    if (!is_override_target(target)) return Err{"target must be CLUSTER or CLUSTER/ENDPOINT, got \"" + target + "\""};
    OverrideState s;
    if (state == "down") {
        s = OverrideState::down;
    } else if (state == "up") {
        s = OverrideState::up;
    } else if (state == "auto") {
        s = OverrideState::automatic;
    } else {
        return Err{"state must be down, up or auto, got \"" + state + "\""};
    }
    auto& e = map[target];
    e = OverrideEntry{s, std::max(now_ms, e.at_ms + 1)};
    return ok();
}

const char* state_name(OverrideState s) {
    return s == OverrideState::up ? "up" : s == OverrideState::down ? "down" : "auto";
}

std::string format_location(const model::Coordinates& c) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.4f,%.4f", static_cast<double>(c.lat), static_cast<double>(c.lon));
    return buf;
}

std::optional<model::Coordinates> parse_location(std::string_view v) {
    auto comma = v.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    double lat = 0, lon = 0;
    auto a = std::from_chars(v.data(), v.data() + comma, lat);
    auto b = std::from_chars(v.data() + comma + 1, v.data() + v.size(), lon);
    if (a.ec != std::errc() || a.ptr != v.data() + comma || b.ec != std::errc() || b.ptr != v.data() + v.size())
        return std::nullopt;
    if (!(lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180)) return std::nullopt;
    return model::Coordinates{static_cast<float>(lat), static_cast<float>(lon)};
}

}  // namespace glbd::sync
