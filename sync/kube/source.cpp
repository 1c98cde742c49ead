#include "sync/kube/source.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "sync/kube/records.hpp"

namespace glbd::kube {

namespace {
constexpr const char* kResource = "/apis/kuadrant.io/v1alpha1";
}

std::string coredns_selector(const std::vector<conf::Zone>& zones) {
    if (zones.size() == 1) return "kuadrant.io/coredns-zone-name=" + zones[0].origin;
    std::string s = "kuadrant.io/coredns-zone-name in (";
    for (size_t i = 0; i < zones.size(); ++i) s += (i ? "," : "") + zones[i].origin;
    return s + ")";
}

Source::Source(const conf::Config& config, std::function<void()> on_change) : zones_(config.zones) {
    const conf::Kubernetes& k = *config.kubernetes;
    ApiAccess access = ApiAccess::from(k);
    if (k.mode == conf::Kubernetes::Mode::coredns) selector_ = coredns_selector(zones_);
    if (k.namespaces.empty()) {
        watchers_.push_back(std::make_unique<Watcher>(access, std::string(kResource) + "/dnsrecords", selector_, on_change));
    }
    for (const auto& ns : k.namespaces) {
        watchers_.push_back(std::make_unique<Watcher>(access, std::string(kResource) + "/namespaces/" + ns + "/dnsrecords",
                                                      selector_, on_change));
    }
}

Source::~Source() { stop(); }

void Source::start() {
    for (auto& w : watchers_) {
        spdlog::info("kubernetes: watching {}{}", w->describe(), selector_.empty() ? "" : " (" + selector_ + ")");
        w->start();
    }
}

void Source::stop() {
    for (auto& w : watchers_) w->stop();
}

void Source::set_zones(std::vector<conf::Zone> zones) { zones_ = std::move(zones); }

Source::Collected Source::collect() {
    Collected c;
    std::set<std::string> still_bad;
    for (auto& w : watchers_) {
        for (const auto& [key, obj] : w->objects()) {
            Mapped m = map_record(obj, zones_);
            if (m.out_of_zone) {
                ++c.other_zone;
                continue;
            }
            if (!m.error.empty()) {
                ++c.invalid;
                std::string rv = obj.contains("metadata") && obj["metadata"].is_object() && obj["metadata"].contains("resourceVersion")
                                     ? obj["metadata"]["resourceVersion"].dump()
                                     : "";
                std::string id = key + "@" + rv;
                still_bad.insert(id);
                if (logged_.insert(id).second) spdlog::warn("kubernetes: DNSRecord {} skipped: {}", key, m.error);
                continue;
            }
            ++c.valid;
            for (auto& h : m.hosts) {
                c.source.emplace(h.name, key);
                c.hosts.push_back(std::move(h));
            }
        }
    }
    // Forget what is no longer there, so that the set stays as small as the records.
    std::erase_if(logged_, [&](const std::string& id) { return !still_bad.count(id); });
    std::stable_sort(c.hosts.begin(), c.hosts.end(), [](const conf::Host& a, const conf::Host& b) { return a.name < b.name; });
    return c;
}

Source::Stats Source::stats() const {
    Stats s;
    for (const auto& w : watchers_) {
        const WatchStats& ws = w->stats();
        s.events += ws.events, s.relists += ws.relists, s.errors += ws.errors, s.bad_events += ws.bad_events;
        s.last_event_ms = std::max<uint64_t>(s.last_event_ms, ws.last_event_ms);
        s.synced = s.synced && ws.synced;
    }
    return s;
}

}  // namespace glbd::kube
