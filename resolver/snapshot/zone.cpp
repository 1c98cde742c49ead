#include "resolver/snapshot/zone.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <new>
#include <stdexcept>

#include "resolver/snapshot/snapshot.hpp"
#include "resolver/wire/text.hpp"

namespace glbd {
namespace {

std::string must_wire(const std::string& name) {
    auto w = wire::name_to_wire(name);
    if (!w) throw std::runtime_error("not a domain name: " + name);
    return *w;
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
            size_t first = wire::name_length(r.wire, 0);
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
    n.rrsets.push_back(RRset{type, ttl, {std::move(rd)}, {}});
}

std::string soa_rdata(const model::Zone& cz, uint32_t serial) {
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

}  // namespace

void add_zone_record(Zone& z, const std::string& owner, uint16_t type, uint32_t ttl, std::string rdata) {
    add_record(z, owner, type, ttl, std::move(rdata));
}

Zone build_zone(const model::Zone& cz, uint32_t serial) {
    Zone z;
    z.origin = must_wire(cz.origin);
    z.labels = wire::label_count(z.origin);
    z.soa = RRset{wire::type::SOA, cz.ttl, {make_rdata(wire::type::SOA, soa_rdata(cz, serial))}, {}};
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
    if (cz.dnssec) {
        z.signer = std::make_shared<dnssec::ZoneSigner>(z.origin, cz.dnssec->keys, cz.dnssec->validity_seconds());
        for (std::string& rdata : z.signer->dnskeys()) add_record(z, z.origin, wire::type::DNSKEY, cz.ttl, rdata);
        for (std::string& rdata : z.signer->cds()) add_record(z, z.origin, wire::type::CDS, cz.ttl, rdata);
        for (std::string& rdata : z.signer->cdnskeys()) add_record(z, z.origin, wire::type::CDNSKEY, cz.ttl, rdata);
    }
    return z;
}

bool Zone::under_cut(std::string_view name, bool inclusive) const {
    unsigned n = wire::label_count(name);
    for (unsigned drop = inclusive ? 0 : 1; n - drop > labels; ++drop) {
        auto it = nodes.find(name.substr(wire::suffix_offset(name, drop)));
        if (it != nodes.end() && it->second.find(wire::type::NS)) return true;
    }
    return false;
}

bool address_rdata(std::string_view ip, RData& out, uint16_t& type) {
    geo::Address a;
    if (!geo::Address::parse(ip, a)) return false;
    size_t len = a.family == 4 ? 4 : 16;
    out = RData{std::string(reinterpret_cast<const char*>(a.bytes.data()), len), {0, 0}, 0};
    type = a.family == 4 ? wire::type::A : wire::type::AAAA;
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

}  // namespace glbd
