#include "sync/kube/source.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "sync/kube/records.hpp"

namespace glbd::kube {

namespace {
constexpr const char* kResource = "/apis/kuadrant.io/v1alpha1";

// metadata.resourceVersion as text, whatever its JSON type ("" when absent).
std::string version_of(const nlohmann::json& obj) {
    auto md = obj.find("metadata");
    if (md == obj.end() || !md->is_object()) return "";
    auto rv = md->find("resourceVersion");
    return rv == md->end() ? "" : rv->dump();
}
}  // namespace

std::string coredns_selector(const std::vector<conf::Zone>& zones) {
    if (zones.size() == 1) return "kuadrant.io/coredns-zone-name=" + zones[0].origin;
    std::string s = "kuadrant.io/coredns-zone-name in (";
    for (size_t i = 0; i < zones.size(); ++i) s += (i ? "," : "") + zones[i].origin;
    return s + ")";
}

Source::Source(const conf::Config& config, const std::function<void()>& on_change) : zones_(config.zones) {
    const conf::Kubernetes& k = *config.kubernetes;
    ApiAccess access = ApiAccess::from(k);
    if (k.mode == conf::Kubernetes::Mode::coredns) selector_ = coredns_selector(zones_);
    controller_ = k.mode == conf::Kubernetes::Mode::controller;
    if (controller_) writer_ = std::make_unique<Watcher>(access, "", "", nullptr);
    if (k.namespaces.empty()) {
        watchers_.push_back(
            std::make_unique<Watcher>(access, std::string(kResource) + "/dnsrecords", selector_, on_change, k.resync));
    }
    for (const auto& ns : k.namespaces) {
        watchers_.push_back(std::make_unique<Watcher>(
            access, std::string(kResource) + "/namespaces/" + ns + "/dnsrecords", selector_, on_change, k.resync));
    }
}

Source::~Source() { stop(); }

void Source::start() {
    if (controller_) status_thread_ = std::thread([this] { write_statuses(); });
    for (auto& w : watchers_) {
        spdlog::info("kubernetes: watching {}{}", w->describe(), selector_.empty() ? "" : " (" + selector_ + ")");
        w->start();
    }
}

void Source::stop() {
    for (auto& w : watchers_) w->stop();
    if (status_thread_.joinable()) {
        {
            MutexLock lock(status_mu_);
            status_stop_ = true;
        }
        status_cv_.notify_all();
        status_thread_.join();
    }
}

namespace {

std::string now_rfc3339() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

nlohmann::json condition(const char* type, bool ok, const std::string& reason, const std::string& message,
                         int64_t generation) {
    return {{"type", type},       {"status", ok ? "True" : "False"},  {"reason", reason},
            {"message", message}, {"observedGeneration", generation}, {"lastTransitionTime", now_rfc3339()}};
}

// Whether the record already shows `want` (times aside). Fields of another type than expected (someone
// else wrote the status) make it "no".
bool shows(const nlohmann::json& obj, const nlohmann::json& want) try {
    auto st = obj.find("status");
    if (st == obj.end() || !st->is_object()) return false;
    if (st->value("observedGeneration", int64_t{-1}) != want["observedGeneration"].get<int64_t>()) return false;
    auto have = st->find("conditions");
    if (have == st->end() || !have->is_array()) return false;
    for (const auto& w : want["conditions"]) {
        bool found = false;
        for (const auto& h : *have) {
            if (!h.is_object()) continue;
            found |= h.value("type", "") == w["type"] && h.value("status", "") == w["status"] &&
                     h.value("reason", "") == w["reason"] && h.value("message", "") == w["message"] &&
                     h.value("observedGeneration", int64_t{-1}) == w["observedGeneration"];
        }
        if (!found) return false;
    }
    return true;
} catch (const nlohmann::json::exception&) {
    return false;
}

int64_t generation_of(const nlohmann::json& obj) {
    auto md = obj.find("metadata");
    if (md == obj.end() || !md->is_object()) return 0;
    auto g = md->find("generation");
    return g != md->end() && g->is_number_integer() ? g->get<int64_t>() : 0;
}

}  // namespace

void Source::update_statuses(const health::States& health) {
    if (!controller_) return;
    std::map<std::string, nlohmann::json> want;
    for (auto& w : watchers_) {
        for (const auto& [key, obj] : w->objects()) {
            Mapped m = map_record(obj, zones_);
            if (m.out_of_zone) continue;
            int64_t gen = generation_of(obj);
            nlohmann::json conds = nlohmann::json::array();
            if (m.error.empty()) {
                conds.push_back(condition("Ready", true, "ProviderSuccess", "served by glbd", gen));
            } else {
                conds.push_back(condition("Ready", false, "InvalidRecord", m.error, gen));
            }
            bool checked = m.error.empty() && !m.hosts.empty() && m.hosts[0].health_check;
            if (checked) {
                size_t healthy = 0, total = 0, known = 0;
                for (const auto& h : m.hosts) {
                    for (const auto& ep : h.endpoints) {
                        ++total;
                        auto it = health.find({h.name, ep});
                        if (it != health.end() && it->second.known) ++known, healthy += it->second.healthy;
                    }
                }
                if (known == 0)
                    conds.push_back(condition("Healthy", false, "Unknown", "no probe result yet", gen));
                else if (healthy == total)
                    conds.push_back(condition("Healthy", true, "AllChecksPassed", "all endpoints healthy", gen));
                else if (healthy > 0)
                    conds.push_back(condition(
                        "Healthy", true, "PartiallyHealthy",
                        std::to_string(healthy) + " of " + std::to_string(total) + " endpoints healthy", gen));
                else
                    conds.push_back(condition("Healthy", false, "HealthChecksFailed", "no endpoint healthy", gen));
            }
            nlohmann::json status = {{"observedGeneration", gen}, {"conditions", conds}};
            if (!shows(obj, status)) want[key] = std::move(status);
        }
    }
    if (want.empty()) return;
    {
        MutexLock lock(status_mu_);
        for (auto& [k, v] : want) pending_[k] = std::move(v);
    }
    status_cv_.notify_all();
}

void Source::write_statuses() {
    for (;;) {
        std::map<std::string, nlohmann::json> work;
        {
            MutexLock lock(status_mu_);
            while (!status_stop_ && pending_.empty()) status_cv_.wait(status_mu_);
            if (status_stop_) return;
            work.swap(pending_);
        }
        for (const auto& [key, status] : work) {
            auto slash = key.find('/');
            std::string path = "/apis/kuadrant.io/v1alpha1/namespaces/" + key.substr(0, slash) + "/dnsrecords/" +
                               key.substr(slash + 1) + "/status";
            std::string err = writer_->patch(path, nlohmann::json{{"status", status}}.dump());
            if (err.empty()) {
                written_.fetch_add(1);
            } else {
                spdlog::warn("kubernetes: cannot write the status of DNSRecord {}: {}", key, err);
            }
        }
    }
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
                std::string id = key + "@" + version_of(obj);
                still_bad.insert(id);
                if (logged_.insert(id).second) spdlog::warn("kubernetes: DNSRecord {} skipped: {}", key, m.error);
                continue;
            }
            ++c.valid;
            if (!m.unserved.empty()) {
                std::string id = key + "@unserved@" + version_of(obj);
                still_bad.insert(id);
                if (logged_.insert(id).second) {
                    std::string what;
                    for (const auto& u : m.unserved) what += (what.empty() ? "" : ", ") + u;
                    spdlog::info(
                        "kubernetes: DNSRecord {}: not served (TXT and NS are not served from DNSRecords yet): {}", key,
                        what);
                }
            }
            for (auto& h : m.hosts) {
                c.source.emplace(h.name, key);
                c.hosts.push_back(std::move(h));
            }
        }
    }
    // Forget what is no longer there, so that the set stays as small as the records.
    std::erase_if(logged_, [&](const std::string& id) { return !still_bad.count(id); });
    std::stable_sort(c.hosts.begin(), c.hosts.end(),
                     [](const conf::Host& a, const conf::Host& b) { return a.name < b.name; });
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
