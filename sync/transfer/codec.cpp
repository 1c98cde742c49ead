#include "sync/transfer/codec.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <charconv>

#include "resolver/base/number.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::sync {

namespace {

// A TXT record's character-strings, each handed to `f`; false when one runs past the record.
template <class F>
bool each_string(const uint8_t* m, const wire::Record& rr, F&& f) {
    for (size_t p = rr.rdata; p < rr.end();) {
        size_t n = m[p];
        if (p + 1 + n > rr.end()) return false;
        f(std::string_view(reinterpret_cast<const char*>(m + p + 1), n));
        p += 1 + n;
    }
    return true;
}

// "have=cluster/instance@version/incarnation" into `have` (a malformed number reads as 0).
void read_have(std::string_view v, std::map<std::string, Held>& have) {
    size_t at = v.rfind('@');
    if (v.substr(0, kHave.size()) != kHave || at == std::string_view::npos || at < kHave.size()) return;
    Held h;
    std::string_view numbers = v.substr(at + 1);
    auto r = std::from_chars(numbers.data(), numbers.data() + numbers.size(), h.version);
    if (r.ptr < numbers.data() + numbers.size() && *r.ptr == '/') {
        std::from_chars(r.ptr + 1, numbers.data() + numbers.size(), h.incarnation);
    }
    have[std::string(v.substr(kHave.size(), at - kHave.size()))] = h;
}

// "nonce=" and 16 random hex digits: two requests alike in all else, signed in the same second (TSIG's time),
// still differ in their MAC, so that a server that refuses a MAC seen before (a replay) never refuses a real
// one. Their random IDs alone collided: in a fleet of 100, NOTIFYs and pulls holding the same versions were
// refused as replays about once in 65,536 pairs (and the puller reported a key mismatch).
std::string nonce() {
    uint64_t n = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&n), sizeof n);
    std::string out(kNonce);
    for (int shift = 60; shift >= 0; shift -= 4) out += "0123456789abcdef"[(n >> shift) & 15];
    return out;
}

}  // namespace

bool parse_transfer_answers(const uint8_t* m, size_t len, TxtViews& txts, int& soas, uint32_t& serial) {
    wire::Header h;
    if (!wire::read_header(m, len, h)) return false;
    size_t start = wire::skip_questions(m, len, wire::kHeaderSize, h.qdcount);
    wire::Records records(m, len, start);
    wire::Record rr;
    for (unsigned i = 0; i < h.ancount; ++i) {
        if (!records.next(rr)) return false;
        const size_t rd = rr.rdata, pos = rr.end();
        const uint16_t type = rr.type;
        if (type == wire::type::SOA) {
            size_t p = wire::skip_name(m, pos, rd);
            p = p ? wire::skip_name(m, pos, p) : 0;
            if (p == 0 || p + 20 > pos) return false;
            serial = wire::get32(m + p);
            ++soas;
        } else if (type == wire::type::TXT) {
            if (!each_string(m, rr, [&](std::string_view v) { txts.strings.push_back(v); })) return false;
            txts.ends.push_back(txts.strings.size());
        }
    }
    return true;
}

bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                            uint32_t& serial) {
    TxtViews views;
    if (!parse_transfer_answers(m, len, views, soas, serial)) return false;
    for (size_t i = 0; i < views.size(); ++i) {
        auto rec = views[i];
        txts.emplace_back(rec.begin(), rec.end());
    }
    return true;
}

bool parse_sync_request(const uint8_t* m, size_t len, SyncRequest& out) {
    wire::Header h;
    if (!wire::read_header(m, len, h)) return false;
    out = SyncRequest{};
    out.id = h.id;
    out.opcode = h.opcode();
    if (h.qr() || h.qdcount != 1) return false;
    if (out.opcode != wire::opcode::QUERY && out.opcode != wire::opcode::NOTIFY) return false;
    uint8_t qname[wire::kMaxName];
    size_t qname_len = 0;
    size_t pos = wire::read_plain_name(m, len, wire::kHeaderSize, qname, &qname_len);
    if (pos == 0 || std::string_view(reinterpret_cast<const char*>(qname), qname_len) != sync_zone_wire()) return false;
    pos += wire::kHeaderSize;
    if (pos + 4 > len) return false;
    out.qtype = wire::get16(m + pos), out.qclass = wire::get16(m + pos + 2);
    wire::Records records(m, len, pos + 4);
    const unsigned an = h.ancount, ns = h.nscount, ar = h.arcount;
    wire::Record rr;
    for (unsigned i = 0; i < an + ns + ar; ++i) {
        if (!records.next(rr)) return false;
        if (i >= an && i < an + ns && ns == 1 && out.qtype == wire::type::IXFR && rr.type == wire::type::SOA) {
            size_t p = wire::skip_name(m, rr.end(), rr.rdata);  // MNAME, RNAME, then the serial
            p = p ? wire::skip_name(m, rr.end(), p) : 0;
            if (p != 0 && p + 20 == rr.end()) out.known_serial = wire::get32(m + p);
        } else if (i >= an + ns && rr.type == wire::type::TXT) {
            bool ok = each_string(m, rr, [&](std::string_view v) {
                if (v == kOwnOnly) out.own_only = true;
                if (v == kTakesParts) out.takes_parts = true;
                read_have(v, out.have);
            });
            if (!ok) return false;
        }
    }
    return true;
}

std::vector<uint8_t> error_response(const SyncRequest& req, uint8_t rcode) {
    Message m(req.id, static_cast<uint16_t>(wire::flag::QR | wire::opcode_bits(req.opcode) | rcode));
    m.question(req.qtype, req.qclass);
    return m.finish();
}

std::vector<uint8_t> sync_request(bool notify, uint32_t generation, std::vector<std::string> have, bool relay) {
    uint16_t id = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&id), sizeof id);  // on failure, 0: the ID is not security
    // NOTIFY is sent with AA (RFC 1996 3.7).
    Message m(id, notify ? static_cast<uint16_t>(wire::opcode_bits(wire::opcode::NOTIFY) | wire::flag::AA) : 0);
    m.question(notify ? wire::type::SOA : wire::type::IXFR);
    std::vector<std::string> strings{nonce()};
    if (!notify) {
        m.soa(generation, Message::Section::authority);
        strings.emplace_back(kTakesParts);
        if (!relay) strings.emplace_back(kOwnOnly);
        strings.insert(strings.end(), std::make_move_iterator(have.begin()), std::make_move_iterator(have.end()));
    }
    m.txt(kSyncZone, strings, Message::Section::additional);
    return m.finish();
}

size_t beat_record_bytes(const std::vector<std::string>& strings) {
    size_t bytes = 7 + 10;  // the owner (`_glbd.`), type, class, TTL, RDLENGTH
    for (const auto& str : strings) bytes += 1 + str.size();
    return bytes;
}

std::vector<uint8_t> beat_message(uint16_t id, const Beat& header, const std::vector<std::vector<std::string>>& origins,
                                  size_t budget, size_t* dropped) {
    Message m(id, static_cast<uint16_t>(wire::opcode_bits(wire::opcode::NOTIFY) | wire::flag::AA));
    m.question(wire::type::SOA);
    std::vector<std::string> head = encode_header(header.from);
    head.push_back("beat=" + std::to_string(header.seq));
    head.push_back("echo=" + std::to_string(header.echo));
    head.push_back("held=" + std::to_string(header.held_ms));
    if (!header.reach.empty()) head.push_back("reach=" + join_reach(header.reach));  // older readers skip it
    m.txt(kSyncZone, head);
    size_t left_out = 0;
    for (const auto& rec : origins) {
        const size_t bytes = beat_record_bytes(rec);
        if (m.size() + bytes > budget) {
            ++left_out;
            continue;
        }
        m.txt(kSyncZone, rec);
    }
    if (dropped) *dropped = left_out;
    return m.finish();
}

bool parse_beat(const uint8_t* m, size_t len, Beat& out, std::string& error) {
    out = Beat{};
    SyncRequest req;
    if (!parse_sync_request(m, len, req) || req.opcode != wire::opcode::NOTIFY) {
        error = "not a NOTIFY for _glbd.";
        return false;
    }
    TxtViews txts;  // views into the message, read where they lie (a beat names every origin its sender holds)
    int soas = 0;
    uint32_t serial = 0;
    if (!parse_transfer_answers(m, len, txts, soas, serial)) {
        error = "malformed records";
        return false;
    }
    if (txts.size() == 0 || txts[0].empty() || txts[0][0] != "glbd-sync=1") {
        error = "no beat header";
        return false;
    }
    bool has_seq = false;
    for (std::string_view str : txts[0]) {
        auto eq = str.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view k = str.substr(0, eq), v = str.substr(eq + 1);
        if (k == "reach") {
            if (!parse_reach(v, out.reach)) {
                error = "bad reach";
                return false;
            }
            continue;
        }
        uint64_t* field = k == "beat" ? &out.seq : k == "echo" ? &out.echo : k == "held" ? &out.held_ms : nullptr;
        if (!field) continue;
        if (!parse_unsigned(v, *field)) {
            error = "bad " + std::string(k);
            return false;
        }
        has_seq |= k == "beat";
    }
    if (!has_seq || out.seq == 0) {
        error = "no beat number";
        return false;
    }
    Decoder d;
    for (size_t i = 0; i < txts.size(); ++i) {
        if (!d.add(txts[i], out.reports)) {
            error = d.error();
            return false;
        }
    }
    d.finish(out.reports);
    out.from = d.from();
    for (const auto& r : out.reports) {
        if (r.has_data || !r.state.hosts.empty() || !r.state.records.empty() || !r.state.overrides.empty() ||
            !r.state.forgotten.empty() || !r.state.checks.empty() || !r.state.outside.empty()) {
            error = "a beat carries data (" + r.state.origin() + ")";
            return false;
        }
    }
    if (out.from.empty()) {
        error = "no sender";
        return false;
    }
    return true;
}

// ---- the `_glbd.` TXT records: reports as key=value strings (docs/sync.md)
namespace {
std::string kv(std::string_view k, std::string_view v) { return std::string(k).append("=").append(v); }
std::string kv(std::string_view k, uint64_t v) { return std::string(k).append("=").append(std::to_string(v)); }

}  // namespace

namespace {
// Outside verdicts (older decoders skip them): a record per cluster probed, its failures going on in records
// marked more=1 past kMaxRecordBytes.
void encode_outside(const OutsideMap& outside, std::vector<std::vector<std::string>>& out) {
    for (const auto& [cluster, v] : outside) {
        std::vector<std::string> rec{kv("outside", cluster), kv("probed", v.probed)};
        size_t bytes = 0;
        for (const auto& [host, ep] : v.failing) {
            std::string item = "fail=" + host + ' ' + ep.str();
            if (bytes + item.size() + 1 > kMaxRecordBytes) {
                out.push_back(std::move(rec));
                rec = {kv("outside", cluster), "more=1"};
                bytes = 0;
            }
            bytes += item.size() + 1;
            rec.push_back(std::move(item));
        }
        out.push_back(std::move(rec));
    }
}

// A static record: "zone=NAME type=TXT ttl=60" and its data, each string as "d=" and (past 250 bytes of it)
// "d+=" pieces, so that no character-string passes 255 bytes. Older decoders skip the record.
void encode_record(const ZoneRecord& z, std::vector<std::vector<std::string>>& out) {
    constexpr size_t kPiece = 250;
    std::vector<std::string> rec{kv("zone", z.name), kv("type", wire::type_name(z.type)), kv("ttl", z.ttl)};
    for (const auto& d : z.data) {
        rec.push_back("d=" + d.substr(0, kPiece));
        for (size_t at = kPiece; at < d.size(); at += kPiece) rec.push_back("d+=" + d.substr(at, kPiece));
    }
    out.push_back(std::move(rec));
}
}  // namespace

void encode_report(const Report& r, std::vector<std::vector<std::string>>& out) {
    encode_report(r.state, r.state.heartbeat, r.age_ms, r.has_data, out);
}

std::vector<std::string> origin_fields(const InstanceState& s, uint64_t heartbeat, uint64_t age_ms) {
    return {kv("origin", s.origin()), kv("inc", s.incarnation), kv("version", s.version), kv("heartbeat", heartbeat),
            kv("age", age_ms)};
}

void encode_report(const InstanceState& s, uint64_t heartbeat, uint64_t age_ms, bool has_data,
                   std::vector<std::vector<std::string>>& out) {
    out.push_back(origin_fields(s, heartbeat, age_ms));
    if (!has_data) {
        out.back().emplace_back(kNoData);
        return;
    }
    if (s.base_version && s.base_version < s.version) out.back().push_back(kv("base", s.base_version));
    if (s.location) out.back().push_back("loc=" + format_location(*s.location));
    if (s.probes_outside) out.back().emplace_back("outside=1");                    // older decoders skip it
    if (!s.group.empty()) out.back().push_back(kv("group", s.group));              // older decoders skip it
    if (!s.reach.empty()) out.back().push_back(kv("reach", join_reach(s.reach)));  // so do they this
    for (const auto& [zone, id] : s.dnskeys) out.back().push_back(kv("dnskey", format_zone_keys(zone, id)));
    // Health checks (older decoders skip them): "check=N" and format_check's text in pieces of at most 240
    // bytes, "probe=" then "probe+=", so that no character-string passes 255 bytes.
    for (size_t i = 0; i < s.checks.size(); ++i) {
        constexpr size_t kPiece = 240;  // and "probe+=" before it: within a character-string's 255 bytes
        const std::string text = format_check(s.checks[i]);
        std::vector<std::string> rec{kv("check", i + 1), "probe=" + text.substr(0, kPiece)};
        for (size_t at = kPiece; at < text.size(); at += kPiece) rec.push_back("probe+=" + text.substr(at, kPiece));
        out.push_back(std::move(rec));
    }
    for (const auto& h : s.hosts) {
        std::vector<std::string> rec{kv("host", h.host)};
        if (h.ttl != kUnwrittenTtl) rec.push_back(kv("ttl", h.ttl));
        if (!h.entry.empty()) rec.push_back(kv("entry", h.entry));  // older decoders skip it
        if (h.check) rec.push_back(kv("check", h.check));           // and this
        if (h.load_balancing) {
            rec.push_back(kv("weight", h.load_balancing->weight));
            if (!h.load_balancing->geo.empty()) rec.push_back(kv("geo", h.load_balancing->geo));
            if (h.load_balancing->default_geo) rec.push_back("default=1");
        }
        // A record stays far below the 65,535 bytes a TXT record can hold: a host with many endpoints goes
        // on in further records for the same host ("more=1"), which the decoder appends.
        size_t bytes = 0;
        for (const auto& ep : h.endpoints) {
            std::string item = "ep=";
            ep.target.append_to(item);
            item += ep.healthy ? " up" : " down";
            if (bytes + item.size() + 1 > kMaxRecordBytes) {
                out.push_back(std::move(rec));
                rec = {kv("host", h.host), "more=1"};
                if (!h.entry.empty()) rec.push_back(kv("entry", h.entry));
                bytes = 0;
            }
            bytes += item.size() + 1;
            rec.push_back(std::move(item));
        }
        out.push_back(std::move(rec));
    }
    for (const auto& z : s.records) encode_record(z, out);
    encode_outside(s.outside, out);
    for (const auto& [target, e] : s.overrides) {
        out.push_back({kv("override", target), kv("state", state_name(e.state)), kv("at", e.at_ms)});
    }
    for (const auto& [origin, t] : s.forgotten) out.push_back({kv("forget", format_forgotten(origin, t))});
    if (s.active_groups.at_ms) {  // "active-groups=a&&b" (or "active-groups=" for none), as the TXT joins them
        out.push_back({kv("active-groups", join_groups(s.active_groups.groups)), kv("at", s.active_groups.at_ms)});
        if (s.active_groups.cleared) out.back().emplace_back("clear=1");  // older readers: an empty set
    }
}

namespace {
// `records` (the first: the origin record) as EncodedData.
std::shared_ptr<const EncodedData> encoded(const std::vector<std::vector<std::string>>& records) {
    wire::Builder fields, rdata;
    for (size_t i = kOriginFields; i < records[0].size(); ++i) fields.text(records[0][i]);
    auto out = std::make_shared<EncodedData>();
    out->records.reserve(records.size() - 1);
    for (size_t r = 1; r < records.size(); ++r) {
        for (const auto& str : records[r]) rdata.text(str);
        out->records.push_back({rdata.size(), records[r][0].rfind("host=", 0) == 0});
    }
    out->origin_fields = fields.view(), out->rdata = rdata.view();
    return out;
}
}  // namespace

std::shared_ptr<const EncodedData> encode_data(const InstanceState& s) {
    std::vector<std::vector<std::string>> records;
    encode_report(s, 0, 0, true, records);
    return encoded(records);
}

std::shared_ptr<const EncodedData> encode_outside_data(const InstanceState& s) {
    std::vector<std::vector<std::string>> records{origin_fields(s, 0, 0)};
    records[0].emplace_back(kOutsidePart);
    records[0].push_back(kv("base", s.base()));
    encode_outside(s.outside, records);
    return encoded(records);
}

std::vector<std::string> encode_header(const std::string& from) { return {"glbd-sync=1", kv("from", from)}; }

std::vector<std::vector<std::string>> encode(const std::string& from, const std::vector<Report>& reports) {
    std::vector<std::vector<std::string>> out;
    out.push_back(encode_header(from));
    for (const auto& r : reports) encode_report(r, out);
    return out;
}

}  // namespace glbd::sync
