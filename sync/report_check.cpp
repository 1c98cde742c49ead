// sync/report_check — check_report (sync/state.hpp): a peer's report, or a stateDir's, read by the config's rules
// and put in the order the store keeps, before it may enter the store.
#include <algorithm>
#include <map>
#include <unordered_set>

#include "resolver/model/names.hpp"
#include "resolver/wire/consts.hpp"
#include "sync/members.hpp"
#include "sync/state.hpp"

namespace glbd::sync {

namespace {

// What is wrong with one host of a report by the config's rules (and its check's number among the report's
// `checks`), or "".
std::string host_problem(const HostEntry& h, size_t checks) {
    using L = ReportLimits;
    if (!model::is_lb_host_name(h.host)) return "bad host name";
    if (h.check > checks) return h.host + ": check " + std::to_string(h.check) + " is not in the report";
    if (!h.entry.empty() && !model::is_instance_name(h.entry)) return h.host + ": bad entry name";
    if (h.endpoints.size() > L::kMaxEndpoints) {
        return h.host + ": " + std::to_string(h.endpoints.size()) + " endpoints (at most " +
               std::to_string(L::kMaxEndpoints) + ")";
    }
    if (h.load_balancing && !h.load_balancing->geo.empty() && !conf::is_geo_code(h.load_balancing->geo) &&
        !model::is_custom_geo_code(h.load_balancing->geo)) {
        return h.host + ": bad geo code";
    }
    return {};  // (not "": no text to copy, once per host of every report)
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

// What is wrong with a report's health checks and outside verdicts (refusing it whole), or ""; the verdicts'
// failures put in order, each once: readers search them.
std::string health_problem(InstanceState& s) {
    using L = ReportLimits;
    if (s.checks.size() > L::kMaxChecks) return "too many health checks";
    for (const SharedCheck& c : s.checks) {  // as parse_check reads them: a state made in memory is checked too
        SharedCheck again;
        std::string why;
        if (!c.check.headers.empty()) return "a health check with headers";
        if (!parse_check(format_check(c), again, why) || !(again == c)) return "a bad health check: " + why;
    }
    size_t failing = 0;
    for (auto& [cluster, v] : s.outside) {
        std::sort(v.failing.begin(), v.failing.end());
        v.failing.erase(std::unique(v.failing.begin(), v.failing.end()), v.failing.end());
        if (!model::is_cluster_id(cluster)) return "outside verdicts of a bad cluster id";
        if (v.failing.size() > v.probed) return "more outside failures of " + cluster + " than it probed";
        failing += v.failing.size();
        for (const auto& [host, ep] : v.failing) {
            if (!model::is_lb_host_name(host)) return "an outside failure of a bad host name";
        }
    }
    return failing > L::kMaxOutsideFailing ? "too many outside failures" : "";
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
        std::string why = host_problem(hosts[i], s.checks.size());
        const HostEntry& h = hosts[i];
        if (why.empty() && !ordered &&
            !(h.entry.empty() ? seen.insert(h.host).second
                              : seen_entries.insert(h.host.str().append(1, '\0').append(h.entry.view())).second)) {
            why = h.host.str().append(": entry \"").append(h.entry.view()).append("\" given twice");
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

// A report as the store keeps it, whatever order its sender wrote: hosts in order (order_entries) and each
// host's endpoints given once (a target given twice is healthy when at least half its listings say so, as
// replicas vote), so that its cluster's view shares the report's hosts instead of merging a copy of them (at
// 10,000 hosts x 20 clusters, a report in its config's order cost 55 MB that way, d493dfd).
void put_in_order(InstanceState& s) {
    order_entries(s.hosts);
    const std::vector<HostEntry>& hosts = s.hosts;
    if (std::none_of(hosts.begin(), hosts.end(), [](const HostEntry& h) { return targets_repeat(h.endpoints); }))
        return;
    for (HostEntry& h : s.hosts) {
        if (!targets_repeat(h.endpoints)) continue;
        std::vector<EndpointState> once;
        std::map<Endpoint, std::pair<unsigned, unsigned>> votes;  // healthy, total
        for (const auto& ep : h.endpoints) {
            auto [v, first] = votes.try_emplace(ep.target, 0u, 0u);
            if (first) once.push_back(ep);
            v->second.first += ep.healthy ? 1 : 0;
            v->second.second += 1;
        }
        for (auto& ep : once) ep.healthy = votes[ep.target].first * 2 >= votes[ep.target].second;
        h.endpoints = std::move(once);
    }
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
    if (std::string why = health_problem(s); !why.empty()) return refuse(why);
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
    put_in_order(s);
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

}  // namespace glbd::sync
