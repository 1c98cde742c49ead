#include "resolver/snapshot.hpp"

#include "geo/points.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <unordered_set>

#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd {
namespace {

std::string must_wire(const std::string& name) {
    auto w = wire::name_to_wire(name);
    if (!w) throw std::runtime_error("not a domain name: " + name);
    return *w;
}

size_t wire_name_len(std::string_view w, size_t at) {
    size_t i = at;
    while (i < w.size() && w[i] != 0) i += static_cast<uint8_t>(w[i]) + 1;
    return i + 1 - at;
}

RData make_rdata(uint16_t type, std::string wire) {
    RData r;
    r.wire = std::move(wire);
    switch (type) {
        case wire::type::NS:
        case wire::type::CNAME:
        case wire::type::PTR: r.names = 1; break;
        case wire::type::MX:
            if (r.wire.size() > 2) r.name_at[0] = 2, r.names = 1;
            break;
        case wire::type::SOA: {
            size_t first = wire_name_len(r.wire, 0);
            if (first < 256) r.name_at[1] = static_cast<uint8_t>(first), r.names = 2;
            break;
        }
        default: break;
    }
    return r;
}

// Adds `name` and every ancestor up to the origin (empty non-terminals) to the zone.
Node& add_node(Zone& z, const std::string& name) {
    unsigned extra = wire::label_count(name) - z.labels;
    for (unsigned drop = extra; drop > 0; --drop) {
        z.nodes.try_emplace(name.substr(wire::suffix_offset(name, drop)));
    }
    return z.nodes[name];
}

void add_record(Zone& z, const std::string& owner, uint16_t type, uint32_t ttl, std::string rdata) {
    Node& n = add_node(z, owner);
    RData rd = make_rdata(type, std::move(rdata));
    for (auto& set : n.rrsets) {
        if (set.type == type) {
            bool dup =
                std::any_of(set.rdata.begin(), set.rdata.end(), [&](const RData& x) { return x.wire == rd.wire; });
            if (!dup) set.rdata.push_back(std::move(rd));
            return;
        }
    }
    n.rrsets.push_back(RRset{type, ttl, {std::move(rd)}});
}

std::string soa_rdata(const conf::Zone& cz, uint32_t serial) {
    std::string rname = cz.soa.rname;
    if (rname.find('.') == std::string::npos) rname += "." + cz.origin;
    std::string out = must_wire(cz.soa.mname) + must_wire(rname);
    for (uint32_t v : {serial, cz.soa.refresh, cz.soa.retry, cz.soa.expire, cz.soa.minimum}) {
        char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
        out.append(b, 4);
    }
    return out;
}

// See Zone::soa_tail.
void build_soa_tail(Zone& z) {
    const std::string& rd = z.soa.rdata[0].wire;
    std::string data;
    uint8_t ptrs[2];
    size_t pos = 0;
    for (uint8_t& ptr : ptrs) {
        size_t i = pos;  // find the origin at a label boundary of this name
        while (i < rd.size() && rd.compare(i, z.origin.size(), z.origin) != 0 && rd[i] != 0)
            i += static_cast<uint8_t>(rd[i]) + 1u;
        if (i >= rd.size() || rd.compare(i, z.origin.size(), z.origin) != 0) return;
        data.append(rd, pos, i - pos);
        ptr = static_cast<uint8_t>(10 + data.size());
        data.append(2, '\0');
        pos = i + z.origin.size();
    }
    data.append(rd, pos, std::string::npos);
    uint8_t head[10] = {0, wire::type::SOA, 0, wire::kClassIn};
    for (int k = 0; k < 4; ++k) head[4 + k] = static_cast<uint8_t>(z.negative_ttl >> (24 - 8 * k));
    head[8] = static_cast<uint8_t>(data.size() >> 8), head[9] = static_cast<uint8_t>(data.size());
    z.soa_tail.assign(reinterpret_cast<const char*>(head), sizeof head);
    z.soa_tail += data;
    z.soa_tail_ptrs[0] = ptrs[0], z.soa_tail_ptrs[1] = ptrs[1];
}

Zone build_zone(const conf::Zone& cz, uint32_t serial) {
    Zone z;
    z.origin = must_wire(cz.origin);
    z.labels = wire::label_count(z.origin);
    z.soa = RRset{wire::type::SOA, cz.ttl, {make_rdata(wire::type::SOA, soa_rdata(cz, serial))}};
    z.negative_ttl = std::min(cz.ttl, cz.soa.minimum);
    build_soa_tail(z);
    Node& apex = add_node(z, z.origin);
    apex.rrsets.push_back(z.soa);
    for (const auto& ns : cz.nameservers) {
        std::string target = must_wire(ns.name);
        add_record(z, z.origin, wire::type::NS, cz.ttl, target);
        bool in_zone = target.size() >= z.origin.size() && target.substr(target.size() - z.origin.size()) == z.origin;
        if (!in_zone) continue;
        for (const auto& a : ns.addresses) {
            RData rd;
            uint16_t t;
            if (address_rdata(a, rd, t)) add_record(z, target, t, cz.ttl, rd.wire);
        }
    }
    for (const auto& rec : cz.records) add_record(z, rec.owner, rec.type, rec.ttl, rec.rdata);
    return z;
}

// An entry's (or a simple host's union of) endpoints while its plan is written.
struct Endpoints {
    struct Address {
        std::array<uint8_t, 16> bytes{};
        bool healthy = true;
    };
    std::vector<Address> v4, v6;
    uint16_t healthy4 = 0, healthy6 = 0;
    std::string cname[2];  // the first hostname endpoint (healthy / any), wire form; empty when none

    // Empty again, keeping what it allocated (one Endpoints serves entry after entry while a build runs).
    void reset() {
        v4.clear(), v6.clear();
        healthy4 = healthy6 = 0;
        cname[0].clear(), cname[1].clear();
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
        if (geo::Address ip; geo::Address::parse(ep.target, ip)) {
            bool is4 = ip.family == 4;
            auto& list = is4 ? v4 : v6;
            auto& count = is4 ? healthy4 : healthy6;
            for (auto& x : list) {
                if (x.bytes == ip.bytes) {
                    if (healthy && !x.healthy) x.healthy = true, ++count;
                    return;
                }
            }
            list.push_back(Address{ip.bytes, healthy});
            if (healthy) ++count;
            return;
        }
        if (auto w = wire::name_to_wire(ep.target)) {
            if (cname[1].empty()) cname[1] = *w;
            if (healthy && cname[0].empty()) cname[0] = *w;
        }
    }
};

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
    uint32_t at = w.put(a);
    bool all_healthy = e.healthy4 == e.v4.size() && e.healthy6 == e.v6.size() && e.cname[0] == e.cname[1];
    for (int mode = 0; mode < 2; ++mode) {  // addresses are copied out byte by byte: no alignment
        if (mode == 1 && all_healthy) {     // every one is the healthy ones: the same bytes
            a.n4[1] = a.n4[0], a.n6[1] = a.n6[0], a.cname[1] = a.cname[0];
            break;
        }
        if (mode == 1) a.every = w.size();
        for (const auto& x : e.v4) {
            if (mode == 1 || x.healthy) w.bytes(x.bytes.data(), 4), ++a.n4[mode];
        }
        for (const auto& x : e.v6) {
            if (mode == 1 || x.healthy) w.bytes(x.bytes.data(), 16), ++a.n6[mode];
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
    std::optional<conf::Coordinates> location;  // a geo group's point when a cluster of it declares one
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

// A building thread's labels last used at each entry position: most hosts of a cluster have its entry at
// the same position with the same geo, so the shared Labels (and their lock) are asked only on a change.
class LabelCache {
public:
    explicit LabelCache(Labels& labels) : labels_(labels) {}
    uint32_t get(size_t slot, std::string_view s) {
        if (s.empty()) return 0;
        if (slot >= recent_.size()) recent_.resize(slot + 1, 0);
        uint32_t& r = recent_[slot];
        if (r == 0 || labels_.at(r) != s) r = labels_.get(s);
        return r;
    }

private:
    Labels& labels_;
    std::vector<uint32_t> recent_;
};

Entry build_entry(LabelCache& labels, size_t position, const ClusterView& cluster, const HostEntry& he,
                  Endpoints& eps) {
    Entry e;
    e.cluster = labels.get(2 * position, cluster.id);
    e.load_balanced = he.load_balancing.has_value();
    if (he.load_balancing) {
        e.geo = labels.get(2 * position + 1, he.load_balancing->geo);
        e.weight = he.load_balancing->weight;
        e.default_geo = he.load_balancing->default_geo;
    }
    for (const auto& ep : he.endpoints) eps.add(ep, true);
    e.usable = cluster.alive && eps.any_healthy();
    return e;
}

// Writes the plan of a host whose entries (and, for a load-balanced one, their counters) are set.
void host_plan(PlanWriter& w, const Host& h, const std::vector<Endpoints>& eps, bool nearest,
               const std::vector<std::pair<const ClusterView*, const HostEntry*>>& contributions) {
    if (h.simple) {
        Endpoints all;
        for (const auto& [cluster, he] : contributions) {
            for (const auto& ep : he->endpoints) all.add(ep, cluster->alive);
        }
        plan::Head head;
        head.ttl = h.ttl;
        head.counter = h.counter;
        w.put(head);
        head.answers = put_answers(w, all);
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

}  // namespace

bool address_rdata(std::string_view ip, RData& out, uint16_t& type) {
    geo::Address a;
    if (!geo::Address::parse(ip, a)) return false;
    size_t len = a.family == 4 ? 4 : 16;
    out = RData{std::string(reinterpret_cast<const char*>(a.bytes.data()), len), {0, 0}, 0};
    type = a.family == 4 ? wire::type::A : wire::type::AAAA;
    return true;
}

Labels::Labels() {
    MutexLock lock(mu_);
    chunks_[0] = std::make_unique<std::string[]>(kChunk);
    numbers_.emplace(chunks_[0][0], 0);  // ""
    size_ = 1;
}

const Labels& Labels::empty() {
    static const Labels kEmpty;
    return kEmpty;
}

uint32_t Labels::get(std::string_view s) {
    MutexLock lock(mu_);
    if (auto it = numbers_.find(s); it != numbers_.end()) return it->second;
    if (size_ == kChunk * kChunks)
        throw std::runtime_error("more than " + std::to_string(kChunk * kChunks) +
                                 " distinct cluster ids and geo codes");
    uint32_t n = size_++;
    auto& chunk = chunks_[n / kChunk];
    if (!chunk) chunk = std::make_unique<std::string[]>(kChunk);
    chunk[n % kChunk] = std::string(s);
    numbers_.emplace(chunk[n % kChunk], n);
    return n;
}

bool Host::operator==(const Host& o) const {
    if (name != o.name || ttl != o.ttl || simple != o.simple || counter != o.counter ||
        entries.size() != o.entries.size())
        return false;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry &a = entries[i], &b = o.entries[i];
        if (cluster(a) != o.cluster(b) || geo(a) != o.geo(b) || a.counter != b.counter || a.weight != b.weight ||
            a.default_geo != b.default_geo || a.load_balanced != b.load_balanced || a.usable != b.usable) {
            return false;
        }
    }
    return true;
}

Zone::Memory::~Memory() {
    if (at) munmap(at, size);
}

void Zone::freeze(const std::vector<std::pair<const HostBlock*, int>>& hosts) {
    static const Node kEmpty;  // a name only hosts bring: no records of its own
    size_t names = nodes.size();
    for (const auto& [b, i] : hosts) names += b->below;
    size_t size = 16;
    while (size < names * 2) size *= 2;
    std::vector<Slot> index(size);
    const size_t mask = size - 1;
    // The slot of a name, a fresh one (hash set, node null) when it is not there yet.
    auto slot = [&](const char* name, size_t len, uint64_t h) -> Slot& {
        size_t i = h & mask;
        for (; index[i].node; i = (i + 1) & mask) {
            if (index[i].hash == h && index[i].name_len == len && std::memcmp(index[i].name, name, len) == 0)
                return index[i];
        }
        index[i].hash = h, index[i].name = name, index[i].name_len = static_cast<uint8_t>(len);
        return index[i];
    };
    for (const auto& [name, node] : nodes) {
        Slot& s = slot(name.data(), name.size(), wire::name_hash(name));
        s.node = &node;
        s.has_ns = node.find(wire::type::NS) ? 1 : 0;
    }
    for (const auto& [b, i] : hosts) {
        Slot& s = slot(b->name(), b->name_len, b->hash);
        if (!s.node) s.node = &kEmpty;
        s.plan = b->plan(), s.host = i;
        std::string_view name(b->name(), b->name_len);
        for (unsigned drop = 1; drop < b->below; ++drop) {  // empty non-terminals up to the origin's child
            size_t at = wire::suffix_offset(name, drop);
            Slot& up = slot(b->name() + at, name.size() - at, wire::name_hash(name.substr(at)));
            if (!up.node) up.node = &kEmpty;
        }
    }
    // Fresh pages from the kernel: heap memory already touched stays in small pages whatever madvise says.
    constexpr size_t kHuge = 2u << 20;
    const size_t total = size * sizeof(Slot);
    const bool huge = total >= kHuge;
    const size_t mapped = huge ? (total + 2 * kHuge - 1) / kHuge * kHuge : total;
    void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    memory_ = Memory{};
    memory_.at = m, memory_.size = mapped;
    char* p = static_cast<char*>(m);
    if (huge) {
        p += (kHuge - reinterpret_cast<uintptr_t>(p) % kHuge) % kHuge;   // 2 MB aligned
        madvise(p, (total + kHuge - 1) / kHuge * kHuge, MADV_HUGEPAGE);  // before the first touch; a hint only
    }
    std::memcpy(p, index.data(), total);
    mprotect(m, mapped, PROT_READ);  // frozen
    index_ = reinterpret_cast<const Slot*>(p);
    mask_ = mask;
}

const Zone* Snapshot::find_zone(std::string_view qname, unsigned labels) const {
    const Zone* best = nullptr;
    for (const auto& z : zones) {
        if (z.labels > labels || (best && best->labels >= z.labels)) continue;
        std::string_view suffix = qname.substr(wire::suffix_offset(qname, labels - z.labels));
        if (suffix.size() == z.origin.size() && wire::same_bytes(suffix.data(), z.origin.data(), suffix.size()))
            best = &z;
    }
    return best;
}

namespace {

// A zone's index for `config`: its origins, this cluster's id and the nearest fallback, what every host's
// plan depends on besides its entries.
std::string config_key(const conf::Config& config) {
    std::string key = config.cluster.id + (config.geoip.nearest ? "/n" : "/-");
    for (const auto& z : config.zones) key += "|" + z.origin;
    return key;
}

// The CPUs this process may run on (its affinity: a glbd pinned to one CPU builds on one thread).
size_t usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(CPU_COUNT(&set));
    return std::thread::hardware_concurrency();
}

// The answer counter ids, asked for by every building thread: reachable only under the lock (the daemon's
// AnswerIds hands out ids as it goes and is not thread-safe), taken once per host.
class SharedIds {
public:
    explicit SharedIds(const CounterIds& ids) : ids_(ids) {}
    explicit operator bool() const { return static_cast<bool>(ids_); }
    template <class F>
    void with(F&& f) {
        std::lock_guard<std::mutex> lock(mu_);
        f(ids_);
    }

private:
    std::mutex mu_;
    const CounterIds& ids_;
};

// Builds one host from its entries in every cluster (cluster order), or null when its name is not in
// `zones` (hosts outside our zones are ignored).
std::shared_ptr<const HostBlock> build_host(
    const conf::Config& config, const Snapshot& s, const std::string& name,
    const std::vector<std::pair<const ClusterView*, const HostEntry*>>& contributions, SharedIds& counter_ids,
    const std::shared_ptr<Labels>& labels, LabelCache& cache, std::vector<Endpoints>& eps, std::string& plan_bytes) {
    auto w = wire::name_to_wire(name);
    if (!w) return nullptr;
    const Zone* zone = s.find_zone(*w);
    if (!zone) return nullptr;
    auto b = std::make_shared<HostBlock>();
    Host& h = b->host;
    b->labels = labels;
    h.labels = labels.get();
    h.name = std::move(*w);
    h.ttl = contributions.front().second->ttl;
    if (eps.size() < contributions.size()) eps.resize(contributions.size());  // entries past ours are left unread
    h.entries.reserve(contributions.size());
    for (const auto& [cluster, he] : contributions) {
        if (cluster->id == config.cluster.id) h.ttl = he->ttl;
        Endpoints& e = eps[h.entries.size()];
        e.reset();
        h.entries.push_back(build_entry(cache, h.entries.size(), *cluster, *he, e));
    }
    h.simple = std::none_of(h.entries.begin(), h.entries.end(), [](const Entry& e) { return e.load_balanced; });
    if (counter_ids) {
        std::string shown = wire::wire_to_name(h.name);
        counter_ids.with([&](const CounterIds& number) {
            if (h.simple) {
                h.counter = number(shown, "all");
            } else {
                for (auto& e : h.entries) e.counter = number(shown, h.cluster(e));
            }
        });
    }
    plan_bytes.clear();
    PlanWriter plan(plan_bytes);
    host_plan(plan, h, eps, config.geoip.nearest, contributions);
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
    b->plan_len = static_cast<uint32_t>(plan_bytes.size());
    b->bytes = std::make_unique<uint64_t[]>((b->plan_at + plan_bytes.size() + 7) / 8);  // zeroed
    std::memcpy(b->bytes.get(), h.name.data(), h.name.size());
    std::memcpy(reinterpret_cast<char*>(b->bytes.get()) + b->plan_at, plan_bytes.data(), plan_bytes.size());
    return b;
}

}  // namespace

void SnapshotBuilder::Places::build(const std::vector<HostEntry>& hosts) {
    hosts_ = &hosts;
    size_t size = 16;
    while (size < hosts.size() * 3 / 2) size *= 2;  // at most two-thirds full: 8 bytes a slot, one cluster's
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    for (size_t p = 0; p < hosts.size(); ++p) {
        NameKey name(hosts[p].host);
        size_t i = name.hash & mask_;
        auto check = static_cast<uint32_t>(name.hash >> 32);
        for (; slots_[i].place != kNone; i = (i + 1) & mask_) {
            if (slots_[i].check == check && hosts[slots_[i].place].host == name.name) break;  // given twice
        }
        if (slots_[i].place == kNone) slots_[i] = Slot{check, static_cast<uint32_t>(p)};
    }
}

uint32_t SnapshotBuilder::Places::find(const std::vector<HostEntry>& hosts, const NameKey& name) const {
    if (slots_.empty()) return kNone;
    for (size_t i = name.hash & mask_;; i = (i + 1) & mask_) {
        const Slot& s = slots_[i];
        if (s.place == kNone) return kNone;
        if (s.check == static_cast<uint32_t>(name.hash >> 32) && hosts[s.place].host == name.name) return s.place;
    }
}

void SnapshotBuilder::reset() { full_reset("", false); }

void SnapshotBuilder::full_reset(const std::string& key, bool counted) {
    clusters_.clear();
    hosts_.clear();
    host_at_.clear();
    config_key_ = key;
    labels_ = std::make_shared<Labels>();  // what no host holds any more goes with the hosts
    counted_ = counted;
}

std::shared_ptr<Snapshot> SnapshotBuilder::build(const conf::Config& config, const SharedView& view,
                                                 std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                                 const CounterIds& counter_ids) {
    auto s = std::make_shared<Snapshot>();
    s->serial = serial;
    s->geo = std::move(geo);
    s->udp_payload = config.listen.udp_payload;
    for (const auto& cz : config.zones) s->zones.push_back(build_zone(cz, serial));

    std::string key = config_key(config);
    bool counted = static_cast<bool>(counter_ids);
    last_ = Stats{};
    last_.full = key != config_key_ || counted != counted_ || clusters_.empty();
    if (last_.full) full_reset(key, counted);
    try {
        // Which host names a change touches: every name of a cluster that came, went, or changed its
        // liveness or location; else the names whose entry differs.
        std::unordered_set<NameKey, NameKey::Hash> touched;
        auto touch = [&](const NameKey& name) { touched.insert(name); };
        auto touch_all = [&](const Cluster& c) { c.places.each([&](const NameKey& name, uint32_t) { touch(name); }); };
        std::map<std::string, Cluster, std::less<>> next;
        for (const auto& cv : view) {
            auto old = clusters_.find(cv->id);
            if (old != clusters_.end() && old->second.view == cv) {
                next.emplace(cv->id, std::move(old->second));
                clusters_.erase(old);
                continue;
            }
            Cluster c{cv, {}};
            if (last_.full || old == clusters_.end() || old->second.view->alive != cv->alive ||
                old->second.view->location != cv->location) {
                c.places.build(cv->hosts);
                touch_all(c);
                if (old != clusters_.end()) touch_all(old->second);
            } else {
                const std::vector<HostEntry>& was = old->second.view->hosts;
                const std::vector<HostEntry>& now = cv->hosts;
                bool one_list = old->second.view->hosts.same_list(cv->hosts);  // nothing under it changed
                bool same_places = was.size() == now.size();
                for (size_t i = 0; !one_list && same_places && i < now.size(); ++i)
                    same_places = was[i].host == now[i].host;
                if (one_list || same_places) {  // the same names in the same places: compare place by place
                    c.places = std::move(old->second.places);
                    c.places.rebase(now);
                    for (size_t i = 0; !one_list && i < now.size(); ++i) {
                        if (!(was[i] == now[i])) touch(NameKey(now[i].host));
                    }
                } else {
                    c.places.build(now);
                    const Places& before = old->second.places;
                    c.places.each([&](const NameKey& name, uint32_t p) {
                        uint32_t q = before.find(was, name);
                        if (q == Places::kNone || !(was[q] == now[p])) touch(name);
                    });
                    before.each([&](const NameKey& name, uint32_t) {
                        if (c.places.find(now, name) == Places::kNone) touch(name);
                    });
                }
            }
            next.emplace(cv->id, std::move(c));
        }
        for (const auto& [id, gone] : clusters_) {  // clusters no longer in the view (the rest changed: done)
            if (!next.count(id)) touch_all(gone);
        }

        // Each touched host is built from its entries in every cluster and goes into `hosts_` (or out of it).
        SharedIds ids(counter_ids);
        struct Scratch {
            LabelCache labels;
            std::vector<std::pair<const ClusterView*, const HostEntry*>> contributions;
            std::vector<Endpoints> eps;
            std::string plan_bytes;
        };
        auto build_one = [&](const NameKey& host, const std::string& name,
                             Scratch& w) -> std::shared_ptr<const HostBlock> {
            w.contributions.clear();
            for (const auto& [id, c] : next) {
                if (uint32_t p = c.places.find(c.view->hosts, host); p != Places::kNone) {
                    const std::vector<HostEntry>& hosts = c.view->hosts;
                    w.contributions.emplace_back(c.view.get(), &hosts[p]);
                    // In list order (see below) the next hosts' entries are read next: ask for them now.
                    if (p + 4 < hosts.size()) __builtin_prefetch(&hosts[p + 4]);
                    if (p + 2 < hosts.size()) {
                        __builtin_prefetch(hosts[p + 2].endpoints.data());
                        __builtin_prefetch(hosts[p + 2].host.data());
                    }
                }
            }
            if (w.contributions.empty()) return nullptr;
            return build_host(config, *s, name, w.contributions, ids, labels_, w.labels, w.eps, w.plan_bytes);
        };
        auto apply = [&](std::string name, std::shared_ptr<const HostBlock> b) {
            ++last_.built;
            auto at = host_at_.find(name);
            if (b && at != host_at_.end()) {
                hosts_[at->second] = std::move(b);
            } else if (b) {
                host_at_.emplace(std::move(name), hosts_.size());
                hosts_.push_back(std::move(b));
            } else if (at != host_at_.end()) {  // gone: the last host takes its place
                size_t i = at->second;
                host_at_.erase(at);
                if (i + 1 != hosts_.size()) {
                    hosts_[i] = std::move(hosts_.back());
                    host_at_[hosts_[i]->key] = i;
                }
                hosts_.pop_back();
            }
        };
        // Many hosts are built in the order of the largest cluster's list, the rest after: each cluster's
        // entries are then read front to back wherever the clusters list their hosts in the same order (as
        // a state file, a transfer or the same DNSPolicy gives them), not one cache miss after another.
        std::vector<NameKey> names;
        names.reserve(touched.size());
        if (touched.size() >= kInOrderFrom && !next.empty()) {
            const ClusterView* largest = nullptr;
            for (const auto& [id, c] : next) {
                if (!largest || c.view->hosts.size() > largest->hosts.size()) largest = c.view.get();
            }
            for (const HostEntry& he : largest->hosts) {
                if (NameKey k(he.host); touched.erase(k)) names.push_back(k);
            }
        }
        names.insert(names.end(), touched.begin(), touched.end());
        size_t threads = names.size() < kParallelFrom ? 1 : std::clamp<size_t>(usable_cpus(), 1, threads_);
        if (threads == 1) {
            Scratch w{LabelCache(*labels_), {}, {}, {}};
            for (const NameKey& host : names) {
                std::string name(host.name);
                auto b = build_one(host, name, w);
                apply(std::move(name), std::move(b));
            }
        } else {
            // Many hosts (a full build): each thread builds its share of `names` into its places in `built`,
            // then they are applied in order.
            std::vector<std::shared_ptr<const HostBlock>> built(names.size());
            auto build_range = [&](size_t from, size_t to) {
                Scratch w{LabelCache(*labels_), {}, {}, {}};
                for (size_t i = from; i < to; ++i) built[i] = build_one(names[i], std::string(names[i].name), w);
            };
            std::vector<std::thread> helpers;
            std::vector<std::exception_ptr> failed(threads);
            for (size_t t = 1; t < threads; ++t) {
                helpers.emplace_back([&, t] {
                    try {
                        build_range(names.size() * t / threads, names.size() * (t + 1) / threads);
                    } catch (...) {
                        failed[t] = std::current_exception();
                    }
                });
            }
            try {
                build_range(0, names.size() / threads);
            } catch (...) {
                failed[0] = std::current_exception();
            }
            for (auto& h : helpers) h.join();
            for (const auto& f : failed) {
                if (f) std::rethrow_exception(f);
            }
            for (size_t n = 0; n < names.size(); ++n) apply(std::string(names[n].name), std::move(built[n]));
        }
        clusters_ = std::move(next);  // the old views (and names in `touched`) may go now
    } catch (...) {
        full_reset("", false);  // part done: the next build starts over
        throw;
    }
    s->hosts = hosts_;
    std::vector<std::vector<std::pair<const HostBlock*, int>>> by_zone(s->zones.size());
    for (size_t i = 0; i < hosts_.size(); ++i) {
        const HostBlock& b = *hosts_[i];
        s->counters = std::max(s->counters, b.counters);
        by_zone[b.zone].emplace_back(&b, static_cast<int>(i));
    }
    for (size_t z = 0; z < s->zones.size(); ++z) s->zones[z].freeze(by_zone[z]);
    last_.hosts = s->hosts.size();
    return s;
}

std::shared_ptr<Snapshot> build_snapshot(const conf::Config& config, const GlobalView& view,
                                         std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                         const CounterIds& counter_ids) {
    SnapshotBuilder b;
    return b.build(config, share(view), std::move(geo), serial, counter_ids);
}

}  // namespace glbd
