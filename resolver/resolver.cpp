// The answer pipeline, run() in four stages: parse (header, question, EDNS: ECS, cookie) -> classify (opcode,
// class, meta types, size limit) -> resolve (zone, lookup, CNAME chain, the load-balanced choice; the answer,
// authority and additional sections) -> finish (rcode, OPT, truncation). Each of the first three returns a typed
// Outcome; nothing here locks or throws, or allocates but for OpenSSL inside a signature made while answering
// (online_sign.hpp). The choice is select.hpp's, the OPT record wire/opt.hpp's (inline). The stages stay in this
// one file on purpose: the compiler inlines each into the one call per query; split into two files with an
// external class they cost 8-15% more per query (bench/resolver_bench, measured when split and joined again).
#include "resolver/resolver.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "resolver/cookie.hpp"
#include "resolver/online_sign.hpp"
#include "resolver/select.hpp"
#include "resolver/wire/opt.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd {
namespace {

using namespace wire;
using select::at;

constexpr uint32_t kShortTtl = 10;

struct Query : Header {  // the header, then the question
    uint8_t qname_buf[kMaxName];
    std::string_view qname;  // lower-case wire form
    unsigned labels = 0;     // of qname
    size_t question_end = 0;
    uint16_t qtype = 0, qclass = 0;
    Edns opt;  // its OPT record's (opt.hpp)
};

enum class LookupKind { exact, wildcard, delegation, nxdomain };
struct Lookup {
    LookupKind kind = LookupKind::nxdomain;
    Zone::Ref ref;         // the node found (exact or wildcard) or the cut
    std::string_view cut;  // delegation point (suffix of the looked-up name)
};

class Responder {
public:
    Responder(const Snapshot& snap, const uint8_t* q, size_t len, const Client& client, uint8_t* out, size_t cap,
              QueryInfo& info)
        : snap_(snap), msg_(q), len_(len), client_(client), w_(out, cap), cap_(cap), info_(info) {}

    size_t run();

private:
    // stages
    Outcome parse();
    Outcome parse_additional(size_t pos);
    Outcome classify();
    Outcome resolve();
    size_t finish(Outcome outcome);

    // helpers
    Lookup lookup(const Zone& z, std::string_view name, unsigned labels);
    bool host_answer(const Zone::Ref& ref, std::string_view owner, bool owner_is_qname, std::string_view* cname_target);
    // Owner, type, class, TTL and a zero RDLENGTH; returns where RDLENGTH is, for finish_rr().
    size_t begin_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl);
    void finish_rr(size_t rdlen_at);
    void write_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, const RData& rd);
    void write_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, const uint8_t* rdata,
                  size_t len);
    // A record whose rdata is one (compressible) name, e.g. a CNAME to a hostname endpoint.
    void write_name_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl,
                       std::string_view target);
    void write_rrset(std::string_view owner, bool owner_is_qname, const RRset& set);
    // With DO, a signed set's RRSIGs after it (RFC 4035 3.1.1): the zone's (`sigs`), or a host's as stored
    // (HostSignatures: a count byte, then each RDATA after its 2-byte length).
    void write_rrsigs(std::string_view owner, bool owner_is_qname, uint32_t ttl, std::string_view stored);
    // With DO in a signed zone (online_sign.hpp): a compact denial's NSEC at `owner` listing `types`, and
    // RRSIGs made now over an RRset (a wildcard's answer, signed at the name asked; `ttl` the one served).
    void deny(const Zone& z, std::string_view owner, bool owner_is_qname, online::TypeList& types);
    void sign_now(const Zone& z, std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl,
                  uint32_t original_ttl, std::string_view* rdatas, size_t n);
    void write_soa(const Zone& z);
    void add_glue(const RRset& set);
    void count(int section) { ++counts_[section]; }
    geo::Location locate();

    const Snapshot& snap_;
    uint8_t server_cookie_[cookie::kServerLen] = {};
    const uint8_t* msg_;
    size_t len_;
    const Client& client_;
    Writer w_;
    size_t cap_;
    QueryInfo& info_;
    Query q_;
    uint16_t rflags_ = 0;
    uint8_t rcode_ = 0;
    uint16_t ext_rcode_ = 0;
    uint16_t counts_[3] = {0, 0, 0};  // answer, authority, additional
    int section_ = 0;
    bool question_written_ = false;
    size_t question_end_out_ = kHeaderSize;
    uint8_t scope_ = 0;
    bool short_ttl_ = false;
    bool located_ = false;
    bool dnssec_ = false;       // the query set DO: signed zones' answers carry their RRSIGs
    int8_t cookie_valid_ = -1;  // its server cookie is ours for its address (RFC 7873): found when first asked
    bool cookie_valid() {
        if (cookie_valid_ < 0) {
            cookie_valid_ = q_.opt.present && q_.opt.cookie &&
                            cookie::valid_server_cookie(
                                snap_.cookie_secret, snap_.cookie_previous, q_.opt.client_cookie, q_.opt.server_cookie,
                                q_.opt.server_cookie_len, client_.address, static_cast<uint32_t>(std::time(nullptr)));
        }
        return cookie_valid_ > 0;
    }
    bool compact_ = false;            // the answer is a compact denial for a client that set CO: NXDOMAIN, CO echoed
    const Zone* wildcard_ = nullptr;  // the answer being written comes from a wildcard of this zone: signed now
    geo::Location loc_;
    size_t limit_ = kMaxUdpNoEdns;
    const Zone* qzone_ = nullptr;  // the zone of the question name
};

size_t Responder::run() {
    if (cap_ < kHeaderSize || !read_header(msg_, len_, q_)) return 0;
    if (q_.qr()) return 0;  // never answer a response
    rflags_ = static_cast<uint16_t>(flag::QR | (q_.flags & (flag::kOpcodeMask | flag::RD | flag::CD)));
    uint8_t* header = w_.reserve(kHeaderSize);  // fits: cap_ >= kHeaderSize
    std::memcpy(header, msg_, 2);
    std::memset(header + 2, 0, kHeaderSize - 2);
    Outcome o = parse();
    if (o == Outcome::answer) o = classify();
    if (o == Outcome::answer) o = resolve();
    return finish(o);
}

Outcome Responder::parse() {
    // An opcode we do not implement is NOTIMP whatever follows it (RFC 1035 4.1.1), even with no question.
    if (q_.qdcount != 1) return opcode_of(q_.flags) != opcode::QUERY ? Outcome::notimp : Outcome::formerr;
    size_t n = 0;
    size_t used = read_plain_name(msg_, len_, kHeaderSize, q_.qname_buf, &n, &q_.labels);
    if (used == 0 || kHeaderSize + used + 4 > len_) return Outcome::formerr;
    q_.qname = std::string_view(reinterpret_cast<const char*>(q_.qname_buf), n);
    size_t pos = kHeaderSize + used;
    q_.qtype = get16(msg_ + pos);
    q_.qclass = get16(msg_ + pos + 2);
    q_.question_end = pos + 4;
    info_.qtype = q_.qtype;
    // The question is echoed byte for byte, so the client's case is preserved.
    w_.bytes(msg_ + kHeaderSize, q_.question_end - kHeaderSize);
    if (w_.overflow()) return Outcome::dropped;
    w_.remember_name(kHeaderSize);
    question_written_ = true;
    question_end_out_ = w_.pos();
    return parse_additional(q_.question_end);
}

Outcome Responder::parse_additional(size_t pos) {
    Records records(msg_, len_, pos);
    Record rr;
    for (unsigned i = 0; i < static_cast<unsigned>(q_.ancount) + q_.nscount; ++i) {
        if (!records.next(rr)) return Outcome::formerr;
    }
    for (unsigned i = 0; i < q_.arcount; ++i) {
        if (!records.next(rr)) return Outcome::formerr;
        if (rr.type == type::OPT) {
            if (q_.opt.present || msg_[rr.owner] != 0) return Outcome::formerr;  // a second OPT, or not at the root
            if (!read_opt(msg_, rr.rdata, rr.rdlen, rr.klass, rr.ttl, q_.opt)) return Outcome::formerr;
        }
    }
    return Outcome::answer;
}

Outcome Responder::classify() {
    if (q_.opt.present && q_.opt.version > 0) return Outcome::badvers;
    if (opcode_of(q_.flags) != opcode::QUERY) return Outcome::notimp;  // only QUERY
    limit_ = client_.transport == Transport::tcp ? std::min<size_t>(cap_, 65535)
             : q_.opt.present                    ? std::min<size_t>({q_.opt.payload, snap_.udp_payload, cap_})
                                                 : std::min<size_t>(kMaxUdpNoEdns, cap_);
    switch (q_.qtype) {
        case type::AXFR:
        case type::IXFR: return Outcome::refused;
        case type::MAILA:
        case type::MAILB: return Outcome::notimp;
        case type::OPT:
        case type::NXNAME: return Outcome::formerr;  // meta types a query may not ask for (RFC 9824 3.5)
        default: break;
    }
    if (q_.qclass != kClassIn) return Outcome::refused;
    // Sections are written within the transport's limit, leaving room for the OPT record.
    dnssec_ = q_.opt.present && q_.opt.do_bit;

    size_t opt_len = q_.opt.present ? opt_size(q_.opt, cookie::kServerLen) : 0;
    w_.set_cap(limit_ > opt_len ? limit_ - opt_len : 0);
    return Outcome::answer;
}

geo::Location Responder::locate() {
    if (!located_ && snap_.geo) loc_ = select::client_location(*snap_.geo, client_.address, q_.opt);
    located_ = true;
    return loc_;
}

Lookup Responder::lookup(const Zone& z, std::string_view name, unsigned labels) {
    Lookup r;
    unsigned below = labels - z.labels;  // labels under the origin
    // Walk down from the origin: the first missing name ends the walk (wildcard or NXDOMAIN); a name
    // holding NS below the origin is a zone cut.
    for (unsigned drop = below; drop-- > 0;) {
        std::string_view suffix = name.substr(suffix_offset(name, drop));
        Zone::Ref ref = z.find(suffix);
        if (!ref.node) {
            std::string_view encloser = name.substr(suffix_offset(name, drop + 1));
            uint8_t wild[kMaxName + 2];
            wild[0] = 1, wild[1] = '*';
            if (encloser.size() + 2 > sizeof wild) return r;
            std::memcpy(wild + 2, encloser.data(), encloser.size());
            Zone::Ref w = z.find(std::string_view(reinterpret_cast<const char*>(wild), encloser.size() + 2));
            if (w.node) r.kind = LookupKind::wildcard, r.ref = w;
            return r;
        }
        if (ref.has_ns && !(drop == 0 && q_.qtype == type::DS)) {
            r.kind = LookupKind::delegation, r.ref = ref, r.cut = suffix;
            return r;
        }
        if (drop == 0) r.kind = LookupKind::exact, r.ref = ref;
    }
    if (below == 0) r.kind = LookupKind::exact, r.ref = z.find(name);
    if (!r.ref.node) r.kind = LookupKind::nxdomain;
    return r;
}

size_t Responder::begin_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl) {
    if (owner_is_qname) {
        w_.pointer(kHeaderSize);
    } else {
        w_.name(owner);
    }
    if (uint8_t* p = w_.reserve(10)) {
        Writer::put16(p, type);
        Writer::put16(p + 2, kClassIn);
        Writer::put32(p + 4, ttl);
        Writer::put16(p + 8, 0);
    }
    return w_.pos() - 2;
}

void Responder::finish_rr(size_t rdlen_at) {
    if (!w_.overflow()) w_.patch16(rdlen_at, static_cast<uint16_t>(w_.pos() - rdlen_at - 2));
    count(section_);
}

void Responder::write_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, const RData& rd) {
    size_t rdlen_at = begin_rr(owner, owner_is_qname, type, ttl);
    size_t done = 0;
    std::string_view data(rd.wire);
    for (int i = 0; i < rd.names; ++i) {  // names that may be compressed
        size_t at = rd.name_at[i];
        w_.bytes(data.data() + done, at - done);
        size_t n = name_length(data, at);
        w_.name(data.substr(at, n));
        done = at + n;
    }
    w_.bytes(data.data() + done, data.size() - done);
    finish_rr(rdlen_at);
}

void Responder::write_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, const uint8_t* rdata,
                         size_t len) {
    if (owner_is_qname) {  // the common case in one piece: pointer, type, class, TTL, length, data
        if (uint8_t* p = w_.reserve(12 + len)) {
            Writer::put16(p, kCompressionPointer | kHeaderSize);
            Writer::put16(p + 2, type);
            Writer::put16(p + 4, kClassIn);
            Writer::put32(p + 6, ttl);
            Writer::put16(p + 10, static_cast<uint16_t>(len));
            std::memcpy(p + 12, rdata, len);
        }
        count(section_);
        return;
    }
    size_t rdlen_at = begin_rr(owner, owner_is_qname, type, ttl);
    w_.bytes(rdata, len);
    finish_rr(rdlen_at);
}

void Responder::write_name_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl,
                              std::string_view target) {
    size_t rdlen_at = begin_rr(owner, owner_is_qname, type, ttl);
    w_.name(target);
    finish_rr(rdlen_at);
}

void Responder::write_rrset(std::string_view owner, bool owner_is_qname, const RRset& set) {
    for (const auto& rd : set.rdata) write_rr(owner, owner_is_qname, set.type, set.ttl, rd);
    if (wildcard_ && !set.rrsigs.empty() && set.rdata.size() <= online::kMaxRRs) {  // signed at the name asked
        std::string_view rdatas[online::kMaxRRs];
        for (size_t i = 0; i < set.rdata.size(); ++i) rdatas[i] = set.rdata[i].wire;
        return sign_now(*wildcard_, owner, owner_is_qname, set.type, set.ttl, set.ttl, rdatas, set.rdata.size());
    }
    write_rrsigs(owner, owner_is_qname, set.ttl, set.rrsigs);
}

void Responder::write_rrsigs(std::string_view owner, bool owner_is_qname, uint32_t ttl, std::string_view stored) {
    if (!dnssec_) return;
    HostSignatures::each(stored, [&](const uint8_t* rrsig, size_t len) {
        write_rr(owner, owner_is_qname, type::RRSIG, ttl, rrsig, len);
    });
}

void Responder::write_soa(const Zone& z) {
    section_ = 1;
    if (&z == qzone_ && !z.soa_tail.empty()) {  // the origin is in the question: point there
        const auto ptr =
            static_cast<uint16_t>(kCompressionPointer | (kHeaderSize + suffix_offset(q_.qname, q_.labels - z.labels)));
        if (uint8_t* p = w_.reserve(2 + z.soa_tail.size())) {
            Writer::put16(p, ptr);
            std::memcpy(p + 2, z.soa_tail.data(), z.soa_tail.size());  // NOLINT(bugprone-not-null-terminated-result)
            for (uint8_t at : z.soa_tail_ptrs) Writer::put16(p + 2 + at, ptr);
        }
        count(section_);
    } else {
        write_rr(z.origin, false, type::SOA, z.negative_ttl, z.soa.rdata[0]);
    }
    write_rrsigs(z.origin, false, z.negative_ttl, z.soa.rrsigs);
}

void Responder::deny(const Zone& z, std::string_view owner, bool owner_is_qname, online::TypeList& types) {
    uint8_t rdata[online::kNsecMax];
    const size_t len = dnssec_ && z.signer ? online::compact_nsec(owner, types, rdata) : 0;
    if (len == 0) return;
    section_ = 1;
    write_rr(owner, owner_is_qname, type::NSEC, z.negative_ttl, rdata, len);
    std::string_view nsec(reinterpret_cast<const char*>(rdata), len);
    sign_now(z, owner, owner_is_qname, type::NSEC, z.negative_ttl, z.negative_ttl, &nsec, 1);
}

void Responder::sign_now(const Zone& z, std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl,
                         uint32_t original_ttl, std::string_view* rdatas, size_t n) {
    if (!dnssec_) return;
    if (client_.signing && !client_.signing->take(client_.address, cookie_valid())) {
        info_.over_signing_budget = true;  // the server does not send this answer as it is (QueryInfo)
        return;
    }
    online::sign(z, snap_.signed_at, owner, type, original_ttl, rdatas, n, [&](const uint8_t* rrsig, size_t len) {
        write_rr(owner, owner_is_qname, type::RRSIG, ttl, rrsig, len);
    });
}

void Responder::add_glue(const RRset& set) {
    if (w_.overflow()) return;
    section_ = 2;
    for (const auto& rd : set.rdata) {
        size_t at = set.type == type::MX ? 2 : set.type == type::SRV ? 6 : 0;
        if (at >= rd.wire.size()) continue;
        std::string_view target = std::string_view(rd.wire).substr(at, name_length(rd.wire, at));
        const Zone* z = snap_.find_zone(target);
        const Node* n = z ? z->node(target) : nullptr;
        if (!n) continue;
        for (uint16_t t : {type::A, type::AAAA}) {
            const RRset* addr = n->find(t);
            if (!addr) continue;
            for (const auto& a : addr->rdata) {
                size_t before = w_.pos();
                uint16_t before_count = counts_[2];
                write_rr(target, false, t, addr->ttl, a);
                if (w_.overflow()) {  // additional data that does not fit is left out, without TC
                    w_.rewind(before);
                    counts_[2] = before_count;
                    return;
                }
            }
        }
    }
}

// Answers A/AAAA/CNAME/ANY at a load-balanced host. Returns false for NODATA. A hostname endpoint
// makes the answer a CNAME, whose target is returned for the caller to chase.
bool Responder::host_answer(const Zone::Ref& ref, std::string_view owner, bool owner_is_qname,
                            std::string_view* cname_target) {
    const std::byte* plan = ref.plan;
    const auto& h = at<plan::Head>(plan, 0);
    const uint16_t qtype = q_.qtype;
    uint32_t answers = 0;
    int mode = 0;
    if (h.simple) {
        answers = h.answers;
        const auto& a = at<plan::Answers>(plan, answers);
        mode = a.n4[0] + a.n6[0] > 0 || a.cname[0] != 0 ? 0 : 1;  // the healthy ones, else every one
        if (mode == 1) short_ttl_ = true, info_.fail_open = true;
    } else {
        select::Choice c = select::choose(
            plan, [this] { return locate(); }, scope_);
        const plan::Group* g = c.group;
        if (!g) return false;
        if (ref.host == info_.host) {
            info_.group = c.role;
            if (located_) {
                info_.located = loc_.code, info_.located_by = static_cast<uint8_t>(loc_.source);
                info_.located_prefix = loc_.prefix, info_.by_ecs = q_.opt.ecs && q_.opt.ecs_source > 0;
            }
        }
        const bool fallback = c.fallback, fail_open = c.fail_open;
        mode = fail_open ? 1 : 0;
        if (fallback || fail_open) short_ttl_ = true;
        info_.fallback |= fallback;
        info_.fail_open |= fail_open;
        // ANY and CNAME use the A pick, and fall back to AAAA when no entry has A data.
        uint32_t pick = g->pick[qtype == type::AAAA ? 1 : 0][mode];
        if (pick == 0 && qtype != type::A) pick = g->pick[1][mode];
        if (pick == 0) return false;
        const auto& p = at<plan::Pick>(plan, pick);
        const auto* choices = &at<plan::Choice>(plan, pick + sizeof(plan::Pick));
        if (p.count > 1) info_.varies = true;
        uint32_t choice = select::draw(p, choices);
        if (ref.host == info_.host) info_.entry = choices[choice].entry, info_.counter = choices[choice].counter;
        answers = choices[choice].answers;
    }
    const auto& a = at<plan::Answers>(plan, answers);
    uint16_t atype = 0;
    const std::byte* addr = nullptr;
    unsigned count = 0, len = 0;
    if ((qtype == type::A || qtype == type::ANY) && a.n4[mode] > 0) {
        atype = type::A, addr = plan + a.v4(answers, mode), count = a.n4[mode], len = 4;
    } else if ((qtype == type::AAAA || qtype == type::ANY) && a.n6[mode] > 0) {
        atype = type::AAAA, addr = plan + a.v6(answers, mode), count = a.n6[mode], len = 16;
    }
    uint32_t ttl = short_ttl_ ? std::min(a.ttl, kShortTtl) : a.ttl;
    // Its RRSIGs, for the mode's bytes (mode 1 shares mode 0's if equal); made now for a wildcard (at the
    // name) and for a host not signed yet (a start's first snapshot).
    auto signatures = [&](uint16_t type, const char* first, size_t each, size_t n) {  // n RDATAs of `each` bytes
        if (!dnssec_) return;
        const HostBlock& host = *snap_.hosts[static_cast<size_t>(ref.host)];
        const uint64_t key = HostSignatures::key(answers, a.every ? mode : 0, type);
        if (!wildcard_ && !host.sigs.deferred) return write_rrsigs(owner, owner_is_qname, ttl, host.sigs.find(key));
        std::string_view rdatas[online::kMaxRRs];
        for (size_t i = 0; i < n && i < online::kMaxRRs; ++i) rdatas[i] = std::string_view(first + i * each, each);
        sign_now(wildcard_ ? *wildcard_ : snap_.zones[host.zone], owner, owner_is_qname, type, ttl, a.ttl, rdatas, n);
    };
    if (atype != 0) {
        for (unsigned i = 0; i < count; ++i)
            write_rr(owner, owner_is_qname, atype, ttl, reinterpret_cast<const uint8_t*>(addr) + size_t{i} * len, len);
        signatures(atype, reinterpret_cast<const char*>(addr), len, count);
        return true;
    }
    if (a.cname[mode] != 0) {
        const auto* c = reinterpret_cast<const char*>(plan + a.name(answers, mode));
        std::string_view target(c + 1, static_cast<uint8_t>(c[0]));
        write_name_rr(owner, owner_is_qname, type::CNAME, ttl, target);
        signatures(type::CNAME, target.data(), target.size(), 1);
        *cname_target = target;
        return true;
    }
    return false;
}

Outcome Responder::resolve() {
    std::string_view name = q_.qname;
    unsigned labels = q_.labels;
    bool owner_is_qname = true;
    const Zone* zone = snap_.find_zone(name, labels);
    if (!zone) return Outcome::refused;
    qzone_ = zone;
    rflags_ |= flag::AA;
    section_ = 0;
    for (int chain = 0; chain < kMaxCnameChain; ++chain) {
        Lookup l = lookup(*zone, name, labels);
        wildcard_ = l.kind == LookupKind::wildcard ? zone : nullptr;
        if (l.kind == LookupKind::delegation) {
            if (chain > 0) return Outcome::answer;  // the chain leaves our authority: stop there
            rflags_ &= static_cast<uint16_t>(~flag::AA);
            const RRset* ns = l.ref.node->find(type::NS);
            section_ = 1;
            write_rrset(l.cut, false, *ns);
            online::TypeList at_cut;  // an insecure delegation: no DS at the cut (RFC 4035 3.1.4)
            online::types_at(snap_, Zone::Ref{l.ref.node, nullptr, -1, true}, q_.qtype, at_cut);
            deny(*zone, l.cut, l.cut.size() == name.size() && owner_is_qname, at_cut);
            add_glue(*ns);
            return Outcome::delegation;
        }
        if (l.kind == LookupKind::nxdomain) {
            rcode_ = rcode::NXDOMAIN;
            write_soa(*zone);
            if (dnssec_ && zone->signer) {  // RFC 9824: NOERROR, an NSEC saying NXNAME; NXDOMAIN when CO is set
                compact_ = q_.opt.co_bit;
                rcode_ = compact_ ? rcode::NXDOMAIN : rcode::NOERROR;
                online::TypeList nx;
                nx.add(type::NXNAME);
                deny(*zone, name, owner_is_qname, nx);
            }
            return Outcome::nxdomain;
        }
        const Node& node = *l.ref.node;  // read only when the name is not a host
        std::string_view target;
        bool wrote = false;
        if (l.ref.host >= 0 &&
            (q_.qtype == type::A || q_.qtype == type::AAAA || q_.qtype == type::ANY || q_.qtype == type::CNAME)) {
            if (info_.host < 0) {  // the first host of a chain is the one counted
                info_.host = l.ref.host;
                info_.counter = at<plan::Head>(l.ref.plan, 0).counter;
            }
            wrote = host_answer(l.ref, name, owner_is_qname, &target);
        } else if (const RRset* cn = node.find(type::CNAME); cn && q_.qtype != type::CNAME) {
            write_rrset(name, owner_is_qname, *cn);
            target = std::string_view(cn->rdata[0].wire);
            wrote = true;
        } else if (q_.qtype == type::ANY) {
            // RFC 8482: one RRset is enough.
            if (!node.rrsets.empty()) write_rrset(name, owner_is_qname, node.rrsets.front()), wrote = true;
        } else if (const RRset* set = node.find(q_.qtype)) {
            write_rrset(name, owner_is_qname, *set);
            if (set->type == type::NS || set->type == type::MX || set->type == type::SRV) {
                if (!w_.overflow()) add_glue(*set);
            }
            return Outcome::answer;
        }
        if (!wrote) {
            write_soa(*zone);
            online::TypeList present;
            online::types_at(snap_, l.ref, q_.qtype, present);
            deny(*zone, name, owner_is_qname, present);
            return chain == 0 ? Outcome::nodata : Outcome::answer;
        }
        if (target.empty() || q_.qtype == type::CNAME) return Outcome::answer;
        // Chase the CNAME within our zones.
        labels = label_count(target);
        zone = snap_.find_zone(target, labels);
        if (!zone) return Outcome::answer;
        name = target;
        owner_is_qname = false;
    }
    return Outcome::answer;
}

size_t Responder::finish(Outcome outcome) {
    if (outcome == Outcome::dropped) return 0;
    switch (outcome) {
        case Outcome::formerr: rcode_ = rcode::FORMERR; break;
        case Outcome::notimp: rcode_ = rcode::NOTIMP; break;
        case Outcome::refused: rcode_ = rcode::REFUSED; break;
        case Outcome::badvers: ext_rcode_ = rcode::BADVERS; break;
        default: break;
    }
    bool error = outcome == Outcome::formerr || outcome == Outcome::notimp || outcome == Outcome::refused ||
                 outcome == Outcome::badvers;
    if (error) {
        rflags_ &= static_cast<uint16_t>(~flag::AA);
        w_.rewind(question_written_ ? question_end_out_ : kHeaderSize);
        counts_[0] = counts_[1] = counts_[2] = 0;
    }
    bool edns = q_.opt.present && outcome != Outcome::formerr;
    // Additional data that did not fit was already left out (add_glue); an answer or authority
    // section that did not fit leaves only the header, question and OPT, with TC=1.
    if (w_.overflow()) {
        size_t base = question_written_ ? question_end_out_ : kHeaderSize;
        w_.rewind(base);
        counts_[0] = counts_[1] = counts_[2] = 0;
        rflags_ |= flag::TC;
        info_.truncated = true;
    }
    w_.set_cap(cap_);
    const bool cookie = edns && q_.opt.cookie;
    if (cookie) {
        // A valid server cookie proves the client's address (RRL lets it through); the answer carries a fresh
        // one, so it is not cached (its timestamp would age in the cache).
        const uint32_t now_s = static_cast<uint32_t>(std::time(nullptr));
        info_.cookie_valid = cookie_valid();
        info_.varies = true;
        cookie::make_server_cookie(snap_.cookie_secret, q_.opt.client_cookie, client_.address, now_s, server_cookie_);
    }
    if (edns) {
        write_opt(w_, q_.opt, snap_.udp_payload, ext_rcode_, scope_, server_cookie_, cookie::kServerLen, compact_);
        ++counts_[2];
    }
    if (w_.overflow()) return 0;
    uint16_t flags = static_cast<uint16_t>(rflags_ | (rcode_ & flag::kRcodeMask) | (ext_rcode_ & flag::kRcodeMask));
    w_.patch16(2, flags);
    w_.patch16(4, question_written_ ? 1 : 0);
    w_.patch16(6, counts_[0]);
    w_.patch16(8, counts_[1]);
    w_.patch16(10, counts_[2]);
    info_.outcome = outcome;
    info_.rcode = static_cast<uint8_t>(rcode_ | ext_rcode_);
    return w_.pos();
}

}  // namespace

void seed_selection(uint64_t seed) noexcept { select::rng_state = seed ? seed : 0x9e3779b97f4a7c15ULL; }

size_t answer(const Snapshot& snap, const uint8_t* query, size_t len, const Client& client, uint8_t* out, size_t cap,
              QueryInfo* info) noexcept {
    QueryInfo scratch;
    QueryInfo& qi = info ? *info : scratch;
    qi = QueryInfo{};
    Responder r(snap, query, len, client, out, cap, qi);
    return r.run();
}

}  // namespace glbd
