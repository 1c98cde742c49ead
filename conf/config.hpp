// conf/ — YAML text in, a complete validated Config out (or every error at once).
#pragma once

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/model/host.hpp"
#include "resolver/model/served.hpp"
#include "resolver/model/zone.hpp"

namespace glbd::conf {

// The most a config file, or a zone file it names, may hold (10,000 hosts take some 1.5 MB).
inline constexpr size_t kMaxConfigBytes = size_t{64} << 20;

using Millis = std::chrono::milliseconds;

// One problem in a config, located: "file:line:col: key.path: message".
struct Error {
    std::string file;
    int line = 0;  // 1-based; 0 when unknown
    int column = 0;
    std::string path;
    std::string message;
    [[nodiscard]] std::string str() const;
};

// A peer member: an address or a DNS name, and a port.
struct SockAddr {
    std::string host;  // numeric address, or a DNS name
    uint16_t port = 53;
    [[nodiscard]] std::string str() const;  // "1.2.3.4:53" or "[::1]:53"
    // As a socket address; throws std::runtime_error when `host` is not numeric.
    socklen_t to_sockaddr(sockaddr_storage& out) const;
};

struct TsigKey {
    std::string name;
    std::string algorithm = "hmac-sha256";
    std::string secret;  // base64
};

struct Peers {
    TsigKey key;
    std::vector<SockAddr> members;
    Millis sync_interval{1000};
    Millis dead_after{10000};
    // How far deadAfter may grow for a cluster whose heartbeats arrive through a lossy path (docs/sync.md):
    // deadAfter x (1 + the share of its beats lost), at most this. 0: deadAfter + a tenth of it.
    Millis dead_after_max{0};
    Millis forget_after{86'400'000};  // an instance not heard from for this long is forgotten
    // Where the other clusters reach this one's DNS (its report and beats say so, docs/sync.md); empty: the
    // DNS listen addresses that are not wildcards.
    std::vector<SocketAddress> advertise;  // each SocketAddress::reachable(), at most kMaxAdvertise
    static constexpr size_t kMaxAdvertise = 4;
    bool learn_members = true;  // add the members peers advertise to `members` (bounded, signed DNS only)
};

// kubernetes: hosts from Kuadrant DNSRecords in this cluster's API server (sync/kube).
struct Kubernetes {
    // coredns: what Kuadrant's CoreDNS plugin serves (labelled kuadrant.io/coredns-zone-name); delegate: this
    // cluster's spec.delegate records; controller: every record under glbd's zones, glbd writing status.
    enum class Mode { coredns, delegate, controller };
    Mode mode = Mode::coredns;
    std::string api_server;               // "" = in cluster (service account), else a URL
    std::string kubeconfig;               // or a kubeconfig file
    std::vector<std::string> namespaces;  // empty: every namespace
    Millis resync{0};                     // 0: watch only
    // owners: namespace -> the names (and what lies below them) its records may publish; empty: any name
    // under a record's own rootHost.
    std::map<std::string, std::vector<std::string>> owners;
    // groupsFrom: the namespaces whose records may set the active groups (kuadrant-active-groups.<zone>); empty:
    // glbd's own namespace only (its service account's, or its kubeconfig context's).
    std::vector<std::string> groups_from;
    std::string group;                   // this cluster's failover group; "" = the records' status.group
    bool insecure_health_checks = true;  // as dns-operator's --insecure-health-checks
    std::vector<Prefix> deny_networks;   // record endpoints in these networks are refused
};

struct GeoNetwork {
    Prefix network;
    std::string code;
};

// The config mirrors the YAML: one struct a section, one field a key (see docs/config.md).
struct Cluster {
    std::string id;
    std::string instance;                        // default: the host name
    std::optional<model::Coordinates> location;  // cluster.location: where its endpoints are (nearest fallback, map)
};

struct Listen {
    std::vector<SocketAddress> dns;
    uint16_t udp_payload = 1232;          // udpPayloadSize: the largest UDP answer we send
    unsigned tcp_max_connections = 1000;  // beyond it a connection that never had an answer is closed
    unsigned tcp_max_per_source = 16;     // connections from one client address (IPv6: its /64)
    unsigned tcp_max_inflight = 100;      // answers written but not yet taken, per connection (and x 1 KiB)
    Millis tcp_idle_timeout{5000};
    // cookieSecretFile: the DNS cookie secret (16 bytes, base64) shared by a cluster's replicas, so that a
    // client moving between them keeps its cookie; none: a random one per process, rotated daily.
    std::optional<std::array<uint8_t, 16>> cookie_secret;
};

struct Admin {
    std::optional<SocketAddress> listen;
    std::string token;
};

struct GeoIp {
    std::string database;  // a MaxMind DB or a location (libloc) database, told apart by its header
    std::vector<GeoNetwork> networks;
    bool verify = false;  // a location database must carry a valid signature by signing_key
    std::string signing_key = "/var/lib/location/signing-key.pem";
    bool nearest = false;  // fallback: nearest (else default): no usable entry for the country or continent
                           // -> the nearest usable geo group by great-circle distance
};

// rateLimit: responses per second per client prefix and response kind (0 = off), and slip.
struct RateLimit {
    unsigned responses_per_second = 200, slip = 2;  // NSD's default rate
    uint8_t ipv4_prefix = 24, ipv6_prefix = 56;
};

struct Log {
    std::string level = "info";
    std::string format = "text";
};

// dnstap: every query and answer as dnstap over Frame Streams (server/dnstap).
struct Dnstap {
    bool unix_socket = false;  // sink "unix:PATH"; else PATH is a file
    std::string path;
    std::string identity;  // "" = the host name
    bool queries = true, responses = true;
    unsigned sample = 1;  // one exchange in N
};

// health: how this glbd probes (hosts[].healthCheck says what; docs/config.md).
struct Health {
    // sourceAddress: every probe leaves from this local address (of its family; a probe of the other family
    // leaves from the kernel's choice). Absent: the kernel's choice for all.
    std::optional<Address> source_address;
    // outside: probes of other clusters' endpoints, and the fleet's verdict (sync/health/README.md).
    struct Outside {
        bool enabled = true;
        unsigned vantages = 3;      // other clusters that probe each endpoint (1..kMaxVantages)
        unsigned quorum = 0;        // outside failures that withdraw an endpoint; 0: a majority of those that count
        Millis keep_dead{600'000};  // a dead glbd's entries stay while a quorum reaches them (0: off)
        unsigned max_probes_per_second = 100;  // this glbd's outside probes; past it the interval stretches
        static constexpr unsigned kMaxVantages = 16;
        bool operator==(const Outside&) const = default;
    } outside;
};

// metrics: what /metrics breaks answers down by.
struct Metrics {
    bool per_host = false;  // also by host and cluster: a series per pair (hosts x clusters of them)
};

struct Config {
    std::string source;  // file name the config came from
    Cluster cluster;
    Listen listen;
    Admin admin;
    unsigned threads = 0;
    GeoIp geoip;
    std::vector<model::Zone> zones;
    std::vector<model::Host> hosts;
    std::optional<Peers> peers;
    std::optional<Kubernetes> kubernetes;
    std::string state_dir;
    std::string user;  // when started as root: drop to this user after binding
    RateLimit rate_limit;
    Log log;
    std::optional<Dnstap> dnstap;
    Metrics metrics;
    Health health;
    // The zones and settings a snapshot is built from (resolver/snapshot), referring into this config.
    operator model::Served() const {  // NOLINT: implicit, so that a Config is what the builder is given
        return {cluster.id, cluster.location, geoip.nearest, listen.udp_payload, zones, hosts};
    }
};

struct LoadResult {
    std::optional<Config> config;  // set only when errors is empty
    std::vector<Error> errors;
};

// What a load tells as it parses, before anything is checked: the top-level stateDir's text as soon as the
// parser reaches it (`glbd serve` begins reading that directory's file then, on another core, while the rest
// of a long config is parsed). A hint: only the loaded config counts, and the hook must not throw.
struct LoadHooks {
    std::function<void(const std::string& state_dir)> state_dir;
};

// Reads and validates a config file. Never throws.
LoadResult load_file(const std::string& path, const LoadHooks& hooks = {});
// Validates YAML text; `name` is used in error locations.
LoadResult load_text(const std::string& text, const std::string& name, const LoadHooks& hooks = {});

// Helpers shared with other layers.
bool is_geo_code(std::string_view code);  // ISO 3166-1 alpha-2 or GEO-<continent>
std::optional<Millis> parse_duration(std::string_view text);

}  // namespace glbd::conf
