// resolver/model/global_view — the global view the resolver answers from: every cluster's entries for every host,
// with endpoint health. Built by sync/ and health (or by tests) and frozen into a Snapshot.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "resolver/base/shared_text.hpp"
#include "resolver/model/endpoint.hpp"
#include "resolver/model/host.hpp"
#include "resolver/model/served.hpp"

namespace glbd {

struct EndpointState {
    [[no_unique_address]] Endpoint target;  // (its tail padding holds `healthy`: 24 bytes in all)
    bool healthy = true;
    bool operator==(const EndpointState&) const = default;
};
static_assert(sizeof(EndpointState) <= 24, "an endpoint's state grew: the view holds one per endpoint per cluster");

// One cluster's entry for a load-balanced name. A cluster may have several entries for one name (several
// gateways), told apart by `entry`; a cluster's list keeps them together (sorted by host, then entry).
struct HostEntry {
    HostEntry() = default;
    HostEntry(SharedText host_, uint32_t ttl_, std::optional<model::LoadBalancing> lb,
              std::vector<EndpointState> endpoints_, SharedText entry_ = {})
        : host(std::move(host_)),
          ttl(ttl_),
          load_balancing(std::move(lb)),
          endpoints(std::move(endpoints_)),
          entry(std::move(entry_)) {}

    SharedText host;  // the load-balanced name, lower case, may start with "*." (one text for every cluster's)
    uint32_t ttl = 60;
    // Its health check in its cluster's report (InstanceState::checks, from 1), so that other clusters can
    // probe its endpoints from outside; 0: none. (In the padding after `ttl`: no room of its own.)
    uint16_t check = 0;
    std::optional<model::LoadBalancing> load_balancing;  // absent: a simple host
    std::vector<EndpointState> endpoints;
    SharedText entry = {};  // "" for a name's only entry in its cluster; else its name upstream
    bool operator==(const HostEntry&) const = default;
    // The order of a cluster's list: by host name, then entry (the names compared once, not for != and <).
    [[nodiscard]] bool before(const HostEntry& o) const {
        if (!host.same_block(o.host)) {
            if (auto c = host <=> o.host; std::is_neq(c)) return std::is_lt(c);
        }
        return entry < o.entry;
    }
};
static_assert(sizeof(HostEntry) <= 72, "an entry grew: the view holds one per host per cluster");

// A vector whose copies share one buffer until one of them is changed (copy on write): an origin's hosts in
// the sync store, in its cluster's view and in the snapshot builder are one list, not three. Reading never
// copies; anything that may change an element (the non-const accessors) first makes the list this object's
// own when another shares it. The elements of a shared list are never changed, so a copy may be read on
// another thread while the original is replaced; one object is still one thread's (or one lock's) at a time.
template <class T>
class CowVector {
public:
    using value_type = T;
    using iterator = typename std::vector<T>::iterator;
    using const_iterator = typename std::vector<T>::const_iterator;

    CowVector() = default;
    CowVector(std::vector<T> v)
        : p_(v.empty() ? nullptr : std::make_shared<std::vector<T>>(std::move(v))) {}  // NOLINT: implicit
    CowVector(std::initializer_list<T> l) : CowVector(std::vector<T>(l)) {}

    [[nodiscard]] const std::vector<T>& vec() const { return p_ ? *p_ : none(); }
    operator const std::vector<T>&() const { return vec(); }  // NOLINT: implicit, for readers
    [[nodiscard]] size_t size() const { return vec().size(); }
    [[nodiscard]] bool empty() const { return vec().empty(); }
    const_iterator begin() const { return vec().begin(); }
    const_iterator end() const { return vec().end(); }
    const T& operator[](size_t i) const { return vec()[i]; }
    const T& at(size_t i) const { return vec().at(i); }
    const T& front() const { return vec().front(); }
    const T& back() const { return vec().back(); }
    bool operator==(const CowVector& o) const { return p_ == o.p_ || vec() == o.vec(); }
    // Whether the two are one list (then equal without looking).
    [[nodiscard]] bool same_list(const CowVector& o) const { return p_ == o.p_; }

    iterator begin() { return own().begin(); }
    iterator end() { return own().end(); }
    T& operator[](size_t i) { return own()[i]; }
    T& at(size_t i) { return own().at(i); }
    T& front() { return own().front(); }
    T& back() { return own().back(); }
    void push_back(T v) { own().push_back(std::move(v)); }
    template <class... A>
    T& emplace_back(A&&... a) {
        return own().emplace_back(std::forward<A>(a)...);
    }
    void pop_back() { own().pop_back(); }
    iterator erase(iterator first, iterator last) { return own().erase(first, last); }  // from begin(): already own
    iterator erase(iterator at) { return own().erase(at); }
    void reserve(size_t n) { own().reserve(n); }
    void shrink_to_fit() {  // a list read piece by piece keeps no room to grow (on a copy, that is exact)
        if (p_ && p_->capacity() > p_->size()) own().shrink_to_fit();
    }
    void clear() { p_.reset(); }

private:
    static const std::vector<T>& none() {
        static const std::vector<T> nothing;
        return nothing;
    }
    std::vector<T>& own() {
        if (!p_) {
            p_ = std::make_shared<std::vector<T>>();
        } else if (p_.use_count() > 1) {
            p_ = std::make_shared<std::vector<T>>(*p_);
        }
        return *p_;
    }
    std::shared_ptr<std::vector<T>> p_;
};

using HostList = CowVector<HostEntry>;

// A static record a cluster publishes (from a DNSRecord: NS below a zone's apex with its glue, TXT), served
// as zone data by every server whichever cluster it came from, as long as the cluster is known (alive or
// not: the data does not depend on health). Each is one resource record.
struct ZoneRecord {
    std::string name;   // lower case, no trailing dot
    uint16_t type = 0;  // NS, TXT, or A/AAAA (glue below an NS name)
    uint32_t ttl = 60;
    std::vector<std::string> data;  // NS: {target}; A/AAAA: {address}; TXT: its strings
    bool operator==(const ZoneRecord&) const = default;
    [[nodiscard]] bool before(const ZoneRecord& o) const {
        return std::tie(name, type, data, ttl) < std::tie(o.name, o.type, o.data, o.ttl);
    }
};
using RecordList = CowVector<ZoneRecord>;
// Puts a cluster's entries in their order (by host, then entry) unless they are in it already.
void order_entries(HostList& hosts);

// One text for a host name however many clusters list it: at 10,000 hosts x 20 clusters a name of 22 characters
// held per cluster was 200,000 heap chunks of 32 bytes beside each entry's 32-byte string; shared, it is 10,000.
// A reader of many clusters' lists hands out the names an earlier list holds: `NameSharer` for names read one by
// one (stateDir), `share_names` for a list made already (a peer's report). Both walk the reference in its order
// (by host) once, forward only: names asked for in that order find every match; any order is correct (a name
// not found is a text of its own), only less shared.
class NameSharer {
public:
    explicit NameSharer(HostList reference = {}) : ref_(std::move(reference)) {}
    SharedText operator()(std::string_view name) {
        const SharedText* held = find(name);
        return held ? *held : SharedText(name);
    }
    // The reference's text of `name`, or null; the next name asked for is looked for from here on.
    const SharedText* find(std::string_view name) {
        const std::vector<HostEntry>& r = ref_;
        while (at_ < r.size() && r[at_].host < name) ++at_;
        return at_ < r.size() && r[at_].host == name ? &r[at_].host : nullptr;
    }

private:
    HostList ref_;  // (a copy that shares the list: it stays as it is while read)
    size_t at_ = 0;
};
// Gives each entry of `hosts` the text `reference` holds for its name, where it holds one; a list with nothing
// to take is left as it is (not made its own when shared). Returns how many entries took a text.
size_t share_names(HostList& hosts, const HostList& reference);
// Whether the entries are in that order with no (host, entry) twice, as every glbd lists and sends them: then
// finding an entry given twice needs no set of names.
bool strictly_ordered(const std::vector<HostEntry>& hosts);
// Whether a target appears twice among one entry's endpoints: pairwise for a few, hashed beyond (O(n), not
// O(n^2), for a host of thousands).
bool targets_repeat(const std::vector<EndpointState>& eps);

// What the operator's summary (GET /v1/summary) counts of a cluster's list, made once with the list (where a
// cluster's view is merged) so that a summary costs what it returns, not a walk over every entry of every
// cluster. Names in a buffer of their own: a few hundred kB at 10,000 hosts, read in order.
class HostTally {
public:
    explicit HostTally(const std::vector<HostEntry>& hosts);
    HostTally(const HostTally&) = delete;
    HostTally& operator=(const HostTally&) = delete;

    [[nodiscard]] size_t names() const { return ends_.size(); }  // distinct host names
    [[nodiscard]] std::string_view name(size_t i) const {
        const uint32_t from = i == 0 ? 0 : ends_[i - 1];
        return std::string_view(text_).substr(from, ends_[i] - from);
    }
    [[nodiscard]] size_t endpoints() const { return endpoints_; }
    [[nodiscard]] size_t healthy() const { return healthy_; }
    // How many distinct host names the lists hold together.
    static size_t distinct(const std::vector<const HostTally*>& tallies);

private:
    std::string text_;            // the names, one after another, in the list's order
    std::vector<uint32_t> ends_;  // where each ends in text_
    size_t endpoints_ = 0, healthy_ = 0;
};

struct ClusterView {
    std::string id;
    bool alive = true;
    HostList hosts;
    std::optional<model::Coordinates> location = std::nullopt;  // cluster.location as its newest report says
    RecordList records = {};                                    // its static records (newest report's)
    std::string group = {};                                     // its failover group (newest report's; "" = none)
    bool standby = false;  // its group is not active: its entries only when no active one is usable
    std::shared_ptr<const HostTally> tally = nullptr;  // of `hosts`, when the view was merged (sync/state.cpp)
};

using GlobalView = std::vector<ClusterView>;
// The same, each cluster shared and immutable: a cluster that did not change is the same object in the next
// view, which is how the snapshot builder knows what it may keep (resolver/snapshot: SnapshotBuilder).
using SharedView = std::vector<std::shared_ptr<const ClusterView>>;
SharedView share(GlobalView view);

// This cluster's part of the view as the config describes it, every endpoint healthy.
ClusterView local_cluster_view(const model::Served& served);

}  // namespace glbd
