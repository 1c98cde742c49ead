// sync/kube/records — Kuadrant DNSRecords (kuadrant.io/v1alpha1) to this cluster's entries and static records,
// as docs/kuadrant.md describes. Two steps: read_record() keeps only what glbd uses of an object (the JSON is
// dropped at once, and an object over kMaxObjectBytes keeps only its name), map_record() maps one record,
// refusing per name what its author may not publish. Which record keeps a name two namespaces publish is the
// caller's (Source::collect). Pure functions: no I/O, no threads, never throw.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/address.hpp"

namespace glbd::kube {

// What one DNSRecord may hold. A record beyond them is refused whole (logged, counted, and in controller mode
// Ready=False); the cluster's other records and its report to peers are untouched.
struct RecordLimits {
    static constexpr size_t kMaxObjectBytes = size_t{256}
                                              << 10;  // one object's JSON (a record of 20 gateways: ~20 KiB)
    static constexpr size_t kMaxEndpoints = 2000;     // spec.endpoints of one record
    static constexpr size_t kMaxTargets =
        10'000;  // targets of one endpoint, and endpoints of one entry (as peers take)
    static constexpr size_t kMaxNameBytes = 253;
    static constexpr size_t kMaxTextBytes = 4096;  // a TXT target, a setIdentifier, a providerSpecific value
    // What one watcher holds: whole records up to this many JSON bytes (beyond, names only), and objects.
    static constexpr size_t kMaxHeldBytes = size_t{64} << 20;
    static constexpr size_t kMaxObjects = 20'000;
};

// Kuadrant's defaults (dns-operator's api/v1alpha1 and pkg/builder).
struct KuadrantDefaults {
    static constexpr uint32_t kTtl = 60;  // a leaf with no recordTTL
    static constexpr uint16_t kProbePort = 443;
    static constexpr int64_t kProbeIntervalMs = 300'000;   // 5m
    static constexpr unsigned kProbeFailureThreshold = 5;  // unhealthy after more than this many failures in a row
    static constexpr int64_t kProbeTimeoutMs = 3000;       // internal/probes: PROBE_TIMEOUT
};

struct Endpoint {
    std::string name;  // dnsName: lower case, no trailing dot
    std::string type;  // recordType as written (A, AAAA, CNAME, NS, TXT, ...)
    std::vector<std::string> targets;
    std::string set_identifier;
    uint32_t ttl = 0;                   // recordTTL (0: none)
    std::optional<std::string> weight;  // providerSpecific "weight"
    std::optional<std::string> geo;     // providerSpecific "geo-code"
};

struct HealthSpec {  // spec.healthCheck as written (defaults applied when mapped)
    int64_t port = 0;
    std::string path, protocol, interval;
    int64_t failure_threshold = 0;
    std::string headers_secret;  // additionalHeadersRef.name: a Secret in the record's namespace
};

// What glbd keeps of a DNSRecord.
// Delegate mode writes glbd's status of a record at status.remoteRecordStatuses.<this key>, as a Kuadrant primary
// writes its own there under its cluster ID.
constexpr const char* kRemoteStatusKey = "glbd";

struct Record {
    std::string ns, name;
    std::string resource_version;  // as text
    std::string created;           // metadata.creationTimestamp (RFC 3339, UTC: orders as text)
    int64_t generation = 0;
    bool deleting = false;       // metadata.deletionTimestamp is set: still served until it is gone
    std::string zone_label;      // kuadrant.io/coredns-zone-name
    bool authoritative = false;  // kuadrant.io/authoritative-record
    std::string root_host;       // lower case
    bool delegate = false;       // spec.delegate
    std::vector<Endpoint> endpoints;
    std::optional<HealthSpec> health;
    std::string group;  // status.group (dns-operator >= 0.16)
    // status.conditions and observedGeneration, and the same of glbd's remoteRecordStatuses entry under
    // kRemoteStatusKey, for the status writes' comparison (held apart: a json's move is not seen as noexcept)
    std::shared_ptr<const nlohmann::json> status;
    size_t bytes = 0;   // the object's JSON size
    std::string error;  // why it cannot be mapped at all (malformed, too large)
    [[nodiscard]] std::string key() const { return ns + "/" + name; }
    // The order in which records keep names: by creationTimestamp (RFC 3339 in UTC: text order is time
    // order), then namespace and name.
    [[nodiscard]] bool older_than(const Record& o) const {
        if (created != o.created) return created < o.created;
        return ns != o.ns ? ns < o.ns : name < o.name;
    }
};
using RecordPtr = std::shared_ptr<const Record>;

// One object as the API gives it (a list item, a watch event's object), `bytes` long in JSON. Only the fields
// above are kept; a record whose shape is wrong or whose size passes a limit keeps its name and `error`.
Record read_record(const nlohmann::json& obj, size_t bytes);
// The same from JSON text: an object over kMaxObjectBytes is read for its name alone (its spec skipped).
Record read_record_text(std::string_view text);

using Mode = conf::Kubernetes::Mode;

struct MapOptions {
    Mode mode = Mode::coredns;
    std::vector<model::Zone> zones;  // glbd's: their origins and nameservers
    // kubernetes.owners: namespace -> the names (and what lies below them) its records may publish; empty:
    // any name under a record's own rootHost.
    std::map<std::string, std::vector<std::string>> owners;
    std::vector<Prefix> deny;  // kubernetes.denyNetworks: endpoint addresses refused
    bool insecure_health_checks = true;
    // The namespaces whose records may publish the active groups (kuadrant-active-groups.<zone>): the config's
    // kubernetes.groupsFrom, else glbd's own namespace (none when it is not known).
    std::vector<std::string> groups_from;
};

// A name a record may not publish, and why (it is logged, counted, and shown in the record's status).
struct Refusal {
    std::string name;
    std::string why;
};

// A static record a DNSRecord publishes (NS below the apex with its glue, TXT): served as zone data on every
// server.
struct StaticRecord {
    std::string name;  // lower case, no trailing dot
    std::string type;  // "NS", "TXT", or "A"/"AAAA" (glue below an NS name of the same record)
    uint32_t ttl = 0;
    std::vector<std::string> targets;  // NS: host names; TXT: one record's strings; A/AAAA: one address
    bool operator==(const StaticRecord&) const = default;
};

struct Mapped {
    std::vector<model::Host> hosts;     // this cluster's entries (each weighted target one entry)
    std::vector<StaticRecord> records;  // NS and TXT
    std::vector<Refusal> refused;       // names left out; the rest of the record is served
    std::string error;                  // the whole record refused: why
    bool not_ours = false;              // not an input in this mode (another zone, delegated, authoritative...)
    std::string other_zone;             // not ours because it names a zone this glbd does not serve: which, and why
    std::vector<std::string> names;     // every name it publishes (hosts and records), for ownership
};

// Maps one record by the mode's rules (see docs/kuadrant.md): the load-balanced shape (H CNAME klb.H') gives an
// entry per weighted target, with its geo, weight, defaultGeo, TTL and addresses (or external host name);
// geo-code/weight on plain A/AAAA/CNAME endpoints give entries of that name; plain A/AAAA/CNAME a simple
// host; NS below the apex and TXT static records. Registry TXT records are not served. A name outside the
// record's rootHost, outside the owners' names, at the apex (but a matching NS set) or at a nameserver's
// name (but matching glue) is refused with the reason.
Mapped map_record(const Record& r, const MapOptions& o);

// Whether a TXT endpoint is one of external-dns's registry records (kuadrant-<hash>-<type>-<name>,
// "heritage=external-dns,..."): the operator's bookkeeping, never served.
bool is_registry_txt(const Endpoint& e);

}  // namespace glbd::kube
