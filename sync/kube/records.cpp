#include "sync/kube/records.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "conf/names.hpp"
#include "resolver/base/address.hpp"

namespace glbd::kube {
namespace {

using json = nlohmann::json;

std::string lower_name(std::string s) {
    if (!s.empty() && s.back() == '.') s.pop_back();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::string str_at(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

struct Endpoint {
    std::string name, type, set_id;
    std::vector<std::string> targets;
    uint32_t ttl = 0;
    std::map<std::string, std::string> provider;  // providerSpecific name -> value
};

// spec.endpoints, checked for shape; "" or what is wrong.
std::string read_endpoints(const json& spec, std::vector<Endpoint>& out) {
    auto it = spec.find("endpoints");
    if (it == spec.end() || it->is_null()) return "";
    if (!it->is_array()) return "spec.endpoints is not a list";
    for (const auto& e : *it) {
        if (!e.is_object()) return "an endpoint is not an object";
        Endpoint ep;
        ep.name = lower_name(str_at(e, "dnsName"));
        ep.type = str_at(e, "recordType");
        ep.set_id = str_at(e, "setIdentifier");
        if (auto t = e.find("recordTTL"); t != e.end() && t->is_number_integer()) {
            auto v = t->get<int64_t>();
            ep.ttl = v > 0 && v <= 2147483647 ? static_cast<uint32_t>(v) : 0;
        }
        if (auto t = e.find("targets"); t != e.end() && t->is_array()) {
            for (const auto& x : *t) {
                if (!x.is_string()) return ep.name + ": a target is not a string";
                ep.targets.push_back(x.get<std::string>());
            }
        }
        if (auto p = e.find("providerSpecific"); p != e.end() && p->is_array()) {
            for (const auto& kv : *p) {
                if (kv.is_object()) ep.provider[str_at(kv, "name")] = str_at(kv, "value");
            }
        }
        if (ep.name.empty()) return "an endpoint has no dnsName";
        out.push_back(std::move(ep));
    }
    return "";
}

std::optional<conf::HealthCheck> health_check(const json& spec, bool wildcard, std::string& error) {
    auto it = spec.find("healthCheck");
    if (it == spec.end() || it->is_null() || wildcard) return std::nullopt;
    if (!it->is_object()) return error = "spec.healthCheck is not an object", std::nullopt;
    conf::HealthCheck hc;
    hc.protocol = conf::Protocol::https;
    hc.port = 443;
    hc.path = "/";
    hc.interval = conf::Millis{300'000};
    hc.failure_threshold = 5;
    const json& h = *it;
    if (auto p = h.find("port"); p != h.end() && p->is_number_integer()) {
        auto v = p->get<int64_t>();
        if (v < 1 || v > 65535) return error = "spec.healthCheck.port out of range", std::nullopt;
        hc.port = static_cast<uint16_t>(v);
    }
    if (std::string path = str_at(h, "path"); !path.empty()) hc.path = path;
    if (std::string proto = str_at(h, "protocol"); !proto.empty()) {
        if (proto == "HTTP")
            hc.protocol = conf::Protocol::http;
        else if (proto != "HTTPS")
            return error = "spec.healthCheck.protocol must be HTTP or HTTPS", std::nullopt;
    }
    if (std::string iv = str_at(h, "interval"); !iv.empty()) {
        auto d = conf::parse_duration(iv);
        if (!d || d->count() < 1000)
            return error = "spec.healthCheck.interval is not a duration of 1s or more", std::nullopt;
        hc.interval = *d;
    }
    if (auto f = h.find("failureThreshold"); f != h.end() && f->is_number_integer()) {
        auto v = f->get<int64_t>();
        if (v < 1 || v > 1000) return error = "spec.healthCheck.failureThreshold out of range", std::nullopt;
        hc.failure_threshold = static_cast<unsigned>(v);
    }
    return hc;
}

// Appends the endpoints `target` stands for: the addresses of its A/AAAA records when it is one of ours
// (under klb.H'), else the external host name itself. "" or what is wrong.
std::string resolve_target(const std::string& target, const std::string& klb, const std::vector<Endpoint>& eps,
                           std::vector<std::string>& out, uint32_t& ttl) {
    std::string t = lower_name(target);
    bool ours = t.size() > klb.size() && t.compare(t.size() - klb.size() - 1, klb.size() + 1, "." + klb) == 0;
    if (!ours) {
        if (!conf::is_endpoint(t) || Address::is_ip(t)) return "target " + t + " is not a host name";
        out.push_back(t);
        return "";
    }
    bool found = false;
    for (const auto& e : eps) {
        if (e.name != t || (e.type != "A" && e.type != "AAAA")) continue;
        found = true;
        if (e.ttl) ttl = e.ttl;
        for (const auto& a : e.targets) {
            // Kuadrant may put IPv6 gateway addresses in an A-typed endpoint: any address counts.
            if (!Address::is_ip(a)) return t + ": " + a + " is not an IP address";
            Address parsed;
            Address::parse(a, parsed);
            out.push_back(parsed.str());
        }
    }
    return found ? "" : "no address records for " + t;
}

std::string geo_of(const std::string& code) {
    if (code.rfind("GEO-", 0) == 0) return code;  // a continent, as glbd writes it
    std::string up = code;
    std::transform(up.begin(), up.end(), up.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return up;
}

std::string map_load_balanced(const std::string& host, const std::string& klb, const std::vector<Endpoint>& eps,
                              const std::optional<conf::HealthCheck>& hc, Mapped& m) {
    std::vector<std::pair<std::string, std::string>> geos;  // (geo code, the geo's name under klb)
    std::string default_target;
    for (const auto& e : eps) {
        if (e.name != klb || e.type != "CNAME") continue;
        auto g = e.provider.find("geo-code");
        if (g == e.provider.end() || e.targets.size() != 1) return klb + ": a geo record needs geo-code and one target";
        std::string target = lower_name(e.targets[0]);
        if (g->second == "*") {
            default_target = target;
            continue;
        }
        std::string code = geo_of(g->second);
        if (!conf::is_geo_code(code)) return "unknown geo code \"" + g->second + "\"";
        geos.emplace_back(code, target);
    }
    if (geos.empty() && !default_target.empty()) geos.emplace_back("", default_target);  // only a default
    if (geos.empty()) return klb + " has no geo records";
    for (const auto& [code, geo_name] : geos) {
        conf::Host h;
        h.name = host;
        h.ttl = 0;
        conf::LoadBalancing lb;
        lb.geo = code;
        lb.default_geo = geo_name == default_target && !code.empty();
        bool weighted = false;
        for (const auto& e : eps) {
            if (e.name != geo_name || e.type != "CNAME") continue;
            for (const auto& t : e.targets) {
                if (std::string err = resolve_target(t, klb, eps, h.endpoints, h.ttl); !err.empty()) return err;
            }
            if (!weighted) {
                // A missing or bad weight is 0 (docs/kuadrant.md); the entry takes its first target's.
                auto w = e.provider.find("weight");
                long v = w == e.provider.end() ? 0 : std::strtol(w->second.c_str(), nullptr, 10);
                lb.weight = static_cast<uint16_t>(v > 0 && v <= 65535 ? v : 0);
                weighted = true;
            }
        }
        if (h.endpoints.empty()) return geo_name + " has no targets";
        std::sort(h.endpoints.begin(), h.endpoints.end());
        h.endpoints.erase(std::unique(h.endpoints.begin(), h.endpoints.end()), h.endpoints.end());
        if (h.ttl == 0) h.ttl = 60;
        h.load_balancing = lb;
        h.health_check = hc;
        m.hosts.push_back(std::move(h));
    }
    return "";
}

std::string map_simple(const std::string& host, const std::vector<Endpoint>& eps,
                       const std::optional<conf::HealthCheck>& hc, Mapped& m) {
    conf::Host h;
    h.name = host;
    h.ttl = 0;
    for (const auto& e : eps) {
        if (e.name != host) continue;
        if (!e.provider.empty()) return host + ": providerSpecific on a record that is not load-balanced";
        if (e.type == "A" || e.type == "AAAA") {
            for (const auto& a : e.targets) {
                Address parsed;
                if (!Address::parse(a, parsed)) return host + ": " + a + " is not an IP address";
                h.endpoints.push_back(parsed.str());
            }
        } else if (e.type == "CNAME") {
            for (const auto& t : e.targets) {
                std::string name = lower_name(t);
                if (!conf::is_endpoint(name) || Address::is_ip(name)) return host + ": " + t + " is not a host name";
                h.endpoints.push_back(name);
            }
        } else {
            continue;  // TXT, NS and the like at the root host are not glbd's to answer
        }
        if (e.ttl) h.ttl = e.ttl;
    }
    if (h.endpoints.empty()) return "no A, AAAA or CNAME endpoint for " + host;
    if (h.ttl == 0) h.ttl = 60;
    h.health_check = hc;
    m.hosts.push_back(std::move(h));
    return "";
}

// Names other than the root host and its klb chain: A/AAAA/CNAME become simple hosts (served, and shared with
// peers, like any host); TXT and NS are not served yet (listed in m.unserved). Registry TXT records
// ("kuadrant-" prefixed) are the operator's bookkeeping and ignored.
std::string map_other_names(const std::string& root, const std::string& klb, const std::vector<Endpoint>& eps,
                            const std::vector<conf::Zone>& zones, Mapped& m) {
    std::vector<std::string> names;
    for (const auto& e : eps) {
        const std::string& n = e.name;
        bool chain =
            n == klb || (n.size() > klb.size() && n.compare(n.size() - klb.size() - 1, klb.size() + 1, "." + klb) == 0);
        if (n == root || chain || n.rfind("kuadrant-", 0) == 0) continue;
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    for (const auto& n : names) {
        if (!std::any_of(zones.begin(), zones.end(),
                         [&](const conf::Zone& z) { return conf::is_subdomain(n, z.origin); }))
            continue;
        if (!conf::is_lb_host_name(n)) return "\"" + n + "\" is not a valid host name";
        std::vector<Endpoint> own;
        for (const auto& e : eps) {
            if (e.name != n) continue;
            if (e.type == "A" || e.type == "AAAA" || e.type == "CNAME")
                own.push_back(e);
            else
                m.unserved.push_back(n + " " + e.type);
        }
        if (own.empty()) continue;
        for (auto& e : own) e.provider.clear();  // weights or geo codes outside the chain mean nothing here
        if (std::string err = map_simple(n, own, std::nullopt, m); !err.empty()) return err;
    }
    return "";
}

}  // namespace

std::string key_of(const json& obj) {
    if (!obj.is_object()) return "";
    auto meta = obj.find("metadata");
    if (meta == obj.end() || !meta->is_object()) return "";
    std::string name = str_at(*meta, "name");
    return name.empty() ? "" : str_at(*meta, "namespace") + "/" + name;
}

Mapped map_record(const json& record, const std::vector<conf::Zone>& zones) {
    Mapped m;
    try {
        auto spec = record.find("spec");
        if (spec == record.end() || !spec->is_object()) return m.error = "no spec", m;
        if (auto d = spec->find("delegate"); d != spec->end() && d->is_boolean() && d->get<bool>()) {
            return m.out_of_zone = true, m;  // delegated records are another provider's
        }
        if (auto md = record.find("metadata"); md != record.end() && md->is_object()) {
            auto labels = md->find("labels");
            if (labels != md->end() && labels->is_object() && labels->contains("kuadrant.io/authoritative-record")) {
                return m.out_of_zone = true, m;  // the operator's own aggregate of several records: not an input
            }
        }
        std::string root = lower_name(str_at(*spec, "rootHost"));
        if (root.empty()) return m.error = "no spec.rootHost", m;
        if (!conf::is_lb_host_name(root)) return m.error = "spec.rootHost \"" + root + "\" is not a valid host name", m;
        bool wildcard = root.rfind("*.", 0) == 0;
        std::string bare = wildcard ? root.substr(2) : root;
        if (!std::any_of(zones.begin(), zones.end(),
                         [&](const conf::Zone& z) { return conf::is_subdomain(bare, z.origin); })) {
            return m.out_of_zone = true, m;
        }
        std::vector<Endpoint> eps;
        if (std::string err = read_endpoints(*spec, eps); !err.empty()) return m.error = err, m;
        auto hc = health_check(*spec, wildcard, m.error);
        if (!m.error.empty()) return m;
        const std::string klb = "klb." + bare;
        bool lb = std::any_of(eps.begin(), eps.end(), [&](const Endpoint& e) {
            return e.name == root && e.type == "CNAME" && e.targets.size() == 1 && lower_name(e.targets[0]) == klb;
        });
        bool root_has_address = std::any_of(eps.begin(), eps.end(), [&](const Endpoint& e) {
            return e.name == root && (e.type == "A" || e.type == "AAAA" || e.type == "CNAME");
        });
        std::string err = lb                 ? map_load_balanced(root, klb, eps, hc, m)
                          : root_has_address ? map_simple(root, eps, hc, m)
                                             : "";
        if (err.empty()) err = map_other_names(root, klb, eps, zones, m);
        if (err.empty() && m.hosts.empty()) err = "no A, AAAA or CNAME endpoint for " + root;
        if (!err.empty()) m.hosts.clear(), m.error = err;
    } catch (const std::exception& e) {
        m.hosts.clear();
        m.error = std::string("malformed record: ") + e.what();
    }
    return m;
}

}  // namespace glbd::kube
