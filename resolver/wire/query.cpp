#include "resolver/wire/query.hpp"

#include "resolver/wire/builder.hpp"

namespace glbd::wire {

std::vector<uint8_t> make_query(std::string_view qname, uint16_t qtype, const QueryOptions& o) {
    Builder q;
    q.u16(o.id), q.u16(static_cast<uint16_t>(opcode_bits(opcode::QUERY) | (o.rd ? flag::RD : 0)));
    q.u16(1), q.u16(0), q.u16(0), q.u16(o.edns ? 1 : 0);  // one question; the OPT record in the additional section
    q.bytes(qname), q.u16(qtype), q.u16(kClassIn);
    if (!o.edns) return std::move(q.vec());
    q.u8(0), q.u16(type::OPT), q.u16(o.payload);  // the root's OPT (RFC 6891 6.1.2): payload size as its class
    q.u32(o.do_bit ? edns::kDoBit : 0);           // extended rcode 0, version 0, the DO bit
    size_t rdata = q.begin_rdata();
    if (o.client_subnet) {
        const Prefix& p = *o.client_subnet;
        const size_t n = (p.length + 7u) / 8;  // the address truncated to its prefix (RFC 7871 6)
        q.u16(edns::kOptionEcs), q.u16(static_cast<uint16_t>(4 + n));
        q.u16(p.address.family == 4 ? edns::kFamilyIpv4 : edns::kFamilyIpv6);
        q.u8(p.length), q.u8(0);  // source prefix, scope 0
        Address masked = p.address;
        for (unsigned bit = p.length; bit < n * 8; ++bit)
            masked.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
        q.bytes(std::string_view(reinterpret_cast<const char*>(masked.bytes.data()), n));
    }
    q.end_rdata(rdata);
    return std::move(q.vec());
}

size_t truncate_to_question(uint8_t* msg, size_t len) {
    Header h;
    if (!read_header(msg, len, h)) return len;
    size_t end = kHeaderSize;
    if (h.qdcount == 1) {
        end = skip_name(msg, len, kHeaderSize);
        if (end == 0 || end + 4 > len) return len;
        end += 4;
    }
    const uint16_t flags = h.flags | flag::TC;
    msg[2] = static_cast<uint8_t>(flags >> 8), msg[3] = static_cast<uint8_t>(flags);
    for (size_t i = 6; i < kHeaderSize; ++i) msg[i] = 0;  // ANCOUNT, NSCOUNT, ARCOUNT
    return end;
}

size_t refuse_to_question(uint8_t* msg, size_t len) {
    Header h;
    if (!read_header(msg, len, h)) return len;
    const size_t end = truncate_to_question(msg, len);
    const auto flags = static_cast<uint16_t>((h.flags & ~(flag::TC | flag::AA | flag::kRcodeMask)) | rcode::REFUSED);
    msg[2] = static_cast<uint8_t>(flags >> 8), msg[3] = static_cast<uint8_t>(flags);
    return end;
}

ResponseRecords::ResponseRecords(const uint8_t* msg, size_t len) : records_(msg, len, 0) {
    if (!read_header(msg, len, h_)) return;
    size_t pos = skip_questions(msg, len, kHeaderSize, h_.qdcount);
    records_ = Records(msg, len, pos);
    ok_ = pos != 0;
}

bool ResponseRecords::next(Record& rr, Section& section) {
    const unsigned total = unsigned{h_.ancount} + h_.nscount + h_.arcount;
    if (!ok_ || seen_ >= total) return false;
    if (!records_.next(rr)) return ok_ = false;
    section = seen_ < h_.ancount                ? Section::answer
              : seen_ < h_.ancount + h_.nscount ? Section::authority
                                                : Section::additional;
    ++seen_;
    return true;
}

size_t read_name(const uint8_t* msg, size_t len, size_t pos, std::string& out) {
    out.clear();
    size_t after = 0;    // where the name ends in the message: after its first pointer, or its root label
    size_t limit = pos;  // each pointer points before the last one's target (so they cannot loop)
    while (true) {
        if (pos >= len) return 0;
        uint8_t l = msg[pos];
        if ((l & 0xc0) == 0xc0) {
            if (pos + 2 > len) return 0;
            size_t to = get16(msg + pos) & ~kCompressionPointer;
            if (!after) after = pos + 2;
            if (to >= limit) return 0;
            pos = limit = to;
            continue;
        }
        if (l > kMaxLabel) return 0;
        if (pos + 1 + l > len || out.size() + 1 + l + 1 > kMaxName) return 0;
        out += static_cast<char>(l);
        for (size_t i = 0; i < l; ++i) out += static_cast<char>(lower(msg[pos + 1 + i]));
        if (l == 0) return after ? after : pos + 1;
        pos += 1 + l;
    }
}

}  // namespace glbd::wire
