// resolver/online_sign — what answer() signs while answering, with DO in a signed zone (README.md): the NSEC of
// a compact denial (RFC 9824) and a wildcard's answer at the name asked. Inline, for resolver.cpp's one call
// per query; stack buffers only, noexcept (OpenSSL allocates inside a signature).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "resolver/dnssec/sign.hpp"
#include "resolver/snapshot/snapshot.hpp"
#include "resolver/wire/consts.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::online {

// At most this many RRs in a set signed while answering (a larger one goes unsigned).
inline constexpr size_t kMaxRRs = 256;

// The types an NSEC lists (RRSIG and NSEC are added by compact_nsec()).
struct TypeList {
    static constexpr unsigned kMax = 40;
    uint16_t t[kMax];
    unsigned n = 0;
    void add(uint16_t type) noexcept { t[n < kMax ? n++ : kMax - 1] = type; }
};

// A name in wire form lower-cased into `out` (kMaxName bytes): the canonical form (length bytes are below 64,
// never a letter).
inline void lower(std::string_view name, uint8_t* out) noexcept {
    for (size_t i = 0; i < name.size(); ++i) out[i] = wire::lower(static_cast<uint8_t>(name[i]));
}

// The RRTYPE bitmap of RFC 4034 4.1.2 for `types` (sorted here), into `out`; its length.
inline size_t type_bitmap(uint16_t* types, unsigned n, uint8_t* out) noexcept {
    std::sort(types, types + n);
    size_t len = 0;
    for (unsigned i = 0; i < n;) {
        const auto window = static_cast<uint8_t>(types[i] >> 8);
        uint8_t* bits = out + len + 2;
        std::memset(bits, 0, 32);
        unsigned used = 0;
        for (; i < n && (types[i] >> 8) == window; ++i) {
            const unsigned low = types[i] & 0xffu;
            bits[low / 8] = static_cast<uint8_t>(bits[low / 8] | (0x80u >> (low % 8)));
            used = std::max(used, low / 8 + 1);
        }
        out[len] = window, out[len + 1] = static_cast<uint8_t>(used);
        len += 2 + used;
    }
    return len;
}

// Room for the RDATA of any NSEC compact_nsec() writes: the next name and a window of 32 bytes for each type.
inline constexpr size_t kNsecMax = 2 + wire::kMaxName + size_t{TypeList::kMax} * 34;

// A compact denial's NSEC RDATA at `owner` into `out` (kNsecMax bytes): the next name `\000.owner`, the
// owner's immediate successor, so that the NSEC covers the owner alone; then `types` with RRSIG and NSEC.
// 0 when there is none to give (a name too long for a successor, or too many types).
inline size_t compact_nsec(std::string_view owner, TypeList& types, uint8_t* out) noexcept {
    if (types.n + 2 > TypeList::kMax || owner.size() + 2 > wire::kMaxName) return 0;
    types.add(wire::type::RRSIG), types.add(wire::type::NSEC);
    out[0] = 1, out[1] = 0;
    lower(owner, out + 2);
    return 2 + owner.size() + type_bitmap(types.t, types.n, out + 2 + owner.size());
}

// The types at a name an NSEC lists: its node's, and a host's address types but the one asked.
inline void types_at(const Snapshot& snap, const Zone::Ref& ref, uint16_t qtype, TypeList& types) noexcept {
    if (ref.node) {
        for (const auto& set : ref.node->rrsets) types.add(set.type);
    }
    if (ref.host >= 0) {
        const uint8_t has = snap.hosts[static_cast<size_t>(ref.host)]->sigs.types;
        if ((has & HostSignatures::kHasA) && qtype != wire::type::A) types.add(wire::type::A);
        if ((has & HostSignatures::kHasAaaa) && qtype != wire::type::AAAA) types.add(wire::type::AAAA);
    }
}

// Signs the RRset (`owner`, `type`, `original_ttl`, the `n` RDATAs at `rdatas`, reordered) with each key of
// `z` that signs its type, in the window of signatures made at `signed_at`; write(rrsig, len) for each.
template <class Write>
void sign(const Zone& z, uint32_t signed_at, std::string_view owner, uint16_t type, uint32_t original_ttl,
          std::string_view* rdatas, size_t n, Write&& write) noexcept {
    if (!z.signer || owner.size() > wire::kMaxName || n > kMaxRRs) return;
    uint8_t canonical[wire::kMaxName];
    lower(owner, canonical);
    const std::string_view signed_owner(reinterpret_cast<const char*>(canonical), owner.size());
    const dnssec::ZoneSigner& signer = *z.signer;
    uint8_t sig[18 + wire::kMaxName + dnssec::Key::kSignatureSize];
    for (const dnssec::Key* key : signer.signers(type)) {
        size_t len = dnssec::sign_set(*key, signer.origin(), signed_owner, type, original_ttl, rdatas, n,
                                      signer.inception(signed_at), signer.expiration(signed_at), sig, sizeof sig);
        if (len) write(sig, len);
    }
}

}  // namespace glbd::online
