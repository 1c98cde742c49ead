#include "server/app/kube_feed.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "resolver/base/metrics.hpp"
#include "resolver/wire/consts.hpp"

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

KubeFeed::KubeFeed(const conf::Config& config, uv_loop_t* loop, std::function<void()> changed,
                   std::function<void()> poll)
    : file_hosts_(config.hosts), changed_(std::move(changed)), poll_(std::move(poll)) {
    uv_timer_init(loop, &settle_);
    settle_.data = this;
    uv_timer_init(loop, &deletion_);
    deletion_.data = this;
    uv_async_init(loop, &wake_, [](uv_async_t* a) {
        auto* self = static_cast<KubeFeed*>(a->data);
        if (uv_is_active(reinterpret_cast<uv_handle_t*>(&self->settle_))) return;
        uv_timer_start(
            &self->settle_, [](uv_timer_t* t) { static_cast<KubeFeed*>(t->data)->changed_(); }, kSettleMs, 0);
    });
    wake_.data = this;
    source_ = std::make_unique<kube::Source>(config, [this] { uv_async_send(&wake_); });
}

void KubeFeed::seed(std::vector<HostEntry> hosts, RecordList records) {
    std::unordered_set<std::string_view> in_file;
    for (const auto& h : file_hosts_) in_file.insert(h.name);
    for (auto& h : hosts) {
        if (!in_file.count(h.host)) seed_.push_back(std::move(h));
    }
    seed_records_ = std::move(records);
}

void KubeFeed::merge(conf::Config& config, sync::Service& sync) {
    kube::Source::Collected c = source_->collect();
    records_ = zone_records(c.records);
    if (source_->stats().synced) {
        sync.set_records_group(c.group);
    } else {
        records_ = seed_records_;
        // Not listed yet (the API server may be down): what stateDir had of this cluster's records, without
        // their health checks, until the API says otherwise.
        for (const HostEntry& h : seed_) {
            std::vector<Endpoint> targets;
            for (const auto& ep : h.endpoints) targets.push_back(ep.target);
            model::Host host{h.host.str(), h.ttl, std::move(targets), h.load_balancing, std::nullopt, h.entry.str()};
            c.source.emplace(h.host.str(), "stateDir");
            c.hosts.push_back(std::move(host));
        }
    }
    std::unordered_set<std::string_view> in_file;
    for (const auto& h : file_hosts_) in_file.insert(h.name);
    std::vector<model::Host> hosts;
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
            ++shadowed_total_;
            spdlog::warn("kubernetes: {} (DNSRecord {}) is also in the config file: serving the file's", h.name,
                         c.source[h.name]);
        }
    }
    for (const auto& name : shadowed) c.source.erase(name);
    sources_ = std::make_shared<const HostSources>(std::move(c.source));
    shadowed_ = std::move(shadowed);
    config.hosts = std::move(hosts);
    c.hosts.clear();
    c.source.clear();
    counts_ = std::move(c);
}

void KubeFeed::reload(const conf::Config& next) {
    file_hosts_ = next.hosts;
    source_->set_zones(next.zones);
}

void KubeFeed::update_statuses(const health::States& health, const kube::Source::Fleet& fleet) {
    source_->update_statuses(health, fleet);
    bool waiting = uv_is_active(reinterpret_cast<uv_handle_t*>(&deletion_));
    if (source_->deletions_pending() && !waiting) {
        uv_timer_start(
            &deletion_, [](uv_timer_t* t) { static_cast<KubeFeed*>(t->data)->poll_(); }, kDeletionPollMs,
            kDeletionPollMs);
    } else if (!source_->deletions_pending() && waiting) {
        uv_timer_stop(&deletion_);
    }
}

void KubeFeed::start() { source_->start(); }
void KubeFeed::stop() { source_->stop(); }

void KubeFeed::close() {
    for (auto* h : {reinterpret_cast<uv_handle_t*>(&wake_), reinterpret_cast<uv_handle_t*>(&settle_),
                    reinterpret_cast<uv_handle_t*>(&deletion_)}) {
        uv_close(h, nullptr);
    }
}

nlohmann::json KubeFeed::json_of(uint64_t now) const {
    using nlohmann::json;
    auto ks = source_->stats();
    return {{"mode", source_->mode_name()},
            {"selector", source_->label_selector()},
            {"synced", ks.synced},
            {"events", ks.events},
            {"relists", ks.relists},
            {"errors", ks.errors},
            {"lastEventMsAgo", ks.last_event_ms ? json(now - std::min(now, ks.last_event_ms)) : json(nullptr)},
            {"records",
             {{"valid", counts_.valid},
              {"invalid", counts_.invalid},
              {"otherZone", counts_.other_zone},
              {"notInput", counts_.not_input},
              {"deleting", counts_.deleting}}},
            {"statusesWritten", source_->statuses_written()}};
}

void KubeFeed::write_metrics(metrics::Writer& m) const { kube::write_metrics(m, *source_, counts_, shadowed_total_); }

}  // namespace glbd
