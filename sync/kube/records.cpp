#include "sync/kube/records.hpp"

#include <algorithm>

#include "resolver/base/address.hpp"
#include "resolver/model/names.hpp"

namespace glbd::kube {
namespace {

using json = nlohmann::json;

constexpr std::string_view kZoneLabel = "kuadrant.io/coredns-zone-name";
constexpr std::string_view kAuthoritativeLabel = "kuadrant.io/authoritative-record";

std::string str_at(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t int_at(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// metadata: names, version, times, the labels glbd reads.
void read_metadata(const json& obj, Record& r) {
    auto md = obj.find("metadata");
    if (md == obj.end() || !md->is_object()) return;
    r.name = str_at(*md, "name");
    r.ns = str_at(*md, "namespace");
    if (auto rv = md->find("resourceVersion"); rv != md->end())
        r.resource_version = rv->is_string() ? rv->get<std::string>() : rv->dump();
    r.created = str_at(*md, "creationTimestamp");
    r.generation = int_at(*md, "generation");
    r.deleting = md->contains("deletionTimestamp") && !(*md)["deletionTimestamp"].is_null();
    if (auto labels = md->find("labels"); labels != md->end() && labels->is_object()) {
        r.zone_label = str_at(*labels, kZoneLabel.data());
        r.authoritative = labels->contains(kAuthoritativeLabel);
    }
}

// One spec.endpoints item; "" or what is wrong with it.
std::string read_endpoint(const json& e, Endpoint& ep) {
    using L = RecordLimits;
    if (!e.is_object()) return "an endpoint is not an object";
    ep.name = model::canonical_name(str_at(e, "dnsName"));
    if (ep.name.empty()) return "an endpoint has no dnsName";
    if (ep.name.size() > L::kMaxNameBytes) return "a dnsName is longer than 253 bytes";
    ep.type = str_at(e, "recordType");
    ep.set_identifier = str_at(e, "setIdentifier");
    if (ep.set_identifier.size() > L::kMaxTextBytes) return ep.name + ": setIdentifier too long";
    int64_t ttl = int_at(e, "recordTTL");
    ep.ttl = ttl > 0 && ttl <= 2147483647 ? static_cast<uint32_t>(ttl) : 0;
    if (auto t = e.find("targets"); t != e.end() && t->is_array()) {
        if (t->size() > L::kMaxTargets) {
            return ep.name + ": " + std::to_string(t->size()) + " targets (at most " + std::to_string(L::kMaxTargets) +
                   ")";
        }
        ep.targets.reserve(t->size());
        for (const auto& x : *t) {
            if (!x.is_string()) return ep.name + ": a target is not a string";
            if (x.get_ref<const std::string&>().size() > L::kMaxTextBytes) return ep.name + ": a target is too long";
            ep.targets.push_back(x.get<std::string>());
        }
    }
    if (auto p = e.find("providerSpecific"); p != e.end() && p->is_array()) {
        for (const auto& kv : *p) {
            if (!kv.is_object()) continue;
            std::string name = str_at(kv, "name"), value = str_at(kv, "value");
            if (value.size() > L::kMaxTextBytes) return ep.name + ": a providerSpecific value is too long";
            if (name == "weight") ep.weight = value;
            if (name == "geo-code") ep.geo = value;
        }
    }
    return "";
}

std::string read_spec(const json& spec, Record& r) {
    r.root_host = model::canonical_name(str_at(spec, "rootHost"));
    if (auto d = spec.find("delegate"); d != spec.end() && d->is_boolean()) r.delegate = d->get<bool>();
    if (auto it = spec.find("endpoints"); it != spec.end() && !it->is_null()) {
        if (!it->is_array()) return "spec.endpoints is not a list";
        if (it->size() > RecordLimits::kMaxEndpoints) {
            return std::to_string(it->size()) + " endpoints (at most " + std::to_string(RecordLimits::kMaxEndpoints) +
                   ")";
        }
        r.endpoints.reserve(it->size());
        for (const auto& e : *it) {
            Endpoint ep;
            if (std::string why = read_endpoint(e, ep); !why.empty()) return why;
            r.endpoints.push_back(std::move(ep));
        }
    }
    if (auto h = spec.find("healthCheck"); h != spec.end() && !h->is_null()) {
        if (!h->is_object()) return "spec.healthCheck is not an object";
        HealthSpec hs;
        hs.port = int_at(*h, "port");
        hs.path = str_at(*h, "path");
        hs.protocol = str_at(*h, "protocol");
        hs.interval = str_at(*h, "interval");
        hs.failure_threshold = int_at(*h, "failureThreshold");
        if (auto ref = h->find("additionalHeadersRef"); ref != h->end() && ref->is_object()) {
            hs.headers_secret = str_at(*ref, "name");
        }
        r.health = hs;
    }
    return "";
}

void read_status(const json& obj, Record& r) {
    auto st = obj.find("status");
    if (st == obj.end() || !st->is_object()) return;
    r.group = str_at(*st, "group");
    json kept = json::object();
    if (auto g = st->find("observedGeneration"); g != st->end()) kept["observedGeneration"] = *g;
    if (auto c = st->find("conditions"); c != st->end() && c->is_array() && c->size() <= 16) kept["conditions"] = *c;
    // glbd's own entry of remoteRecordStatuses (delegate mode writes it there, as a Kuadrant primary its own).
    if (auto rs = st->find("remoteRecordStatuses"); rs != st->end() && rs->is_object()) {
        if (auto g = rs->find(kRemoteStatusKey); g != rs->end() && g->is_object()) {
            json mine = json::object();
            if (auto og = g->find("observedGeneration"); og != g->end()) mine["observedGeneration"] = *og;
            if (auto c = g->find("conditions"); c != g->end() && c->is_array() && c->size() <= 16) {
                mine["conditions"] = *c;
            }
            kept[kRemoteStatusKey] = std::move(mine);
        }
    }
    r.status = std::make_shared<const json>(std::move(kept));
}

}  // namespace

Record read_record(const json& obj, size_t bytes) {
    Record r;
    r.bytes = bytes;
    if (!obj.is_object()) {
        r.error = "not an object";
        return r;
    }
    read_metadata(obj, r);
    if (r.name.empty()) {
        r.error = "no metadata.name";
        return r;
    }
    if (bytes > RecordLimits::kMaxObjectBytes) {
        r.error = "the object is " + std::to_string(bytes) + " bytes (at most " +
                  std::to_string(RecordLimits::kMaxObjectBytes) + ")";
        return r;
    }
    read_status(obj, r);
    auto spec = obj.find("spec");
    if (spec == obj.end() || !spec->is_object()) {
        r.error = "no spec";
        return r;
    }
    try {
        if (std::string why = read_spec(*spec, r); !why.empty()) {
            r.endpoints.clear(), r.health.reset();
            r.error = why;
        }
    } catch (const json::exception& e) {
        r.endpoints.clear(), r.health.reset();
        r.error = std::string("malformed: ") + e.what();
    }
    return r;
}

Record read_record_text(std::string_view text) {
    if (text.size() <= RecordLimits::kMaxObjectBytes) {
        json obj = json::parse(text.begin(), text.end(), nullptr, false);
        return read_record(obj, text.size());
    }
    // Too large to keep: read for its name only, every other top-level key skipped as it is parsed.
    json::parser_callback_t names_only = [](int depth, json::parse_event_t event, json& parsed) {
        return !(event == json::parse_event_t::key && depth == 1 && parsed != "metadata");
    };
    json obj = json::parse(text.begin(), text.end(), names_only, false);
    return read_record(obj, text.size());
}

bool is_registry_txt(const Endpoint& e) {
    if (e.type != "TXT" || e.name.rfind("kuadrant-", 0) != 0 || e.targets.empty()) return false;
    return std::all_of(e.targets.begin(), e.targets.end(), [](const std::string& t) {
        return t.rfind("heritage=external-dns,", 0) == 0 || t.rfind("\"heritage=external-dns,", 0) == 0;
    });
}

}  // namespace glbd::kube
