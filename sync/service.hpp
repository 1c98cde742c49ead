// sync/service — sharing state with peer glbd over DNS (see docs/sync.md and sync/README.md).
// Own thread and libuv loop: pulls every syncInterval, NOTIFY on change, liveness, stateDir. The TCP
// thread of the DNS server calls handle() for `_glbd.` transfers and NOTIFY; the control thread calls
// set_own() and view(). All shared state sits behind one mutex (checked by clang), never touched by the UDP
// query path. The parts (service_impl.hpp): the core they share (core.hpp), serving peers (transfer/serving),
// pulling from them (transfer/pulls, transfer/exchange), heartbeats (transfer/beats), members (membership),
// liveness, stateDir (state_dir, state_file); the `_glbd.` zone's codec (transfer/codec) and the store (state).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/base/clock.hpp"
#include "resolver/model/global_view.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"

namespace glbd::sync {

// The next message of a long answer, produced when the connection can take it; false once the last one has
// been produced (it may leave `next` empty then).
using MoreMessages = std::function<bool(std::vector<uint8_t>& next)>;

struct PeerStatus {
    std::string address;
    std::string origin;  // "cluster/instance" that answered there, once known
    bool reachable = false;
    uint64_t last_ok_ms = 0;
    uint64_t exchanges = 0;
    uint64_t failures = 0;
    std::string last_error;
    bool key_mismatch = false;  // the last exchange failed on the key (last_error says how): peers.key differs
    // How long a TCP connection to it takes to open (smoothed, RFC 6298's SRTT with alpha 1/8, from
    // `connects` attempts), and how often a second attempt was started because the first was slow (a lost SYN).
    double connect_ms = 0;
    uint64_t connects = 0;
    uint64_t second_connects = 0;
    // Its heartbeats over UDP: received, and lost on the way (gaps in their numbers); the share lost lately
    // (smoothed over about 32 beats), the round trip (smoothed like connect_ms) and when one last came.
    uint64_t beats_received = 0, beats_lost = 0, rtt_samples = 0, last_beat_ms = 0;
    double loss_ratio = 0, rtt_ms = 0;
    // Suspect: nothing heard from it directly (no heartbeat, no transfer) for longer than suspect_limit_ms,
    // max(3 x syncInterval, deadAfter / 2), whether or not others still relay it (heard_through_others, as of
    // the last judgement); the reason says so in words, without a time that would go stale.
    bool suspect = false;
    uint64_t suspect_limit_ms = 0;
    bool heard_through_others = false;
    std::string suspect_reason;
    bool learnt = false;  // a member learnt from peers (sync/members.hpp), not one of peers.members
};

// Another glbd that runs under this instance's identity (cluster.id and cluster.instance): where it was seen and
// when last (0: never). The two take turns at newer lives, and each one's endpoints vanish from the view.
struct IdentityConflict {
    std::string where;  // its address, or "through PEER" when only its relayed reports were seen
    uint64_t last_ms = 0;
};
inline constexpr uint64_t kConflictShownMs = 600'000;  // how long after it was last seen the status shows it

struct SyncCounters {
    std::atomic<uint64_t> pulls{0}, pull_failures{0}, notifies_sent{0}, notifies_received{0};
    std::atomic<uint64_t> relay_pulls{0};  // of the pulls, those that asked for everything the peer relays
    std::atomic<uint64_t> served{0}, rejected_unsigned{0}, rejected_badkey{0}, rejected_badsig{0}, rejected_badtime{0},
        rejected_replay{0}, oversized{0}, rejected_reports{0}, rejected_hosts{0};
    std::atomic<uint64_t> reports_received{0};  // reports with data (one origin's hosts), before any check
    std::atomic<uint64_t> reports_skipped{0};   // of those, held already at their version: not decoded
    std::atomic<uint64_t> outside_parts{0};     // of those, outside verdicts alone, made whole with what was held
    std::atomic<uint64_t> beats_sent{0}, beats_resent{0}, beats_unsent{0}, beats_received{0}, beats_rejected{0};
    std::atomic<uint64_t> learnt_refused{0};  // advertised addresses not learnt: kMaxLearnt held
    std::atomic<uint64_t> loop_away_ms{0};    // the sync loop's turns late beyond 200 ms, summed (sync/liveness)
};

class Datagrams;

// What a test may give the service in place of the real thing: the clocks it reads, and the way its heartbeats
// leave (transfer/datagrams.hpp). Null: the system's clocks, UDP sockets.
struct ServiceSeams {
    const Clock* clock = nullptr;
    Datagrams* datagrams = nullptr;
};

class Service {
public:
    using Seams = ServiceSeams;
    // Without `config.peers` nothing is sent or served; the store still merges this instance's state
    // (overrides included) and stateDir still persists it. `state_read`: config.state_dir's file as a
    // StateReadAhead read it (sync/state_file.hpp); without it the file is read here.
    Service(const conf::Config& config, std::function<void()> on_change, Seams seams = {},
            std::optional<StateFileRead> state_read = std::nullopt);
    ~Service();
    Service(const Service&) = delete;
    Service& operator=(const Service&) = delete;

    void start();
    void stop();
    // A reload: the new config's peers, key and zones; what is known is kept.
    void reconfigure(const conf::Config& config);
    // Any thread. Whether a pull is under way on an open connection and pulls were heard from lately (a
    // peer that answers, not one being tried or gone silent): what it brings changes the view again when it
    // ends (on_change).
    [[nodiscard]] bool pulling() const;

    // Control thread. This instance's hosts (health applied, each numbering its check), static records (from
    // its DNSRecords) and health checks (local_view); bumps the version when they changed.
    void set_own_hosts(HostList hosts, RecordList records = {}, std::vector<SharedCheck> checks = {});
    // Control thread. What this instance's outside probes found (server/app/outside_probes); bumps the version
    // when it changed.
    void set_own_outside(OutsideMap outside);
    // Control thread. This cluster's failover group as its DNSRecords show it (status.group); kubernetes.group
    // in the config, when set, wins. Bumps the version when the group changed.
    void set_records_group(const std::string& group);
    // Control thread. The active failover groups, pinned and shared with every peer (the latest set or clear
    // anywhere wins): it holds whatever a groups record says until cleared. Why not, for a bad group name.
    Status set_active_groups(const std::vector<std::string>& groups);
    // Control thread. Unpins them: the groups records' set (or none: every group active) is in force again.
    void clear_active_groups();
    // The active groups in force (sync/groups.hpp; nullopt: none, every group active).
    [[nodiscard]] std::optional<GroupsInForce> groups_in_force() const;
    // Control thread. "eu-1" / "eu-1/192.0.2.10", "down" / "up" / "auto"; shared with every peer.
    // Forgets a dead instance ("cluster/instance") fleet-wide: a tombstone in this instance's report takes it
    // out of every server's view, status and stateDir, and keeps stale copies of it out, until it starts again
    // (a new life) or peers.forgetAfter passes. Refused for this instance, one not known, or one alive.
    Status forget_instance(const std::string& origin);
    Status set_override(const std::string& target, const std::string& state);
    // The merged global view, now, and (if asked) its SOA serial: the newest version of any known origin, in
    // hundredths of a second, modulo 2^32 (RFC 1982 arithmetic; it wraps every 497 days). Servers that hold
    // the same reports give the same serial. A change anywhere makes a version from its cluster's clock, the
    // newest, so the serial rises (changes under 10 ms apart, or from a clock behind another cluster's by more
    // than the time between the changes, may share one); a new instance's first version is its start time.
    // A reload bumps this instance's version.
    [[nodiscard]] GlobalView view(uint32_t* serial = nullptr) const;
    // The same, each cluster shared: one that did not change since the last call is the same object.
    [[nodiscard]] SharedView shared_view(uint32_t* serial = nullptr) const;
    [[nodiscard]] std::vector<Known> known() const;
    // This instance's hosts as stateDir held them at start (the Kubernetes source serves them until its first
    // list, so that a restart without the API server withdraws nothing).
    [[nodiscard]] std::vector<HostEntry> saved_own_hosts() const;
    [[nodiscard]] RecordList saved_own_records() const;  // the same for its static records
    // Every known instance with the liveness the view uses (the store's rule, this instance always alive).
    struct InstanceStatus {
        Known known;
        bool alive = false;
        bool self = false;
        uint64_t dead_for_ms = 0;  // since it was judged dead (0 while alive)
    };
    [[nodiscard]] std::vector<InstanceStatus> instances() const;
    // Each known instance that publishes another DNSKEY set than this one for a zone this instance serves
    // (its config's zones): signed with other keys, or signed by one of the two only.
    struct KeyMismatch {
        std::string origin;
        std::string zone;
        std::string ours, theirs;  // published ids (dnssec::published_id), "" for unsigned
        bool alive = false;
    };
    [[nodiscard]] std::vector<KeyMismatch> key_mismatches() const;
    [[nodiscard]] ZoneKeys own_zone_keys() const;  // what this instance publishes
    // The overrides in force (the latest per target from any origin; "auto" clears).
    [[nodiscard]] OverrideMap overrides() const;
    [[nodiscard]] std::vector<PeerStatus> peers() const;
    [[nodiscard]] IdentityConflict identity_conflict() const;
    [[nodiscard]] const SyncCounters& counters() const;
    [[nodiscard]] std::string own_origin() const;
    // This instance's report: its version now, and the live peers (other instances, by printable origin) not
    // known to hold it at `version` or later in this incarnation. A peer shows what it holds of us in its
    // heartbeats and in the origin records of every transfer we pull from it.
    [[nodiscard]] uint64_t own_version() const;
    [[nodiscard]] std::vector<std::string> not_holding(uint64_t version) const;

    // TCP thread: answers a `_glbd.` AXFR/SOA query or a NOTIFY (`answered`), refuses one that is not
    // signed with the key (`rejected`: the caller closes the connection), or leaves it (`not_ours`).
    // A transfer's messages come from `more` (set when there are any), one per call, as the connection
    // takes them: the caller holds one message of it at a time, not the transfer. The overload without it
    // collects every message into `out` (tests, fuzzing).
    // answered_member: answered, to a configured member's address (whose connections the server keeps).
    enum class Handled { not_ours, answered, answered_member, rejected };
    Handled handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out,
                   MoreMessages& more);
    Handled handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out);

    // The DNS server's hand-off socket of UDP NOTIFYs for `_glbd.` (peers' heartbeats), owned from here on.
    // Before start().
    void set_beat_source(int fd);

    // For tests and fuzzing, on a service not started: a peer's beat (a UDP NOTIFY as the DNS server hands it
    // over) taken as the sync thread takes it.
    void take_beat(const uint8_t* msg, size_t len, const SocketAddress& from);

    // For tests: verification against a chosen clock (seconds since the epoch).
    enum class Auth { ok, unsigned_, badkey, badsig, badtime, replay };
    Auth verify_request(const uint8_t* msg, size_t len, uint64_t now_s) const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

// The wall clock in milliseconds (versions, heartbeats and override times are compared across peers).
inline uint64_t now_ms() { return wall_ms(); }

}  // namespace glbd::sync
namespace glbd::metrics {
class Writer;
}
namespace glbd::sync {
// The service's counters as Prometheus families (sync/metrics.cpp).
void write_metrics(metrics::Writer& out, const Service& service);

}  // namespace glbd::sync
