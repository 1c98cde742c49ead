// resolver/dnssec/sign — an RRset's RRSIG (RFC 4034 section 3), made with a zone's key (README.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/dnssec/keys.hpp"
#include "resolver/wire/consts.hpp"

namespace glbd::dnssec {

// The RRset to sign: names in uncompressed, lower-cased wire form (RFC 4034 6.2's canonical form; glbd's own
// RDATA already has its names lower-cased), class IN.
struct RRset {
    std::string_view owner;
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::vector<std::string_view> rdatas;  // in any order; put in canonical order (6.3) and deduplicated
};

// The RRSIG RDATA (wire) over `set` by `key` for the zone `signer` (wire), valid from `inception` to
// `expiration` (seconds since the epoch, taken modulo 2^32 as RFC 4034 3.1.5 says); "" when the key cannot
// sign. Allocates: for the control and signer threads, never the query path.
std::string sign(const Key& key, std::string_view signer, const RRset& set, uint32_t inception, uint32_t expiration);

// For the query path: the RRSIG RDATA over the RRset (`owner`, `type`, `ttl`, the `n` RDATAs at `rdatas`,
// sorted here into canonical order, names in canonical form) by `key` for the zone `signer`, written to `out`
// (room for `cap` bytes). Returns its length, or 0 when the signed data does not fit kOnlineData bytes or the
// key cannot sign. noexcept, no allocation of glbd's own (OpenSSL allocates inside the signature).
inline constexpr size_t kOnlineData = 16384;
size_t sign_set(const Key& key, std::string_view signer, std::string_view owner, uint16_t type, uint32_t ttl,
                std::string_view* rdatas, size_t n, uint32_t inception, uint32_t expiration, uint8_t* out,
                size_t cap) noexcept;

// The validity and each key's algorithm and tag, as one string: what signatures made with `keys` depend on.
std::string signing_id(const std::vector<std::shared_ptr<const Key>>& keys, uint32_t validity);

// One zone's keys and what each signs (README.md): the DNSKEY RRset by every KSK or CSK, every other RRset by
// every ZSK (by the KSKs or CSKs when there is no ZSK). Immutable once made; the building threads share it.
class ZoneSigner {
public:
    // `origin` in wire form, lower case; `validity` in seconds (conf: 2 h to 366 d).
    ZoneSigner(std::string origin, std::vector<std::shared_ptr<const Key>> keys, uint32_t validity);

    // The RRSIG RDATAs over `set`, one per key that signs its type, made at `now` (seconds since the
    // epoch): inception an hour before (a resolver whose clock is behind still validates), expiration
    // `validity` after. Allocates.
    [[nodiscard]] std::vector<std::string> sign(const RRset& set, uint32_t now) const;
    // When signatures made at `made` are made again: half their validity gone, so that a signature served
    // is always valid for at least half of it (far above any TTL glbd gives).
    [[nodiscard]] uint32_t refresh_at(uint32_t made) const { return made + validity_ / 2; }
    // The window of a signature made at `made`.
    [[nodiscard]] uint32_t inception(uint32_t made) const { return made - 3600; }
    [[nodiscard]] uint32_t expiration(uint32_t made) const { return made + validity_; }
    // The keys that sign an RRset of `type`: the KSKs for DNSKEY, CDS and CDNSKEY (RFC 7344 4.1: a key the
    // parent's DS points at) and for all when there is no ZSK, else the ZSKs.
    [[nodiscard]] const std::vector<const Key*>& signers(uint16_t type) const {
        return signers_[type == wire::type::DNSKEY || type == wire::type::CDS || type == wire::type::CDNSKEY
                            ? kKeySets
                            : kAnswers];
    }
    // The DNSKEY RDATAs of every key, the RRset published at the apex.
    [[nodiscard]] std::vector<std::string> dnskeys() const;
    // What the parent's DS should be (RFC 7344, RFC 8078): the CDS (SHA-256) and CDNSKEY RDATAs of every KSK
    // or CSK, published at the apex for a parent that automates its DS.
    [[nodiscard]] std::vector<std::string> cds() const;
    [[nodiscard]] std::vector<std::string> cdnskeys() const;
    // The origin, the validity and each key's algorithm and tag: signatures cached under another id
    // were made by other keys.
    [[nodiscard]] const std::string& id() const { return id_; }
    // A hash of id(), made once: what a host's signatures record of their signer.
    [[nodiscard]] size_t id_hash() const { return id_hash_; }
    [[nodiscard]] const std::string& origin() const { return origin_; }

private:
    std::string origin_;
    std::vector<std::shared_ptr<const Key>> keys_;
    uint32_t validity_;
    std::array<std::vector<const Key*>, 2> signers_;  // by Role, into keys_
    std::string id_;
    size_t id_hash_ = 0;
};

}  // namespace glbd::dnssec
