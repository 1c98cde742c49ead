// resolver/explain.cpp — see explain.hpp.
#include "resolver/explain.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

#include "resolver/resolver.hpp"
#include "resolver/select.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/text.hpp"

namespace glbd {
namespace {

using select::at;

const char* source_name(geo::Location::Source s) {
    switch (s) {
        case geo::Location::Source::networks: return "geoip.networks";
        case geo::Location::Source::location_db: return "location database (libloc)";
        case geo::Location::Source::maxmind: return "MaxMind database";
        case geo::Location::Source::none: break;
    }
    return "nothing: unknown location";
}

// The address the answer path locates: the ECS subnet's (masked to its source length) or the resolver's.
geo::Address located_address(const ExplainRequest& req) {
    if (!req.subnet) {
        geo::Address a = req.client;
        a.unmap();
        return a;
    }
    geo::Address a = *req.subnet;
    for (unsigned bit = req.subnet_len; bit < a.bits(); ++bit)
        a.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
    uint8_t source = req.subnet_len;
    a.unmap(&source);
    return a;
}

// The host's node: the name itself, or the closest wildcard above it (RFC 4592).
Zone::Ref find_host(const Zone& zone, const std::string& qname) {
    Zone::Ref ref = zone.find(qname);
    if (ref.node) return ref;
    unsigned drop_max = wire::label_count(qname) - zone.labels;
    for (unsigned drop = 1; drop <= drop_max; ++drop) {
        std::string wild = std::string("\x01*", 2) + qname.substr(wire::suffix_offset(qname, drop));
        if (Zone::Ref w = zone.find(wild); w.node) return w;
        if (zone.find(qname.substr(wire::suffix_offset(qname, drop))).node) break;  // the closest encloser
    }
    return {};
}

std::vector<Explanation::Endpoint> endpoints_of(const std::byte* plan, uint32_t answers_at) {
    const auto& a = at<plan::Answers>(plan, answers_at);
    std::vector<Explanation::Endpoint> out;
    auto addresses = [&](unsigned family, const uint16_t* n) {
        size_t len = family == 4 ? 4 : 16;
        std::set<std::string> healthy;
        for (int mode : {0, 1}) {
            uint32_t from = family == 4 ? a.v4(answers_at, mode) : a.v6(answers_at, mode);
            for (unsigned i = 0; i < n[mode]; ++i) {
                geo::Address addr;
                addr.family = static_cast<uint8_t>(family);
                std::memcpy(addr.bytes.data(), plan + from + i * len, len);
                if (mode == 0)
                    healthy.insert(addr.str());
                else
                    out.push_back({addr.str(), healthy.count(addr.str()) > 0});
            }
        }
    };
    addresses(4, a.n4);
    addresses(6, a.n6);
    if (a.cname[1] != 0) {  // a host name endpoint (every-entry mode), healthy when the healthy mode has it too
        const auto* c = reinterpret_cast<const char*>(plan + a.name(answers_at, 1));
        out.push_back({wire::wire_to_name(std::string_view(c + 1, static_cast<uint8_t>(c[0]))), a.cname[0] != 0});
    }
    return out;
}

// The entries a group can answer with: those of its every-entry picks (A and AAAA).
void candidates_of(const Host& host, const std::byte* plan, const plan::Group& g, Explanation& e) {
    std::set<uint16_t> seen;
    for (int q : {0, 1}) {
        if (g.pick[q][1] == 0) continue;
        const auto& p = at<plan::Pick>(plan, g.pick[q][1]);
        const auto* choices = &at<plan::Choice>(plan, g.pick[q][1] + sizeof(plan::Pick));
        for (uint32_t i = 0; i < p.count; ++i) {
            if (!seen.insert(choices[i].entry).second || choices[i].entry >= host.entries.size()) continue;
            const Entry& en = host.entries[choices[i].entry];
            e.candidates.push_back({host.cluster(en), host.geo(en), host.key(en), en.weight, en.usable,
                                    endpoints_of(plan, choices[i].answers), en.standby});
        }
    }
}

// The group's geo code, from its entries (the defaultGeo and all groups have none of their own).
std::string group_geo(const Host& host, const std::byte* plan, const plan::Group& g, const std::string& role) {
    if (role == "defaultGeo" || role == "all") return "";
    for (int q : {0, 1}) {
        if (g.pick[q][1] == 0) continue;
        const auto& c = at<plan::Choice>(plan, g.pick[q][1] + sizeof(plan::Pick));
        if (c.entry < host.entries.size()) return host.geo(host.entries[c.entry]);
    }
    return "";
}

void explain_groups(const Snapshot& snap, const Host& host, const std::byte* plan, const ExplainRequest& req,
                    Explanation& e) {
    select::Trace trace;
    uint8_t scope = 0;
    auto locate = [&] { return snap.geo ? snap.geo->locate(located_address(req)) : geo::Location{}; };
    select::Choice choice = select::choose(plan, locate, scope, &trace);
    if (trace.located) {
        e.located = true;
        e.country = std::string(trace.loc.code), e.continent = std::string(trace.loc.continent);
        e.prefix = trace.loc.prefix, e.located_by = source_name(trace.loc.source);
        geo::Point p;
        if (select::client_point(trace.loc, p)) {
            e.has_point = true, e.point_from_database = trace.loc.has_coordinates, e.lat = p.lat, e.lon = p.lon;
        }
    }
    e.fallback = choice.fallback, e.fail_open = choice.fail_open;
    bool passed = false;
    for (int i = 0; i < trace.n; ++i) {
        const plan::Group* g = trace.order[i];
        std::string role = trace.role[i];
        std::string result;
        if (!g)
            result = "no group";
        else if (g->entries == 0)
            result = "no entry";
        else if (g == choice.group)
            result = choice.fail_open ? "chosen: none usable anywhere, answered as if healthy" : "chosen",
            passed = true;
        else if (passed)
            result = "not needed";
        else
            result = "none usable";
        e.steps.push_back({role, g ? group_geo(host, plan, *g, role) : "", result});
        if ((role == "nearest" || role == "next nearest") && g && g->has_point && e.has_point) {
            e.steps.back().km = geo::distance_km(geo::Point{e.lat, e.lon}, geo::Point{g->lat, g->lon});
        }
    }
    if (choice.group) candidates_of(host, plan, *choice.group, e);
}

// answer() for the query the client would send; its answer records, TTL, ECS scope and rcode.
void real_answer(const Snapshot& snap, const std::string& qname, const ExplainRequest& req, Explanation& e) {
    wire::QueryOptions o;
    o.id = 0x4242;
    o.payload = 1232;  // an answer of any size fits (it goes over "TCP")
    if (req.subnet) o.client_subnet = Prefix{*req.subnet, req.subnet_len};
    const std::vector<uint8_t> q = wire::make_query(qname, req.qtype, o);
    uint8_t out[4096];
    QueryInfo info;
    size_t len = answer(snap, q.data(), q.size(), Client{req.client, Transport::tcp}, out, sizeof out, &info);
    e.rcode = wire::rcode_name(info.rcode);
    wire::ResponseRecords records(out, len);
    wire::Record rr;
    wire::Section section{};
    while (records.next(rr, section)) {
        const bool answer_section = section == wire::Section::answer;
        if (answer_section && (rr.type == wire::type::A || rr.type == wire::type::AAAA) &&
            (rr.rdlen == 4 || rr.rdlen == 16)) {
            geo::Address a;
            a.family = rr.rdlen == 4 ? 4 : 6;
            std::memcpy(a.bytes.data(), out + rr.rdata, rr.rdlen);
            e.answers.push_back((rr.type == wire::type::A ? "A " : "AAAA ") + a.str());
            e.ttl = e.answers.size() == 1 ? rr.ttl : std::min(e.ttl, rr.ttl);
        } else if (answer_section && rr.type == wire::type::CNAME) {
            std::string target;
            if (wire::read_name(out, len, rr.rdata, target)) e.answers.push_back("CNAME " + wire::wire_to_name(target));
            e.ttl = e.answers.size() == 1 ? rr.ttl : std::min(e.ttl, rr.ttl);
        } else if (rr.type == wire::type::OPT && req.subnet) {
            for (size_t p = rr.rdata; p + 4 <= rr.end();) {  // options: code, length, data
                uint16_t code = wire::get16(out + p), olen = wire::get16(out + p + 2);
                if (code == wire::edns::kOptionEcs && olen >= 4 && p + 4 + olen <= rr.end()) e.scope = out[p + 7];
                p += 4u + olen;
            }
        }
    }
}

// The target of NAME's CNAME as this snapshot answers it (a static name's), or nothing.
std::optional<std::string> cname_target(const Snapshot& snap, const std::string& qname, const ExplainRequest& req) {
    wire::QueryOptions o;
    o.id = 0x4243;
    o.payload = 1232;
    const std::vector<uint8_t> q = wire::make_query(qname, wire::type::CNAME, o);
    uint8_t out[4096];
    size_t len = answer(snap, q.data(), q.size(), Client{req.client, Transport::tcp}, out, sizeof out, nullptr);
    wire::ResponseRecords records(out, len);
    wire::Record rr;
    wire::Section section{};
    while (records.next(rr, section)) {
        std::string target;
        if (section == wire::Section::answer && rr.type == wire::type::CNAME &&
            wire::read_name(out, len, rr.rdata, target)) {
            return target;
        }
    }
    return std::nullopt;
}

}  // namespace

Explanation explain(const Snapshot& snap, const ExplainRequest& req) {
    constexpr int kMaxCnames = 8;  // as the answer path follows them
    Explanation e;
    e.serial = snap.serial;
    auto asked = wire::name_to_wire(req.name);
    if (!asked) {
        e.error = "not a domain name: \"" + req.name + "\"";
        return e;
    }
    // A static name holding a CNAME is followed to the name it points at, in the zones served here: a
    // client's resolver asks for the name the user typed, and the host it ends at is what needs explaining.
    std::string qname = *asked, shown = req.name;
    for (int hops = 0;; ++hops) {
        const Zone* zone = snap.find_zone(qname);
        if (!zone) {
            e.error = shown + " is in no zone served here";
            if (hops > 0) e.error += " (the resolver asks its own servers for it)";
            return e;
        }
        e.zone = wire::wire_to_name(zone->origin);
        Zone::Ref ref = find_host(*zone, qname);
        if (!ref.node) {
            e.error = shown + " does not exist in " + e.zone;
            return e;
        }
        if (ref.plan && ref.host >= 0) break;
        auto target = hops < kMaxCnames ? cname_target(snap, qname, req) : std::nullopt;
        if (!target) {
            e.error = shown + (hops < kMaxCnames ? " is a static name, not a load-balanced host"
                                                 : " is reached by more CNAMEs than are followed");
            return e;
        }
        std::string next = wire::wire_to_name(*target);
        e.cnames.push_back(shown + " CNAME " + next);
        qname = *target, shown = next;
    }
    Zone::Ref ref = find_host(*snap.find_zone(qname), qname);
    const Host& host = snap.hosts[static_cast<size_t>(ref.host)]->host;
    e.host = wire::wire_to_name(host.name);
    const auto& head = at<plan::Head>(ref.plan, 0);
    e.load_balanced = !head.simple;
    if (head.simple) {
        e.steps.push_back({"simple", "", "every alive cluster's endpoints (no entry has loadBalancing)"});
        e.candidates.push_back({"all", "", "", 0, true, endpoints_of(ref.plan, head.answers)});
    } else {
        explain_groups(snap, host, ref.plan, req, e);
    }
    real_answer(snap, *asked, req, e);  // the answer to the name asked: the CNAMEs, then the host's records
    return e;
}

namespace {

// Appends to a fixed buffer, cutting at its end: describe_answer() on a query thread, without printf's
// parsing (it was a third of the query log's cost per answer).
class Line {
public:
    Line(char* out, size_t cap) : out_(out), cap_(cap) {}
    Line& operator<<(std::string_view s) {
        size_t n = std::min(s.size(), cap_ - len_);
        std::memcpy(out_ + len_, s.data(), n);
        len_ += n;
        return *this;
    }
    Line& operator<<(uint32_t v) {
        char digits[10];
        auto r = std::to_chars(digits, digits + sizeof digits, v);
        return *this << std::string_view(digits, static_cast<size_t>(r.ptr - digits));
    }
    [[nodiscard]] size_t size() const { return len_; }

private:
    char* out_;
    size_t cap_, len_ = 0;
};

}  // namespace

size_t describe_answer(const Snapshot& snap, const QueryInfo& info, char* out, size_t cap) noexcept {
    if (cap == 0 || info.host < 0 || static_cast<size_t>(info.host) >= snap.hosts.size()) return 0;
    const HostBlock& b = *snap.hosts[static_cast<size_t>(info.host)];
    const Host& h = b.host;
    auto text = [](std::string_view s) { return s.empty() ? std::string_view("-") : s; };
    auto yes = [](bool v) { return v ? std::string_view("yes") : std::string_view("no"); };
    Line line(out, cap);
    line << "host=" << b.key;
    if (info.entry < 0 || static_cast<size_t>(info.entry) >= h.entries.size()) {
        line << " cluster=all fail-open=" << yes(info.fail_open) << " serial=" << snap.serial;
        return line.size();
    }
    const Entry& e = h.entries[static_cast<size_t>(info.entry)];
    std::string_view by = "-";
    switch (static_cast<geo::Location::Source>(info.located_by)) {
        case geo::Location::Source::networks: by = "networks"; break;
        case geo::Location::Source::location_db: by = "libloc"; break;
        case geo::Location::Source::maxmind: by = "maxmind"; break;
        case geo::Location::Source::none: break;
    }
    line << " cluster=" << text(h.cluster(e)) << " entry=" << text(h.key(e)) << " geo=" << text(h.geo(e))
         << " group=" << text(info.group ? info.group : "") << " client=" << text(info.located) << "/" << by << "/"
         << uint32_t{info.located_prefix} << (info.by_ecs ? "(ecs)" : "(source)") << " fallback=" << yes(info.fallback)
         << " fail-open=" << yes(info.fail_open) << " serial=" << snap.serial;
    return line.size();
}

}  // namespace glbd
