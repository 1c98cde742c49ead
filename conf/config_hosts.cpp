// conf/config_hosts.cpp — the DNS data of a config: zones (SOA, nameservers, records, zone files) and the
// load-balanced hosts (endpoints, loadBalancing, healthCheck).
#include <algorithm>
#include <map>
#include <set>

#include "conf/reader.hpp"
#include "resolver/base/read_file.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/consts.hpp"
#include "resolver/wire/text.hpp"

namespace glbd::conf {
namespace {

constexpr int64_t kMaxTtl = 2147483647;

// A domain name in the canonical text form (lower case, no trailing dot); nullopt (error recorded) if bad.
std::optional<std::string> domain_name(Reader& r, const Node& n, const std::string& path, bool root_ok) {
    auto s = r.str(n, path);
    if (!s) return std::nullopt;
    auto w = wire::name_to_wire(*s);
    if (!w || (*s == "." && !root_ok)) {
        r.error(n, path, "not a valid domain name: \"" + *s + "\"");
        return std::nullopt;
    }
    return wire::wire_to_name(*w);
}

void read_soa(Reader& r, const Node& n, const std::string& path, Zone& zone) {
    Section s(r, n, path, {"mname", "rname", "refresh", "retry", "expire", "minimum"});
    if (!s) return;
    for (auto [key, out] : {std::pair{"mname", &zone.soa.mname}, std::pair{"rname", &zone.soa.rname}}) {
        if (auto v = s.str(key)) {
            if (wire::name_to_wire(*v))
                *out = *v;
            else
                s.error(key, "not a valid domain name: \"" + *v + "\"");
        }
    }
    s.integer("refresh", 0, kMaxTtl, zone.soa.refresh);
    s.integer("retry", 0, kMaxTtl, zone.soa.retry);
    s.integer("expire", 0, kMaxTtl, zone.soa.expire);
    s.integer("minimum", 0, kMaxTtl, zone.soa.minimum);
}

void read_nameservers(Reader& r, const Node& n, const std::string& path, Zone& zone) {
    if (!r.seq(n, path)) return;
    for (size_t i = 0; i < n.size(); ++i) {
        Section s(r, n[i], Reader::index(path, i), {"name", "addresses"});
        if (!s) continue;
        if (!s["name"]) {
            r.error(n[i], s.at("name"), "required");
            continue;
        }
        auto name = domain_name(r, s["name"], s.at("name"), true);
        if (!name) continue;
        Nameserver ns{*name, {}};
        if (auto addrs = s["addresses"]; addrs && r.seq(addrs, s.at("addresses"))) {
            for (size_t k = 0; k < addrs.size(); ++k) {
                std::string ap = Reader::index(s.at("addresses"), k);
                if (auto a = r.str(addrs[k], ap)) {
                    if (is_ip(*a))
                        ns.addresses.push_back(*a);
                    else
                        r.error(addrs[k], ap, "not an IP address: \"" + *a + "\"");
                }
            }
        }
        if (is_subdomain(ns.name, zone.origin) && ns.addresses.empty()) {
            r.error(n[i], s.at("addresses"), "required: " + ns.name + " lies in the zone and needs glue");
        }
        zone.nameservers.push_back(std::move(ns));
    }
}

// A zone's records from its `file` and `records` (apex NS records join the nameservers).
void read_records(Reader& r, Section& s, Zone& zone, std::vector<StaticRecord>& apex_ns) {
    if (auto f = s.str("file")) {
        auto text = read_file(*f, kMaxConfigBytes);
        if (!text) {
            s.error("file", "cannot open \"" + *f + "\": " + text.error());
        } else {
            Reader fr(*f, r.errors());
            parse_zone_text(fr, *text, "", 0, zone, apex_ns);
        }
    }
    if (auto text = s.str("records")) {
        int first = s["records"].line() + 1;  // a block scalar's text starts on the line after its indicator
        parse_zone_text(r, *text, s.at("records"), first, zone, apex_ns);
    }
}

// zones[].dnssec: the key pairs loaded and checked now, so that `glbd check` names a bad one.
void read_dnssec(Reader& r, const Node& n, const std::string& path, Zone& zone) {
    Section s(r, n, path, {"keys", "signatureValidity", "parent"});
    if (!s) return;
    ZoneDnssec d;
    s.duration("signatureValidity", Millis{7'200'000}, Millis{366LL * 86'400'000}, d.signature_validity);
    if (auto parent = s["parent"]; parent && r.seq(parent, s.at("parent"))) {
        if (parent.size() > ZoneDnssec::kMaxParentServers) {
            r.error(parent, s.at("parent"), "at most " + std::to_string(ZoneDnssec::kMaxParentServers) + " servers");
        }
        for (size_t i = 0; i < parent.size() && i < ZoneDnssec::kMaxParentServers; ++i) {
            if (auto a = r.socket_address(parent[i], Reader::index(s.at("parent"), i))) d.parent.push_back(*a);
        }
    }
    auto keys = s["keys"];
    if (!keys) return r.error(n, s.at("keys"), "required: the zone's key pairs");
    if (!r.seq(keys, s.at("keys"))) return;
    for (size_t i = 0; i < keys.size(); ++i) {
        std::string at = Reader::index(s.at("keys"), i);
        auto file = r.str(keys[i], at);
        if (!file) continue;
        std::string error;
        auto key = dnssec::Key::load(*file, zone.origin, error);
        if (!key) {
            r.error(keys[i], at, error);
            continue;
        }
        for (const auto& other : d.keys) {
            if (other->tag() == key->tag()) r.error(keys[i], at, "a second key with tag " + std::to_string(key->tag()));
        }
        d.keys.push_back(std::move(key));
    }
    if (keys.size() > 0 && d.keys.size() == keys.size() &&
        std::none_of(d.keys.begin(), d.keys.end(), [](const auto& k) { return k->sep(); })) {
        r.error(keys, s.at("keys"), "needs a key with flags 257 (a KSK or CSK), the one the parent's DS names");
    }
    if (keys.size() > 0 && d.keys.size() == keys.size()) {
        // RFC 4035 2.2: each RRset is signed with every algorithm of the DNSKEY set. A resolver whose DS names
        // one algorithm finds an RRset signed with another alone bogus.
        auto roles = dnssec::split_roles(d.keys, [](const auto& k) { return k->sep(); });
        std::set<uint8_t> algorithms;
        for (const auto& k : d.keys) algorithms.insert(k->algorithm());
        for (uint8_t alg : algorithms) {
            for (dnssec::Role role : {dnssec::kAnswers, dnssec::kKeySets}) {
                if (std::any_of(roles[role].begin(), roles[role].end(),
                                [&](const auto& k) { return k->algorithm() == alg; }))
                    continue;
                r.error(keys, s.at("keys"),
                        "algorithm " + dnssec::algorithm_name(alg) + " would sign no " +
                            (role == dnssec::kAnswers ? "answer (the ZSKs sign them, and none is of it)"
                                                      : "DNSKEY set (no KSK or CSK is of it)") +
                            ": every RRset must be signed with each algorithm of the DNSKEY set (RFC 4035 2.2), so "
                            "give each algorithm a KSK or CSK, and a ZSK when the zone has ZSKs");
            }
        }
    }
    if (keys.size() == 0) r.error(keys, s.at("keys"), "needs at least one key");
    for (const auto& rec : zone.records) {
        namespace t = wire::type;
        if (rec.type == t::DNSKEY || rec.type == t::RRSIG || rec.type == t::NSEC || rec.type == t::NSEC3 ||
            rec.type == t::NSEC3PARAM || rec.type == t::CDS || rec.type == t::CDNSKEY) {
            r.error(n, path,
                    "a signed zone's DNSKEY, RRSIG, NSEC(3), CDS and CDNSKEY records are glbd's own: "
                    "remove them from records and file");
            break;
        }
    }
    zone.dnssec = std::move(d);
}

void read_zone(Reader& r, Section& s, std::set<std::string>& origins, Config& c) {
    if (!s["origin"]) return r.error(s.node(), s.at("origin"), "required");
    auto origin = domain_name(r, s["origin"], s.at("origin"), false);
    if (!origin) return;
    Zone zone;
    zone.origin = *origin;
    if (!origins.insert(zone.origin).second) s.error("origin", "duplicate zone " + zone.origin);
    s.integer("ttl", 0, kMaxTtl, zone.ttl);
    std::vector<StaticRecord> apex_ns;
    read_records(r, s, zone, apex_ns);
    if (auto n = s["soa"]) read_soa(r, n, s.at("soa"), zone);
    if (auto n = s["nameservers"]) read_nameservers(r, n, s.at("nameservers"), zone);
    for (auto& rec : apex_ns) {
        Nameserver extra{wire::wire_to_name(rec.rdata), {}};
        bool dup = std::any_of(zone.nameservers.begin(), zone.nameservers.end(),
                               [&](const Nameserver& x) { return x.name == extra.name; });
        if (!dup) zone.nameservers.push_back(extra);
    }
    if (zone.nameservers.empty()) r.error(s.node(), s.at("nameservers"), "required: at least one nameserver");
    if (zone.soa.mname.empty() && !zone.nameservers.empty()) zone.soa.mname = zone.nameservers[0].name;
    if (auto n = s["dnssec"]) read_dnssec(r, n, s.at("dnssec"), zone);
    c.zones.push_back(std::move(zone));
}

void read_load_balancing(Reader& r, const Node& n, const std::string& path, const Config& c, Host& host) {
    Section s(r, n, path, {"weight", "geo", "defaultGeo"});
    if (!s) return;
    LoadBalancing lb;
    s.integer("weight", 0, 65535, lb.weight);
    if (auto g = s.str("geo")) {
        bool custom = std::any_of(c.geoip.networks.begin(), c.geoip.networks.end(),
                                  [&](const GeoNetwork& gn) { return gn.code == *g; });
        if (!is_geo_code(*g) && !custom) {
            s.error("geo", "unknown geo code \"" + *g +
                               "\": use ISO 3166-1 alpha-2, GEO-<AF|AN|AS|EU|NA|OC|SA> or a code from geoip.networks");
        }
        lb.geo = *g;
    }
    s.boolean("defaultGeo", lb.default_geo);
    if (lb.default_geo && lb.geo.empty()) s.error("defaultGeo", "defaultGeo needs a geo");
    host.load_balancing = lb;
}

void read_health_check(Reader& r, const Node& n, const std::string& path, Host& host) {
    Section s(r, n, path,
              {"protocol", "port", "path", "interval", "timeout", "failureThreshold", "successThreshold",
               "expectedStatus", "headers", "insecureSkipVerify"});
    if (!s) return;
    HealthCheck hc;
    if (auto p = s.choice("protocol", {"HTTP", "HTTPS", "TCP"})) {
        hc.protocol = *p == "HTTP" ? Protocol::http : *p == "HTTPS" ? Protocol::https : Protocol::tcp;
    }
    hc.port = 0;
    s.integer("port", 1, 65535, hc.port);
    if (hc.port == 0 && hc.protocol == Protocol::tcp && !s["port"]) s.error("port", "required for TCP checks");
    if (hc.port == 0) hc.port = hc.protocol == Protocol::https ? 443 : 80;
    if (auto p = s.str("path")) {
        if (!is_probe_path(*p))
            s.error("path", "must start with / or ? and hold no spaces or control bytes, got \"" + *p + "\"");
        hc.path = *p;
    }
    s.duration("interval", Millis{100}, Millis{3'600'000}, hc.interval);
    s.duration("timeout", Millis{10}, Millis{600'000}, hc.timeout);
    s.integer("failureThreshold", 1, 100, hc.failure_threshold);
    s.integer("successThreshold", 1, 100, hc.success_threshold);
    if (auto v = s["expectedStatus"]; v && r.seq(v, s.at("expectedStatus"))) {
        hc.expected_status.clear();
        for (size_t i = 0; i < v.size(); ++i) {
            if (auto x = r.integer(v[i], Reader::index(s.at("expectedStatus"), i), 100, 599)) {
                hc.expected_status.push_back(static_cast<int>(*x));
            }
        }
    }
    if (auto v = s["headers"]) {
        if (!v.is_map()) {
            s.error("headers", "must be a mapping of header name to value");
        } else {
            for (auto [hk, hv] : v.pairs()) {
                if (auto val = r.str(hv, s.at("headers") + "." + std::string(hk.scalar()))) {
                    hc.headers.emplace_back(std::string(hk.scalar()), *val);
                }
            }
        }
    }
    s.boolean("insecureSkipVerify", hc.insecure_skip_verify);
    host.health_check = hc;
}

void read_endpoints(Reader& r, const Node& eps, const std::string& path, Host& host, bool apex) {
    if (!r.seq(eps, path)) return;
    for (size_t k = 0; k < eps.size(); ++k) {
        std::string ep = Reader::index(path, k);
        auto e = r.str(eps[k], ep);
        if (!e) continue;
        if (Address a; Address::parse(*e, a)) {
            host.endpoints.emplace_back(a);
        } else if (auto w = wire::name_to_wire(*e); w && is_host_name(*e) && apex) {
            r.error(eps[k], ep, std::string(kApexCname) + ": \"" + *e + "\"");
        } else if (auto name = w && is_host_name(*e) ? Endpoint::parse(wire::wire_to_name(*w)) : std::nullopt) {
            host.endpoints.push_back(*name);  // lower case, no trailing dot
        } else {
            r.error(eps[k], ep, "not an IP address or host name: \"" + *e + "\"");
        }
    }
}

// A host's names and entries seen so far: each (name, entry) once, and a name given twice needs an entry in
// each of its listings.
struct Seen {
    std::set<std::pair<std::string, std::string>> entries;
    std::map<std::string, bool> unnamed;  // name -> whether a listing of it had no entry
};

void read_host(Reader& r, Section& s, Seen& seen, Config& c) {
    if (!s["name"]) return r.error(s.node(), s.at("name"), "required");
    auto text = s.str("name");
    if (!text) return;
    auto w = wire::name_to_wire(*text);
    Host host;
    host.name = w ? wire::wire_to_name(*w) : "";
    if (!w || !is_lb_host_name(host.name)) return s.error("name", "not a valid host name: \"" + *text + "\"");
    if (auto e = s.str("entry")) {
        if (!is_instance_name(*e)) {
            s.error("entry", "must be 1..253 characters of [A-Za-z0-9._-], got \"" + *e + "\"");
        } else {
            host.entry = *e;
        }
    }
    auto [listed, first] = seen.unnamed.try_emplace(host.name, host.entry.empty());
    if (!seen.entries.insert({host.name, host.entry}).second) {
        s.error("name", "duplicate host " + host.name + (host.entry.empty() ? "" : " entry " + host.entry));
    } else if (!first && (listed->second || host.entry.empty())) {
        s.error("name", "host " + host.name + " is listed more than once: give each listing its own entry");
    }
    listed->second = listed->second || host.entry.empty();
    bool in_zone =
        std::any_of(c.zones.begin(), c.zones.end(), [&](const Zone& z) { return is_subdomain(host.name, z.origin); });
    if (!in_zone && !c.zones.empty()) s.error("name", host.name + " is not in any configured zone");
    s.integer("ttl", 0, kMaxTtl, host.ttl);
    bool apex = std::any_of(c.zones.begin(), c.zones.end(), [&](const Zone& z) { return host.name == z.origin; });
    if (auto eps = s["endpoints"])
        read_endpoints(r, eps, s.at("endpoints"), host, apex);
    else
        r.error(s.node(), s.at("endpoints"), "required");
    if (auto lb = s["loadBalancing"]) read_load_balancing(r, lb, s.at("loadBalancing"), c, host);
    if (auto hc = s["healthCheck"]) read_health_check(r, hc, s.at("healthCheck"), host);
    c.hosts.push_back(std::move(host));
}

}  // namespace

void read_zones(Reader& r, const Node& n, Config& c) {
    if (!r.seq(n, "zones")) return;
    if (n.size() == 0) r.error(n, "zones", "needs at least one zone");
    std::set<std::string> origins;
    for (size_t i = 0; i < n.size(); ++i) {
        Section s(r, n[i], Reader::index("zones", i),
                  {"origin", "ttl", "soa", "nameservers", "records", "file", "dnssec"});
        if (s) read_zone(r, s, origins, c);
    }
}

void read_hosts(Reader& r, const Node& n, Config& c) {
    if (!r.seq(n, "hosts")) return;
    Seen seen;
    c.hosts.reserve(c.hosts.size() + n.size());  // no room to grow left over (10,000 hosts: 1.6 MB)
    for (size_t i = 0; i < n.size(); ++i) {
        Section s(r, n[i], Reader::index("hosts", i),
                  {"name", "entry", "ttl", "endpoints", "loadBalancing", "healthCheck"});
        if (s) read_host(r, s, seen, c);
    }
}

}  // namespace glbd::conf
