// The daemon's Kubernetes part: DNSRecords (sync/kube) become this cluster's hosts beside the config file's.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "resolver/wire/consts.hpp"
#include "server/app/daemon.hpp"

namespace glbd {

namespace {

// The records' static records as zone data: one resource record each.
RecordList zone_records(const std::vector<kube::StaticRecord>& in) {
    std::vector<ZoneRecord> out;
    for (const auto& s : in) {
        auto type = wire::type_from_name(s.type);
        if (!type) continue;
        if (*type == wire::type::TXT) {
            out.push_back(ZoneRecord{s.name, *type, s.ttl, s.targets});
            continue;
        }
        for (const auto& t : s.targets) out.push_back(ZoneRecord{s.name, *type, s.ttl, {t}});
    }
    std::sort(out.begin(), out.end(), [](const ZoneRecord& a, const ZoneRecord& b) { return a.before(b); });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

void Daemon::merge_kubernetes() {
    kube::Source::Collected c = kube_->collect();
    kube_records_ = zone_records(c.records);
    if (kube_->stats().synced) {
        sync_->set_records_group(c.group);
    } else {
        kube_records_ = kube_seed_records_;
        // Not listed yet (the API server may be down): what stateDir had of this cluster's records, without
        // their health checks, until the API says otherwise.
        for (const HostEntry& h : kube_seed_) {
            std::vector<std::string> targets;
            for (const auto& ep : h.endpoints) targets.push_back(ep.target);
            conf::Host host{h.host, h.ttl, std::move(targets), h.load_balancing, std::nullopt, h.entry};
            c.source.emplace(h.host, "stateDir");
            c.hosts.push_back(std::move(host));
        }
    }
    std::unordered_set<std::string_view> in_file;
    for (const auto& h : file_hosts_) in_file.insert(h.name);
    std::vector<conf::Host> hosts;
    hosts.reserve(file_hosts_.size() + c.hosts.size());
    hosts = file_hosts_;
    std::set<std::string> shadowed;
    for (auto& h : c.hosts) {
        if (!in_file.count(h.name)) {
            hosts.push_back(std::move(h));
            continue;
        }
        // The file wins; said once per host while it lasts.
        if (shadowed.insert(h.name).second && !shadowed_.count(h.name)) {
            ++kube_shadowed_total_;
            spdlog::warn("kubernetes: {} (DNSRecord {}) is also in {}: serving the file's", h.name, c.source[h.name],
                         path_);
        }
    }
    for (const auto& name : shadowed) c.source.erase(name);
    host_source_ = std::make_shared<const HostSources>(std::move(c.source));
    shadowed_ = std::move(shadowed);
    config_.hosts = std::move(hosts);
    ++hosts_generation_;
    c.hosts.clear();
    c.source.clear();
    kube_counts_ = std::move(c);
}

void Daemon::apply_kubernetes() {
    if (!kube_ || !checker_) return;
    try {
        merge_kubernetes();
        start_checker(checker_->states());
        request_rebuild();
    } catch (const std::exception& e) {
        spdlog::error("kubernetes: cannot apply the records: {}", e.what());
    }
}

}  // namespace glbd
