#include "resolver/snapshot/host.hpp"

#include "resolver/snapshot/signed.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <type_traits>

#include "geo/points.hpp"
#include "resolver/base/find_from.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd {

// An entry's (or a simple host's union of) endpoints while its plan is written.
struct Endpoints {
    struct Address {
        std::array<uint8_t, 16> bytes{};
        bool healthy = true;
    };
    std::vector<Address> v4, v6;
    uint32_t healthy4 = 0, healthy6 = 0;  // counts that cannot wrap (the plan keeps at most kMaxAddresses)
    std::string cname[2];                 // the first hostname endpoint (healthy / any), wire form; empty when none
    uint32_t ttl = 60;
    // Past kLinearUpTo addresses of a family, where each one is in its list: an open-addressing table of
    // places (place + 1; 0 is empty), at most half full, made when the list passes kLinearUpTo and kept in
    // step with it (the list's size says whether it is in use), its storage kept from one entry to the next:
    // adding n endpoints costs O(n), not O(n^2), and allocates nothing once a build has warmed it.
    static constexpr size_t kLinearUpTo = 16;
    std::vector<uint32_t> where[2];

    // Empty again, keeping what it allocated (one Endpoints serves entry after entry while a build runs).
    void reset() {
        v4.clear(), v6.clear();
        healthy4 = healthy6 = 0;
        cname[0].clear(), cname[1].clear();
        ttl = 60;
    }
    [[nodiscard]] bool any_healthy() const { return healthy4 + healthy6 > 0 || !cname[0].empty(); }
    [[nodiscard]] bool has(uint16_t qtype, int mode) const {
        bool has4 = mode == 0 ? healthy4 > 0 : !v4.empty();
        bool has6 = mode == 0 ? healthy6 > 0 : !v6.empty();
        bool cn = !cname[mode].empty();
        switch (qtype) {
            case wire::type::A: return has4 || cn;
            case wire::type::AAAA: return has6 || cn;
            default: return has4 || has6 || cn;
        }
    }

    // Adds an endpoint; an address already there becomes healthy if this one is.
    void add(const EndpointState& ep, bool alive) {
        bool healthy = alive && ep.healthy;
        if (ep.target.is_address()) {
            const glbd::Address& ip = ep.target.address();
            add_address(ip.family == 4, ip.bytes, healthy);
            return;
        }
        if (auto w = wire::name_to_wire(ep.target.name())) {
            if (cname[1].empty()) cname[1] = *w;
            if (healthy && cname[0].empty()) cname[0] = *w;
        }
    }
    // Adds the endpoints of another entry, already read (healthy only where `alive`): the same as adding
    // each of its endpoints again, without reading their text again.
    void merge(const Endpoints& e, bool alive) {
        for (const Address& x : e.v4) add_address(true, x.bytes, alive && x.healthy);
        for (const Address& x : e.v6) add_address(false, x.bytes, alive && x.healthy);
        if (cname[1].empty()) cname[1] = e.cname[1];
        if (alive && cname[0].empty()) cname[0] = e.cname[0];
    }

private:
    void add_address(bool is4, const std::array<uint8_t, 16>& bytes, bool healthy) {
        auto& list = is4 ? v4 : v6;
        auto& count = is4 ? healthy4 : healthy6;
        std::vector<uint32_t>& index = where[is4 ? 0 : 1];
        if (Address* x = find(list, index, bytes)) {
            if (healthy && !x->healthy) x->healthy = true, ++count;
            return;
        }
        list.push_back(Address{bytes, healthy});
        if (healthy) ++count;
        if (list.size() > kLinearUpTo) insert(list, index, static_cast<uint32_t>(list.size() - 1));
    }
    static size_t hash(const std::array<uint8_t, 16>& bytes) {
        uint64_t a = 0, b = 0;
        std::memcpy(&a, bytes.data(), 8);
        std::memcpy(&b, bytes.data() + 8, 8);
        uint64_t h = (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL);
        return static_cast<size_t>(h ^ (h >> 29));
    }
    static Address* find(std::vector<Address>& list, const std::vector<uint32_t>& slots,
                         const std::array<uint8_t, 16>& bytes) {
        if (list.size() <= kLinearUpTo) {  // no table in use
            for (auto& x : list) {
                if (x.bytes == bytes) return &x;
            }
            return nullptr;
        }
        size_t mask = slots.size() - 1;
        for (size_t i = hash(bytes) & mask; slots[i] != 0; i = (i + 1) & mask) {
            if (Address& x = list[slots[i] - 1]; x.bytes == bytes) return &x;
        }
        return nullptr;
    }
    // The address just added at `place`, the list's last, into the table: made with every place when the list
    // has just passed kLinearUpTo, made larger and filled again when it would be more than half full.
    static void insert(const std::vector<Address>& list, std::vector<uint32_t>& slots, uint32_t place) {
        if (place == kLinearUpTo || 2 * list.size() > slots.size()) {
            size_t size = 64;
            while (size < 4 * list.size()) size *= 2;
            slots.assign(size, 0);
            for (uint32_t p = 0; p < place; ++p) put(list, slots, p);
        }
        put(list, slots, place);
    }
    static void put(const std::vector<Address>& list, std::vector<uint32_t>& slots, uint32_t place) {
        size_t mask = slots.size() - 1;
        size_t i = hash(list[place].bytes) & mask;
        while (slots[i] != 0) i = (i + 1) & mask;
        slots[i] = place + 1;
    }
};

namespace {

// Appends one plan to the end of `out` (where every plan of the snapshot is written, one after another),
// starting 8-byte aligned; each piece at its own alignment; offsets are from the plan's start.
class PlanWriter {
public:
    explicit PlanWriter(std::string& out) : out_(out) {
        out_.resize((out_.size() + 7) / 8 * 8, '\0');
        base_ = out_.size();
    }
    template <class T>
    uint32_t put(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        uint32_t at = align(alignof(T));
        out_.append(reinterpret_cast<const char*>(&v), sizeof v);
        return at;
    }
    template <class T>
    void set(uint32_t at, const T& v) {
        std::memcpy(out_.data() + base_ + at, &v, sizeof v);
    }
    uint32_t bytes(const void* p, size_t n) {
        auto at = static_cast<uint32_t>(out_.size() - base_);
        out_.append(static_cast<const char*>(p), n);
        return at;
    }
    uint32_t align(size_t a) {
        out_.resize(base_ + (out_.size() - base_ + a - 1) / a * a, '\0');
        return static_cast<uint32_t>(out_.size() - base_);
    }
    void rewind(uint32_t at) { out_.resize(base_ + at); }
    [[nodiscard]] uint32_t size() const { return static_cast<uint32_t>(out_.size() - base_); }
    [[nodiscard]] bool same(uint32_t a, uint32_t b, uint32_t len) const {
        return std::memcmp(out_.data() + base_ + a, out_.data() + base_ + b, len) == 0;
    }
    // Where the plan is in `out`.
    [[nodiscard]] std::pair<size_t, size_t> span() const { return {base_, out_.size() - base_}; }

private:
    std::string& out_;
    size_t base_ = 0;
};

uint32_t put_answers(PlanWriter& w, const Endpoints& e) {
    plan::Answers a;
    a.ttl = e.ttl;
    uint32_t at = w.put(a);
    bool all_healthy = e.healthy4 == e.v4.size() && e.healthy6 == e.v6.size() && e.cname[0] == e.cname[1];
    for (int mode = 0; mode < 2; ++mode) {  // addresses are copied out byte by byte: no alignment
        if (mode == 1 && all_healthy) {     // every one is the healthy ones: the same bytes
            a.n4[1] = a.n4[0], a.n6[1] = a.n6[0], a.cname[1] = a.cname[0];
            break;
        }
        if (mode == 1) a.every = w.size();
        for (const auto& x : e.v4) {
            if ((mode == 1 || x.healthy) && a.n4[mode] < plan::Answers::kMaxAddresses) {
                w.bytes(x.bytes.data(), 4), ++a.n4[mode];
            }
        }
        for (const auto& x : e.v6) {
            if ((mode == 1 || x.healthy) && a.n6[mode] < plan::Answers::kMaxAddresses) {
                w.bytes(x.bytes.data(), 16), ++a.n6[mode];
            }
        }
        if (!e.cname[mode].empty()) {
            auto len = static_cast<uint8_t>(e.cname[mode].size());
            a.cname[mode] = 1;
            w.bytes(&len, 1);
            w.bytes(e.cname[mode].data(), len);
        }
    }
    w.set(at, a);
    return at;
}

struct GroupDraft {
    std::string geo;  // "" for the default and all groups
    std::vector<uint16_t> entries;
    std::optional<model::Coordinates> location;  // a geo group's point when a cluster of it declares one
};

// The plan of a load-balanced host (see plan:: for the layout).
void lb_plan(PlanWriter& w, const Host& h, const std::vector<Endpoints>& eps, const std::vector<GroupDraft>& geo_groups,
             const GroupDraft& default_group, const GroupDraft& all, bool geo_dependent, bool nearest) {
    plan::Head head;
    head.ttl = h.ttl;
    head.simple = 0;
    head.geo_dependent = geo_dependent ? 1 : 0;
    head.geo_groups = static_cast<uint16_t>(geo_groups.size());
    head.has_default = default_group.entries.empty() ? 0 : 1;
    head.nearest = nearest ? 1 : 0;
    w.put(head);
    std::vector<const GroupDraft*> drafts;
    drafts.reserve(geo_groups.size() + 2);
    for (const auto& g : geo_groups) drafts.push_back(&g);
    if (head.has_default) drafts.push_back(&default_group);
    drafts.push_back(&all);
    std::vector<uint32_t> group_at;
    for (size_t i = 0; i < drafts.size(); ++i) group_at.push_back(w.put(plan::Group{}));
    std::vector<uint32_t> answers_at(h.entries.size(), 0);
    for (size_t gi = 0; gi < drafts.size(); ++gi) {
        const GroupDraft& d = *drafts[gi];
        plan::Group g;
        g.entries = static_cast<uint16_t>(d.entries.size());
        g.usable = std::any_of(d.entries.begin(), d.entries.end(), [&](uint16_t i) { return h.entries[i].usable; });
        if (!d.geo.empty()) {
            g.code = geo::code_key(d.geo);
            g.len = static_cast<uint16_t>(d.geo.size());
            if (d.geo.size() == 6 && d.geo.compare(0, 4, "GEO-") == 0)
                g.continent = static_cast<uint16_t>(geo::code_key(d.geo.substr(4)));
            if (d.geo.size() > 8) g.long_code = w.bytes(d.geo.data(), d.geo.size());
            geo::Point p;
            if (nearest && d.location) {
                g.has_point = 1, g.lat = d.location->lat, g.lon = d.location->lon;
            } else if (nearest && geo::point_of(d.geo, p)) {
                g.has_point = 1, g.lat = p.lat, g.lon = p.lon;
            }
        }
        for (uint16_t i : d.entries) {
            if (answers_at[i] == 0) answers_at[i] = put_answers(w, eps[i]);
        }
        std::vector<std::pair<uint32_t, uint32_t>> written;  // this group's picks so far: where, how long
        for (int qt = 0; qt < 2; ++qt) {
            uint16_t qtype = qt == 0 ? wire::type::A : wire::type::AAAA;
            for (int mode = 0; mode < 2; ++mode) {
                plan::Pick pick;
                uint32_t at = w.put(pick);
                for (uint16_t i : d.entries) {
                    const Entry& e = h.entries[i];
                    if ((mode == 0 && !e.usable) || !eps[i].has(qtype, mode)) continue;
                    pick.total += e.weight;
                    ++pick.count;
                    w.put(plan::Choice{pick.total, answers_at[i], e.counter, i, 0});
                }
                if (pick.count == 0) {  // nothing can answer: no pick
                    w.rewind(at);
                    continue;
                }
                w.set(at, pick);
                // The same pick as one before (every entry healthy, or both families everywhere): that one.
                uint32_t len = w.size() - at;
                auto same = std::find_if(written.begin(), written.end(),
                                         [&](const auto& p) { return p.second == len && w.same(p.first, at, len); });
                if (same != written.end()) {
                    w.rewind(at);
                    g.pick[qt][mode] = same->first;
                } else {
                    written.emplace_back(at, len);
                    g.pick[qt][mode] = at;
                }
            }
        }
        w.set(group_at[gi], g);
    }
    w.set(0, head);
}

Entry build_entry(LabelCache& labels, size_t position, const ClusterView& cluster, const HostEntry& he,
                  Endpoints& eps) {
    Entry e;
    e.cluster = labels.get(3 * position, cluster.id);
    e.key = labels.get(3 * position + 2, he.entry);
    e.ttl = he.ttl;
    eps.ttl = he.ttl;
    e.load_balanced = he.load_balancing.has_value();
    if (he.load_balancing) {
        e.geo = labels.get(3 * position + 1, he.load_balancing->geo);
        e.weight = he.load_balancing->weight;
        e.default_geo = he.load_balancing->default_geo;
    }
    for (const auto& ep : he.endpoints) eps.add(ep, true);
    e.usable = cluster.alive && eps.any_healthy();
    return e;
}

// Writes the plan of a host whose entries (and, for a load-balanced one, their counters) are set.
// `active_usable`: some entry of a cluster that does not stand by is usable (see HostWriter::build). A simple
// host's answers are the union of its entries' endpoints, made in `joined`.
void host_plan(PlanWriter& w, const Host& h, const std::vector<Endpoints>& eps, bool nearest,
               const Contributions& contributions, bool active_usable, Endpoints& joined) {
    if (h.simple) {
        joined.reset();
        joined.ttl = h.ttl;
        for (size_t i = 0; i < contributions.size(); ++i) {
            const ClusterView& cluster = *contributions[i].first;
            joined.merge(eps[i], cluster.alive && !(cluster.standby && active_usable));
        }
        plan::Head head;
        head.ttl = h.ttl;
        head.counter = h.counter;
        w.put(head);
        head.answers = put_answers(w, joined);
        w.set(0, head);
        return;
    }
    std::vector<std::pair<uint32_t, bool>> shapes;  // distinct (geo, defaultGeo)
    std::vector<GroupDraft> geo_groups;
    GroupDraft default_group, all;
    for (size_t i = 0; i < h.entries.size(); ++i) {
        const Entry& e = h.entries[i];
        auto idx = static_cast<uint16_t>(i);
        if (std::none_of(shapes.begin(), shapes.end(),
                         [&](const auto& s) { return s.first == e.geo && s.second == e.default_geo; })) {
            shapes.emplace_back(e.geo, e.default_geo);  // one Labels: equal numbers, equal strings
        }
        all.entries.push_back(idx);
        if (e.default_geo) default_group.entries.push_back(idx);
        if (e.geo == 0) continue;
        const std::string& geo = h.geo(e);
        auto g = std::find_if(geo_groups.begin(), geo_groups.end(), [&](const GroupDraft& x) { return x.geo == geo; });
        if (g == geo_groups.end()) g = geo_groups.insert(geo_groups.end(), GroupDraft{geo, {}, std::nullopt});
        g->entries.push_back(idx);
    }
    // A geo group's point: the cluster.location of its first usable entry's cluster that declares one (cluster
    // order, the same on every server), else of any of its entries' clusters, else the geo code's own point.
    for (auto& g : geo_groups) {
        for (bool usable_only : {true, false}) {
            for (uint16_t i : g.entries) {
                const auto& where = contributions[i].first->location;
                if (!g.location && where && (h.entries[i].usable || !usable_only)) g.location = where;
            }
        }
    }
    lb_plan(w, h, eps, geo_groups, default_group, all, shapes.size() > 1, nearest);
}

// A host built again keeps the ids its last block counted with (ids are given out for the builder's life): true
// when `before` had one for each it needs now, as when only its endpoints or their health changed.
bool reuse_counters(Host& h, const HostBlock* before) {
    if (!before) return false;
    const Host& was = before->host;
    if (h.simple) {
        h.counter = was.simple ? was.counter : kNoCounter;
        return h.counter != kNoCounter;
    }
    if (was.simple) return false;
    size_t from = 0;  // entries keep their clusters' order: look from the last one found
    for (auto& e : h.entries) {
        const std::string& cluster = h.cluster(e);
        const size_t at = find_from(was.entries, from, [&](const Entry& w) { return was.cluster(w) == cluster; });
        e.counter = at < was.entries.size() ? was.entries[at].counter : kNoCounter;
        if (e.counter == kNoCounter) return false;
        from = at + 1;
    }
    return true;
}

}  // namespace

HostWriter::HostWriter(Labels& labels) : cache_(labels), joined_(std::make_unique<Endpoints>()) {}
HostWriter::~HostWriter() = default;
HostWriter::HostWriter(HostWriter&&) noexcept = default;

std::shared_ptr<const HostBlock> HostWriter::build(const model::Served& served, const Snapshot& s,
                                                   const std::string& name, const Contributions& contributions,
                                                   SharedIds& counter_ids, const std::shared_ptr<Labels>& labels,
                                                   const HostBlock* before) {
    auto w = wire::name_to_wire(name);
    if (!w) return nullptr;
    const Zone* zone = s.find_zone(*w);
    if (!zone) return nullptr;
    auto b = std::make_shared<HostBlock>();
    Host& h = b->host;
    b->labels = labels;
    h.labels = labels.get();
    h.name = std::move(*w);
    // A simple host's TTL: the least of its entries' (the same on every server, whichever cluster it is).
    h.ttl = contributions.front().second->ttl;
    if (eps_.size() < contributions.size()) eps_.resize(contributions.size());  // entries past ours are left unread
    h.entries.reserve(contributions.size());
    for (const auto& [cluster, he] : contributions) {
        h.ttl = std::min(h.ttl, he->ttl);
        Endpoints& e = eps_[h.entries.size()];
        e.reset();
        h.entries.push_back(build_entry(cache_, h.entries.size(), *cluster, *he, e));
    }
    h.simple = std::none_of(h.entries.begin(), h.entries.end(), [](const Entry& e) { return e.load_balanced; });
    // Failover groups: while an entry of a cluster that does not stand by is usable, the entries of those that
    // do are not (when none is, every entry is as it would be without groups: fail-open as before).
    bool active_usable = false;
    for (size_t i = 0; i < h.entries.size(); ++i) {
        active_usable = active_usable || (h.entries[i].usable && !contributions[i].first->standby);
    }
    if (active_usable) {
        for (size_t i = 0; i < h.entries.size(); ++i) {
            if (contributions[i].first->standby) h.entries[i].usable = false, h.entries[i].standby = true;
        }
    }
    if (counter_ids && !reuse_counters(h, before)) {
        std::string shown = wire::wire_to_name(h.name);
        clusters_.clear(), ids_.clear();
        if (h.simple) {
            clusters_.emplace_back("all");
        } else {
            for (const auto& e : h.entries) clusters_.emplace_back(h.cluster(e));
        }
        ids_.resize(clusters_.size());
        counter_ids.with([&](const CounterIds& number) { number(shown, clusters_, ids_); });
        if (h.simple) {
            h.counter = ids_[0];
        } else {
            for (size_t i = 0; i < h.entries.size(); ++i) h.entries[i].counter = ids_[i];
        }
    }
    plan_bytes_.clear();
    PlanWriter plan(plan_bytes_);
    host_plan(plan, h, eps_, served.nearest, contributions, active_usable, *joined_);
    b->key = name;
    b->hash = wire::name_hash(h.name);
    b->name_len = static_cast<uint8_t>(h.name.size());
    b->below = static_cast<uint8_t>(wire::label_count(h.name) - zone->labels);
    if (h.counter != kNoCounter) b->counters = h.counter + 1;
    for (const auto& e : h.entries) {
        if (e.counter != kNoCounter) b->counters = std::max(b->counters, e.counter + 1);
    }
    b->zone = static_cast<size_t>(zone - s.zones.data());
    b->plan_at = static_cast<uint32_t>((h.name.size() + 7) / 8 * 8);
    b->plan_len = static_cast<uint32_t>(plan_bytes_.size());
    b->bytes = std::make_unique<uint64_t[]>((b->plan_at + plan_bytes_.size() + 7) / 8);  // zeroed
    std::memcpy(b->bytes.get(), h.name.data(), h.name.size());
    std::memcpy(reinterpret_cast<char*>(b->bytes.get()) + b->plan_at, plan_bytes_.data(), plan_bytes_.size());
    if (zone->signer && defer_) {
        defer_host(*b, s.signed_at, signed_);
    } else if (zone->signer) {
        sign_host(*b, *zone->signer, s.signed_at, before, signed_);
    }
    return b;
}

}  // namespace glbd
