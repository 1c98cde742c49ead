// sync/state — what one glbd instance knows of every instance (its own and, directly or relayed, its
// peers'), how reports merge into the global view, overrides. Pure data and functions: no sockets, no
// threads (sync/service.* drives them; transfer/codec.* carries reports as the `_glbd.` zone).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/base/result.hpp"
#include "resolver/model/global_view.hpp"
#include "sync/groups.hpp"
#include "sync/members.hpp"
#include "sync/shared_checks.hpp"
#include "sync/zone_keys.hpp"

namespace glbd::sync {

struct InstanceState;

enum class OverrideState : uint8_t { automatic, up, down };

struct OverrideEntry {
    OverrideState state = OverrideState::automatic;
    uint64_t at_ms = 0;  // when the operator set it (the setter's clock); the latest wins
    bool operator==(const OverrideEntry&) const = default;
};
using OverrideMap = std::map<std::string, OverrideEntry>;  // "eu-1" or "eu-1/192.0.2.10"
// The overrides in force that name one cluster or its endpoints, in target order.
using ClusterOverrides = std::vector<std::pair<std::string, OverrideEntry>>;

// An instance forgotten through an origin (glbd forget): its life and last heartbeat as the origin knew them
// then, and when. Wherever the tombstone is known, what is held of that instance at or below (incarnation,
// heartbeat) goes, and such a report of it is ignored; a later heartbeat or a new life brings it back.
struct Forgotten {
    uint64_t incarnation = 0, heartbeat = 0;
    uint64_t at_ms = 0;  // the setter's clock: the tombstone goes after peers.forgetAfter
    [[nodiscard]] bool covers(const InstanceState& s) const;
    bool operator==(const Forgotten&) const = default;
};
using ForgottenMap = std::map<std::string, Forgotten>;  // by "cluster/instance"
// One tombstone as reports and the state file write it: "eu-1/glbd-0 INCARNATION HEARTBEAT AT".
std::string format_forgotten(const std::string& origin, const Forgotten& t);
// Back from that text into `map` (the widest per instance); false for anything else. The names are checked
// with the rest of the report (check_report).
bool parse_forgotten(std::string_view text, ForgottenMap& map);

// One instance's report: its hosts with endpoint health, and the overrides set through it.
struct InstanceState {
    std::string cluster;
    std::string instance;
    uint64_t version = 0;    // grows with every change of hosts or overrides (the origin's clock, ms)
    uint64_t heartbeat = 0;  // the origin's clock when it last served its state (ms)
    HostList hosts;          // shared with the cluster views made from it (copy on write)
    OverrideMap overrides;
    // Which life of the instance: chosen at start above any it had before (stateDir, or what peers still
    // hold of it). A higher incarnation replaces what is known whole; a lower one is ignored. Version and
    // heartbeat order reports within one incarnation.
    uint64_t incarnation = 0;
    std::optional<model::Coordinates> location = std::nullopt;  // cluster.location, when the origin's config sets it
    RecordList records = {};          // static records (from its DNSRecords), shared with the views (copy on write)
    std::string group = {};           // its cluster's failover group ("" = none)
    ActiveGroups active_groups = {};  // the active groups as last set through it (at_ms 0: never)
    std::vector<SocketAddress> reach = {};  // where peers reach its DNS (peers.advertise; sync/members.hpp)
    ZoneKeys dnskeys = {};                  // the DNSKEY set it publishes for each zone it signs
    ForgottenMap forgotten = {};            // instances forgotten through it, fleet-wide (glbd forget)
    std::vector<SharedCheck> checks = {};   // its hosts' health checks (HostEntry::check numbers them from 1)
    bool probes_outside = false;            // it probes other clusters' endpoints (health.outside.enabled)
    OutsideMap outside = {};                // and what those probes found
    // The version at which anything but `outside` last changed (0: not known, as `version`): a puller that
    // holds this life at base_version or later is sent the outside verdicts alone (docs/sync.md).
    uint64_t base_version = 0;
    [[nodiscard]] uint64_t base() const { return base_version ? base_version : version; }
    // Hosts the reader of a report (codec, state file) left out because an endpoint was not an address or a
    // host name, and the first one's problem: check_report counts them with the hosts it leaves out itself.
    size_t unreadable = 0;
    std::string unreadable_why = {};
    [[nodiscard]] std::string origin() const { return cluster + "/" + instance; }
};

// What this instance knows of one origin.
struct Known {
    InstanceState state;
    uint64_t last_heard_ms = 0;       // local clock: when its heartbeat last moved (directly or relayed)
    uint32_t changed_generation = 0;  // the store's generation when this origin's data last changed
    uint64_t grace_ms = 0;            // added to deadAfter for it: its path has been lossy (Store::set_grace)
};

// Serial arithmetic (RFC 1982): whether generation `a` is after `b`.
inline bool newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

// Every origin this instance knows, keyed by "cluster/instance" (its own included).
class Store {
public:
    // Result of merging a received report.
    struct Merge {
        bool data_changed = false;  // a newer version: hosts or overrides changed
        bool heard = false;         // the heartbeat moved
    };
    // Merges a report received from a peer: `age_ms` is how long ago the relaying peer last heard
    // from that origin (0 when it is the origin). A newer incarnation replaces, an older one is ignored;
    // within one, the newest version wins and heartbeats only move forward.
    Merge merge(const InstanceState& report, uint64_t age_ms, uint64_t now_ms);
    // Sets this instance's own state (never overwritten by peers).
    void set_own(const InstanceState& own, uint64_t now_ms);
    // Loads a report as just heard (stateDir at start); the report moves into the store.
    void load(InstanceState&& s, uint64_t now_ms);
    // Gives a checked report's host names the texts the largest list known holds (resolver/model's
    // share_names): one text per name, not per cluster. Before merge or load; returns how many took one.
    size_t share_names(InstanceState& report) const;
    // The list whose names a report of `origin` should share: the one held of it, else the largest known.
    [[nodiscard]] HostList names_for(const std::string& origin) const;
    // A heartbeat without data (the origin did not change since the puller's generation): moves the
    // heartbeat only.
    // Returns true when the report's version is newer than what is known (a full pull is needed).
    bool merge_heartbeat(const InstanceState& report, uint64_t age_ms, uint64_t now_ms, bool* heard);
    // Grows with every change of data (not of heartbeats); starts anywhere (serial of `_glbd.`).
    [[nodiscard]] uint32_t generation() const { return generation_; }
    void set_generation(uint32_t g) { generation_ = g; }

    // Whether `origin` may be merged: known already, or there is room for one more (at most `max` known). When
    // full, the origin dead longest (not heard for more than `dead_after_ms`; never our own) is forgotten to
    // make room and named in `evicted`; with none dead, there is no room. Alive origins are never evicted.
    bool make_room(const std::string& origin, size_t max, uint64_t now_ms, uint64_t dead_after_ms,
                   std::string* evicted);
    // Forgets every origin but our own not heard from since `now_ms - forget_after_ms`, and the tombstones
    // older than that; returns the origins.
    std::vector<std::string> forget(uint64_t now_ms, uint64_t forget_after_ms);
    // The instances forgotten fleet-wide: per instance, the widest tombstone of any origin's report (an
    // instance is forgotten at most once per life and heartbeat; merge and load ignore what one covers).
    [[nodiscard]] const ForgottenMap& tombstones() const { return tombstones_; }
    // The origins tombstones took out of the store since the last call (the service drops what it keeps of
    // them: beats, learnt addresses).
    std::vector<std::string> take_buried() { return std::exchange(buried_, {}); }
    // Alive: heard within dead_after_ms plus its grace.
    [[nodiscard]] bool alive(const Known& k, uint64_t now_ms, uint64_t dead_after_ms) const;
    // The extra time an origin is given before it counts as dead (accrual: the service sets it from the loss
    // measured on the path to it, within the config's bounds). Unknown origins are left alone.
    void set_grace(const std::string& origin, uint64_t grace_ms);
    // The merged global view at `now_ms` (docs/answers.md: replicas, liveness, overrides applied).
    [[nodiscard]] GlobalView view(uint64_t now_ms, uint64_t dead_after_ms) const;
    // The same, shared: a cluster whose instances' data, liveness and overrides did not change since the
    // last call is the same object as then (computed again only when one of them changed).
    [[nodiscard]] SharedView shared_view(uint64_t now_ms, uint64_t dead_after_ms) const;
    // The overrides in force: per target, the latest entry of any origin ("auto" removes).
    [[nodiscard]] OverrideMap overrides() const;
    // The admin's last word on the active groups: the latest set or clear through any origin (nullopt: none).
    [[nodiscard]] std::optional<ActiveGroups> admin_groups() const;
    // The names of the groups records (kuadrant-active-groups.<zone>, one per zone served).
    void set_groups_names(std::vector<std::string> names) { groups_names_ = std::move(names); }
    // The active groups in force (sync/groups.hpp): the admin's set, else the groups records' in the clusters'
    // reports (each cluster's as its view takes them), else none.
    [[nodiscard]] std::optional<GroupsInForce> groups_in_force(uint64_t now_ms, uint64_t dead_after_ms) const;
    [[nodiscard]] const std::map<std::string, Known>& known() const { return known_; }
    [[nodiscard]] const std::string& own_origin() const { return own_; }

private:
    // What a cluster's view was computed from: each instance's data (by the generation it last changed
    // at), whether it counted as alive, and the overrides naming the cluster.
    struct ClusterKey {
        std::vector<std::tuple<std::string, uint32_t, bool>> instances;
        ClusterOverrides overrides;
        bool standby = false;  // its group is not active
        bool operator==(const ClusterKey&) const = default;
    };
    struct Cached {
        ClusterKey key;
        std::shared_ptr<const ClusterView> view;
    };
    // Each cluster's instances, and those of them its view is made from (newest_first: the live ones, or all).
    struct ClusterReports {
        std::vector<const Known*> instances, use;
        std::vector<bool> alive;  // of each instance
    };
    [[nodiscard]] std::map<std::string, ClusterReports> by_cluster(uint64_t now_ms, uint64_t dead_after_ms) const;
    [[nodiscard]] std::optional<GroupsInForce> in_force(const std::map<std::string, ClusterReports>& clusters) const;
    Merge merge_one(const InstanceState& report, uint64_t age_ms, uint64_t now_ms);
    // Takes in a report's tombstones, and takes out what they cover.
    void bury(const ForgottenMap& forgotten);
    [[nodiscard]] bool covered(const InstanceState& s) const;
    std::map<std::string, Known> known_;
    ForgottenMap tombstones_;
    std::vector<std::string> buried_;
    std::vector<std::string> groups_names_;
    std::string own_;
    uint32_t generation_ = 1;
    mutable std::map<std::string, Cached> cache_;  // by cluster id (shared_view)
};

// "eu-1" or "eu-1/192.0.2.10": a cluster name, then optionally an endpoint as glbd holds it.
bool is_override_target(std::string_view target);
// Sets (or with "auto" clears) an override at `now_ms`; why not, for a bad target or state.
Status set_override(OverrideMap& map, const std::string& target, const std::string& state, uint64_t now_ms);
// The entries of `overrides` in force ("auto" ones are not) that name cluster `id` or one of its endpoints.
ClusterOverrides overrides_naming(const OverrideMap& overrides, const std::string& id);
// Applies one cluster's overrides to its view: drained endpoints become unhealthy, forced ones healthy; an
// endpoint's override beats its cluster's. The one place overrides change health (the store's views use it).
void apply_overrides(ClusterView& cluster, const ClusterOverrides& overrides);
// The override in force for one endpoint of a cluster (the endpoint's, else the cluster's), or nullptr.
const OverrideEntry* override_for(const OverrideMap& overrides, const std::string& cluster, const Endpoint& target);
const char* state_name(OverrideState s);

// --- the `_glbd.` zone: each origin as TXT records (see docs/sync.md)
constexpr const char* kSyncZone = "_glbd.";
// The same name in wire form, for the DNS server's TCP hook.
inline const std::string& sync_zone_wire() {
    static const std::string wire("\x05_glbd\0", 7);
    return wire;
}

// What one report may carry, and how far ahead of our clock its times may be. A report beyond them is
// rejected whole (see check_report) and the others of the same transfer still merge.
struct ReportLimits {
    static constexpr size_t kMaxOrigins = 1024;                   // origins in one transfer, and known at once
    static constexpr size_t kMaxHosts = 100'000;                  // hosts of one origin
    static constexpr size_t kMaxEndpoints = 10'000;               // endpoints of one host
    static constexpr size_t kMaxOverrides = 10'000;               // overrides of one origin
    static constexpr size_t kMaxRecords = 10'000;                 // static records of one origin
    static constexpr size_t kMaxRecordData = 8192;                // bytes of one static record's data
    static constexpr size_t kMaxGroups = 64;                      // active groups set through one origin
    static constexpr size_t kMaxForgotten = kMaxOrigins;          // instances forgotten through one origin
    static constexpr size_t kMaxChecks = 4096;                    // distinct health checks of one origin
    static constexpr size_t kMaxCheckText = 2200;                 // one check's text (a path of 2,048 at most)
    static constexpr size_t kMaxOutsideFailing = 100'000;         // outside failures in one report
    static constexpr uint64_t kMaxSkewMs = uint64_t{5} * 60'000;  // version, heartbeat, override time ahead of now
};
// Checks every field of a decoded report (an origin's state) by the config's rules: the cluster and instance
// names, its times, override targets and the limits refuse the report whole (`error`); a host that breaks
// a rule (its name, entry, endpoints as addresses or names, geo code, a limit) or repeats a (host, entry) is
// left out of `s` and counted, and the rest may enter the store. Hosts outside our zones are the caller's
// to drop. `check_times` false skips the clock checks (this instance's own saved state: its last life's
// clock may have been wrong, which its new incarnation makes harmless).
struct CheckResult {
    std::string error;        // the report is refused: why ("" when it may enter the store)
    size_t dropped = 0;       // hosts and static records left out of it
    std::string dropped_why;  // the first of those: why
};
CheckResult check_report(InstanceState& s, uint64_t now_ms, bool check_times = true);
// An origin's cluster.location in its report: "53.3498,-6.2603"; parse_location refuses anything else or a
// point off the globe.
std::string format_location(const model::Coordinates& c);
std::optional<model::Coordinates> parse_location(std::string_view v);
}  // namespace glbd::sync
