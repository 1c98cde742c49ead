#include "resolver/snapshot.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "resolver/wire.hpp"

namespace glbd {
namespace {

std::string must_wire(const std::string& name) {
    auto w = conf::name_to_wire(name);
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
        case wire::type::PTR:
            r.names = 1;
            break;
        case wire::type::MX:
            if (r.wire.size() > 2) r.name_at[0] = 2, r.names = 1;
            break;
        case wire::type::SOA: {
            size_t first = wire_name_len(r.wire, 0);
            if (first < 256) r.name_at[1] = static_cast<uint8_t>(first), r.names = 2;
            break;
        }
        default:
            break;
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
            bool dup = std::any_of(set.rdata.begin(), set.rdata.end(), [&](const RData& x) { return x.wire == rd.wire; });
            if (!dup) set.rdata.push_back(std::move(rd));
            return;
        }
    }
    n.rrsets.push_back(RRset{type, ttl, {std::move(rd)}});
}

std::string soa_rdata(const conf::Zone& cz, const std::string& origin_wire, uint32_t serial) {
    std::string rname = cz.soa.rname;
    if (rname.find('.') == std::string::npos) rname += "." + cz.origin;
    std::string out = must_wire(cz.soa.mname) + must_wire(rname);
    for (uint32_t v : {serial, cz.soa.refresh, cz.soa.retry, cz.soa.expire, cz.soa.minimum}) {
        char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
        out.append(b, 4);
    }
    (void)origin_wire;
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
        while (i < rd.size() && rd.compare(i, z.origin.size(), z.origin) != 0 && rd[i] != 0) i += static_cast<uint8_t>(rd[i]) + 1u;
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
    z.soa = RRset{wire::type::SOA, cz.ttl, {make_rdata(wire::type::SOA, soa_rdata(cz, z.origin, serial))}};
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

void build_pick(const Host& h, Group& g) {
    g.usable = std::any_of(g.entries.begin(), g.entries.end(), [&](uint16_t i) { return h.entries[i].usable; });
    for (int qt = 0; qt < 2; ++qt) {
        uint16_t qtype = qt == 0 ? wire::type::A : wire::type::AAAA;
        for (int mode = 0; mode < 2; ++mode) {
            Group::Pick& p = g.pick[qt][mode];
            for (uint16_t i : g.entries) {
                const Entry& e = h.entries[i];
                if ((mode == 0 && !e.usable) || !e.answers.has(qtype, mode)) continue;
                p.total += e.weight;
                p.choices.push_back(Group::Choice{i, p.total});
            }
        }
    }
}

// Adds an endpoint to a set of answers; an address already there becomes healthy if this one is.
void add_endpoint(Answers& a, const EndpointState& ep, bool alive) {
    bool healthy = alive && ep.healthy;
    Address addr;
    addr.healthy = healthy;
    char buf[64];
    if (ep.target.size() < sizeof buf) {
        std::copy(ep.target.begin(), ep.target.end(), buf);
        buf[ep.target.size()] = 0;
        bool v4 = ep.target.find(':') == std::string::npos;
        if (inet_pton(v4 ? AF_INET : AF_INET6, buf, addr.bytes.data()) == 1) {
            addr.len = v4 ? 4 : 16;
            auto& list = v4 ? a.v4 : a.v6;
            auto& count = v4 ? a.healthy4 : a.healthy6;
            for (auto& x : list) {
                if (x.bytes == addr.bytes) {
                    if (healthy && !x.healthy) x.healthy = true, ++count;
                    return;
                }
            }
            list.push_back(addr);
            if (healthy) ++count;
            return;
        }
    }
    if (auto w = conf::name_to_wire(ep.target)) {
        if (a.cname[1].empty()) a.cname[1] = *w;
        if (healthy && a.cname[0].empty()) a.cname[0] = *w;
    }
}

Entry build_entry(const std::string& cluster, bool alive, const HostEntry& he) {
    Entry e;
    e.cluster = cluster;
    e.load_balanced = he.load_balancing.has_value();
    if (he.load_balancing) {
        e.geo = he.load_balancing->geo;
        e.weight = he.load_balancing->weight;
        e.default_geo = he.load_balancing->default_geo;
    }
    for (const auto& ep : he.endpoints) add_endpoint(e.answers, ep, true);
    e.usable = alive && e.answers.any_healthy();
    return e;
}

void finish_host(Host& h, const std::vector<std::pair<const ClusterView*, const HostEntry*>>& contributions) {
    h.simple = true;
    std::vector<std::pair<const std::string*, bool>> shapes;  // distinct (geo, defaultGeo)
    for (size_t i = 0; i < h.entries.size(); ++i) {
        const Entry& e = h.entries[i];
        auto idx = static_cast<uint16_t>(i);
        if (e.load_balanced) h.simple = false;
        if (std::none_of(shapes.begin(), shapes.end(), [&](const auto& s) { return *s.first == e.geo && s.second == e.default_geo; })) {
            shapes.emplace_back(&e.geo, e.default_geo);
        }
        h.all.entries.push_back(idx);
        if (e.default_geo) h.default_group.entries.push_back(idx);
        if (e.geo.empty()) continue;
        auto g = std::find_if(h.geo_groups.begin(), h.geo_groups.end(), [&](const Group& x) { return x.geo == e.geo; });
        if (g == h.geo_groups.end()) g = h.geo_groups.insert(h.geo_groups.end(), Group{e.geo, {}, false, {}});
        g->entries.push_back(idx);
    }
    h.geo_dependent = shapes.size() > 1;
    for (auto& g : h.geo_groups) {
        Host::GeoKey k{geo::code_key(g.geo), 0, static_cast<uint32_t>(g.geo.size())};
        if (g.geo.size() == 6 && g.geo.compare(0, 4, "GEO-") == 0) k.continent = geo::code_key(g.geo.substr(4));
        h.geo_keys.push_back(k);
        build_pick(h, g);
    }
    build_pick(h, h.default_group);
    build_pick(h, h.all);
    if (h.simple) {
        for (const auto& [cluster, he] : contributions) {
            for (const auto& ep : he->endpoints) add_endpoint(h.union_answers, ep, cluster->alive);
        }
    }
}

}  // namespace

bool Answers::has(uint16_t qtype, int mode) const {
    bool has4 = mode == 0 ? healthy4 > 0 : !v4.empty();
    bool has6 = mode == 0 ? healthy6 > 0 : !v6.empty();
    bool cn = !cname[mode].empty();
    switch (qtype) {
        case wire::type::A: return has4 || cn;
        case wire::type::AAAA: return has6 || cn;
        case wire::type::CNAME: return cn;
        default: return has4 || has6 || cn;
    }
}

bool address_rdata(std::string_view ip, RData& out, uint16_t& type) {
    char buf[64];
    if (ip.size() >= sizeof buf) return false;
    std::copy(ip.begin(), ip.end(), buf);
    buf[ip.size()] = 0;
    unsigned char b[16];
    if (inet_pton(AF_INET, buf, b) == 1) {
        out = RData{std::string(reinterpret_cast<char*>(b), 4), {0, 0}, 0};
        type = wire::type::A;
        return true;
    }
    if (inet_pton(AF_INET6, buf, b) == 1) {
        out = RData{std::string(reinterpret_cast<char*>(b), 16), {0, 0}, 0};
        type = wire::type::AAAA;
        return true;
    }
    return false;
}

ClusterView local_cluster_view(const conf::Config& config) {
    ClusterView v{config.cluster_id, true, {}};
    for (const auto& h : config.hosts) {
        HostEntry e{h.name, h.ttl, h.load_balancing, {}};
        for (const auto& ep : h.endpoints) e.endpoints.push_back(EndpointState{ep, true});
        v.hosts.push_back(std::move(e));
    }
    return v;
}

void Zone::freeze() {
    size_t size = 16;
    while (size < nodes.size() * 2) size *= 2;
    index_.assign(size, Slot{});
    mask_ = size - 1;
    names_.clear();
    for (const auto& [name, node] : nodes) {
        uint64_t h = wire::name_hash(name);
        size_t i = h & mask_;
        while (index_[i].node) i = (i + 1) & mask_;
        index_[i] = Slot{h, static_cast<uint32_t>(names_.size()), static_cast<uint32_t>(name.size()), &node};
        names_ += name;
    }
}

const Zone* Snapshot::find_zone(std::string_view qname, unsigned labels) const {
    const Zone* best = nullptr;
    for (const auto& z : zones) {
        if (z.labels > labels || (best && best->labels >= z.labels)) continue;
        std::string_view suffix = qname.substr(wire::suffix_offset(qname, labels - z.labels));
        if (suffix.size() == z.origin.size() && wire::same_bytes(suffix.data(), z.origin.data(), suffix.size())) best = &z;
    }
    return best;
}

std::shared_ptr<Snapshot> build_snapshot(const conf::Config& config, const GlobalView& view,
                                               std::shared_ptr<const geo::GeoDb> geo, uint32_t serial) {
    auto s = std::make_shared<Snapshot>();
    s->serial = serial;
    s->geo = std::move(geo);
    s->udp_payload = config.udp_payload;
    for (const auto& cz : config.zones) s->zones.push_back(build_zone(cz, serial));

    // Host name -> its entries from every cluster, in cluster order (sorted ids: the same everywhere).
    std::map<std::string, std::vector<std::pair<const ClusterView*, const HostEntry*>>> by_host;
    std::vector<const ClusterView*> clusters;
    for (const auto& c : view) clusters.push_back(&c);
    std::sort(clusters.begin(), clusters.end(), [](auto* a, auto* b) { return a->id < b->id; });
    for (const ClusterView* c : clusters) {
        for (const auto& he : c->hosts) by_host[he.host].emplace_back(c, &he);
    }
    for (const auto& [name, contributions] : by_host) {
        auto w = conf::name_to_wire(name);
        if (!w) continue;
        Zone* zone = const_cast<Zone*>(s->find_zone(*w));
        if (!zone) continue;  // outside our zones: ignored
        Host h;
        h.name = *w;
        h.ttl = contributions.front().second->ttl;
        for (const auto& [cluster, he] : contributions) {
            if (cluster->id == config.cluster_id) h.ttl = he->ttl;
            h.entries.push_back(build_entry(cluster->id, cluster->alive, *he));
        }
        finish_host(h, contributions);
        Node& node = add_node(*zone, h.name);
        node.host = static_cast<int>(s->hosts.size());
        s->hosts.push_back(std::move(h));
    }
    for (auto& z : s->zones) z.freeze();
    return s;
}

}  // namespace glbd
