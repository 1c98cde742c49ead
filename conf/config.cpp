// conf/config.cpp — YAML to a validated Config: the server's own sections (cluster, listen, admin, geoip,
// peers, kubernetes, log, rateLimit) and the entry points. Every problem is collected, none stops the walk.
#include "conf/config.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "conf/reader.hpp"
#include "resolver/base/read_file.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::conf {
namespace {

// A secret's file that every user may read or write: refused, as DNSSEC private keys are.
std::string secret_open_to_everyone(const std::string& path, const std::string& mode) {
    return "\"" + path + "\" holds a secret but every user may read or write it (mode " + mode +
           "): chmod o-rw it (0640, group glbd, as the package's)";
}

// cluster.location: {lat: DEGREES, lon: DEGREES}.
std::optional<Coordinates> read_location(Reader& r, const Node& n, const std::string& path) {
    Section s(r, n, path, {"lat", "lon"});
    if (!s) return std::nullopt;
    Coordinates c;
    bool ok = true;
    auto degrees = [&](const char* key, double limit, float& out) {
        auto v = s[key];
        if (!v) {
            s.error(key, "required");
            ok = false;
            return;
        }
        std::optional<std::string> text = r.str(v, s.at(key));
        double d = 0;
        auto res = text ? std::from_chars(text->data(), text->data() + text->size(), d) : std::from_chars_result{};
        if (!text || res.ec != std::errc() || res.ptr != text->data() + text->size() || !(d >= -limit && d <= limit)) {
            s.error(key, "must be a number of degrees from " + std::to_string(static_cast<int>(-limit)) + " to " +
                             std::to_string(static_cast<int>(limit)) + (text ? ", got \"" + *text + "\"" : ""));
            ok = false;
            return;
        }
        out = static_cast<float>(std::round(d * 1e4) / 1e4);  // what peers are told (sync: 4 decimals)
    };
    degrees("lat", 90, c.lat);
    degrees("lon", 180, c.lon);
    return ok ? std::optional<Coordinates>(c) : std::nullopt;
}

void read_cluster(Reader& r, const Node& root, Config& c) {
    auto n = root["cluster"];
    if (!n) return r.error(root, "cluster.id", "required");
    Section s(r, n, "cluster", {"id", "instance", "location"});
    if (!s) return;
    if (!s["id"]) r.error(n, "cluster.id", "required");
    if (auto v = s.str("id")) {
        if (!is_cluster_id(*v)) s.error("id", "must be 1..63 characters of [a-z0-9-], got \"" + *v + "\"");
        c.cluster.id = *v;
    }
    if (auto v = s.str("instance")) {  // "" is the default: the host name
        if (!v->empty() && !is_instance_name(*v))
            s.error("instance", "must be 1..253 characters of [A-Za-z0-9._-], got \"" + *v + "\"");
        c.cluster.instance = *v;
    }
    if (auto v = s["location"]) c.cluster.location = read_location(r, v, s.at("location"));
    if (c.cluster.instance.empty()) {
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        c.cluster.instance = host;
    }
}

void read_listen(Reader& r, const Node& root, Config& c) {
    auto n = root["listen"];
    if (!n) return r.error(root, "listen.dns", "required");
    Section s(r, n, "listen",
              {"dns", "udpPayloadSize", "tcpMaxConnections", "tcpMaxConnectionsPerSource", "tcpMaxInflight",
               "tcpIdleTimeout", "cookieSecretFile"});
    if (!s) return;
    Listen& l = c.listen;
    if (auto f = s.str("cookieSecretFile")) {
        std::ifstream in(*f);
        std::string line;
        bool opened = in.is_open();
        auto raw = opened && std::getline(in, line) ? wire::base64_decode(line) : std::nullopt;
        if (!opened) {
            s.error("cookieSecretFile", "cannot open \"" + *f + "\"");
        } else if (auto mode = open_to_everyone(*f)) {
            s.error("cookieSecretFile", secret_open_to_everyone(*f, *mode));
        } else if (!raw || raw->size() != 16) {
            s.error("cookieSecretFile", "must hold 16 bytes in base64 (head -c 16 /dev/urandom | base64)");
        } else {
            l.cookie_secret.emplace();
            std::copy(raw->begin(), raw->end(), l.cookie_secret->begin());
        }
    }
    if (auto dns = s["dns"]; !dns) {
        r.error(n, "listen.dns", "required");
    } else if (r.seq(dns, "listen.dns")) {
        if (dns.size() == 0) r.error(dns, "listen.dns", "needs at least one address");
        std::set<std::string> seen;
        for (size_t i = 0; i < dns.size(); ++i) {
            auto path = Reader::index("listen.dns", i);
            if (auto a = r.socket_address(dns[i], path)) {
                if (!seen.insert(a->str()).second) r.error(dns[i], path, "duplicate listen address " + a->str());
                l.dns.push_back(*a);
            }
        }
    }
    s.integer("udpPayloadSize", 512, 4096, l.udp_payload);
    s.integer("tcpMaxConnections", 1, 100000, l.tcp_max_connections);
    s.integer("tcpMaxConnectionsPerSource", 1, 100000, l.tcp_max_per_source);
    s.integer("tcpMaxInflight", 1, 65535, l.tcp_max_inflight);
    s.duration("tcpIdleTimeout", Millis{100}, Millis{600'000}, l.tcp_idle_timeout);
}

void read_admin(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "admin", {"listen", "token"});
    if (!s) return;
    if (auto v = s.str("token")) c.admin.token = *v;
    if (auto v = s["listen"]) {
        c.admin.listen = r.socket_address(v, "admin.listen");
        if (c.admin.listen && c.admin.token.empty() && !c.admin.listen->address.is_loopback()) {
            r.error(v, "admin.token", "required when admin.listen is not a loopback address");
        }
    }
}

void read_geo_networks(Reader& r, const Node& nets, GeoIp& g) {
    if (!nets.is_map()) return r.error(nets, "geoip.networks", "must be a mapping of CIDR to geo code");
    std::set<std::string> seen;
    for (auto [k, v] : nets.pairs()) {
        const std::string cidr(k.scalar());
        std::string path = "geoip.networks." + cidr;
        Prefix network;
        if (!Prefix::parse(cidr, network)) {
            r.error(k, path, "not a CIDR network (address/prefix with no host bits set)");
            continue;
        }
        if (!seen.insert(cidr).second) r.error(k, path, "duplicate network");
        auto code = r.str(v, path);
        if (!code) continue;
        if (!is_custom_geo_code(*code)) {
            r.error(v, path, "geo code must be 1..32 of [A-Za-z0-9_-], got \"" + *code + "\"");
            continue;
        }
        g.networks.push_back({network, *code});
    }
}

// Whether PATH holds a public key in PEM, as libloc verifies a database's signature with (checked here so that
// a wrong file is blamed on geoip.signingKey, at its line, rather than on the database's signature).
bool holds_public_key(const std::string& path) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(path.c_str(), "r"), BIO_free);
    if (!bio) return false;
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
                                                            EVP_PKEY_free);
    if (!key) ERR_clear_error();  // leave no error queued for the thread's next OpenSSL call
    return key != nullptr;
}

void read_geoip(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "geoip", {"database", "networks", "verify", "signingKey", "fallback"});
    if (!s) return;
    GeoIp& g = c.geoip;
    if (auto f = s.choice("fallback", {"default", "nearest"})) g.nearest = *f == "nearest";
    s.boolean("verify", g.verify);
    if (auto v = s.str("signingKey")) {
        g.signing_key = *v;
        if (!std::ifstream(*v)) {
            s.error("signingKey", "cannot open \"" + *v + "\"");
        } else if (!holds_public_key(*v)) {
            s.error("signingKey", "\"" + *v + "\" holds no public key in PEM (-----BEGIN PUBLIC KEY-----)");
        }
    }
    if (g.verify && !s["database"]) r.error(n, "geoip.verify", "needs a geoip.database to verify");
    if (auto v = s.str("database")) {
        g.database = *v;
        if (!std::ifstream(*v, std::ios::binary)) s.error("database", "cannot open \"" + *v + "\"");
    }
    if (auto nets = s["networks"]) read_geo_networks(r, nets, g);
}

// kubernetes.owners: namespace -> the names its records may publish.
void read_owners(Reader& r, const Node& n, Kubernetes& k) {
    if (!n.is_map()) return r.error(n, "kubernetes.owners", "must be a mapping of namespace to a list of names");
    for (auto [key, names] : n.pairs()) {
        const std::string ns(key.scalar());
        std::string path = "kubernetes.owners." + ns;
        if (!is_cluster_id(ns)) r.error(key, path, "not a namespace name: \"" + ns + "\"");
        if (!r.seq(names, path)) continue;
        auto& list = k.owners[ns];
        for (size_t i = 0; i < names.size(); ++i) {
            auto name = r.str(names[i], Reader::index(path, i));
            if (!name) continue;
            std::string lower = canonical_name(*name);
            if (!is_host_name(lower)) {
                r.error(names[i], Reader::index(path, i), "not a host name: \"" + *name + "\"");
                continue;
            }
            list.push_back(lower);
        }
    }
}

void read_deny_networks(Reader& r, const Node& n, Kubernetes& k) {
    if (!r.seq(n, "kubernetes.denyNetworks")) return;
    for (size_t i = 0; i < n.size(); ++i) {
        auto path = Reader::index("kubernetes.denyNetworks", i);
        auto cidr = r.str(n[i], path);
        Prefix p;
        if (cidr && !Prefix::parse(*cidr, p)) {
            r.error(n[i], path, "not a CIDR network (address/prefix with no host bits set)");
        } else if (cidr) {
            k.deny_networks.push_back(p);
        }
    }
}

void read_kubernetes(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "kubernetes",
              {"mode", "apiServer", "kubeconfig", "namespaces", "resync", "owners", "groupsFrom", "group",
               "insecureHealthChecks", "denyNetworks"});
    if (!s) return;
    Kubernetes k;
    if (auto m = s.choice("mode", {"coredns", "delegate", "controller"})) {
        k.mode = *m == "controller" ? Kubernetes::Mode::controller
                 : *m == "delegate" ? Kubernetes::Mode::delegate
                                    : Kubernetes::Mode::coredns;
    }
    if (auto v = s.str("apiServer")) {
        k.api_server = *v;
        // Plain HTTP only to a loopback address (tests): the bearer token goes there too.
        if (!v->empty() && !is_api_server_url(*v)) {
            s.error("apiServer", "must be an https:// URL (http:// only to a loopback address)");
        }
    }
    if (auto v = s.str("kubeconfig")) k.kubeconfig = *v;
    if (!k.api_server.empty() && !k.kubeconfig.empty())
        r.error(n, "kubernetes", "set apiServer or kubeconfig, not both");
    auto namespaces = [&](const char* key, std::vector<std::string>& out) {
        std::string at = std::string("kubernetes.") + key;
        auto v = s[key];
        if (!v || !r.seq(v, at)) return;
        for (size_t i = 0; i < v.size(); ++i) {
            auto path = Reader::index(at, i);
            if (auto ns = r.str(v[i], path)) {
                if (!is_cluster_id(*ns)) r.error(v[i], path, "not a namespace name: \"" + *ns + "\"");
                out.push_back(*ns);
            }
        }
    };
    namespaces("namespaces", k.namespaces);
    namespaces("groupsFrom", k.groups_from);
    s.duration("resync", Millis{0}, Millis{86'400'000}, k.resync);
    if (auto v = s["owners"]) read_owners(r, v, k);
    if (auto v = s.str("group")) {
        k.group = *v;
        if (!v->empty() && !is_group_name(*v))
            s.error("group",
                    "a group name (as dns-operator's --group) is 1 to 16 printable characters, none of "
                    "';', '&', ',', '=', quotes or spaces");
    }
    s.boolean("insecureHealthChecks", k.insecure_health_checks);
    if (auto v = s["denyNetworks"]) read_deny_networks(r, v, k);
    c.kubernetes = std::move(k);
}

// The manifests' placeholder secret (docker/k8s/base/glbd.yaml): valid base64, and public.
constexpr std::string_view kPlaceholderSecret = "REPLACE/WITH/glbd/keygen/OUTPUT/AAAAAAAAAAAAAAAAAAAAAAA=";
// HMAC-SHA256 keys shorter than its output weaken it (RFC 2104 section 3); keygen writes 32 bytes.
constexpr size_t kMinSecretBytes = 32;

// The TSIG secret, given inline or in a file (its first line); checked to be base64, at least 32 bytes, and
// not the manifests' placeholder.
void read_secret(Reader& r, Section& key, TsigKey& out) {
    auto secret = key["secret"];
    auto file = key["secretFile"];
    std::optional<std::string> value;
    if (secret && file) {
        return key.error("secretFile", "give secret or secretFile, not both");
    } else if (secret) {
        value = key.str("secret");
    } else if (auto f = file ? key.str("secretFile") : std::nullopt) {
        std::ifstream in(*f);
        if (!in) return key.error("secretFile", "cannot open \"" + *f + "\"");
        if (auto mode = open_to_everyone(*f)) return key.error("secretFile", secret_open_to_everyone(*f, *mode));
        std::getline(in, value.emplace());
    } else if (!file) {
        return r.error(key.node(), "peers.key.secret", "required (or secretFile)");
    }
    if (!value) return;
    auto raw = wire::base64_decode(*value);
    const char* where = secret ? "secret" : "secretFile";
    if (!raw || raw->empty()) {
        key.error(where, "the TSIG secret is not valid base64");
    } else if (*value == kPlaceholderSecret) {
        key.error(where, "the manifests' placeholder (a secret everyone has): put `glbd keygen` output here");
    } else if (raw->size() < kMinSecretBytes) {
        key.error(where, "the TSIG secret is " + std::to_string(raw->size()) + " bytes: at least " +
                             std::to_string(kMinSecretBytes) + " (as glbd keygen writes)");
    }
    out.secret = *value;
}

void read_peer_key(Reader& r, const Node& peers, Peers& p) {
    auto n = peers["key"];
    if (!n) return r.error(peers, "peers.key", "required");
    Section key(r, n, "peers.key", {"name", "algorithm", "secret", "secretFile"});
    if (!key) return;
    if (!key["name"]) r.error(n, "peers.key.name", "required");
    if (auto v = key.str("name")) {
        if (!wire::name_to_wire(*v)) key.error("name", "not a valid key name");
        p.key.name = *v;
    }
    if (auto v = key.str("algorithm")) {
        if (*v != "hmac-sha256") key.error("algorithm", "only hmac-sha256 is supported");
        p.key.algorithm = *v;
    }
    read_secret(r, key, p.key);
}

void read_peers(Reader& r, const Node& n, Config& c) {
    Section s(
        r, n, "peers",
        {"key", "members", "advertise", "learnMembers", "syncInterval", "deadAfter", "deadAfterMax", "forgetAfter"});
    if (!s) return;
    Peers p;
    read_peer_key(r, n, p);
    if (auto m = s["members"]; m && r.seq(m, "peers.members")) {
        for (size_t i = 0; i < m.size(); ++i) {
            Section member(r, m[i], Reader::index("peers.members", i), {"address"});
            if (!member) continue;
            if (auto a = member["address"]) {
                if (auto addr = r.sockaddr(a, member.at("address"), true)) p.members.push_back(*addr);
            } else {
                r.error(m[i], member.at("address"), "required");
            }
        }
    }
    if (auto m = s["advertise"]; m && r.seq(m, "peers.advertise")) {
        for (size_t i = 0; i < m.size(); ++i) {
            std::string path = Reader::index("peers.advertise", i);
            auto addr = r.sockaddr(m[i], path, false);
            SocketAddress a;
            if (!addr) continue;
            if (!SocketAddress::parse(addr->str(), a) || !a.reachable()) {
                r.error(m[i], path,
                        "must be an address other clusters can reach (not a wildcard or multicast, not port 0)");
            } else if (p.advertise.size() == Peers::kMaxAdvertise) {
                r.error(m[i], path, "at most " + std::to_string(Peers::kMaxAdvertise) + " addresses");
            } else {
                p.advertise.push_back(a);
            }
        }
    }
    s.boolean("learnMembers", p.learn_members);
    s.duration("syncInterval", Millis{100}, Millis{600'000}, p.sync_interval);
    s.duration("deadAfter", Millis{500}, Millis{3'600'000}, p.dead_after);
    s.duration("deadAfterMax", Millis{500}, Millis{3'600'000}, p.dead_after_max);
    s.duration("forgetAfter", Millis{5'000}, Millis{365LL * 86'400'000}, p.forget_after);
    if (p.dead_after_max.count() && p.dead_after_max < p.dead_after)
        r.error(n, "peers.deadAfterMax", "must be at least peers.deadAfter");
    if (p.forget_after <= p.dead_after) r.error(n, "peers.forgetAfter", "must be longer than peers.deadAfter");
    if (p.dead_after <= p.sync_interval) r.error(n, "peers.deadAfter", "must be longer than peers.syncInterval");
    c.peers = p;
}

void read_log(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "log", {"level", "format"});
    if (!s) return;
    // A bad value is kept: the error stops the load anyway, and the message names it.
    if (auto v = s.choice("level", {"trace", "debug", "info", "warn", "error"})) c.log.level = *v;
    if (auto v = s.choice("format", {"text", "json"})) c.log.format = *v;
}

void read_dnstap(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "dnstap", {"sink", "identity", "queries", "responses", "sample"});
    if (!s) return;
    Dnstap d;
    if (auto v = s.str("sink")) {
        d.unix_socket = v->rfind("unix:", 0) == 0;
        d.path = d.unix_socket ? v->substr(5) : *v;
        namespace fs = std::filesystem;
        fs::path dir = fs::path(d.path).parent_path();
        std::error_code ec;
        if (d.path.empty() || d.path.back() == '/') {
            s.error("sink", "must be unix:PATH (a socket) or the PATH of a file");
        } else if (d.unix_socket && d.path.size() > 107) {
            s.error("sink", "a Unix socket path is at most 107 bytes, got " + std::to_string(d.path.size()));
        } else if (!d.unix_socket && !dir.empty() && !fs::is_directory(dir, ec)) {  // a socket is its reader's
            s.error("sink", "no directory \"" + dir.string() + "\"");
        }
    } else if (s.node().is_map()) {
        r.error(n, "dnstap.sink", "required: unix:PATH (a socket) or the PATH of a file");
    }
    if (auto v = s.str("identity")) {
        if (v->size() > 255) s.error("identity", "at most 255 bytes");
        d.identity = *v;
    }
    s.boolean("queries", d.queries);
    s.boolean("responses", d.responses);
    if (!d.queries && !d.responses) r.error(n, "dnstap", "queries and responses are both off: nothing to log");
    s.integer("sample", 1, 1000000, d.sample);
    c.dnstap = d;
}

void read_metrics(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "metrics", {"perHost"});
    if (!s) return;
    s.boolean("perHost", c.metrics.per_host);
}

void read_health(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "health", {"sourceAddress", "outside"});
    if (!s) return;
    if (auto v = s.str("sourceAddress"); v && !v->empty()) {
        Address a;
        if (!Address::parse(*v, a)) {
            s.error("sourceAddress", "\"" + *v + "\" is not an IP address");
        } else if (!SocketAddress{a, 1}.reachable()) {
            s.error("sourceAddress", "must be an address of this host (not a wildcard or multicast)");
        } else {
            c.health.source_address = a;
        }
    }
    auto o = s["outside"];
    if (!o) return;
    Section out(r, o, "health.outside", {"enabled", "vantages", "quorum", "keepDead", "maxProbesPerSecond"});
    if (!out) return;
    Health::Outside& h = c.health.outside;
    out.boolean("enabled", h.enabled);
    out.integer("vantages", 1, Health::Outside::kMaxVantages, h.vantages);
    if (auto q = o["quorum"]) {
        if (q.is_scalar() && q.scalar() == "majority") {
            h.quorum = 0;
        } else if (auto x = r.integer(q, out.at("quorum"), 1, Health::Outside::kMaxVantages)) {
            h.quorum = static_cast<unsigned>(*x);
        }
    }
    out.duration("keepDead", Millis{0}, Millis{7LL * 86'400'000}, h.keep_dead);
    out.integer("maxProbesPerSecond", 1, 100'000, h.max_probes_per_second);
    if (h.quorum > h.vantages) {
        r.error(o, "health.outside.quorum",
                "must be at most health.outside.vantages (" + std::to_string(h.vantages) +
                    "): more failures than vantages can never withdraw anything");
    }
}

void read_rate_limit(Reader& r, const Node& n, Config& c) {
    Section s(r, n, "rateLimit", {"responsesPerSecond", "slip", "ipv4PrefixLength", "ipv6PrefixLength"});
    if (!s) return;
    s.integer("responsesPerSecond", 0, 1000000, c.rate_limit.responses_per_second);
    s.integer("slip", 0, 100, c.rate_limit.slip);
    s.integer("ipv4PrefixLength", 8, 32, c.rate_limit.ipv4_prefix);
    s.integer("ipv6PrefixLength", 16, 128, c.rate_limit.ipv6_prefix);
}

void read_config(Reader& r, const Node& root, Config& c) {
    c.source = r.file();
    if (!root.defined() || root.is_null()) return r.error(root, "", "the config is empty");
    Section s(r, root, "",
              {"cluster", "listen", "admin", "threads", "geoip", "zones", "hosts", "peers", "kubernetes", "stateDir",
               "log", "user", "rateLimit", "dnstap", "metrics", "health"});
    if (!s) return;
    read_cluster(r, root, c);
    read_listen(r, root, c);
    if (auto n = s["admin"]) read_admin(r, n, c);
    s.integer("threads", 0, 256, c.threads);
    if (auto n = s["geoip"]) read_geoip(r, n, c);
    if (auto n = s["zones"])
        read_zones(r, n, c);
    else
        r.error(root, "zones", "required: at least one zone");
    if (auto n = s["hosts"]) read_hosts(r, n, c);
    if (auto n = s["peers"]) read_peers(r, n, c);
    if (auto n = s["kubernetes"]) read_kubernetes(r, n, c);
    if (auto v = s.str("stateDir")) c.state_dir = *v;
    if (auto n = s["log"]) read_log(r, n, c);
    if (auto n = s["rateLimit"]) read_rate_limit(r, n, c);
    if (auto n = s["dnstap"]) read_dnstap(r, n, c);
    if (auto n = s["metrics"]) read_metrics(r, n, c);
    if (auto n = s["health"]) read_health(r, n, c);
    if (auto v = s.str("user")) {
        if (v->empty() || !getpwnam(v->c_str())) s.error("user", "no such user \"" + *v + "\"");
        c.user = *v;
    }
}

// Cross-checks that need the whole config: static data versus hosts.
void cross_check(const Config& c, std::vector<Error>& errors) {
    for (const auto& h : c.hosts) {
        for (const auto& z : c.zones) {
            if (!is_subdomain(h.name, z.origin)) continue;
            for (const auto& rec : z.records) {
                if (wire::wire_to_name(rec.owner) == h.name && rec.type == wire::type::CNAME) {
                    errors.push_back(Error{c.source, 0, 0, "hosts", "host " + h.name + " also has a static CNAME"});
                }
            }
        }
    }
}

}  // namespace

LoadResult load_text(const std::string& text, const std::string& name, const LoadHooks& hooks) {
    LoadResult result;
    constexpr size_t kMaxConfig = size_t{16} << 20;
    if (text.size() > kMaxConfig) {
        result.errors.push_back(Error{name, 0, 0, "", "the config is larger than 16 MiB"});
        return result;
    }
    std::unique_ptr<Document> doc;
    try {
        Document::TopScalar on_top;
        if (hooks.state_dir) {
            on_top = [&hooks](std::string_view key, const std::string& value) {
                if (key == "stateDir") hooks.state_dir(value);
            };
        }
        doc = std::make_unique<Document>(text, on_top);
    } catch (const YamlError& e) {
        result.errors.push_back(Error{name, e.line + 1, e.column + 1, "", std::string("YAML: ") + e.what()});
        return result;
    }
    Node root = doc->root();
    Config config;
    try {
        Reader r(name, result.errors);
        read_config(r, root, config);
    } catch (const std::exception& e) {
        result.errors.push_back(Error{name, 0, 0, "", std::string("cannot read the config: ") + e.what()});
    }
    if (result.errors.empty()) cross_check(config, result.errors);
    if (result.errors.empty()) result.config = std::move(config);
    return result;
}

LoadResult load_file(const std::string& path, const LoadHooks& hooks) {
    auto text = read_file(path, kMaxConfigBytes);
    if (!text) {
        LoadResult r;
        r.errors.push_back(Error{path, 0, 0, "", "cannot open the config file: " + text.error()});
        return r;
    }
    return load_text(*text, path, hooks);
}

}  // namespace glbd::conf
