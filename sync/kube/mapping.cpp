// sync/kube/mapping — a DNSRecord (as read by records.cpp) to this cluster's entries, static records and
// refusals: docs/kuadrant.md's mapping and the rules a record's author is held to (docs/security.md: names only
// at or below its own rootHost, addresses outside denyNetworks, probe paths that stay on the endpoint). Pure: no
// I/O, no shared state. Declared in records.hpp.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "resolver/base/address.hpp"
#include "resolver/model/names.hpp"
#include "sync/kube/records.hpp"

namespace glbd::kube {

namespace {

// A name without its leading "*." (a wildcard's owner name).
std::string bare(const std::string& host) { return host.rfind("*.", 0) == 0 ? host.substr(2) : host; }

// The rules a record's names are held to, with what refused them.
class Mapper {
public:
    Mapper(const Record& r, const MapOptions& o, Mapped& m) : r_(r), o_(o), m_(m) {}

    void run() {
        for (const Endpoint& e : r_.endpoints) {
            if (!is_registry_txt(e)) eps_.push_back(&e);
        }
        load_balanced();
        plain_names();
        std::set<std::string> names;
        for (const auto& h : m_.hosts) names.insert(h.name);
        for (const auto& s : m_.records) names.insert(s.name);
        m_.names.assign(names.begin(), names.end());
    }

private:
    void refuse(const std::string& name, std::string why) {
        if (std::none_of(m_.refused.begin(), m_.refused.end(), [&](const Refusal& x) { return x.name == name; })) {
            m_.refused.push_back({name, std::move(why)});
        }
    }

    const model::Zone* zone_of(const std::string& name) const {
        const model::Zone* best = nullptr;
        for (const auto& z : o_.zones) {
            if (model::is_subdomain(bare(name), z.origin) && (!best || z.origin.size() > best->origin.size()))
                best = &z;
        }
        return best;
    }

    // Whether kubernetes.owners names the record's namespace for `name` (or a name above it).
    bool owners_give(const std::string& name) const {
        auto own = o_.owners.find(r_.ns);
        return own != o_.owners.end() &&
               std::any_of(own->second.begin(), own->second.end(),
                           [&](const std::string& suffix) { return model::is_subdomain(bare(name), suffix); });
    }

    // Whether the record's author may publish `name` at all ("" if so, else why). The zone apex only when
    // kubernetes.owners gives it to the record's namespace (and then addresses only: apex_problem).
    std::string scope_problem(const std::string& name) const {
        const model::Zone* z = zone_of(name);
        if (!z) return "not in a zone of this glbd";
        if (name == z->origin && !owners_give(name))
            return "the zone apex is this glbd's unless kubernetes.owners gives it to namespace " + r_.ns;
        for (const auto& ns : z->nameservers) {
            if (ns.name == name) return "the nameserver names are this glbd's";
        }
        if (!model::is_subdomain(bare(name), bare(r_.root_host))) return "outside its rootHost " + r_.root_host;
        if (!o_.owners.empty()) {
            if (!o_.owners.count(r_.ns)) return "namespace " + r_.ns + " owns no names (kubernetes.owners)";
            if (!owners_give(name)) return "not among the names kubernetes.owners gives namespace " + r_.ns;
        }
        return "";
    }

    // At a zone apex the author may publish addresses (a simple or load-balanced host), nothing else: the SOA
    // and NS are glbd's, and a CNAME cannot sit beside them. "" or why not.
    std::string apex_problem(const std::string& name, const std::vector<const Endpoint*>& all) const {
        const model::Zone* z = zone_of(name);
        if (!z || name != z->origin) return "";
        for (const Endpoint* e : all) {
            if (e->type == "CNAME")
                return "a CNAME at the zone apex (RFC 1034 section 3.6.2: it cannot sit beside the apex's SOA and NS)";
            if (e->type != "A" && e->type != "AAAA")
                return e->type + " at the zone apex: its data but addresses is this glbd's";
        }
        return "";
    }

    // The active groups' record (the exact name kuadrant-active-groups.<zone>: a TXT, and only from the
    // namespaces of kubernetes.groupsFrom): "" if `name` is not it or may be published, else why not.
    std::string groups_problem(const std::string& name, const std::vector<const Endpoint*>& all) const {
        const model::Zone* z = zone_of(name);
        if (!z || name != model::active_groups_name(z->origin)) return "";
        for (const Endpoint* e : all) {
            if (e->type != "TXT") return "the active groups' record is a TXT record only";
        }
        if (std::find(o_.groups_from.begin(), o_.groups_from.end(), r_.ns) != o_.groups_from.end()) return "";
        std::string allowed;
        for (const auto& ns : o_.groups_from) allowed += (allowed.empty() ? "" : ", ") + ns;
        return "only the namespaces of kubernetes.groupsFrom may set the active groups (" +
               (allowed.empty() ? std::string("none: glbd's own namespace is not known") : allowed) + ")";
    }

    // The apex NS set and nameserver glue a zone set-up record publishes: what glbd serves anyway when it
    // matches zones[].nameservers (nothing to do), refused with the reason when it does not.
    bool zone_setup(const Endpoint& e) {
        const model::Zone* z = zone_of(e.name);
        if (!z) return false;
        if (e.name == z->origin && e.type == "NS") {
            std::set<std::string> want, got;
            for (const auto& ns : z->nameservers) want.insert(ns.name);
            for (const auto& t : e.targets) got.insert(model::canonical_name(t));
            if (got != want) refuse(e.name, "its NS set differs from zones[].nameservers");
            return true;
        }
        for (const auto& ns : z->nameservers) {
            if (ns.name != e.name || (e.type != "A" && e.type != "AAAA")) continue;
            std::set<std::string> want, got;
            for (const auto& a : ns.addresses) want.insert(Address::is_ip(a) ? canonical(a) : a);
            for (const auto& t : e.targets) got.insert(Address::is_ip(t) ? canonical(t) : t);
            bool all_known = std::all_of(got.begin(), got.end(), [&](const std::string& a) { return want.count(a); });
            if (!all_known) refuse(e.name, "its addresses differ from zones[].nameservers");
            return true;
        }
        return false;
    }

    static std::string canonical(const std::string& ip) {
        Address a;
        return Address::parse(ip, a) ? a.str() : ip;
    }

    bool denied(const Address& a) const {
        return std::any_of(o_.deny.begin(), o_.deny.end(), [&](const Prefix& p) { return p.contains(a); });
    }

    // The addresses of A/AAAA targets (IPv6 may come in an A-typed endpoint), canonical; "" or why not.
    std::string addresses(const std::vector<const Endpoint*>& eps, std::vector<glbd::Endpoint>& out, uint32_t& ttl) {
        std::set<Address> seen;
        size_t denied_count = 0;
        for (const Endpoint* e : eps) {
            if (e->ttl) ttl = ttl ? std::min(ttl, e->ttl) : e->ttl;
            for (const auto& t : e->targets) {
                Address a;
                if (!Address::parse(t, a)) return e->name + ": " + t + " is not an IP address";
                if (denied(a)) {
                    ++denied_count;
                    continue;
                }
                if (seen.insert(a).second) out.emplace_back(a);
            }
        }
        if (out.size() > RecordLimits::kMaxTargets) {
            return std::to_string(out.size()) + " addresses (at most " + std::to_string(RecordLimits::kMaxTargets) +
                   ")";
        }
        if (out.empty() && denied_count) return "every address is in kubernetes.denyNetworks";
        return "";
    }

    std::vector<const Endpoint*> at(const std::string& name, std::initializer_list<const char*> types) const {
        std::vector<const Endpoint*> out;
        for (const Endpoint* e : eps_) {
            if (e->name != name) continue;
            if (std::any_of(types.begin(), types.end(), [&](const char* t) { return e->type == t; })) out.push_back(e);
        }
        return out;
    }

    // The record's health check for `host` (none for a wildcard: upstream probes none either); `why` says
    // what is wrong with it.
    std::optional<model::HealthCheck> health_check(const std::string& host, std::string& why) const {
        if (!r_.health || host.rfind("*.", 0) == 0) return std::nullopt;
        const HealthSpec& s = *r_.health;
        model::HealthCheck hc;
        hc.protocol = s.protocol == "HTTP" ? model::Protocol::http : model::Protocol::https;
        if (!s.protocol.empty() && s.protocol != "HTTP" && s.protocol != "HTTPS") {
            why = "spec.healthCheck.protocol must be HTTP or HTTPS";
            return std::nullopt;
        }
        hc.port = KuadrantDefaults::kProbePort;
        if (s.port < 0 || s.port > 65535) {
            why = "spec.healthCheck.port out of range";
            return std::nullopt;
        }
        if (s.port != 0) hc.port = static_cast<uint16_t>(s.port);
        // The path joins the URL after host and port: it must start with "/" or "?" (upstream's schema), so
        // that no path can name another host or port ("@evil:8080/").
        hc.path = s.path.empty() ? "/" : s.path;
        if (!model::is_probe_path(hc.path)) {
            why = hc.path[0] != '/' && hc.path[0] != '?' ? "spec.healthCheck.path must start with / or ?"
                                                         : "spec.healthCheck.path holds spaces or control bytes";
            return std::nullopt;
        }
        hc.interval = conf::Millis{KuadrantDefaults::kProbeIntervalMs};
        if (!s.interval.empty()) {
            auto d = conf::parse_duration(s.interval);
            if (!d || d->count() < 1000) {
                why = "spec.healthCheck.interval is not a duration of 1s or more";
                return std::nullopt;
            }
            hc.interval = *d;
        }
        unsigned failures = KuadrantDefaults::kProbeFailureThreshold;
        if (s.failure_threshold < 0 || s.failure_threshold > 1000) {
            why = "spec.healthCheck.failureThreshold out of range";
            return std::nullopt;
        }
        if (s.failure_threshold != 0) failures = static_cast<unsigned>(s.failure_threshold);
        hc.failure_threshold = failures + 1;  // unhealthy after *more than* failureThreshold failures in a row
        hc.timeout = conf::Millis{KuadrantDefaults::kProbeTimeoutMs};
        hc.expected_status = {200, 201};
        hc.insecure_skip_verify = o_.insecure_health_checks;
        return hc;
    }

    void add_host(model::Host h) {
        std::string why;
        h.health_check = health_check(h.name, why);
        if (!why.empty()) return refuse(h.name, why);
        m_.hosts.push_back(std::move(h));
    }

    // H CNAME klb.H': an entry per weighted target of every geo of klb.H' (several H may share one klb name:
    // a listener for H and one for *.H).
    void load_balanced() {
        std::map<std::string, std::vector<std::string>> hosts_of;  // klb name -> the hosts pointing at it
        for (const Endpoint* e : eps_) {
            if (e->type == "CNAME" && e->targets.size() == 1 &&
                model::canonical_name(e->targets[0]) == "klb." + bare(e->name)) {
                auto& list = hosts_of[model::canonical_name(e->targets[0])];
                if (std::find(list.begin(), list.end(), e->name) == list.end()) list.push_back(e->name);
                lb_names_.insert(e->name);
            }
        }
        for (const auto& [klb, hosts] : hosts_of) {
            consumed_.insert(klb);
            std::vector<model::Host> entries;
            std::string why = chain(klb, entries);
            for (const auto& h : hosts) {
                const model::Zone* z = zone_of(h);
                bool apex_name =
                    z && h == z->origin && std::any_of(entries.begin(), entries.end(), [](const model::Host& e) {
                        return std::any_of(e.endpoints.begin(), e.endpoints.end(),
                                           [](const glbd::Endpoint& t) { return !t.is_address(); });
                    });
                if (std::string scope = scope_problem(h); !scope.empty()) {
                    refuse(h, scope);
                } else if (!why.empty()) {
                    refuse(h, why);
                } else if (apex_name) {
                    refuse(h, model::kApexCname);
                } else {
                    for (auto entry : entries) {
                        entry.name = h;
                        add_host(std::move(entry));
                    }
                }
            }
        }
    }

    // The entries under klb (geo CNAMEs, weighted CNAMEs, A records or an external name); "" or why not.
    std::string chain(const std::string& klb, std::vector<model::Host>& entries) {
        std::map<std::string, std::pair<std::string, bool>> geo_of;  // geo name -> (code, defaultGeo)
        std::vector<std::string> order;
        for (const Endpoint* e : at(klb, {"CNAME"})) {
            if (!e->geo || e->targets.size() != 1) return klb + ": a geo record needs geo-code and one target";
            std::string g = model::canonical_name(e->targets[0]);
            auto [it, fresh] = geo_of.try_emplace(g, std::string(), false);
            if (fresh) order.push_back(g);
            if (*e->geo == "*") {
                it->second.second = true;
                continue;
            }
            std::string code = *e->geo;
            if (code.rfind("GEO-", 0) != 0) std::transform(code.begin(), code.end(), code.begin(), ::toupper);
            if (!conf::is_geo_code(code)) return "unknown geo code \"" + *e->geo + "\"";
            if (it->second.first.empty()) it->second.first = code;
        }
        if (order.empty()) return klb + " has no geo records";
        std::set<std::string> targets_seen;
        for (const std::string& g : order) {
            consumed_.insert(g);
            auto [code, is_default] = geo_of[g];
            for (const Endpoint* w : at(g, {"CNAME"})) {
                for (const auto& raw : w->targets) {
                    std::string t = model::canonical_name(raw);
                    if (!targets_seen.insert(g + " " + t).second) continue;  // merged records repeat endpoints
                    model::Host h;
                    h.entry = t;
                    h.ttl = w->ttl;
                    model::LoadBalancing lb;
                    lb.geo = code;
                    lb.default_geo = is_default && !code.empty();
                    lb.weight = weight(w->weight);
                    h.load_balancing = lb;
                    if (std::string why = leaf(klb, t, h); !why.empty()) return why;
                    if (h.ttl == 0) h.ttl = KuadrantDefaults::kTtl;
                    entries.push_back(std::move(h));
                }
            }
        }
        if (entries.empty()) return klb + " has no weighted targets";
        return "";
    }

    // A weighted target: a name under klb with A records (its addresses), or an external host name.
    std::string leaf(const std::string& klb, const std::string& t, model::Host& h) {
        if (model::is_subdomain(t, klb)) {
            consumed_.insert(t);
            auto eps = at(t, {"A", "AAAA"});
            if (eps.empty()) return "no address records for " + t;
            uint32_t ttl = 0;
            if (std::string why = addresses(eps, h.endpoints, ttl); !why.empty()) return t + ": " + why;
            if (ttl) h.ttl = ttl;
            return "";
        }
        auto name = glbd::Endpoint::parse(t);
        if (!name || name->is_address()) return "target " + t + " is not a host name";
        h.endpoints.push_back(std::move(*name));
        return "";
    }

    static uint16_t weight(const std::optional<std::string>& w) {
        if (!w || w->empty() || w->size() > 5 || !std::all_of(w->begin(), w->end(), ::isdigit)) return 0;
        long v = std::stol(*w);
        return static_cast<uint16_t>(v <= 65535 ? v : 0);  // a missing or bad weight is 0
    }

    // Every name outside the klb chains: entries (geo-code/weight on plain records), a simple host, NS and TXT
    // static records.
    void plain_names() {
        std::vector<std::string> names;
        for (const Endpoint* e : eps_) {
            if (consumed_.count(e->name) || (lb_names_.count(e->name) && e->type == "CNAME")) continue;
            if (std::find(names.begin(), names.end(), e->name) == names.end()) names.push_back(e->name);
            const model::Zone* z = zone_of(e->name);
            if (e->type == "NS" && z && e->name != z->origin) cuts_.insert(e->name);
        }
        for (const auto& name : names) {
            std::vector<const Endpoint*> all;
            for (const Endpoint* e : eps_) {
                if (e->name == name && !zone_setup(*e)) all.push_back(e);
            }
            if (all.empty()) continue;
            if (std::string why = scope_problem(name); !why.empty()) {
                refuse(name, why);
                continue;
            }
            if (std::string why = groups_problem(name, all); !why.empty()) {
                refuse(name, why);
                continue;
            }
            if (std::string why = apex_problem(name, all); !why.empty()) {
                refuse(name, why);
                continue;
            }
            if (const std::string* cut = cut_above(name)) {
                glue(name, *cut, all);
            } else {
                one_name(name, all);
            }
        }
    }

    // The delegation (an NS name of this record) `name` lies strictly below, or null.
    const std::string* cut_above(const std::string& name) const {
        for (const auto& c : cuts_) {
            if (name != c && model::is_subdomain(name, c)) return &c;
        }
        return nullptr;
    }

    // Below a delegation only addresses may be published: the glue of its name servers.
    void glue(const std::string& name, const std::string& cut, const std::vector<const Endpoint*>& all) {
        for (const Endpoint* e : all) {
            if (e->type != "A" && e->type != "AAAA") return refuse(name, e->type + " below the delegation " + cut);
        }
        for (const Endpoint* e : all) {
            for (const auto& t : e->targets) {
                Address a;
                if (!Address::parse(t, a)) return refuse(name, t + " is not an IP address");
                if (denied(a)) return refuse(name, t + " is in kubernetes.denyNetworks");
                StaticRecord s{name, a.family == 4 ? "A" : "AAAA", e->ttl ? e->ttl : KuadrantDefaults::kTtl, {a.str()}};
                if (std::find(m_.records.begin(), m_.records.end(), s) == m_.records.end()) m_.records.push_back(s);
            }
        }
    }

    void one_name(const std::string& name, const std::vector<const Endpoint*>& all) {
        std::vector<const Endpoint*> addr, cname, ns, txt;
        for (const Endpoint* e : all) {
            if (e->type == "A" || e->type == "AAAA") {
                addr.push_back(e);
            } else if (e->type == "CNAME") {
                cname.push_back(e);
            } else if (e->type == "NS") {
                ns.push_back(e);
            } else if (e->type == "TXT") {
                txt.push_back(e);
            } else {
                return refuse(name, "record type " + e->type + " is not served");
            }
        }
        bool host = !addr.empty() || !cname.empty();
        if (lb_names_.count(name) && !addr.empty()) return refuse(name, "a load-balanced name with other A records");
        if (!cname.empty() && (!addr.empty() || !ns.empty() || !txt.empty())) {
            return refuse(name, "a CNAME beside other data");
        }
        if (host && (!ns.empty() || !txt.empty())) return refuse(name, "NS or TXT beside a host's addresses");
        if (!ns.empty() && !txt.empty()) return refuse(name, "NS beside TXT (a delegation holds no other data)");
        if (name.rfind("*.", 0) == 0 && (!ns.empty())) return refuse(name, "NS at a wildcard name");
        if (host) return host_entries(name, addr, cname);
        for (const Endpoint* e : ns) {
            StaticRecord s{name, "NS", e->ttl ? e->ttl : KuadrantDefaults::kTtl, {}};
            for (const auto& t : e->targets) {
                std::string n = model::canonical_name(t);
                if (!model::is_host_name(n)) return refuse(name, "NS target " + t + " is not a host name");
                s.targets.push_back(n);
            }
            if (!s.targets.empty()) m_.records.push_back(std::move(s));
        }
        for (const Endpoint* e : txt) {
            if (e->targets.empty()) continue;
            m_.records.push_back({name, "TXT", e->ttl ? e->ttl : KuadrantDefaults::kTtl, e->targets});
        }
    }

    // A/AAAA/CNAME at a name: with geo-code or weight, each endpoint one entry; without, one simple entry.
    void host_entries(const std::string& name, const std::vector<const Endpoint*>& addr,
                      const std::vector<const Endpoint*>& cname) {
        std::vector<const Endpoint*> all = addr;
        all.insert(all.end(), cname.begin(), cname.end());
        bool balanced = std::any_of(all.begin(), all.end(), [](const Endpoint* e) { return e->geo || e->weight; });
        if (!balanced) {
            model::Host h;
            h.name = name;
            uint32_t ttl = 0;
            if (std::string why = addresses(addr, h.endpoints, ttl); !why.empty()) return refuse(name, why);
            for (const Endpoint* e : cname) {
                if (e->ttl) ttl = ttl ? std::min(ttl, e->ttl) : e->ttl;
                for (const auto& t : e->targets) {
                    auto n = glbd::Endpoint::parse(model::canonical_name(t));
                    if (!n || n->is_address()) return refuse(name, t + " is not a host name");
                    if (std::find(h.endpoints.begin(), h.endpoints.end(), *n) == h.endpoints.end()) {
                        h.endpoints.push_back(std::move(*n));
                    }
                }
            }
            if (h.endpoints.empty()) return refuse(name, "no targets");
            h.ttl = ttl ? ttl : KuadrantDefaults::kTtl;
            return add_host(std::move(h));
        }
        std::set<std::string> keys;
        for (const Endpoint* e : all) {
            model::Host h;
            h.name = name;
            h.entry = !e->set_identifier.empty() ? e->set_identifier
                      : e->targets.empty()       ? ""
                                                 : model::canonical_name(e->targets[0]);
            if (!keys.insert(h.entry).second) continue;  // the same entry again (merged records)
            model::LoadBalancing lb;
            lb.weight = weight(e->weight);
            if (e->geo && *e->geo != "*") {
                std::string code = *e->geo;
                if (code.rfind("GEO-", 0) != 0) std::transform(code.begin(), code.end(), code.begin(), ::toupper);
                if (!conf::is_geo_code(code)) return refuse(name, "unknown geo code \"" + *e->geo + "\"");
                lb.geo = code;
            }
            lb.default_geo = e->geo && *e->geo == "*";
            h.load_balancing = lb;
            uint32_t ttl = 0;
            if (e->type == "CNAME") {
                auto n =
                    e->targets.size() == 1 ? glbd::Endpoint::parse(model::canonical_name(e->targets[0])) : std::nullopt;
                if (!n || n->is_address()) return refuse(name, "a CNAME needs one host name target");
                h.endpoints.push_back(std::move(*n));
                ttl = e->ttl;
            } else if (std::string why = addresses({e}, h.endpoints, ttl); !why.empty()) {
                return refuse(name, why);
            }
            h.ttl = ttl ? ttl : KuadrantDefaults::kTtl;
            add_host(std::move(h));
        }
    }

    const Record& r_;
    const MapOptions& o_;
    Mapped& m_;
    std::vector<const Endpoint*> eps_;  // without the registry's TXT records
    std::set<std::string> consumed_;    // names of the klb chains
    std::set<std::string> lb_names_;    // names whose CNAME starts a chain
    std::set<std::string> cuts_;        // names with NS below a zone's apex: delegations
};

bool in_zones(const std::string& name, const std::vector<model::Zone>& zones) {
    return std::any_of(zones.begin(), zones.end(),
                       [&](const model::Zone& z) { return model::is_subdomain(bare(name), z.origin); });
}

}  // namespace

namespace {

std::string zone_list(const std::vector<model::Zone>& zones) {
    std::string out;
    for (const auto& z : zones) out += (out.empty() ? "" : ", ") + z.origin;
    return out.empty() ? "none" : out;
}

// A record that is an input of this mode but for a zone glbd does not serve: why ("" when it is not one).
std::string other_zone(const Record& r, const MapOptions& o) {
    if (o.mode == Mode::coredns) {
        if (r.zone_label.empty()) return "";
        return "it is labelled for zone " + r.zone_label +
               ", which this glbd does not serve (its zones: " + zone_list(o.zones) + ")";
    }
    if (r.root_host.empty()) return "";
    return "its rootHost " + r.root_host + " lies in no zone this glbd serves (its zones: " + zone_list(o.zones) + ")";
}

}  // namespace

Mapped map_record(const Record& r, const MapOptions& o) {
    Mapped m;
    switch (o.mode) {
        case Mode::coredns:
            m.not_ours = std::none_of(o.zones.begin(), o.zones.end(),
                                      [&](const model::Zone& z) { return z.origin == r.zone_label; });
            break;
        case Mode::delegate: m.not_ours = !r.delegate || r.authoritative || !in_zones(r.root_host, o.zones); break;
        case Mode::controller: m.not_ours = r.delegate || r.authoritative || !in_zones(r.root_host, o.zones); break;
    }
    if (m.not_ours) {
        bool input = o.mode == Mode::coredns ||
                     (o.mode == Mode::delegate ? r.delegate && !r.authoritative : !r.delegate && !r.authoritative);
        if (input) m.other_zone = other_zone(r, o);
        return m;
    }
    if (!r.error.empty()) {
        m.error = r.error;
        return m;
    }
    if (r.root_host.empty()) {
        m.error = "no spec.rootHost";
        return m;
    }
    if (!model::is_lb_host_name(r.root_host)) {
        m.error = "spec.rootHost \"" + r.root_host + "\" is not a valid host name";
        return m;
    }
    try {
        Mapper(r, o, m).run();
    } catch (const std::exception& e) {
        m = Mapped{};
        m.error = std::string("cannot be mapped: ") + e.what();
    }
    return m;
}

}  // namespace glbd::kube
