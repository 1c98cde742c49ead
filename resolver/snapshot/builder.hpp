// resolver/snapshot/builder — the next snapshot from what is served (the config's zones and settings,
// model::Served) and the global view, each from the one
// before: only the hosts a change touches are built again (host.hpp), on several threads when there are
// many; the rest are shared. Control thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "geo/geo.hpp"
#include "resolver/model/global_view.hpp"
#include "resolver/model/served.hpp"
#include "resolver/snapshot/host.hpp"
#include "resolver/snapshot/signed.hpp"
#include "resolver/snapshot/snapshot.hpp"

namespace glbd {

// Builds snapshots one after another, each from the one before: a host is built again only when a change
// touches it (its entry in some cluster changed, appeared or went; its cluster's liveness or location
// changed), every other host's block is shared with the previous snapshot. What decides which clusters
// changed is the SharedView: a cluster that is the same object as in the last build did not change. A
// different config (zones, this cluster's id, the nearest fallback) or counting where the last did not
// builds everything. The result is the same as a first build from the same view (tests/snapshot_test).
// Control thread only; not thread-safe. A build of kParallelFrom hosts or more (a first build, a reload)
// shares them out among up to kMaxThreads threads (the calling one and helpers it joins before returning).
class SnapshotBuilder {
public:
    static constexpr size_t kParallelFrom = 2048;
    static constexpr size_t kInOrderFrom = 256;  // hosts built in the clusters' list order (see build())
    static constexpr size_t kMaxThreads = 4;
    // At most `threads` threads (and no more than the CPUs the process may run on) build one snapshot.
    explicit SnapshotBuilder(size_t threads = kMaxThreads) : threads_(std::max<size_t>(threads, 1)) {}
    // Throws std::runtime_error on data that cannot be served (then the next build is a full one).
    // `published` are records glbd itself publishes (the failover groups' TXT): served as the config's records are
    // (never over them), and in place of any cluster's records of the same name and type. `counter_ids` must
    // give a (host, cluster) pair the same id in every build: a host built again keeps the ids it had.
    std::shared_ptr<Snapshot> build(const model::Served& served, const SharedView& view,
                                    std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                    const CounterIds& counter_ids = {}, const std::vector<ZoneRecord>& published = {});
    // Forgets everything: the next build is a full one.
    void reset();
    // With `defer`, a build that has no hosts built before (the first, or the first after reset() or a
    // failure) signs no host: each is left to the resolver to sign as it answers (HostSignatures::deferred),
    // and the snapshot's resign_at is its own signed_at, so that the next build, at once, signs them all. At
    // 10,000 hosts x 20 clusters on one CPU a start then answers after 0.7 s, not after the 9 s (14 s before
    // OpenSSL's contexts were reused) that signing 400,000 RRsets takes.
    void defer_first_signing(bool defer) { defer_first_ = defer; }
    // What the last build did.
    struct Stats {
        bool full = false;
        size_t hosts = 0;       // hosts in the snapshot
        size_t built = 0;       // hosts built (the rest shared)
        SignCount signed_sets;  // the built hosts' RRsets signed anew, and those that kept their signatures;
                                // the hosts left to sign
    };
    [[nodiscard]] const Stats& last() const { return last_; }

    // A host name with its hash, computed once: a build looks each name up in every cluster.
    struct NameKey {
        std::string_view name;
        size_t hash;
        explicit NameKey(std::string_view n) : name(n), hash(std::hash<std::string_view>{}(n)) {}
        NameKey(std::string_view n, size_t h) : name(n), hash(h) {}
        bool operator==(const NameKey& o) const { return name == o.name; }
        struct Hash {
            size_t operator()(const NameKey& k) const noexcept { return k.hash; }
        };
    };

private:
    // A cluster's host names -> their places in its view's hosts (the first, for a name given twice):
    // open addressing over (hash, place), the names read from the view itself, so a view with the same
    // names in the same places (the common change) keeps the table as it is.
    class Places {
    public:
        static constexpr uint32_t kNone = UINT32_MAX;
        void build(const std::vector<HostEntry>& hosts);
        // The first place of `name`, and after `place` the next place of the same name (several entries of one
        // cluster for a name, in list order); kNone past the last.
        [[nodiscard]] uint32_t find(const std::vector<HostEntry>& hosts, const NameKey& name) const;
        [[nodiscard]] uint32_t next(uint32_t place) const { return next_.empty() ? kNone : next_[place]; }
        // Whether no name is given twice: then every place is its name's first and only one.
        [[nodiscard]] bool unique() const { return next_.empty(); }
        template <class F>
        void each(F&& f) const {  // f(name, place) for each distinct name, the hosts the table was built over
            for (const auto& s : slots_) {
                if (s.place != kNone) f(NameKey((*hosts_)[s.place].host), s.place);
            }
        }
        // f(place) for the first place of each name, in list order (`hosts`: the table's).
        template <class F>
        void each_first(const std::vector<HostEntry>& hosts, F&& f) const {
            std::vector<bool> later(next_.empty() ? 0 : hosts.size());  // places after their name's first
            for (uint32_t p = 0; p < hosts.size(); ++p) {
                if (!later.empty() && later[p]) continue;
                for (uint32_t q = next(p); q != kNone; q = next(q)) later[q] = true;
                f(p);
            }
        }
        // The table stays right for another vector with the same names in the same places.
        void rebase(const std::vector<HostEntry>& hosts) { hosts_ = &hosts; }

    private:
        const std::vector<HostEntry>* hosts_ = nullptr;
        struct Slot {
            uint32_t check = 0;  // the hash's high half (its low bits chose the slot)
            uint32_t place = kNone;
        };
        std::vector<Slot> slots_;
        std::vector<uint32_t> next_;  // place -> the next place of its name (made at the first name given twice)
        size_t mask_ = 0;
    };
    struct Cluster {
        std::shared_ptr<const ClusterView> view;
        Places places;
    };
    using Clusters = std::map<std::string, Cluster, std::less<>>;  // by id: the cluster order
    using Touched = std::unordered_set<NameKey, NameKey::Hash>;
    // What a change touches: clusters whose every name is touched (one that came, went, or changed its
    // liveness, location or standing by: both its lists), and the other names whose entry differs.
    struct Changes {
        std::vector<const Cluster*> whole;
        Touched names;
    };
    // The steps of build(), in order.
    void begin(const model::Served& served, bool counted, uint32_t now);
    Changes touched_by(const SharedView& view, Clusters& next);
    void compare(Cluster& was, Cluster& now, Touched& touched);
    static std::vector<NameKey> names_of(Changes changes, const Clusters& next);
    static std::vector<NameKey> in_list_order(Touched touched, const Clusters& next);
    static std::vector<NameKey> every_name(const std::vector<const Cluster*>& clusters);
    static std::vector<const Cluster*> clusters_of(const Clusters& clusters);  // each, in cluster order
    void build_hosts(const model::Served& served, const Snapshot& s, const Clusters& next,
                     const std::vector<NameKey>& names, const CounterIds& counter_ids);
    static void contributions_of(const Clusters& clusters, const NameKey& host, Contributions& out,
                                 std::vector<uint32_t>& cursors);
    void apply(std::string name, std::shared_ptr<const HostBlock> b);
    void finish(Snapshot& s);
    // The clusters' static records (ClusterView::records) into the zones, by the rules in zone_data's text.
    void zone_data(const SharedView& view, const std::vector<ZoneRecord>& published, Snapshot& s) const;
    void full_reset(const std::string& key, bool counted);
    // The host `name` as the last build left it (null when it had none): what a host built again keeps
    // the signatures of. Read by the building threads while build_hosts() runs; nothing writes it meanwhile.
    [[nodiscard]] const HostBlock* built_before(const std::string& name) const;

    Clusters clusters_;
    // The hosts in our zones (the next snapshot's Snapshot::hosts) and where each is in it.
    std::vector<std::shared_ptr<const HostBlock>> hosts_;
    std::unordered_map<std::string, size_t> host_at_;
    // In a full build, the last build's hosts and their places, until the hosts are built (built_before()).
    std::vector<std::shared_ptr<const HostBlock>> before_;
    std::unordered_map<std::string, size_t> before_at_;
    std::string config_key_;
    std::shared_ptr<Labels> labels_ = std::make_shared<Labels>();  // the entries' cluster ids and geo codes
    bool counted_ = false;
    Stats last_;
    size_t threads_;
    SignatureCache signatures_;  // signed zones' static RRsets
    uint32_t resign_at_ = 0;     // the last snapshot's first signature refresh time (0: none)
    bool defer_first_ = false;   // defer_first_signing()
    bool defer_now_ = false;     // this build leaves its hosts to sign
};

// One snapshot from a view, built whole; `counter_ids`, when given, numbers the answer counters (else
// none are counted). Throws std::runtime_error on data that cannot be served.
std::shared_ptr<Snapshot> build_snapshot(const model::Served& served, const GlobalView& view,
                                         std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                         const CounterIds& counter_ids = {});

}  // namespace glbd
