// resolver/wire/consts — the protocol's numbers, each named once (as Knot's libknot/consts.h and
// gdnsd's dnswire.h): record types, classes, opcodes, header flags, response codes, EDNS options and the
// limits on names. Every layer reads a message's fields through these names, never through bare numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace glbd::wire {

namespace type {
constexpr uint16_t A = 1, NS = 2, CNAME = 5, SOA = 6, PTR = 12, MX = 15, TXT = 16, AAAA = 28, SRV = 33, DNAME = 39,
                   OPT = 41, DS = 43, RRSIG = 46, NSEC = 47, DNSKEY = 48, NSEC3 = 50, NSEC3PARAM = 51, CDS = 59,
                   CDNSKEY = 60, NXNAME = 128, TSIG = 250, IXFR = 251, AXFR = 252, MAILB = 253, MAILA = 254, ANY = 255,
                   CAA = 257;
}  // namespace type

constexpr uint16_t kClassIn = 1;
constexpr uint16_t kClassAny = 255;  // TSIG records (RFC 8945 4.2)

// OPCODE, the header's bits 11-14 (RFC 1035 4.1.1, RFC 1996).
namespace opcode {
constexpr uint8_t QUERY = 0, NOTIFY = 4, UPDATE = 5;
}  // namespace opcode

// The header's flag word (the second 16 bits), without the opcode and rcode.
namespace flag {
constexpr uint16_t QR = 0x8000, AA = 0x0400, TC = 0x0200, RD = 0x0100, RA = 0x0080, AD = 0x0020, CD = 0x0010;
constexpr uint16_t kOpcodeMask = 0x7800;
constexpr unsigned kOpcodeShift = 11;
constexpr uint16_t kRcodeMask = 0x000f;
}  // namespace flag

inline uint8_t opcode_of(uint16_t flags) {
    return static_cast<uint8_t>((flags & flag::kOpcodeMask) >> flag::kOpcodeShift);
}
inline uint16_t opcode_bits(uint8_t opcode) { return static_cast<uint16_t>(opcode << flag::kOpcodeShift); }
inline uint8_t rcode_of(uint16_t flags) { return static_cast<uint8_t>(flags & flag::kRcodeMask); }

// Response codes: the header's 4 bits, and with EDNS 8 more in the OPT record's TTL (RFC 6891 6.1.3).
namespace rcode {
constexpr uint8_t NOERROR = 0, FORMERR = 1, SERVFAIL = 2, NXDOMAIN = 3, NOTIMP = 4, REFUSED = 5, YXDOMAIN = 6,
                  YXRRSET = 7, NXRRSET = 8, NOTAUTH = 9, NOTZONE = 10;
constexpr uint16_t BADVERS = 16;
}  // namespace rcode
// "NOERROR", "NXDOMAIN", ... (IANA's mnemonics for 0..10 and 16); "RCODE<n>" for the others. Allocates:
// for control paths (metrics, explanations), never the answer path.
std::string rcode_name(uint16_t rcode);

// EDNS (RFC 6891): the option codes glbd reads or writes, and the OPT TTL's DO bit (RFC 3225).
namespace edns {
constexpr uint16_t kOptionEcs = 8;                    // RFC 7871
constexpr uint16_t kOptionCookie = 10;                // RFC 7873
constexpr uint32_t kDoBit = 0x8000;                   // in the OPT record's TTL
constexpr uint32_t kCoBit = 0x4000;                   // Compact Answers OK (RFC 9824), beside DO
constexpr uint16_t kFamilyIpv4 = 1, kFamilyIpv6 = 2;  // ECS address families (IANA address family numbers)
constexpr size_t kClientCookieLen = 8;                // RFC 7873 4.1
}  // namespace edns

// DNSSEC's numbers (RFC 4034 2.1.1, IANA's registries): a DNSKEY's flags and the algorithms glbd signs with.
namespace dnskey {
constexpr uint16_t kFlagZone = 0x0100, kFlagRevoke = 0x0080, kFlagSep = 0x0001;
constexpr uint8_t kProtocol = 3;  // the only value (RFC 4034 2.1.2)
}  // namespace dnskey
namespace ds {
constexpr uint8_t kDigestSha256 = 2;  // RFC 4509
}  // namespace ds
namespace algorithm {
constexpr uint8_t ECDSAP256SHA256 = 13, ED25519 = 15;
}  // namespace algorithm

// Sizes (RFC 1035 2.3.4, 3.3, 4.1.1).
constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxName = 255;                  // a name in wire form
constexpr size_t kMaxLabel = 63;                  // one label
constexpr size_t kMaxCharString = 255;            // one <character-string> (a TXT record's strings)
constexpr uint16_t kMaxUdpNoEdns = 512;           // a UDP message without EDNS
constexpr uint16_t kCompressionPointer = 0xc000;  // a label's top two bits: the rest is an offset (4.1.4)
constexpr uint16_t kMaxPointerOffset = 0x3fff;    // the farthest those 14 bits reach

// The mnemonic of a type ("A", "AAAA", ...; "TYPE<n>" otherwise, RFC 3597), and back for the types named here.
std::string type_name(uint16_t type);
std::optional<uint16_t> type_from_name(std::string_view name);

}  // namespace glbd::wire
