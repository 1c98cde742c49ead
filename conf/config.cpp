// conf/config.cpp — YAML to a validated Config. Every problem is collected, none stops the walk.
#include "conf/config.hpp"
#include "conf/names.hpp"

#include "conf/address.hpp"
#include "resolver/wire/text.hpp"

#include <arpa/inet.h>
#include <pwd.h>
#include <ldns/ldns.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace glbd::conf {

std::string Error::str() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += ": ";
    if (!path.empty()) out += path + ": ";
    return out + message;
}

std::string SockAddr::str() const {
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

socklen_t SockAddr::to_sockaddr(sockaddr_storage& out) const {
    Address a;
    if (!Address::parse(host, a)) throw std::runtime_error("address " + str() + " is not numeric");
    return a.to_sockaddr(port, out);
}

std::optional<Millis> parse_duration(std::string_view s) {
    if (s.empty()) return std::nullopt;
    int64_t total = 0;
    size_t i = 0;
    while (i < s.size()) {
        int64_t n = 0;
        size_t digits = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            n = n * 10 + (s[i++] - '0');
            if (++digits > 9) return std::nullopt;
        }
        if (digits == 0) return std::nullopt;
        std::string_view unit = s.substr(i, 2);
        if (unit == "ms") {
            total += n, i += 2;
        } else if (!unit.empty() && unit[0] == 's') {
            total += n * 1000, i += 1;
        } else if (!unit.empty() && unit[0] == 'm') {
            total += n * 60'000, i += 1;
        } else if (!unit.empty() && unit[0] == 'h') {
            total += n * 3'600'000, i += 1;
        } else {
            return std::nullopt;
        }
    }
    return Millis{total};
}

namespace {

bool is_ip(const std::string& s, int* family = nullptr) {
    Address a;
    if (!Address::parse(s, a)) return false;
    if (family) *family = a.family == 4 ? AF_INET : AF_INET6;
    return true;
}

// Walks the YAML tree and records errors with their location and key path.
class Reader {
public:
    Reader(std::string file, std::vector<Error>& errors) : file_(std::move(file)), errors_(errors) {}

    void error(const YAML::Node& at, const std::string& path, std::string message) {
        YAML::Mark m = at.Mark();
        Error e{file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, path,
                std::move(message)};
        errors_.push_back(std::move(e));
    }
    void error_at_line(int line, const std::string& path, std::string message) {
        errors_.push_back(Error{file_, line, 1, path, std::move(message)});
    }

    // A map whose keys must come from `allowed`; unknown and duplicate keys are errors.
    bool map(const YAML::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed) {
        if (!n.IsMap()) {
            error(n, path, std::string("must be a mapping, got ") + kind(n));
            return false;
        }
        std::set<std::string> seen;
        for (auto it = n.begin(); it != n.end(); ++it) {
            std::string key = it->first.Scalar();
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                error(it->first, join(path, key), "unknown key");
            } else if (!seen.insert(key).second) {
                error(it->first, join(path, key), "duplicate key");
            }
        }
        return true;
    }

    std::optional<std::string> str(const YAML::Node& n, const std::string& path) {
        if (!n.IsScalar()) {
            error(n, path, std::string("must be a string, got ") + kind(n));
            return std::nullopt;
        }
        return n.Scalar();
    }

    std::optional<int64_t> integer(const YAML::Node& n, const std::string& path, int64_t lo, int64_t hi) {
        auto bad = [&] {
            error(n, path,
                  "must be an integer " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                      shown(n));
            return std::nullopt;
        };
        if (!n.IsScalar()) return bad();
        const std::string& s = n.Scalar();
        if (s.empty() || s.size() > 18) return bad();
        size_t i = (s[0] == '-') ? 1 : 0;
        if (i == s.size()) return bad();
        for (size_t k = i; k < s.size(); ++k) {
            if (!std::isdigit(static_cast<unsigned char>(s[k]))) return bad();
        }
        int64_t v = std::stoll(s);
        if (v < lo || v > hi) return bad();
        return v;
    }

    std::optional<bool> boolean(const YAML::Node& n, const std::string& path) {
        if (n.IsScalar()) {
            const std::string& s = n.Scalar();
            if (s == "true" || s == "True" || s == "TRUE") return true;
            if (s == "false" || s == "False" || s == "FALSE") return false;
        }
        error(n, path, "must be true or false, got " + shown(n));
        return std::nullopt;
    }

    std::optional<Millis> duration(const YAML::Node& n, const std::string& path, Millis lo, Millis hi) {
        std::optional<Millis> d;
        if (n.IsScalar()) d = parse_duration(n.Scalar());
        if (!d) {
            error(n, path, "must be a duration such as 500ms, 5s or 1m, got " + shown(n));
            return std::nullopt;
        }
        if (*d < lo || *d > hi) {
            error(n, path, "must be between " + std::to_string(lo.count()) + "ms and " +
                               std::to_string(hi.count()) + "ms, got " + shown(n));
            return std::nullopt;
        }
        return d;
    }

    bool seq(const YAML::Node& n, const std::string& path) {
        if (!n.IsSequence()) {
            error(n, path, std::string("must be a list, got ") + kind(n));
            return false;
        }
        return true;
    }

    // "1.2.3.4:53", "[::1]:53"; names allowed when `names` is set.
    std::optional<SockAddr> sockaddr(const YAML::Node& n, const std::string& path, bool names) {
        auto s = str(n, path);
        if (!s) return std::nullopt;
        SockAddr a;
        std::string port;
        if (!s->empty() && (*s)[0] == '[') {
            auto close = s->find(']');
            if (close == std::string::npos || close + 1 >= s->size() || (*s)[close + 1] != ':') {
                error(n, path, "must be HOST:PORT or [IPv6]:PORT, got \"" + *s + "\"");
                return std::nullopt;
            }
            a.host = s->substr(1, close - 1);
            port = s->substr(close + 2);
        } else {
            auto colon = s->rfind(':');
            if (colon == std::string::npos || s->find(':') != colon) {
                error(n, path, "must be HOST:PORT or [IPv6]:PORT, got \"" + *s + "\"");
                return std::nullopt;
            }
            a.host = s->substr(0, colon);
            port = s->substr(colon + 1);
        }
        bool port_ok = !port.empty() && port.size() <= 5 &&
                       std::all_of(port.begin(), port.end(), [](char c) { return std::isdigit(c); });
        if (!port_ok || std::stoi(port) > 65535) {
            error(n, path, "port must be 0..65535, got \"" + port + "\"");
            return std::nullopt;
        }
        a.port = static_cast<uint16_t>(std::stoi(port));
        if (!is_ip(a.host) && !(names && wire::name_to_wire(a.host))) {
            error(n, path, "\"" + a.host + "\" is not an IP address" + (names ? " or a host name" : ""));
            return std::nullopt;
        }
        return a;
    }

    static std::string join(const std::string& path, const std::string& key) {
        return path.empty() ? key : path + "." + key;
    }
    static std::string index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }
    static const char* kind(const YAML::Node& n) {
        switch (n.Type()) {
            case YAML::NodeType::Map: return "a mapping";
            case YAML::NodeType::Sequence: return "a list";
            case YAML::NodeType::Null: return "nothing";
            default: return "a scalar";
        }
    }
    static std::string shown(const YAML::Node& n) { return n.IsScalar() ? "\"" + n.Scalar() + "\"" : kind(n); }

    const std::string& file() const { return file_; }

private:
    std::string file_;
    std::vector<Error>& errors_;
};

// Parses zone-file text with ldns; records land in `zone` (SOA fields and NS merged).
void parse_zone_text(Reader& r, const std::string& text, const std::string& path, int first_line,
                     const std::string& origin, Zone& zone, std::vector<StaticRecord>& apex_ns) {
    std::unique_ptr<FILE, int (*)(FILE*)> fp(fmemopen(const_cast<char*>(text.data()), text.size(), "r"),
                                             fclose);
    if (!fp) {
        r.error_at_line(first_line, path, "cannot read records");
        return;
    }
    ldns_rdf* origin_rdf = ldns_dname_new_frm_str((origin + ".").c_str());
    int line = 0;
    uint32_t default_ttl = zone.ttl;
    ldns_rdf* prev = nullptr;
    ldns_rdf* cur_origin = ldns_rdf_clone(origin_rdf);
    while (!feof(fp.get())) {
        ldns_rr* rr = nullptr;
        ldns_status st = ldns_rr_new_frm_fp_l(&rr, fp.get(), &default_ttl, &cur_origin, &prev, &line);
        if (st == LDNS_STATUS_SYNTAX_EMPTY || st == LDNS_STATUS_SYNTAX_TTL || st == LDNS_STATUS_SYNTAX_ORIGIN ||
            st == LDNS_STATUS_SYNTAX_INCLUDE) {
            continue;
        }
        if (st != LDNS_STATUS_OK) {
            if (feof(fp.get()) && st == LDNS_STATUS_SYNTAX_ERR) break;
            r.error_at_line(first_line + line, path, std::string("bad record: ") + ldns_get_errorstr_by_id(st));
            continue;
        }
        ldns_rr2canonical(rr);
        char* owner_c = ldns_rdf2str(ldns_rr_owner(rr));
        std::string owner_text = owner_c ? owner_c : "";
        free(owner_c);
        auto owner = wire::name_to_wire(owner_text);
        std::string owner_name = owner ? wire::wire_to_name(*owner) : owner_text;
        if (!owner || !is_subdomain(owner_name, origin)) {
            r.error_at_line(first_line + line, path, "record owner " + owner_text + " is outside the zone " + origin);
            ldns_rr_free(rr);
            continue;
        }
        if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
            r.error_at_line(first_line + line, path, "only class IN is served");
            ldns_rr_free(rr);
            continue;
        }
        ldns_buffer* buf = ldns_buffer_new(512);
        ldns_rr_rdata2buffer_wire(buf, rr);
        StaticRecord rec{*owner, static_cast<uint16_t>(ldns_rr_get_type(rr)), ldns_rr_ttl(rr),
                         std::string(reinterpret_cast<const char*>(ldns_buffer_begin(buf)),
                                     ldns_buffer_position(buf))};
        ldns_buffer_free(buf);
        if (rec.type == LDNS_RR_TYPE_SOA) {
            if (owner_name != origin) {
                r.error_at_line(first_line + line, path, "SOA must be at the zone origin");
            } else if (ldns_rr_rd_count(rr) == 7) {
                // The file's SOA gives defaults; the config's soa keys override; glbd manages the serial.
                char* mname = ldns_rdf2str(ldns_rr_rdf(rr, 0));
                char* rname = ldns_rdf2str(ldns_rr_rdf(rr, 1));
                if (zone.soa.mname.empty() && mname) zone.soa.mname = mname;
                if (rname) zone.soa.rname = rname;
                free(mname);
                free(rname);
                zone.soa.refresh = ldns_rdf2native_int32(ldns_rr_rdf(rr, 3));
                zone.soa.retry = ldns_rdf2native_int32(ldns_rr_rdf(rr, 4));
                zone.soa.expire = ldns_rdf2native_int32(ldns_rr_rdf(rr, 5));
                zone.soa.minimum = ldns_rdf2native_int32(ldns_rr_rdf(rr, 6));
            }
        } else if (rec.type == LDNS_RR_TYPE_NS && owner_name == origin) {
            apex_ns.push_back(std::move(rec));
        } else {
            zone.records.push_back(std::move(rec));
        }
        ldns_rr_free(rr);
    }
    if (prev) ldns_rdf_deep_free(prev);
    ldns_rdf_deep_free(cur_origin);
    ldns_rdf_deep_free(origin_rdf);
}

class Loader {
public:
    Loader(const std::string& file, std::vector<Error>& errors) : r_(file, errors), errors_(errors) {}

    void load(const YAML::Node& root, Config& c) {
        c.source = r_.file();
        if (!root.IsDefined() || root.IsNull()) {
            r_.error(root, "", "the config is empty");
            return;
        }
        if (!r_.map(root, "", {"cluster", "listen", "admin", "threads", "geoip", "zones", "hosts", "peers",
                              "kubernetes", "stateDir", "log", "user", "rateLimit"})) {
            return;
        }
        cluster(root, c);
        listen(root, c);
        if (auto n = root["admin"]) admin(n, c);
        if (auto n = root["threads"]) {
            if (auto v = r_.integer(n, "threads", 0, 256)) c.threads = static_cast<unsigned>(*v);
        }
        if (auto n = root["geoip"]) geoip(n, c);
        if (auto n = root["zones"]) {
            zones(n, c);
        } else {
            r_.error(root, "zones", "required: at least one zone");
        }
        if (auto n = root["hosts"]) hosts(n, c);
        if (auto n = root["peers"]) peers(n, c);
        if (auto n = root["kubernetes"]) kubernetes(n, c);
        if (auto n = root["stateDir"]) {
            if (auto v = r_.str(n, "stateDir")) c.state_dir = *v;
        }
        if (auto n = root["log"]) log(n, c);
        if (auto n = root["rateLimit"]) {
            if (r_.map(n, "rateLimit", {"responsesPerSecond", "slip", "ipv4PrefixLength", "ipv6PrefixLength"})) {
                if (auto v = n["responsesPerSecond"]) {
                    if (auto x = r_.integer(v, "rateLimit.responsesPerSecond", 0, 1000000)) c.rrl_rate = static_cast<unsigned>(*x);
                }
                if (auto v = n["slip"]) {
                    if (auto x = r_.integer(v, "rateLimit.slip", 0, 100)) c.rrl_slip = static_cast<unsigned>(*x);
                }
                if (auto v = n["ipv4PrefixLength"]) {
                    if (auto x = r_.integer(v, "rateLimit.ipv4PrefixLength", 8, 32)) c.rrl_ipv4_prefix = static_cast<uint8_t>(*x);
                }
                if (auto v = n["ipv6PrefixLength"]) {
                    if (auto x = r_.integer(v, "rateLimit.ipv6PrefixLength", 16, 128)) c.rrl_ipv6_prefix = static_cast<uint8_t>(*x);
                }
            }
        }
        if (auto n = root["user"]) {
            if (auto v = r_.str(n, "user")) {
                if (v->empty() || !getpwnam(v->c_str())) r_.error(n, "user", "no such user \"" + *v + "\"");
                c.user = *v;
            }
        }
    }

private:
    void cluster(const YAML::Node& root, Config& c) {
        auto n = root["cluster"];
        if (!n) {
            r_.error(root, "cluster.id", "required");
            return;
        }
        if (!r_.map(n, "cluster", {"id", "instance"})) return;
        if (auto id = n["id"]) {
            if (auto v = r_.str(id, "cluster.id")) {
                if (!is_cluster_id(*v)) {
                    r_.error(id, "cluster.id", "must be 1..63 characters of [a-z0-9-], got \"" + *v + "\"");
                }
                c.cluster_id = *v;
            }
        } else {
            r_.error(n, "cluster.id", "required");
        }
        if (auto inst = n["instance"]) {
            if (auto v = r_.str(inst, "cluster.instance")) {
                if (!is_instance_name(*v)) {
                    r_.error(inst, "cluster.instance", "must be 1..253 characters of [A-Za-z0-9._-], got \"" + *v + "\"");
                }
                c.instance = *v;
            }
        }
        if (c.instance.empty()) {
            char host[256] = {};
            gethostname(host, sizeof host - 1);
            c.instance = host;
        }
    }

    void listen(const YAML::Node& root, Config& c) {
        auto n = root["listen"];
        if (!n) {
            r_.error(root, "listen.dns", "required");
            return;
        }
        if (!r_.map(n, "listen", {"dns", "udpPayloadSize", "tcpMaxConnections", "tcpMaxConnectionsPerSource",
                                   "tcpMaxInflight", "tcpIdleTimeout"})) {
            return;
        }
        auto dns = n["dns"];
        if (!dns) {
            r_.error(n, "listen.dns", "required");
        } else if (r_.seq(dns, "listen.dns")) {
            if (dns.size() == 0) r_.error(dns, "listen.dns", "needs at least one address");
            std::set<std::string> seen;
            for (size_t i = 0; i < dns.size(); ++i) {
                auto path = Reader::index("listen.dns", i);
                if (auto a = r_.sockaddr(dns[i], path, false)) {
                    if (!seen.insert(a->str()).second) {
                        r_.error(dns[i], path, "duplicate listen address " + a->str());
                    }
                    c.listen.push_back(*a);
                }
            }
        }
        if (auto v = n["udpPayloadSize"]) {
            if (auto x = r_.integer(v, "listen.udpPayloadSize", 512, 4096)) c.udp_payload = static_cast<uint16_t>(*x);
        }
        if (auto v = n["tcpMaxConnections"]) {
            if (auto x = r_.integer(v, "listen.tcpMaxConnections", 1, 100000)) c.tcp_max_connections = *x;
        }
        if (auto v = n["tcpMaxConnectionsPerSource"]) {
            if (auto x = r_.integer(v, "listen.tcpMaxConnectionsPerSource", 1, 100000)) c.tcp_max_per_source = *x;
        }
        if (auto v = n["tcpMaxInflight"]) {
            if (auto x = r_.integer(v, "listen.tcpMaxInflight", 1, 65535)) c.tcp_max_inflight = *x;
        }
        if (auto v = n["tcpIdleTimeout"]) {
            if (auto x = r_.duration(v, "listen.tcpIdleTimeout", Millis{100}, Millis{600'000})) c.tcp_idle_timeout = *x;
        }
    }

    void kubernetes(const YAML::Node& n, Config& c) {
        if (!r_.map(n, "kubernetes", {"mode", "apiServer", "kubeconfig", "namespaces", "resync"})) return;
        Kubernetes k;
        if (auto v = n["mode"]) {
            if (auto s = r_.str(v, "kubernetes.mode")) {
                if (*s == "controller") k.mode = Kubernetes::Mode::controller;
                else if (*s != "coredns") r_.error(v, "kubernetes.mode", "must be coredns or controller, got \"" + *s + "\"");
            }
        }
        if (auto v = n["apiServer"]) {
            if (auto s = r_.str(v, "kubernetes.apiServer")) {
                k.api_server = *s;
                if (!s->empty() && s->rfind("https://", 0) != 0) {
                    // Plain HTTP only to a loopback address (tests): the bearer token goes there too.
                    bool loopback = s->rfind("http://127.", 0) == 0 || s->rfind("http://[::1]", 0) == 0 ||
                                    s->rfind("http://localhost", 0) == 0;
                    if (!loopback) r_.error(v, "kubernetes.apiServer", "must be an https:// URL (http:// only to a loopback address)");
                }
            }
        }
        if (auto v = n["kubeconfig"]) {
            if (auto s = r_.str(v, "kubernetes.kubeconfig")) k.kubeconfig = *s;
        }
        if (!k.api_server.empty() && !k.kubeconfig.empty()) {
            r_.error(n, "kubernetes", "set apiServer or kubeconfig, not both");
        }
        if (auto v = n["namespaces"]; v && r_.seq(v, "kubernetes.namespaces")) {
            for (size_t i = 0; i < v.size(); ++i) {
                auto path = Reader::index("kubernetes.namespaces", i);
                if (auto s = r_.str(v[i], path)) {
                    if (!is_cluster_id(*s)) r_.error(v[i], path, "not a namespace name: \"" + *s + "\"");
                    k.namespaces.push_back(*s);
                }
            }
        }
        if (auto v = n["resync"]) {
            if (auto d = r_.duration(v, "kubernetes.resync", Millis{0}, Millis{86'400'000})) k.resync = *d;
        }
        c.kubernetes = std::move(k);
    }

    void admin(const YAML::Node& n, Config& c) {
        if (!r_.map(n, "admin", {"listen", "token"})) return;
        if (auto v = n["token"]) {
            if (auto s = r_.str(v, "admin.token")) c.admin_token = *s;
        }
        if (auto v = n["listen"]) {
            c.admin_listen = r_.sockaddr(v, "admin.listen", false);
            if (c.admin_listen && c.admin_token.empty()) {
                const std::string& h = c.admin_listen->host;
                bool loopback = h == "::1" || h.rfind("127.", 0) == 0;
                if (!loopback) r_.error(v, "admin.token", "required when admin.listen is not a loopback address");
            }
        }
    }

    void geoip(const YAML::Node& n, Config& c) {
        if (!r_.map(n, "geoip", {"database", "networks", "verify", "signingKey"})) return;
        if (auto v = n["verify"]) {
            if (auto b = r_.boolean(v, "geoip.verify")) c.geoip_verify = *b;
        }
        if (auto v = n["signingKey"]) {
            if (auto s = r_.str(v, "geoip.signingKey")) {
                c.geoip_signing_key = *s;
                if (!std::ifstream(*s)) r_.error(v, "geoip.signingKey", "cannot open \"" + *s + "\"");
            }
        }
        if (c.geoip_verify && !n["database"]) r_.error(n, "geoip.verify", "needs a geoip.database to verify");
        if (auto v = n["database"]) {
            if (auto s = r_.str(v, "geoip.database")) {
                c.geoip_database = *s;
                std::ifstream f(*s, std::ios::binary);
                if (!f) r_.error(v, "geoip.database", "cannot open \"" + *s + "\"");
            }
        }
        if (auto nets = n["networks"]) {
            if (!nets.IsMap()) {
                r_.error(nets, "geoip.networks", "must be a mapping of CIDR to geo code");
                return;
            }
            std::set<std::string> seen;
            for (auto it = nets.begin(); it != nets.end(); ++it) {
                std::string cidr = it->first.Scalar();
                std::string path = "geoip.networks." + cidr;
                if (!valid_cidr(cidr)) {
                    r_.error(it->first, path, "not a CIDR network (address/prefix with no host bits set)");
                    continue;
                }
                if (!seen.insert(cidr).second) r_.error(it->first, path, "duplicate network");
                auto code = r_.str(it->second, path);
                if (!code) continue;
                if (!is_custom_geo_code(*code)) {
                    r_.error(it->second, path, "geo code must be 1..32 of [A-Za-z0-9_-], got \"" + *code + "\"");
                    continue;
                }
                c.geoip_networks.push_back({cidr, *code});
            }
        }
    }

    static bool valid_cidr(const std::string& cidr) {
        auto slash = cidr.find('/');
        if (slash == std::string::npos) return false;
        std::string addr = cidr.substr(0, slash), len = cidr.substr(slash + 1);
        if (len.empty() || len.size() > 3 || !std::all_of(len.begin(), len.end(), ::isdigit)) return false;
        int prefix = std::stoi(len);
        Address a;
        if (!Address::parse(addr, a)) return false;
        const uint8_t* buf = a.bytes.data();
        int bytes = a.family == 4 ? 4 : 16;
        if (prefix > bytes * 8) return false;
        for (int bit = prefix; bit < bytes * 8; ++bit) {
            if (buf[bit / 8] & (0x80 >> (bit % 8))) return false;
        }
        return true;
    }

    void zones(const YAML::Node& n, Config& c) {
        if (!r_.seq(n, "zones")) return;
        if (n.size() == 0) r_.error(n, "zones", "needs at least one zone");
        std::set<std::string> origins;
        for (size_t i = 0; i < n.size(); ++i) {
            std::string path = Reader::index("zones", i);
            const YAML::Node& z = n[i];
            if (!r_.map(z, path, {"origin", "ttl", "soa", "nameservers", "records", "file"})) continue;
            Zone zone;
            auto o = z["origin"];
            if (!o) {
                r_.error(z, path + ".origin", "required");
                continue;
            }
            auto origin = r_.str(o, path + ".origin");
            if (!origin) continue;
            auto w = wire::name_to_wire(*origin);
            if (!w || *origin == ".") {
                r_.error(o, path + ".origin", "not a valid domain name: \"" + *origin + "\"");
                continue;
            }
            zone.origin = wire::wire_to_name(*w);
            if (!origins.insert(zone.origin).second) r_.error(o, path + ".origin", "duplicate zone " + zone.origin);
            if (auto v = z["ttl"]) {
                if (auto t = r_.integer(v, path + ".ttl", 0, 2147483647)) zone.ttl = static_cast<uint32_t>(*t);
            }
            std::vector<StaticRecord> apex_ns;
            if (auto v = z["file"]) {
                if (auto f = r_.str(v, path + ".file")) {
                    std::ifstream in(*f);
                    if (!in) {
                        r_.error(v, path + ".file", "cannot open \"" + *f + "\"");
                    } else {
                        std::stringstream ss;
                        ss << in.rdbuf();
                        Reader fr(*f, errors_);
                        parse_zone_text(fr, ss.str(), "", 0, zone.origin, zone, apex_ns);
                    }
                }
            }
            if (auto v = z["records"]) {
                if (auto text = r_.str(v, path + ".records")) {
                    // A block scalar's text starts on the line after its indicator.
                    int first = v.Mark().line + 1;
                    parse_zone_text(r_, *text, path + ".records", first, zone.origin, zone, apex_ns);
                }
            }
            if (auto s = z["soa"]) soa(s, path + ".soa", zone);
            if (auto ns = z["nameservers"]) nameservers(ns, path + ".nameservers", zone);
            for (auto& rec : apex_ns) {
                Nameserver extra{wire::wire_to_name(rec.rdata), {}};
                bool dup = std::any_of(zone.nameservers.begin(), zone.nameservers.end(),
                                       [&](const Nameserver& x) { return x.name == extra.name; });
                if (!dup) zone.nameservers.push_back(extra);
            }
            if (zone.nameservers.empty()) r_.error(z, path + ".nameservers", "required: at least one nameserver");
            if (zone.soa.mname.empty() && !zone.nameservers.empty()) zone.soa.mname = zone.nameservers[0].name;
            c.zones.push_back(std::move(zone));
        }
    }

    void soa(const YAML::Node& n, const std::string& path, Zone& zone) {
        if (!r_.map(n, path, {"mname", "rname", "refresh", "retry", "expire", "minimum"})) return;
        auto name_key = [&](const char* key, std::string& out) {
            if (auto v = n[key]) {
                if (auto s = r_.str(v, path + "." + key)) {
                    if (!wire::name_to_wire(*s)) {
                        r_.error(v, path + "." + key, "not a valid domain name: \"" + *s + "\"");
                    } else {
                        out = *s;
                    }
                }
            }
        };
        name_key("mname", zone.soa.mname);
        name_key("rname", zone.soa.rname);
        auto num = [&](const char* key, uint32_t& out) {
            if (auto v = n[key]) {
                if (auto x = r_.integer(v, path + "." + key, 0, 2147483647)) out = static_cast<uint32_t>(*x);
            }
        };
        num("refresh", zone.soa.refresh);
        num("retry", zone.soa.retry);
        num("expire", zone.soa.expire);
        num("minimum", zone.soa.minimum);
    }

    void nameservers(const YAML::Node& n, const std::string& path, Zone& zone) {
        if (!r_.seq(n, path)) return;
        for (size_t i = 0; i < n.size(); ++i) {
            std::string p = Reader::index(path, i);
            if (!r_.map(n[i], p, {"name", "addresses"})) continue;
            Nameserver ns;
            auto name = n[i]["name"];
            if (!name) {
                r_.error(n[i], p + ".name", "required");
                continue;
            }
            auto s = r_.str(name, p + ".name");
            if (!s) continue;
            auto w = wire::name_to_wire(*s);
            if (!w) {
                r_.error(name, p + ".name", "not a valid domain name: \"" + *s + "\"");
                continue;
            }
            ns.name = wire::wire_to_name(*w);
            if (auto addrs = n[i]["addresses"]) {
                if (r_.seq(addrs, p + ".addresses")) {
                    for (size_t k = 0; k < addrs.size(); ++k) {
                        std::string ap = Reader::index(p + ".addresses", k);
                        if (auto a = r_.str(addrs[k], ap)) {
                            if (!is_ip(*a)) {
                                r_.error(addrs[k], ap, "not an IP address: \"" + *a + "\"");
                            } else {
                                ns.addresses.push_back(*a);
                            }
                        }
                    }
                }
            }
            if (is_subdomain(ns.name, zone.origin) && ns.addresses.empty()) {
                r_.error(n[i], p + ".addresses", "required: " + ns.name + " lies in the zone and needs glue");
            }
            zone.nameservers.push_back(std::move(ns));
        }
    }

    void hosts(const YAML::Node& n, Config& c) {
        if (!r_.seq(n, "hosts")) return;
        std::set<std::string> names;
        for (size_t i = 0; i < n.size(); ++i) {
            std::string path = Reader::index("hosts", i);
            const YAML::Node& h = n[i];
            if (!r_.map(h, path, {"name", "ttl", "endpoints", "loadBalancing", "healthCheck"})) continue;
            Host host;
            auto name = h["name"];
            if (!name) {
                r_.error(h, path + ".name", "required");
                continue;
            }
            auto s = r_.str(name, path + ".name");
            if (!s) continue;
            auto w = wire::name_to_wire(*s);
            std::string text = w ? wire::wire_to_name(*w) : "";
            if (!w || !is_lb_host_name(text)) {
                r_.error(name, path + ".name", "not a valid host name: \"" + *s + "\"");
                continue;
            }
            host.name = text;
            if (!names.insert(host.name).second) r_.error(name, path + ".name", "duplicate host " + host.name);
            bool in_zone = std::any_of(c.zones.begin(), c.zones.end(),
                                       [&](const Zone& z) { return is_subdomain(host.name, z.origin); });
            if (!in_zone && !c.zones.empty()) {
                r_.error(name, path + ".name", host.name + " is not in any configured zone");
            }
            if (auto v = h["ttl"]) {
                if (auto t = r_.integer(v, path + ".ttl", 0, 2147483647)) host.ttl = static_cast<uint32_t>(*t);
            }
            auto eps = h["endpoints"];
            if (!eps) {
                r_.error(h, path + ".endpoints", "required");
            } else if (r_.seq(eps, path + ".endpoints")) {
                for (size_t k = 0; k < eps.size(); ++k) {
                    std::string ep = Reader::index(path + ".endpoints", k);
                    auto e = r_.str(eps[k], ep);
                    if (!e) continue;
                    if (is_ip(*e)) {
                        host.endpoints.push_back(*e);
                    } else if (auto ep_wire = wire::name_to_wire(*e); ep_wire && is_host_name(*e)) {
                        host.endpoints.push_back(wire::wire_to_name(*ep_wire));  // lower case, no trailing dot: is_endpoint()
                    } else {
                        r_.error(eps[k], ep, "not an IP address or host name: \"" + *e + "\"");
                    }
                }
            }
            if (auto lb = h["loadBalancing"]) load_balancing(lb, path + ".loadBalancing", c, host);
            if (auto hc = h["healthCheck"]) health_check(hc, path + ".healthCheck", host);
            c.hosts.push_back(std::move(host));
        }
    }

    void load_balancing(const YAML::Node& n, const std::string& path, const Config& c, Host& host) {
        if (!r_.map(n, path, {"weight", "geo", "defaultGeo"})) return;
        LoadBalancing lb;
        if (auto v = n["weight"]) {
            if (auto w = r_.integer(v, path + ".weight", 0, 65535)) lb.weight = static_cast<uint16_t>(*w);
        }
        if (auto v = n["geo"]) {
            if (auto g = r_.str(v, path + ".geo")) {
                bool custom = std::any_of(c.geoip_networks.begin(), c.geoip_networks.end(),
                                          [&](const GeoNetwork& gn) { return gn.code == *g; });
                if (!is_geo_code(*g) && !custom) {
                    r_.error(v, path + ".geo",
                             "unknown geo code \"" + *g +
                                 "\": use ISO 3166-1 alpha-2, GEO-<AF|AN|AS|EU|NA|OC|SA> or a code from geoip.networks");
                }
                lb.geo = *g;
            }
        }
        if (auto v = n["defaultGeo"]) {
            if (auto b = r_.boolean(v, path + ".defaultGeo")) {
                lb.default_geo = *b;
                if (*b && lb.geo.empty()) r_.error(v, path + ".defaultGeo", "defaultGeo needs a geo");
            }
        }
        host.load_balancing = lb;
    }

    void health_check(const YAML::Node& n, const std::string& path, Host& host) {
        if (!r_.map(n, path, {"protocol", "port", "path", "interval", "timeout", "failureThreshold",
                              "successThreshold", "expectedStatus", "headers", "insecureSkipVerify"})) {
            return;
        }
        HealthCheck hc;
        bool port_set = false;
        if (auto v = n["protocol"]) {
            if (auto p = r_.str(v, path + ".protocol")) {
                if (*p == "HTTP") {
                    hc.protocol = Protocol::http;
                } else if (*p == "HTTPS") {
                    hc.protocol = Protocol::https;
                } else if (*p == "TCP") {
                    hc.protocol = Protocol::tcp;
                } else {
                    r_.error(v, path + ".protocol", "must be HTTP, HTTPS or TCP, got \"" + *p + "\"");
                }
            }
        }
        if (auto v = n["port"]) {
            if (auto p = r_.integer(v, path + ".port", 1, 65535)) hc.port = static_cast<uint16_t>(*p), port_set = true;
        }
        if (!port_set) hc.port = hc.protocol == Protocol::https ? 443 : 80;
        if (!port_set && hc.protocol == Protocol::tcp) r_.error(n, path + ".port", "required for TCP checks");
        if (auto v = n["path"]) {
            if (auto p = r_.str(v, path + ".path")) {
                if (p->empty() || (*p)[0] != '/') {
                    r_.error(v, path + ".path", "must start with /, got \"" + *p + "\"");
                }
                hc.path = *p;
            }
        }
        if (auto v = n["interval"]) {
            if (auto d = r_.duration(v, path + ".interval", Millis{100}, Millis{3'600'000})) hc.interval = *d;
        }
        if (auto v = n["timeout"]) {
            if (auto d = r_.duration(v, path + ".timeout", Millis{10}, Millis{600'000})) hc.timeout = *d;
        }
        if (auto v = n["failureThreshold"]) {
            if (auto x = r_.integer(v, path + ".failureThreshold", 1, 100)) hc.failure_threshold = *x;
        }
        if (auto v = n["successThreshold"]) {
            if (auto x = r_.integer(v, path + ".successThreshold", 1, 100)) hc.success_threshold = *x;
        }
        if (auto v = n["expectedStatus"]) {
            if (r_.seq(v, path + ".expectedStatus")) {
                hc.expected_status.clear();
                for (size_t i = 0; i < v.size(); ++i) {
                    if (auto x = r_.integer(v[i], Reader::index(path + ".expectedStatus", i), 100, 599)) {
                        hc.expected_status.push_back(static_cast<int>(*x));
                    }
                }
            }
        }
        if (auto v = n["headers"]) {
            if (!v.IsMap()) {
                r_.error(v, path + ".headers", "must be a mapping of header name to value");
            } else {
                for (auto it = v.begin(); it != v.end(); ++it) {
                    if (auto val = r_.str(it->second, path + ".headers." + it->first.Scalar())) {
                        hc.headers.emplace_back(it->first.Scalar(), *val);
                    }
                }
            }
        }
        if (auto v = n["insecureSkipVerify"]) {
            if (auto b = r_.boolean(v, path + ".insecureSkipVerify")) hc.insecure_skip_verify = *b;
        }
        host.health_check = hc;
    }

    void peers(const YAML::Node& n, Config& c) {
        if (!r_.map(n, "peers", {"key", "members", "syncInterval", "deadAfter", "forgetAfter"})) return;
        Peers p;
        auto key = n["key"];
        if (!key) {
            r_.error(n, "peers.key", "required");
        } else if (r_.map(key, "peers.key", {"name", "algorithm", "secret", "secretFile"})) {
            if (auto v = key["name"]) {
                if (auto s = r_.str(v, "peers.key.name")) {
                    if (!wire::name_to_wire(*s)) r_.error(v, "peers.key.name", "not a valid key name");
                    p.key.name = *s;
                }
            } else {
                r_.error(key, "peers.key.name", "required");
            }
            if (auto v = key["algorithm"]) {
                if (auto s = r_.str(v, "peers.key.algorithm")) {
                    if (*s != "hmac-sha256") r_.error(v, "peers.key.algorithm", "only hmac-sha256 is supported");
                    p.key.algorithm = *s;
                }
            }
            auto secret = key["secret"];
            auto file = key["secretFile"];
            std::optional<std::string> value;
            if (secret && file) {
                r_.error(file, "peers.key.secretFile", "give secret or secretFile, not both");
            } else if (secret) {
                value = r_.str(secret, "peers.key.secret");
            } else if (file) {
                if (auto f = r_.str(file, "peers.key.secretFile")) {
                    std::ifstream in(*f);
                    if (!in) {
                        r_.error(file, "peers.key.secretFile", "cannot open \"" + *f + "\"");
                    } else {
                        std::string s;
                        std::getline(in, s);
                        value = s;
                    }
                }
            } else {
                r_.error(key, "peers.key.secret", "required (or secretFile)");
            }
            if (value) {
                auto raw = wire::base64_decode(*value);
                if (!raw || raw->empty()) {
                    r_.error(secret ? secret : file, secret ? "peers.key.secret" : "peers.key.secretFile",
                             "the TSIG secret is not valid base64");
                }
                p.key.secret = *value;
            }
        }
        if (auto m = n["members"]) {
            if (r_.seq(m, "peers.members")) {
                for (size_t i = 0; i < m.size(); ++i) {
                    std::string path = Reader::index("peers.members", i);
                    if (!r_.map(m[i], path, {"address"})) continue;
                    if (auto a = m[i]["address"]) {
                        if (auto s = r_.sockaddr(a, path + ".address", true)) p.members.push_back(*s);
                    } else {
                        r_.error(m[i], path + ".address", "required");
                    }
                }
            }
        }
        if (auto v = n["syncInterval"]) {
            if (auto d = r_.duration(v, "peers.syncInterval", Millis{100}, Millis{600'000})) p.sync_interval = *d;
        }
        if (auto v = n["deadAfter"]) {
            if (auto d = r_.duration(v, "peers.deadAfter", Millis{500}, Millis{3'600'000})) p.dead_after = *d;
        }
        if (auto v = n["forgetAfter"]) {
            if (auto d = r_.duration(v, "peers.forgetAfter", Millis{60'000}, Millis{365LL * 86'400'000})) p.forget_after = *d;
        }
        if (p.forget_after <= p.dead_after) r_.error(n, "peers.forgetAfter", "must be longer than peers.deadAfter");
        if (p.dead_after <= p.sync_interval) {
            r_.error(n, "peers.deadAfter", "must be longer than peers.syncInterval");
        }
        c.peers = p;
    }

    void log(const YAML::Node& n, Config& c) {
        if (!r_.map(n, "log", {"level", "format"})) return;
        if (auto v = n["level"]) {
            if (auto s = r_.str(v, "log.level")) {
                static const std::set<std::string> levels{"trace", "debug", "info", "warn", "error"};
                if (!levels.count(*s)) r_.error(v, "log.level", "must be trace, debug, info, warn or error, got \"" + *s + "\"");
                c.log_level = *s;
            }
        }
        if (auto v = n["format"]) {
            if (auto s = r_.str(v, "log.format")) {
                if (*s != "text" && *s != "json") r_.error(v, "log.format", "must be text or json, got \"" + *s + "\"");
                c.log_format = *s;
            }
        }
    }

    Reader r_;
    std::vector<Error>& errors_;
};

// Cross-checks that need the whole config: static data versus hosts.
void cross_check(const Config& c, std::vector<Error>& errors) {
    for (const auto& h : c.hosts) {
        for (const auto& z : c.zones) {
            if (!is_subdomain(h.name, z.origin)) continue;
            for (const auto& rec : z.records) {
                if (wire::wire_to_name(rec.owner) == h.name && rec.type == LDNS_RR_TYPE_CNAME) {
                    errors.push_back(Error{c.source, 0, 0, "hosts", "host " + h.name + " also has a static CNAME"});
                }
            }
        }
    }
}

}  // namespace

LoadResult load_text(const std::string& text, const std::string& name) {
    LoadResult result;
    constexpr size_t kMaxConfig = 16 * 1024 * 1024;
    if (text.size() > kMaxConfig) {
        result.errors.push_back(Error{name, 0, 0, "", "the config is larger than 16 MiB"});
        return result;
    }
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        result.errors.push_back(Error{name, e.mark.line + 1, e.mark.column + 1, "", "YAML: " + e.msg});
        return result;
    }
    Config config;
    try {
        Loader(name, result.errors).load(root, config);
    } catch (const std::exception& e) {
        result.errors.push_back(Error{name, 0, 0, "", std::string("cannot read the config: ") + e.what()});
    }
    if (result.errors.empty()) cross_check(config, result.errors);
    if (result.errors.empty()) result.config = std::move(config);
    return result;
}

LoadResult load_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        LoadResult r;
        r.errors.push_back(Error{path, 0, 0, "", "cannot open the config file"});
        return r;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return load_text(ss.str(), path);
}

}  // namespace glbd::conf
