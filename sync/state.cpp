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

// Whether a target appears twice among `eps`: pairwise for a few, hashed beyond (O(n), not O(n^2), for a
// host of thousands).
bool targets_repeat(const std::vector<EndpointState>& eps) {
    constexpr size_t kPairwiseUpTo = 16;
    if (eps.size() <= kPairwiseUpTo) {
        for (size_t i = 0; i < eps.size(); ++i) {
            for (size_t j = 0; j < i; ++j) {
                if (eps[i].target == eps[j].target) return true;
            }
        }
        return false;
    }
    std::unordered_set<Endpoint> seen;
    seen.reserve(eps.size());
    for (const auto& ep : eps) {
        if (!seen.insert(ep.target).second) return true;
    }
    return false;
}

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
        std::map<std::string, size_t> host_index;
        std::vector<std::map<Endpoint, std::pair<unsigned, unsigned>>> votes;  // healthy, total
        for (const Known* k : use) {
            for (const auto& h : k->state.hosts) {
                auto [hit, added] = host_index.try_emplace(h.host + '\0' + h.entry, cv.hosts.size());
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

namespace {

// What is wrong with one host of a report by the config's rules, or "".
std::string host_problem(const HostEntry& h) {
    using L = ReportLimits;
    if (!model::is_lb_host_name(h.host)) return "bad host name";
    if (!h.entry.empty() && !model::is_instance_name(h.entry)) return h.host + ": bad entry name";
    if (h.endpoints.size() > L::kMaxEndpoints) {
        return h.host + ": " + std::to_string(h.endpoints.size()) + " endpoints (at most " +
               std::to_string(L::kMaxEndpoints) + ")";
    }
    if (h.load_balancing && !h.load_balancing->geo.empty() && !conf::is_geo_code(h.load_balancing->geo) &&
        !model::is_custom_geo_code(h.load_balancing->geo)) {
        return h.host + ": bad geo code";
    }
    return "";
}

// What is wrong with one static record of a report, or "".
std::string record_problem(const ZoneRecord& z) {
    if (!model::is_lb_host_name(z.name)) return "bad record name";
    if (z.ttl > 2147483647) return z.name + ": bad TTL";
    bool wildcard = z.name.rfind("*.", 0) == 0;
    Address a;
    switch (z.type) {
        case wire::type::NS:
            if (wildcard || z.data.size() != 1 || !model::is_endpoint(z.data[0]) || Address::parse(z.data[0], a))
                return z.name + ": bad NS record";
            return "";
        case wire::type::A:
        case wire::type::AAAA:
            if (wildcard || z.data.size() != 1 || !Address::parse(z.data[0], a) ||
                (a.family == 4) != (z.type == wire::type::A) || a.str() != z.data[0])
                return z.name + ": bad address record";
            return "";
        case wire::type::TXT: {
            size_t bytes = 0;
            for (const auto& d : z.data) bytes += d.size() + 1;
            if (z.data.empty() || bytes > ReportLimits::kMaxRecordData) return z.name + ": bad TXT record";
            return "";
        }
        default: return z.name + ": record type " + std::to_string(z.type) + " is not published";
    }
}

// Leaves out the static records that break a rule, or pass the count; returns how many, `why` the first.
size_t drop_bad_records(InstanceState& s, std::string& why) {
    const std::vector<ZoneRecord>& list = s.records;
    std::vector<ZoneRecord> kept;
    size_t dropped = 0;
    for (const auto& z : list) {
        std::string problem = record_problem(z);
        if (problem.empty() && kept.size() >= ReportLimits::kMaxRecords) problem = "more than 10000 static records";
        if (problem.empty()) {
            kept.push_back(z);
        } else if (dropped++ == 0) {
            why = problem;
        }
    }
    if (dropped) s.records = std::move(kept);
    return dropped;
}

// The hosts of `s` that break a rule, or a (host, entry) given twice, left out (the rest of the report
// stands): how many, and the first one's problem.
size_t drop_bad_hosts(InstanceState& s, std::string& first_why) {
    const std::vector<HostEntry>& hosts = s.hosts;
    std::vector<size_t> bad;
    const bool ordered = strictly_ordered(hosts);  // then nothing is given twice; else the sets find what is
    std::unordered_set<std::string_view> seen;     // names given once, without an entry name
    std::unordered_set<std::string> seen_entries;  // name and entry, of the others
    if (!ordered) seen.reserve(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) {
        std::string why = host_problem(hosts[i]);
        const HostEntry& h = hosts[i];
        if (why.empty() && !ordered &&
            !(h.entry.empty() ? seen.insert(h.host).second : seen_entries.insert(h.host + '\0' + h.entry).second)) {
            why = hosts[i].host + ": entry \"" + hosts[i].entry + "\" given twice";
        }
        if (why.empty()) continue;
        if (bad.empty()) first_why = why;
        bad.push_back(i);
    }
    if (!bad.empty()) {
        std::vector<HostEntry> kept;
        kept.reserve(hosts.size() - bad.size());
        for (size_t i = 0, k = 0; i < hosts.size(); ++i) {
            if (k < bad.size() && bad[k] == i) {
                ++k;
                continue;
            }
            kept.push_back(hosts[i]);
        }
        s.hosts = std::move(kept);
    }
    return bad.size();
}

}  // namespace

CheckResult check_report(InstanceState& s, uint64_t now_ms, bool check_times) {
    using L = ReportLimits;
    CheckResult r;
    auto refuse = [&](std::string why) {
        r.error = std::move(why);
        return r;
    };
    if (!model::is_cluster_id(s.cluster)) return refuse("bad cluster name");
    if (!model::is_instance_name(s.instance)) return refuse("bad instance name");
    uint64_t horizon = check_times ? now_ms + L::kMaxSkewMs : UINT64_MAX;
    if (check_times && s.incarnation > now_ms / 1000 + L::kMaxSkewMs / 1000 + 1'000'000) {
        // Incarnations are start times in seconds, raised by one at each refutation.
        return refuse("incarnation " + std::to_string(s.incarnation) + " is far ahead of our clock");
    }
    if (s.version > horizon) {
        return refuse("version " + std::to_string(s.version) + " is ahead of our clock by more than 5 minutes");
    }
    if (s.heartbeat > horizon) {
        return refuse("heartbeat " + std::to_string(s.heartbeat) + " is ahead of our clock by more than 5 minutes");
    }
    if (s.hosts.size() > L::kMaxHosts) {
        return refuse(std::to_string(s.hosts.size()) + " hosts (at most " + std::to_string(L::kMaxHosts) + ")");
    }
    if (s.overrides.size() > L::kMaxOverrides) {
        return refuse(std::to_string(s.overrides.size()) + " overrides (at most " + std::to_string(L::kMaxOverrides) +
                      ")");
    }
    for (const auto& [target, e] : s.overrides) {
        if (!is_override_target(target)) return refuse("bad override target");
        if (e.at_ms > horizon) return refuse("override time ahead of our clock by more than 5 minutes");
    }
    if (s.forgotten.size() > L::kMaxForgotten) return refuse("too many forgotten instances");
    for (const auto& [origin, t] : s.forgotten) {
        const size_t slash = origin.find('/');
        if (slash == std::string::npos || !model::is_cluster_id(origin.substr(0, slash)) ||
            !model::is_instance_name(origin.substr(slash + 1)))
            return refuse("bad forgotten instance");
        if (t.at_ms > horizon) return refuse("forget time ahead of our clock by more than 5 minutes");
    }
    if (!s.group.empty() && !model::is_group_name(s.group)) return refuse("bad group name");
    if (s.reach.size() > kMaxReach) return refuse("more than " + std::to_string(kMaxReach) + " reach addresses");
    if (s.active_groups.groups.size() > L::kMaxGroups) return refuse("too many active groups");
    for (const auto& g : s.active_groups.groups) {
        if (!model::is_group_name(g)) return refuse("bad active group name");
    }
    if (!std::is_sorted(s.active_groups.groups.begin(), s.active_groups.groups.end()) ||
        std::adjacent_find(s.active_groups.groups.begin(), s.active_groups.groups.end()) !=
            s.active_groups.groups.end()) {
        return refuse("active groups not sorted or given twice");
    }
    if (s.active_groups.at_ms > horizon) return refuse("active groups time ahead of our clock by more than 5 minutes");
    if (s.active_groups.cleared && !s.active_groups.groups.empty())
        return refuse("active groups cleared and set at once");
    r.dropped = drop_bad_hosts(s, r.dropped_why);
    std::string why;
    if (size_t n = drop_bad_records(s, why)) {
        if (r.dropped == 0) r.dropped_why = why;
        r.dropped += n;
    }
    if (s.unreadable) {
        if (r.dropped == 0) r.dropped_why = s.unreadable_why;
        r.dropped += s.unreadable;
        s.unreadable = 0, s.unreadable_why.clear();
    }
    return r;
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
