// resolver/wire/query — the messages glbd sends as a client and the responses it reads back: explain's query to
// the snapshot, glbd check's DNSKEY question to a member, the parent's DS, the demo's. One place knows a
// header's layout; the answer path has its own (wire.hpp's Writer, opt.hpp). Allocates: control paths only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/wire/consts.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::wire {

struct QueryOptions {
    uint16_t id = 0;
    bool rd = false;  // glbd asks authoritative servers: no recursion
    bool edns = true;
    uint16_t payload = 1232;  // EDNS UDP payload (the DNS flag day's size)
    bool do_bit = false;
    std::optional<Prefix> client_subnet;  // EDNS Client Subnet (RFC 7871): the network, source prefix its length
};

// A QUERY for `qname` (wire form) of `qtype`, class IN: one question, and an OPT record unless !edns.
std::vector<uint8_t> make_query(std::string_view qname, uint16_t qtype, const QueryOptions& o = {});

// A message's header (RFC 1035 4.1.1), read whole.
struct Header {
    uint16_t id = 0, flags = 0, qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
    [[nodiscard]] uint8_t rcode() const { return rcode_of(flags); }
    [[nodiscard]] uint8_t opcode() const { return opcode_of(flags); }
    [[nodiscard]] bool qr() const { return (flags & flag::QR) != 0; }
    [[nodiscard]] bool aa() const { return (flags & flag::AA) != 0; }
    [[nodiscard]] bool tc() const { return (flags & flag::TC) != 0; }
};
// False when `len` is shorter than a header. Inline: the answer path reads each query's header with it.
inline bool read_header(const uint8_t* msg, size_t len, Header& out) {
    if (len < kHeaderSize) return false;
    out.id = get16(msg), out.flags = get16(msg + 2);
    out.qdcount = get16(msg + 4), out.ancount = get16(msg + 6), out.nscount = get16(msg + 8);
    out.arcount = get16(msg + 10);
    return true;
}

// A header's fields written in place (the message is at least a header long).
inline void set_id(uint8_t* msg, uint16_t id) {
    msg[0] = static_cast<uint8_t>(id >> 8), msg[1] = static_cast<uint8_t>(id);
}
inline void set_arcount(uint8_t* msg, uint16_t n) {
    msg[10] = static_cast<uint8_t>(n >> 8), msg[11] = static_cast<uint8_t>(n);
}
// A response cut to its header and question with TC set (RFC 1035 4.1.1; what RRL's slip sends, RFC 8906's
// shape): the counts of the other sections 0. Returns its new length; a message without one readable question
// keeps its length (and gets TC).
size_t truncate_to_question(uint8_t* msg, size_t len);
// The same message cut to its question with REFUSED (and no AA, no TC): for an answer the server will not give
// now (a TCP client over its signing budget).
size_t refuse_to_question(uint8_t* msg, size_t len);

enum class Section : uint8_t { answer, authority, additional };

// A response's records, section by section, its questions skipped: every offset inside the message.
class ResponseRecords {
public:
    ResponseRecords(const uint8_t* msg, size_t len);
    // The next record and its section; false after the last, or at the first malformed one (then `ok()` is
    // false too).
    bool next(Record& rr, Section& section);
    [[nodiscard]] bool ok() const { return ok_; }

private:
    Header h_;
    Records records_;
    unsigned seen_ = 0;
    bool ok_ = false;
};

// A name that may be compressed (RFC 1035 4.1.4), in lower-case wire form; pointers must point backwards (no
// loops). The position after the name where it stands in the message, or 0 when it is malformed.
size_t read_name(const uint8_t* msg, size_t len, size_t pos, std::string& out);

}  // namespace glbd::wire
