// conf/reader — walking the YAML tree with every problem recorded, located, and the walk going on.
// Internal to conf/: the section readers in config.cpp and config_hosts.cpp use it.
#pragma once

#include "conf/document.hpp"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/address.hpp"
#include "resolver/model/names.hpp"

namespace glbd::conf {

// The model's types and name rules, as conf's readers use them (conf/ only).
using model::active_groups_name, model::canonical_name, model::is_api_server_url, model::is_canonical_name,
    model::is_cluster_id, model::is_custom_geo_code, model::is_endpoint, model::is_group_name, model::is_host_name,
    model::is_instance_name, model::is_lb_host_name, model::is_probe_path, model::is_subdomain, model::kApexCname;
using model::Coordinates, model::HealthCheck, model::Host, model::LoadBalancing, model::Nameserver, model::Protocol,
    model::Soa, model::StaticRecord, model::Zone, model::ZoneDnssec;

inline bool is_ip(const std::string& s) {
    Address a;
    return Address::parse(s, a);
}

// Typed reads of YAML nodes; a node of the wrong kind or out of range is an error at its line and key path.
class Reader {
public:
    Reader(std::string file, std::vector<Error>& errors) : file_(std::move(file)), errors_(errors) {}

    void error(const Node& at, const std::string& path, std::string message);
    void error_at_line(int line, const std::string& path, std::string message);

    // A map whose keys must come from `allowed`; unknown and duplicate keys are errors.
    bool map(const Node& n, const std::string& path, std::initializer_list<std::string_view> allowed);
    bool seq(const Node& n, const std::string& path);
    std::optional<std::string> str(const Node& n, const std::string& path);
    std::optional<int64_t> integer(const Node& n, const std::string& path, int64_t lo, int64_t hi);
    std::optional<bool> boolean(const Node& n, const std::string& path);
    std::optional<Millis> duration(const Node& n, const std::string& path, Millis lo, Millis hi);
    // "1.2.3.4:53", "[::1]:53"; host names allowed when `names` is set.
    std::optional<SockAddr> sockaddr(const Node& n, const std::string& path, bool names);
    // A numeric address and port (a listen address).
    std::optional<SocketAddress> socket_address(const Node& n, const std::string& path);

    static std::string join(const std::string& path, std::string_view key) {
        return path.empty() ? std::string(key) : path + "." + std::string(key);
    }
    static std::string index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }
    static const char* kind(const Node& n);
    static std::string shown(const Node& n) { return n.is_scalar() ? "\"" + std::string(n.scalar()) + "\"" : kind(n); }

    const std::string& file() const { return file_; }
    std::vector<Error>& errors() { return errors_; }

private:
    std::string file_;
    std::vector<Error>& errors_;
};

// A mapping at `path` with a fixed set of keys. Each typed read names its key once and leaves `out` as it
// was when the key is absent or its value is bad (the error is recorded).
class Section {
public:
    Section(Reader& r, const Node& n, std::string path, std::initializer_list<std::string_view> keys)
        : r_(r), n_(n), path_(std::move(path)), ok_(r.map(n, path_, keys)) {}

    explicit operator bool() const { return ok_; }
    Node operator[](const char* key) const { return n_[key]; }
    const Node& node() const { return n_; }
    [[nodiscard]] std::string at(std::string_view key) const { return Reader::join(path_, key); }
    const std::string& path() const { return path_; }

    template <class T>
    void integer(const char* key, int64_t lo, int64_t hi, T& out) {
        if (auto v = n_[key]) {
            if (auto x = r_.integer(v, at(key), lo, hi)) out = static_cast<T>(*x);
        }
    }
    void duration(const char* key, Millis lo, Millis hi, Millis& out) {
        if (auto v = n_[key]) {
            if (auto d = r_.duration(v, at(key), lo, hi)) out = *d;
        }
    }
    void boolean(const char* key, bool& out) {
        if (auto v = n_[key]) {
            if (auto b = r_.boolean(v, at(key))) out = *b;
        }
    }
    // The string, when the key is there and holds one.
    std::optional<std::string> str(const char* key) {
        auto v = n_[key];
        return v ? r_.str(v, at(key)) : std::nullopt;
    }
    // A string that must be one of `choices`.
    std::optional<std::string> choice(const char* key, std::initializer_list<std::string_view> choices);
    void error(const char* key, std::string message) {
        auto v = n_[key];
        r_.error(v ? v : n_, at(key), std::move(message));
    }

private:
    Reader& r_;
    Node n_;
    std::string path_;
    bool ok_;
};

// The section readers, one file each group (config.cpp: the server; config_hosts.cpp: zones and hosts).
void read_zones(Reader& r, const Node& n, Config& c);
void read_hosts(Reader& r, const Node& n, Config& c);

// Parses zone-file text with ldns (zone_file.cpp); records land in `zone` (SOA fields merged) and apex NS
// records in `apex_ns`. Errors name `path` and the line, counted from `first_line`.
void parse_zone_text(Reader& r, const std::string& text, const std::string& path, int first_line, Zone& zone,
                     std::vector<StaticRecord>& apex_ns);

}  // namespace glbd::conf
