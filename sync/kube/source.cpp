#include "sync/kube/source.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <unordered_map>

#include "resolver/base/clock.hpp"
#include "resolver/base/thread_name.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/text.hpp"

namespace glbd::kube {

namespace {
constexpr const char* kResource = "/apis/kuadrant.io/v1alpha1";
constexpr size_t kMaxStatusMessage = 1024;  // a Ready condition's message lists refusals up to this many bytes

std::string bare(const std::string& name) { return name.rfind("*.", 0) == 0 ? name.substr(2) : name; }
}  // namespace

// Every record labelled for a zone, not only for glbd's: one labelled for a zone glbd does not serve (a user's
// zone that is not glbd's) is then seen, logged and counted rather than never heard of.
std::string coredns_selector() { return "kuadrant.io/coredns-zone-name"; }

Source::Source(const conf::Config& config, const std::function<void()>& on_change) : on_change_(on_change) {
    const conf::Kubernetes& k = *config.kubernetes;
    ApiAccess access = ApiAccess::from(k);
    mode_ = k.mode;
    options_.mode = k.mode;
    options_.zones = config.zones;
    options_.owners = k.owners;
    options_.deny = k.deny_networks;
    options_.insecure_health_checks = k.insecure_health_checks;
    options_.groups_from = k.groups_from;
    if (options_.groups_from.empty() && !access.namespace_.empty()) options_.groups_from = {access.namespace_};
    if (k.mode == Mode::coredns) selector_ = coredns_selector();
    requests_ = std::make_unique<Watcher>(access, "", "", nullptr);
    std::vector<std::string> paths;
    if (k.namespaces.empty()) paths.push_back(std::string(kResource) + "/dnsrecords");
    for (const auto& ns : k.namespaces) paths.push_back(std::string(kResource) + "/namespaces/" + ns + "/dnsrecords");
    for (const auto& p : paths)
        watchers_.push_back(std::make_unique<Watcher>(access, p, selector_, on_change, k.resync));
    held_.resize(watchers_.size());
}

Source::~Source() { stop(); }

void Source::start() {
    requests_thread_ = std::thread([this] {
        name_this_thread("glbd-kube-req");
        run_requests();
    });
    for (auto& w : watchers_) {
        spdlog::info("kubernetes: watching {}{}", w->describe(), selector_.empty() ? "" : " (" + selector_ + ")");
        w->start();
    }
    std::string from;
    for (const auto& ns : options_.groups_from) from += (from.empty() ? "" : ", ") + ns;
    spdlog::info(
        "kubernetes: the active groups may be set by records of {}",
        from.empty() ? "no namespace (glbd's own is not known: set kubernetes.groupsFrom)" : "namespace " + from);
}

void Source::stop() {
    for (auto& w : watchers_) w->stop();
    if (requests_thread_.joinable()) {
        {
            MutexLock lock(requests_mu_);
            requests_stop_ = true;
        }
        requests_cv_.notify_all();
        requests_thread_.join();
    }
}

void Source::set_zones(std::vector<model::Zone> zones) {
    options_.zones = std::move(zones);
    remap_ = true;
}

// Applies what the watchers changed: a record is mapped again only when its resourceVersion (or the options)
// changed.
void Source::take_changes() {
    auto map_into = [this](Held& h, RecordPtr r) {
        if (r->health && !r->health->headers_secret.empty() && h.record != r) {
            MutexLock lock(requests_mu_);
            secrets_.erase(r->ns + "/" + r->health->headers_secret);  // a record changed: its Secret read again
        }
        h.mapped = map_record(*r, options_);
        h.record = std::move(r);
        ++maps_total_;
    };
    for (size_t i = 0; i < watchers_.size(); ++i) {
        Changes ch = watchers_[i]->take_changes();
        auto& held = held_[i];
        if (ch.full) {
            std::map<std::string, Held> next;
            for (auto& [key, r] : ch.records) {
                auto it = held.find(key);
                bool same = it != held.end() && !r->resource_version.empty() &&
                            it->second.record->resource_version == r->resource_version;
                if (same) {
                    next[key] = std::move(it->second);
                } else {
                    map_into(next[key], std::move(r));
                }
            }
            held = std::move(next);
            continue;
        }
        for (auto& [key, r] : ch.records) {
            if (r) {
                map_into(held[key], std::move(r));
            } else {
                held.erase(key);
            }
        }
    }
    if (remap_) {
        for (auto& held : held_) {
            for (auto& [key, h] : held) map_into(h, h.record);
        }
        remap_ = false;
    }
}

// Names published by records of two namespaces: the older record's namespace keeps them (both, when
// kubernetes.owners gives the name to each).
void Source::settle_names(std::vector<Held*>& live) {
    auto older = [](const Record& a, const Record& b) { return a.older_than(b); };
    std::unordered_map<std::string_view, const Record*> first;
    for (Held* h : live) {
        for (const auto& name : h->mapped.names) {
            auto [it, fresh] = first.try_emplace(name, h->record.get());
            if (!fresh && older(*h->record, *it->second)) it->second = h->record.get();
        }
    }
    auto owns = [this](const std::string& ns, const std::string& name) {
        auto it = options_.owners.find(ns);
        return it != options_.owners.end() &&
               std::any_of(it->second.begin(), it->second.end(),
                           [&](const std::string& suffix) { return model::is_subdomain(bare(name), suffix); });
    };
    for (Held* h : live) {
        h->contested.clear();
        for (const auto& name : h->mapped.names) {
            const Record* keeper = first[name];
            if (keeper->ns == h->record->ns) continue;
            if (owns(keeper->ns, name) && owns(h->record->ns, name)) continue;  // shared by kubernetes.owners
            h->contested.push_back({name, "the older DNSRecord " + keeper->key() + " publishes it"});
        }
    }
}

std::optional<std::vector<std::pair<std::string, std::string>>> Source::headers_for(const Record& r, std::string& why) {
    if (!r.health || r.health->headers_secret.empty()) return std::vector<std::pair<std::string, std::string>>{};
    std::string key = r.ns + "/" + r.health->headers_secret;
    bool ask = false;
    std::optional<std::vector<std::pair<std::string, std::string>>> out;
    {
        MutexLock lock(requests_mu_);
        auto it = secrets_.find(key);
        if (it == secrets_.end()) {
            ask = wanted_secrets_.insert(key).second;
            why = "its additionalHeadersRef Secret " + key + " is being read";
        } else if (!it->second.error.empty()) {
            why = it->second.error;
        } else {
            out = it->second.headers;
        }
    }
    if (ask) requests_cv_.notify_all();
    return out;
}

void Source::emit_hosts(Held& h, Collected& c, Emitted& e) {
    std::string why;
    auto headers = headers_for(*h.record, why);
    std::set<std::string> clash;  // names whose kind another record set first
    for (const model::Host& host : h.mapped.hosts) {
        if (h.refuses(host.name)) continue;
        // One name is a simple host or load-balanced entries, whichever the older record made it.
        auto [kind, fresh] = e.balanced.try_emplace(host.name, host.load_balancing.has_value());
        if (kind->second != host.load_balancing.has_value()) {
            clash.insert(host.name);
            continue;
        }
        if (!e.entries.insert(host.name + '\0' + host.entry).second) {
            // The same entry again (two records of one namespace for one name): a simple host's endpoints
            // join the first one's; a load-balanced entry is the first record's.
            if (!host.load_balancing) merge_simple(c.hosts, host);
            continue;
        }
        model::Host out = host;
        if (out.health_check && headers) {
            out.health_check->headers = *headers;
        } else if (out.health_check) {
            out.health_check.reset();  // not probed (as upstream) until its headers can be read
            if (!why.empty()) e.unprobed.emplace(h.record->key(), why);
        }
        c.source.emplace(out.name, h.record->key());
        c.hosts.push_back(std::move(out));
    }
    for (const auto& name : clash) h.contested.push_back({name, "a simple host and load-balanced entries"});
}

void Source::emit_records(Held& h, Collected& c, const Emitted& e) {
    for (const StaticRecord& s : h.mapped.records) {
        if (h.refuses(s.name)) continue;
        if (e.balanced.count(s.name)) {
            h.contested.push_back({s.name, s.type + " at a host's name"});
            continue;
        }
        if (std::find(c.records.begin(), c.records.end(), s) != c.records.end()) continue;
        c.source.emplace(s.name, h.record->key());
        c.records.push_back(s);
    }
}

void Source::merge_simple(std::vector<model::Host>& hosts, const model::Host& more) {
    for (auto& kept : hosts) {
        if (kept.name != more.name || kept.load_balancing || !kept.entry.empty()) continue;
        for (const auto& ep : more.endpoints) {
            if (std::find(kept.endpoints.begin(), kept.endpoints.end(), ep) == kept.endpoints.end())
                kept.endpoints.push_back(ep);
        }
        kept.ttl = std::min(kept.ttl, more.ttl);
    }
}

void Source::log_refusals(const Held& h) {
    const Record& r = *h.record;
    std::string id = r.key() + "@" + r.resource_version + "@" + std::to_string(h.contested.size());
    if (!logged_.insert(id).second) return;
    auto say = [&](const std::string& what) {
        ++refusals_total_;
        uint64_t left_out = 0;
        if (!log_throttle_.allow("refusal", wall_ms(), &left_out)) return;
        spdlog::warn("kubernetes: DNSRecord {}: {}{}", printable(r.key()), what,
                     left_out ? " (" + std::to_string(left_out) + " more not logged)" : "");
    };
    if (!h.mapped.error.empty()) return say("refused: " + printable(h.mapped.error));
    for (const auto& x : h.mapped.refused) say(printable(x.name) + " refused: " + printable(x.why));
    for (const auto& x : h.contested) say(printable(x.name) + " refused: " + printable(x.why));
}

Source::Collected Source::collect() {
    take_changes();
    Collected c;
    std::vector<Held*> live;
    std::set<std::string> other_zone;
    for (auto& held : held_) {
        for (auto& [key, h] : held) {
            if (h.mapped.not_ours) {
                if (h.mapped.other_zone.empty()) {
                    ++c.not_input;
                    continue;
                }
                ++c.other_zone;
                std::string id = key + "@" + h.mapped.other_zone;
                uint64_t left_out = 0;
                if (!other_zone_logged_.count(id) && log_throttle_.allow("other zone", wall_ms(), &left_out)) {
                    spdlog::warn("kubernetes: DNSRecord {} is not served: {}{}", printable(key),
                                 printable(h.mapped.other_zone),
                                 left_out ? " (" + std::to_string(left_out) + " more not logged)" : "");
                }
                other_zone.insert(std::move(id));
                continue;
            }
            // Delegate mode withdraws a record being deleted at once (dns-operator's secondary waits for glbd to
            // say its endpoints are removed: update_statuses).
            if (mode_ == Mode::delegate && h.record->deleting) {
                ++c.deleting;
                continue;
            }
            if (!h.mapped.error.empty()) {
                ++c.invalid;
                continue;
            }
            ++c.valid;
            live.push_back(&h);
        }
    }
    settle_names(live);
    // The older records first, so that a name two records of one namespace give is the older one's.
    std::sort(live.begin(), live.end(), [](const Held* a, const Held* b) { return a->record->older_than(*b->record); });
    std::map<std::string, size_t> groups;  // a cluster's dns-operator has one group: most records agree
    for (const Held* h : live) {
        if (model::is_group_name(h->record->group)) ++groups[h->record->group];
    }
    for (const auto& [g, n] : groups) {
        if (c.group.empty() || n > groups[c.group]) c.group = g;
    }
    Emitted e;
    for (Held* h : live) emit_hosts(*h, c, e);
    for (Held* h : live) emit_records(*h, c, e);
    std::set<std::string> unprobed;
    for (const auto& [key, why] : e.unprobed) {
        uint64_t left_out = 0;
        std::string id = key + "@" + why;
        if (!unprobed_logged_.count(id) && log_throttle_.allow("unprobed", wall_ms(), &left_out))
            spdlog::warn("kubernetes: DNSRecord {}: not probed: {}", printable(key), printable(why));
        unprobed.insert(std::move(id));
    }
    unprobed_logged_ = std::move(unprobed);
    other_zone_logged_ = std::move(other_zone);
    std::set<std::string> seen;
    for (auto& held : held_) {
        for (auto& [key, h] : held) {
            if (h.mapped.not_ours || (mode_ == Mode::delegate && h.record->deleting)) continue;
            c.refused += h.mapped.refused.size() + h.contested.size();
            log_refusals(h);
            seen.insert(key + "@" + h.record->resource_version + "@" + std::to_string(h.contested.size()));
        }
    }
    std::erase_if(logged_, [&](const std::string& id) { return !seen.count(id); });
    std::sort(c.records.begin(), c.records.end(), [](const StaticRecord& a, const StaticRecord& b) {
        return a.name != b.name ? a.name < b.name : a.type < b.type;
    });
    return c;
}

namespace {

std::string now_rfc3339() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

nlohmann::json condition(const char* type, bool ok, const std::string& reason, const std::string& message,
                         int64_t generation) {
    return {{"type", type},       {"status", ok ? "True" : "False"},  {"reason", reason},
            {"message", message}, {"observedGeneration", generation}, {"lastTransitionTime", now_rfc3339()}};
}

// Whether the record's status already shows `want` (times aside). Fields of another type than expected
// (someone else wrote the status) make it "no".
bool shows(const nlohmann::json& status, const nlohmann::json& want) try {
    if (!status.is_object()) return false;
    if (status.value("observedGeneration", int64_t{-1}) != want["observedGeneration"].get<int64_t>()) return false;
    auto have = status.find("conditions");
    if (have == status.end() || !have->is_array()) return false;
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

// Ready: served, or why not (the record refused whole, or the names refused).
nlohmann::json ready(const Mapped& m, const std::vector<Refusal>& contested, int64_t gen) {
    if (!m.error.empty()) return condition("Ready", false, "ValidationError", m.error, gen);
    if (m.refused.empty() && contested.empty())
        return condition("Ready", true, "ProviderSuccess", "served by glbd", gen);
    std::string msg = "served but for: ";
    bool first = true;
    for (const auto* list : {&m.refused, &contested}) {
        for (const auto& r : *list) {
            std::string part = (first ? "" : "; ") + r.name + ": " + r.why;
            if (msg.size() + part.size() > kMaxStatusMessage)
                return condition("Ready", false, "ValidationError", msg + "; ...", gen);
            msg += part;
            first = false;
        }
    }
    return condition("Ready", false, "ValidationError", msg, gen);
}

// Healthy as dns-operator writes it (internal/controller/dnsrecord_healthchecks.go) and kuadrant-operator reads
// it (a DNSPolicy is healthy only while every record's Healthy is True): True AllChecksPassed when every probed
// endpoint is healthy; False SomeChecksPassed when some are; False HealthChecksFailed when none is, or none has
// been probed yet ("Probes are creating"). An endpoint not probed yet counts as not healthy, as upstream's.
// None when the record has no probed endpoint.
nlohmann::json healthy(const Mapped& m, const health::States& health, int64_t gen) {
    size_t healthy = 0, total = 0, known = 0;
    std::string not_healthy;  // as Go prints a []string: "[a b]"
    for (const auto& h : m.hosts) {
        if (!h.health_check) continue;
        for (const auto& ep : h.endpoints) {
            ++total;
            auto it = health.find({h.name, ep});
            bool ok = it != health.end() && it->second.known && it->second.healthy;
            known += it != health.end() && it->second.known;
            healthy += ok;
            if (!ok && not_healthy.size() < kMaxStatusMessage)
                not_healthy += (not_healthy.empty() ? "" : " ") + ep.str();
        }
    }
    if (total == 0) return nullptr;
    if (known == 0) return condition("Healthy", false, "HealthChecksFailed", "Probes are creating", gen);
    if (healthy == total) return condition("Healthy", true, "AllChecksPassed", "All healthchecks succeeded", gen);
    return condition("Healthy", false, healthy > 0 ? "SomeChecksPassed" : "HealthChecksFailed",
                     "Not healthy addresses: [" + not_healthy + "]", gen);
}

// Whether a record of a zone glbd does not serve may get glbd's status in controller mode: only when no other
// controller wrote its Ready (another dns-operator may serve that zone beside glbd).
bool status_is_glbds(const Record& r) {
    if (!r.status) return true;
    auto conds = r.status->find("conditions");
    if (conds == r.status->end() || !conds->is_array()) return true;
    for (const auto& c : *conds) {
        if (!c.is_object() || c.value("type", "") != "Ready") continue;
        auto msg = c.find("message");
        return msg != c.end() && msg->is_string() && msg->get<std::string>().find("glbd") != std::string::npos;
    }
    return true;
}

}  // namespace

nlohmann::json Source::deletion_condition(const std::string& key, const Held& h, const Fleet& fleet, uint64_t now) {
    const int64_t gen = h.record->generation;
    auto [it, fresh] = deletions_.try_emplace(key);
    Deletion& d = it->second;
    if (fresh) {
        d.version = fleet.own_version, d.since_ms = now;
        // A record that gave the report nothing (refused whole, or every name) has nothing to withdraw.
        bool gave = h.mapped.error.empty() && (!h.mapped.hosts.empty() || !h.mapped.records.empty());
        d.removed = !gave;
        spdlog::info("kubernetes: DNSRecord {} is being deleted: its entries are withdrawn", printable(key));
    }
    if (!d.removed) {
        std::vector<std::string> missing =
            fleet.not_holding ? fleet.not_holding(d.version) : std::vector<std::string>{};
        if (missing.empty()) {
            d.removed = true;
            spdlog::info("kubernetes: DNSRecord {}: every live peer holds this cluster's report without it ({} ms)",
                         printable(key), now - d.since_ms);
        } else if (now - d.since_ms >= fleet.max_wait_ms) {
            d.removed = true;
            std::string who;
            for (const auto& m : missing) who += (who.empty() ? "" : ", ") + m;
            spdlog::warn("kubernetes: DNSRecord {}: endpoints taken as removed after {} ms; not confirmed by {}",
                         printable(key), now - d.since_ms, printable(who));
        }
    }
    if (d.removed) {
        return condition("Ready", false, "ProviderEndpointsRemoved", "DNS records removed from glbd's fleet", gen);
    }
    return condition("Ready", false, "ProviderEndpointsDeletion", "DNS records are being deleted from glbd's fleet",
                     gen);
}

bool Source::deletions_pending() const {
    return std::any_of(deletions_.begin(), deletions_.end(), [](const auto& d) { return !d.second.removed; });
}

void Source::update_statuses(const health::States& health, const Fleet& fleet) {
    if (!writes_status()) return;
    const bool delegate = mode_ == Mode::delegate;
    const uint64_t now = steady_ms();
    std::map<std::string, nlohmann::json> want;  // the status patch of each record that shows something else
    std::set<std::string> deleting, live;
    for (const auto& held : held_) {
        for (const auto& [key, h] : held) {
            const Record& r = *h.record;
            const int64_t gen = r.generation;
            nlohmann::json conds = nlohmann::json::array();
            if (delegate && r.deleting && (!h.mapped.not_ours || !h.mapped.other_zone.empty())) {
                deleting.insert(key);
                conds.push_back(deletion_condition(key, h, fleet, now));
            } else if (h.mapped.not_ours) {
                if (h.mapped.other_zone.empty() || (!delegate && !status_is_glbds(r))) continue;
                conds.push_back(condition(
                    "Ready", false, "DNSProviderError",
                    "Unable to find suitable zone in provider: glbd does not serve it: " + h.mapped.other_zone, gen));
            } else {
                conds.push_back(ready(h.mapped, h.contested, gen));
                if (auto hc = healthy(h.mapped, health, gen); !hc.is_null()) conds.push_back(std::move(hc));
            }
            nlohmann::json status = {{"observedGeneration", gen}, {"conditions", std::move(conds)}};
            const nlohmann::json* shown = r.status.get();
            if (delegate && shown) {
                auto mine = shown->find(kRemoteStatusKey);
                shown = mine != shown->end() ? &*mine : nullptr;
            }
            if (shown && shows(*shown, status)) continue;
            // Queued already for this version of the record (the write's own event has not come back yet): not
            // again, or a second write of it could land after another controller's. A record whose status cannot
            // be read (one over the size limit): written once per change, or every write would bring it back
            // unread, and be written again.
            live.insert(key);
            auto last = queued_.find(key);
            if (last != queued_.end() && shows(last->second.status, status) &&
                (!r.status || last->second.resource_version == r.resource_version))
                continue;
            queued_[key] = Queued{r.resource_version, status};
            want[key] = delegate ? nlohmann::json{{"remoteRecordStatuses", {{kRemoteStatusKey, std::move(status)}}}}
                                 : std::move(status);
        }
    }
    std::erase_if(deletions_, [&](const auto& d) { return !deleting.count(d.first); });
    std::erase_if(queued_, [&](const auto& q) { return !live.count(q.first); });
    if (want.empty()) return;
    {
        MutexLock lock(requests_mu_);
        for (auto& [k, v] : want) pending_[k] = std::move(v);
    }
    requests_cv_.notify_all();
}

namespace {

// A Secret's data as probe headers (its keys the names, as dns-operator's getAdditionalHeaders); "" or why
// they cannot be used.
std::string secret_headers(const std::string& body, std::vector<std::pair<std::string, std::string>>& out) {
    nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_object()) return "not a Secret";
    auto data = j.find("data");
    if (data == j.end() || data->is_null()) return "";
    if (!data->is_object()) return "its data is not a mapping";
    for (const auto& [k, v] : data->items()) {
        std::string name = k;
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
        while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.erase(0, 1);
        bool token = !name.empty() && std::all_of(name.begin(), name.end(),
                                                  [](unsigned char ch) { return ch > 0x20 && ch < 0x7f && ch != ':'; });
        if (!token) return "a header name is not a token";
        auto value = v.is_string() ? wire::base64_decode(v.get<std::string>()) : std::nullopt;
        if (!value) return "a value is not base64";
        if (value->find_first_of("\r\n") != std::string::npos) return "a header value holds a line break";
        out.emplace_back(std::move(name), std::move(*value));
    }
    return "";
}

}  // namespace

void Source::run_requests() {
    for (;;) {
        std::map<std::string, nlohmann::json> statuses;
        std::set<std::string> secrets;
        {
            MutexLock lock(requests_mu_);
            while (!requests_stop_ && pending_.empty() && wanted_secrets_.empty()) requests_cv_.wait(requests_mu_);
            if (requests_stop_) return;
            statuses.swap(pending_);
            secrets.swap(wanted_secrets_);
        }
        for (const auto& key : secrets) {
            auto slash = key.find('/');
            auto body =
                requests_->get("/api/v1/namespaces/" + key.substr(0, slash) + "/secrets/" + key.substr(slash + 1));
            Secret s;
            s.fetched = true;
            std::string err = body ? secret_headers(*body, s.headers) : body.error();
            if (!err.empty()) s.error = "its additionalHeadersRef Secret " + key + ": " + err, s.headers.clear();
            {
                MutexLock lock(requests_mu_);
                secrets_[key] = std::move(s);  // the headers are never logged
            }
            if (on_change_) on_change_();
        }
        for (const auto& [key, status] : statuses) {
            auto slash = key.find('/');
            std::string path = std::string(kResource) + "/namespaces/" + key.substr(0, slash) + "/dnsrecords/" +
                               key.substr(slash + 1) + "/status";
            if (auto written = requests_->patch(path, nlohmann::json{{"status", status}}.dump()); written) {
                written_.fetch_add(1);
            } else {
                spdlog::warn("kubernetes: cannot write the status of DNSRecord {}: {}", printable(key),
                             printable(written.error()));
            }
        }
    }
}

Source::Stats Source::stats() const {
    Stats s;
    for (const auto& w : watchers_) {
        const WatchStats& ws = w->stats();
        s.events += ws.events, s.relists += ws.relists, s.errors += ws.errors, s.bad_events += ws.bad_events;
        s.over_limit += ws.over_limit;
        s.last_event_ms = std::max<uint64_t>(s.last_event_ms, ws.last_event_ms);
        s.synced = s.synced && ws.synced;
    }
    return s;
}

}  // namespace glbd::kube
