// resolver/dnssec/keys — a zone's DNSSEC key pairs in BIND's file format (README.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/wire/consts.hpp"

namespace glbd::dnssec {

inline constexpr uint8_t kEcdsaP256Sha256 = wire::algorithm::ECDSAP256SHA256;
inline constexpr uint8_t kEd25519 = wire::algorithm::ED25519;
inline constexpr uint16_t kFlagZone = wire::dnskey::kFlagZone;
inline constexpr uint16_t kFlagRevoke = wire::dnskey::kFlagRevoke;
inline constexpr uint16_t kFlagSep = wire::dnskey::kFlagSep;

// Which keys sign what (README.md), one rule for the signer and for the rollover check: of[kKeySets] (the
// DNSKEY, CDS and CDNSKEY sets) by the KSKs and CSKs, those with the SEP flag (`sep(key)`); of[kAnswers] (every
// other RRset) by the ZSKs, or by the KSKs when there is none.
enum Role { kAnswers = 0, kKeySets = 1 };
template <class K, class Sep>
std::array<std::vector<K>, 2> split_roles(const std::vector<K>& keys, Sep sep) {
    std::array<std::vector<K>, 2> of;
    for (const auto& k : keys) of[sep(k) ? kKeySets : kAnswers].push_back(k);
    if (of[kAnswers].empty()) of[kAnswers] = of[kKeySets];
    return of;
}

// "ECDSAP256SHA256", "ED25519", or the number for any other algorithm.
std::string algorithm_name(uint8_t algorithm);

class Key {
public:
    // Reads path + ".key" and path + ".private" as a key of `zone` (a name without the trailing dot). On
    // failure returns null and says why in `error`, naming the file and never any key material.
    static std::shared_ptr<const Key> load(const std::string& path, const std::string& zone, std::string& error);

    ~Key();
    Key(const Key&) = delete;
    Key& operator=(const Key&) = delete;

    uint16_t flags() const { return flags_; }
    uint8_t algorithm() const { return algorithm_; }
    uint16_t tag() const { return tag_; }
    // KSK or CSK: the key the parent's DS points at.
    bool sep() const { return (flags_ & kFlagSep) != 0; }
    // The DNSKEY RDATA in wire form: flags, protocol 3, algorithm, public key.
    const std::string& rdata() const { return rdata_; }
    // The path given to load(), without extension.
    const std::string& path() const { return path_; }
    // "glb.example.com. IN DS 33420 13 2 F551...": the DS (SHA-256), as dnssec-dsfromkey -2 prints it.
    const std::string& ds() const { return ds_; }
    // The same DS's RDATA in wire form (key tag, algorithm, digest type 2, digest): the CDS glbd publishes.
    const std::string& ds_rdata() const { return ds_rdata_; }
    // Whether a DS RDATA (wire form) points at this key: its tag, algorithm and digest, of type 1 (SHA-1),
    // 2 (SHA-256) or 4 (SHA-384).
    bool names_ds(std::string_view ds_rdata) const;
    // "tag 33420, CSK, ECDSAP256SHA256": for messages; never key material.
    std::string describe() const;
    // The signature of `data` as an RRSIG holds it (RFC 6605: r | s, 64 bytes; RFC 8080: 64 bytes), or ""
    // when OpenSSL fails. Thread-safe: each call has its own context over the shared, read-only key.
    std::string sign_data(std::string_view data) const;
    // The same into `out` (kSignatureSize bytes), returning the length written or 0; noexcept and without an
    // allocation of glbd's own (OpenSSL's happen inside), for the query path.
    static constexpr size_t kSignatureSize = 64;  // both algorithms
    size_t sign_into(std::string_view data, uint8_t* out) const noexcept;

private:
    struct Private;
    Key();

    std::string path_;
    uint16_t flags_ = 0;
    uint8_t algorithm_ = 0;
    uint16_t tag_ = 0;
    std::string rdata_;
    std::string ds_, ds_rdata_;
    std::vector<std::string> other_ds_rdata_;  // digest types 1 and 4
    std::unique_ptr<Private> private_;         // the ldns key with its private half
};

// Each key's describe(), "; " between: "tag 33420, CSK, ECDSAP256SHA256; tag 4151, ZSK, ED25519".
std::string describe_keys(const std::vector<std::shared_ptr<const Key>>& keys);

// The key tag of a DNSKEY RDATA (RFC 4034 appendix B).
uint16_t key_tag(const std::string& rdata);

// A DNSKEY RRset as peers compare it (sync reports, `glbd check`): the key tags in ascending order, comma
// separated, a space, and the first 8 bytes of a SHA-256 over the RDATAs in canonical order, in lower case
// hex: "12345,33420 0123456789abcdef". Two sets are the same if and only if (but for a SHA-256 collision)
// their ids are equal. Of the keys' RDATAs, or of the set `keys` publish.
std::string published_id(std::vector<std::string> rdatas);
std::string published_id(const std::vector<std::shared_ptr<const Key>>& keys);

// Writes a fresh key pair for `zone` (flags 257: a CSK) in `dir`, created exclusively, the private file mode
// 0600. Returns the path without extension, or "" with the reason in `error`.
std::string generate(const std::string& zone, uint8_t algorithm, const std::string& dir, std::string& error);

}  // namespace glbd::dnssec
