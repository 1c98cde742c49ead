// resolver/dnssec/keys.cpp — BIND-format key pairs read, checked and written: the DNSKEY record and the DS with
// ldns, the private half with OpenSSL (README.md).
#include "resolver/dnssec/keys.hpp"

#include "resolver/base/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>

#include "resolver/base/fd.hpp"
#include "resolver/wire/builder.hpp"
#include "resolver/wire/text.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::dnssec {

namespace {

struct LdnsFree {
    void operator()(ldns_rr* rr) const { ldns_rr_free(rr); }
    void operator()(ldns_rdf* rdf) const { ldns_rdf_deep_free(rdf); }
};
using RrPtr = std::unique_ptr<ldns_rr, LdnsFree>;
using RdfPtr = std::unique_ptr<ldns_rdf, LdnsFree>;

std::string rdf_bytes(const ldns_rdf* rdf) {
    return {reinterpret_cast<const char*>(ldns_rdf_data(rdf)), ldns_rdf_size(rdf)};
}

// The DNSKEY RDATA (RFC 4034 2.1), and its key tag (appendix B).
std::string dnskey_rdata(uint16_t flags, uint8_t algorithm, std::string_view public_key) {
    wire::Builder b;
    b.u16(flags), b.u8(wire::dnskey::kProtocol), b.u8(algorithm), b.bytes(public_key);
    return std::string(b.view());
}

std::string hex_upper(const std::string& bytes) {
    static constexpr char kDigits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += kDigits[c >> 4];
        out += kDigits[c & 15];
    }
    return out;
}

// Key files are read only when they are regular files of at most this size (a FIFO or a huge file named by
// mistake must not stall or fill the control thread).
constexpr off_t kMaxFileSize = off_t{64} * 1024;

std::string sys_error(const std::string& file) { return "cannot read " + file + ": " + std::strerror(errno); }

// The one DNSKEY of a .key file (comment lines skipped), or null with `error` set.
RrPtr read_public(const std::string& file, std::string& error) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        error = sys_error(file);
        return nullptr;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > kMaxFileSize) {
        error = file + ": not a key file (not a regular file of at most 64 KB)";
        return nullptr;
    }
    std::ifstream in(file);
    if (!in) {
        error = sys_error(file);
        return nullptr;
    }
    RrPtr found;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (n > 100 || line.size() > 4096) {  // a DNSKEY line is under 200 bytes; BIND adds a few comments
            error = file + ": not a key file (too long)";
            return nullptr;
        }
        auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == ';') continue;
        ldns_rr* rr = nullptr;
        ldns_status status = ldns_rr_new_frm_str(&rr, line.c_str(), 3600, nullptr, nullptr);
        RrPtr owned(rr);
        if (status != LDNS_STATUS_OK) {
            error = file + ":" + std::to_string(n) + ": bad record: " + ldns_get_errorstr_by_id(status);
            return nullptr;
        }
        if (found || ldns_rr_get_type(rr) != LDNS_RR_TYPE_DNSKEY) {
            error = file + ":" + std::to_string(n) + ": a key file holds one DNSKEY record and nothing else";
            return nullptr;
        }
        found = std::move(owned);
    }
    if (!found) error = file + ": no DNSKEY record";
    return found;
}

// A private key as OpenSSL holds it, with its public half in DNSKEY form (RFC 6605: X | Y; RFC 8080: the
// 32 bytes), or null.
using PkeyPtr = std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)>;

PkeyPtr no_key() { return {nullptr, EVP_PKEY_free}; }

// The P-256 key of scalar `d`: its public point computed, both given to OpenSSL.
PkeyPtr p256_from_scalar(const std::string& d, std::string& pub) {
    std::unique_ptr<EC_GROUP, void (*)(EC_GROUP*)> group(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1),
                                                         EC_GROUP_free);
    std::unique_ptr<BIGNUM, void (*)(BIGNUM*)> priv(
        BN_bin2bn(reinterpret_cast<const unsigned char*>(d.data()), static_cast<int>(d.size()), nullptr),
        BN_clear_free);
    if (!group || !priv || BN_is_zero(priv.get()) || BN_cmp(priv.get(), EC_GROUP_get0_order(group.get())) >= 0)
        return no_key();
    std::unique_ptr<EC_POINT, void (*)(EC_POINT*)> point(EC_POINT_new(group.get()), EC_POINT_free);
    unsigned char octets[65];
    if (!point || EC_POINT_mul(group.get(), point.get(), priv.get(), nullptr, nullptr, nullptr) != 1 ||
        EC_POINT_point2oct(group.get(), point.get(), POINT_CONVERSION_UNCOMPRESSED, octets, sizeof octets, nullptr) !=
            sizeof octets)
        return no_key();
    std::unique_ptr<OSSL_PARAM_BLD, void (*)(OSSL_PARAM_BLD*)> bld(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv.get()) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, octets, sizeof octets) != 1)
        return no_key();
    std::unique_ptr<OSSL_PARAM, void (*)(OSSL_PARAM*)> params(OSSL_PARAM_BLD_to_param(bld.get()), OSSL_PARAM_free);
    std::unique_ptr<EVP_PKEY_CTX, void (*)(EVP_PKEY_CTX*)> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr),
                                                               EVP_PKEY_CTX_free);
    EVP_PKEY* key = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_KEYPAIR, params.get()) != 1)
        return no_key();
    pub.assign(reinterpret_cast<const char*>(octets + 1), 64);
    return {key, EVP_PKEY_free};
}

PkeyPtr key_from_private(uint8_t algorithm, const std::string& d, std::string& pub) {
    // A P-256 scalar is an integer: ldns-keygen writes its minimal bytes, so one key in 256 has 31 or fewer.
    if (algorithm == kEcdsaP256Sha256) return d.empty() || d.size() > 32 ? no_key() : p256_from_scalar(d, pub);
    if (d.size() != 32) return no_key();
    PkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                             reinterpret_cast<const unsigned char*>(d.data()), d.size()),
                EVP_PKEY_free);
    unsigned char raw[32];
    size_t len = sizeof raw;
    if (!key || EVP_PKEY_get_raw_public_key(key.get(), raw, &len) != 1 || len != sizeof raw) return no_key();
    pub.assign(reinterpret_cast<const char*>(raw), len);
    return key;
}

// The private half as the file holds it (32 bytes for both algorithms).
std::string private_bytes(uint8_t algorithm, EVP_PKEY* key) {
    unsigned char raw[32];
    if (algorithm == kEd25519) {
        size_t len = sizeof raw;
        if (EVP_PKEY_get_raw_private_key(key, raw, &len) != 1 || len != sizeof raw) return {};
    } else {
        BIGNUM* d = nullptr;
        if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &d) != 1) return {};
        int n = BN_bn2binpad(d, raw, sizeof raw);
        BN_clear_free(d);
        if (n != sizeof raw) return {};
    }
    std::string out(reinterpret_cast<const char*>(raw), sizeof raw);
    OPENSSL_cleanse(raw, sizeof raw);
    return out;
}

// A .private file of BIND's format, v1.x: "Private-key-format", "Algorithm" and "PrivateKey" lines, each
// once; BIND's timing lines (Created, Publish, ...) are read past. Refused when every user may read or write
// it. Read here rather than by ldns: fuzzing ldns_key_new_frm_fp_l (ldns 1.8.3) corrupted the heap.
PkeyPtr read_private(const std::string& file, uint8_t algorithm, std::string& pub, std::string& error) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        error = sys_error(file);
        return no_key();
    }
    if (!S_ISREG(st.st_mode) || st.st_size > kMaxFileSize) {
        error = file + ": not a private key file (not a regular file of at most 64 KB)";
        return no_key();
    }
    if (auto mode = open_to_everyone(file)) {
        error = file + ": a private key must not be open to every user (mode " + *mode + "): chmod o-rw it";
        return no_key();
    }
    std::ifstream in(file);
    if (!in) {
        error = sys_error(file);
        return no_key();
    }
    std::string format, alg, secret, line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (n > 64 || line.size() > 256) {
            error = file + ": not a private key file (too long)";
            return no_key();
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        auto colon = line.find(": ");
        if (line.empty()) continue;
        std::string field = colon == std::string::npos ? "" : line.substr(0, colon);
        std::string value = colon == std::string::npos ? "" : line.substr(colon + 2);
        std::string* into = field == "Private-key-format" ? &format
                            : field == "Algorithm"        ? &alg
                            : field == "PrivateKey"       ? &secret
                                                          : nullptr;
        if (colon == std::string::npos || (into != nullptr && !into->empty())) {
            error = file + ":" + std::to_string(n) + ": not a line of a private key file";
            return no_key();
        }
        if (into != nullptr) *into = value.empty() ? " " : value;
    }
    static const std::regex kFormat(R"(v1\.\d+)");
    if (!std::regex_match(format, kFormat)) {
        error = file + ": not a private key file (no Private-key-format: v1.x line)";
        return no_key();
    }
    if (alg.substr(0, alg.find(' ')) != std::to_string(algorithm)) {
        error = file + ": its algorithm is not the one of its .key file (" + std::to_string(algorithm) + ")";
        return no_key();
    }
    auto d = wire::base64_decode(secret);
    PkeyPtr key = d ? key_from_private(algorithm, *d, pub) : no_key();
    if (d) OPENSSL_cleanse(d->data(), d->size());
    if (!key) error = file + ": PrivateKey is not a key of algorithm " + algorithm_name(algorithm);
    return key;
}

}  // namespace

std::string algorithm_name(uint8_t algorithm) {
    if (algorithm == kEcdsaP256Sha256) return "ECDSAP256SHA256";
    if (algorithm == kEd25519) return "ED25519";
    return std::to_string(algorithm);
}

namespace {
// The digest a signature by `algorithm` is made with (none for Ed25519: it hashes itself).
const EVP_MD* digest(uint8_t algorithm) { return algorithm == kEcdsaP256Sha256 ? EVP_sha256() : nullptr; }
std::atomic<uint64_t> next_key_id{1};

// Each thread's contexts made ready to sign (EVP_DigestSignInit: the provider's fetch and the key's checks, 3-8
// us of a 23-31 us ECDSA signature here), one per key it signed with lately: a signature copies its thread's,
// so no context is read by two threads and no lock is taken (a query thread signs denials while answering).
struct ReadyContexts {
    struct Slot {
        uint64_t key = 0;  // Key::Private::id
        EVP_MD_CTX* ctx = nullptr;
    };
    std::array<Slot, 4> slots{};  // in turn: a key rolled over takes the place of the one made longest ago
    size_t next = 0;
    ReadyContexts() = default;
    ReadyContexts(const ReadyContexts&) = delete;
    ReadyContexts& operator=(const ReadyContexts&) = delete;
    ~ReadyContexts() {
        for (auto& s : slots) EVP_MD_CTX_free(s.ctx);
    }
    // This thread's context for key `id`, made ready with `init` when it has none; null when that fails.
    template <class Init>
    EVP_MD_CTX* get(uint64_t id, Init&& init) noexcept {
        for (auto& s : slots) {
            if (s.key == id) return s.ctx;
        }
        Slot& s = slots[next++ % slots.size()];
        EVP_MD_CTX_free(s.ctx);
        s = Slot{};
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        if (!ctx || !init(ctx)) {
            EVP_MD_CTX_free(ctx);
            return nullptr;
        }
        s = Slot{id, ctx};
        return ctx;
    }
};
thread_local ReadyContexts ready_contexts;
}  // namespace

struct Key::Private {
    PkeyPtr key = no_key();
    uint64_t id = next_key_id.fetch_add(1);  // names this key in each thread's ReadyContexts

    // `ctx` set up to sign with `key`: a copy of this thread's ready context, or set up anew when it cannot
    // be had or copied.
    bool start(EVP_MD_CTX* ctx, uint8_t algorithm) const noexcept {
        auto init = [&](EVP_MD_CTX* c) {
            return key && EVP_DigestSignInit(c, nullptr, digest(algorithm), nullptr, key.get()) == 1;
        };
        if (EVP_MD_CTX* ready = ready_contexts.get(id, init); ready && EVP_MD_CTX_copy_ex(ctx, ready) == 1) return true;
        return init(ctx);
    }
};

Key::Key() : private_(std::make_unique<Private>()) {}
Key::~Key() = default;

std::string Key::describe() const {
    return "tag " + std::to_string(tag_) + ", " + (sep() ? "KSK/CSK" : "ZSK") + ", " + algorithm_name(algorithm_);
}

size_t Key::sign_into(std::string_view data, uint8_t* out) const noexcept {
    // OpenSSL allocates (with its own malloc) inside; glbd's code here does not.
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    unsigned char sig[80];  // an ECDSA P-256 DER signature is at most 72 bytes, Ed25519's 64
    size_t len = sizeof sig;
    const auto* in = reinterpret_cast<const unsigned char*>(data.data());
    bool ok = ctx && private_->start(ctx, algorithm_) && EVP_DigestSign(ctx, sig, &len, in, data.size()) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) return 0;
    if (algorithm_ == kEd25519) {
        if (len != kSignatureSize) return 0;
        std::memcpy(out, sig, len);
        return len;
    }
    // ECDSA: OpenSSL's DER SEQUENCE { r, s } to the fixed-size r | s of RFC 6605.
    const unsigned char* der = sig;
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(len));
    ok = es && BN_bn2binpad(ECDSA_SIG_get0_r(es), out, 32) == 32 &&
         BN_bn2binpad(ECDSA_SIG_get0_s(es), out + 32, 32) == 32;
    ECDSA_SIG_free(es);
    return ok ? kSignatureSize : 0;
}

std::string Key::sign_data(std::string_view data) const {
    uint8_t sig[kSignatureSize];
    size_t n = sign_into(data, sig);
    return n ? std::string(reinterpret_cast<const char*>(sig), n) : "";
}

bool Key::names_ds(std::string_view ds_rdata) const {
    if (ds_rdata == ds_rdata_) return true;
    return std::find(other_ds_rdata_.begin(), other_ds_rdata_.end(), ds_rdata) != other_ds_rdata_.end();
}

uint16_t key_tag(const std::string& rdata) {
    return ldns_calc_keytag_raw(reinterpret_cast<const uint8_t*>(rdata.data()), rdata.size());
}

std::string published_id(std::vector<std::string> rdatas) {
    std::sort(rdatas.begin(), rdatas.end());  // canonical order (RFC 4034 6.3): the RDATAs as octet strings
    std::string data, tags;
    std::vector<uint16_t> sorted_tags;
    for (const auto& r : rdatas) {
        data += static_cast<char>(r.size() >> 8), data += static_cast<char>(r.size() & 0xff), data += r;
        sorted_tags.push_back(key_tag(r));
    }
    std::sort(sorted_tags.begin(), sorted_tags.end());
    for (uint16_t t : sorted_tags) tags += (tags.empty() ? "" : ",") + std::to_string(t);
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
    static constexpr char kHex[] = "0123456789abcdef";
    tags += ' ';
    for (size_t i = 0; i < 8; ++i) tags += kHex[md[i] >> 4], tags += kHex[md[i] & 15];
    return tags;
}

std::string published_id(const std::vector<std::shared_ptr<const Key>>& keys) {
    std::vector<std::string> rdatas;
    rdatas.reserve(keys.size());
    for (const auto& k : keys) rdatas.push_back(k->rdata());
    return published_id(std::move(rdatas));
}

std::string describe_keys(const std::vector<std::shared_ptr<const Key>>& keys) {
    std::string out;
    for (const auto& k : keys) out += (out.empty() ? "" : "; ") + k->describe();
    return out;
}

std::shared_ptr<const Key> Key::load(const std::string& path, const std::string& zone, std::string& error) {
    const std::string pub_file = path + ".key", priv_file = path + ".private";
    RrPtr pub = read_public(pub_file, error);
    if (!pub) return nullptr;
    RdfPtr zone_rdf(ldns_dname_new_frm_str((zone + ".").c_str()));
    if (!zone_rdf || ldns_dname_compare(ldns_rr_owner(pub.get()), zone_rdf.get()) != 0) {
        error = pub_file + ": the key's owner is not the zone " + zone;
        return nullptr;
    }
    if (ldns_rr_rd_count(pub.get()) != 4) {
        error = pub_file + ": a DNSKEY has four fields (flags, protocol, algorithm, public key)";
        return nullptr;
    }
    std::shared_ptr<Key> k(new Key());
    k->path_ = path;
    k->flags_ = ldns_rdf2native_int16(ldns_rr_rdf(pub.get(), 0));
    k->algorithm_ = ldns_rdf2native_int8(ldns_rr_rdf(pub.get(), 2));
    k->rdata_ = dnskey_rdata(k->flags_, k->algorithm_, rdf_bytes(ldns_rr_rdf(pub.get(), 3)));
    k->tag_ = key_tag(k->rdata_);
    if (ldns_rdf2native_int8(ldns_rr_rdf(pub.get(), 1)) != 3) {
        error = pub_file + ": the DNSKEY's protocol must be 3";
        return nullptr;
    }
    if ((k->flags_ & kFlagRevoke) != 0) {
        error = pub_file + ": the key is revoked (flags " + std::to_string(k->flags_) + ")";
        return nullptr;
    }
    if (k->flags_ != kFlagZone && k->flags_ != (kFlagZone | kFlagSep)) {
        error = pub_file + ": flags must be 256 (ZSK) or 257 (KSK or CSK), got " + std::to_string(k->flags_);
        return nullptr;
    }
    if (k->algorithm_ != kEcdsaP256Sha256 && k->algorithm_ != kEd25519) {
        error = pub_file + ": algorithm " + std::to_string(k->algorithm_) +
                " is not one glbd signs with: 13 (ECDSAP256SHA256) or 15 (ED25519)";
        return nullptr;
    }
    // A name as dnssec-keygen writes it, K<zone>.+<alg>+<tag>, must say this key's algorithm and tag.
    static const std::regex kBindName(R"(K(.+)\.\+(\d{3})\+(\d{5}))");
    std::smatch m;
    std::string base = path.substr(path.find_last_of('/') + 1);
    if (std::regex_match(base, m, kBindName) &&
        (std::stoi(m[2].str()) != k->algorithm_ || std::stoi(m[3].str()) != k->tag_)) {
        error = pub_file + ": the file name says algorithm " + m[2].str() + ", tag " + m[3].str() +
                "; the key is algorithm " + std::to_string(k->algorithm_) + ", tag " + std::to_string(k->tag_);
        return nullptr;
    }

    std::string derived;
    PkeyPtr priv = read_private(priv_file, k->algorithm_, derived, error);
    if (!priv) return nullptr;
    if (derived != rdf_bytes(ldns_rr_rdf(pub.get(), 3))) {
        error = priv_file + ": this private key is not the one whose public key " + pub_file + " holds";
        return nullptr;
    }
    RrPtr ds(ldns_key_rr2ds(pub.get(), LDNS_SHA256));
    if (!ds || ldns_rr_rd_count(ds.get()) != 4) {
        error = pub_file + ": cannot compute the DS";
        return nullptr;
    }
    const std::string digest = rdf_bytes(ldns_rr_rdf(ds.get(), 3));
    k->ds_ =
        zone + ". IN DS " + std::to_string(k->tag_) + " " + std::to_string(k->algorithm_) + " 2 " + hex_upper(digest);
    wire::Builder ds_rdata;
    ds_rdata.u16(k->tag_), ds_rdata.u8(k->algorithm_), ds_rdata.u8(wire::ds::kDigestSha256), ds_rdata.bytes(digest);
    k->ds_rdata_ = std::string(ds_rdata.view());
    // What a parent may hold besides: DS digest types 1 (SHA-1) and 4 (SHA-384), for names_ds().
    for (ldns_hash h : {LDNS_SHA1, LDNS_SHA384}) {
        RrPtr other(ldns_key_rr2ds(pub.get(), h));
        if (!other || ldns_rr_rd_count(other.get()) != 4) continue;
        wire::Builder rd;
        rd.u16(k->tag_), rd.u8(k->algorithm_), rd.u8(h == LDNS_SHA1 ? 1 : 4);
        rd.bytes(rdf_bytes(ldns_rr_rdf(other.get(), 3)));
        k->other_ds_rdata_.emplace_back(rd.view());
    }
    k->private_->key = std::move(priv);
    return k;
}

std::string generate(const std::string& zone, uint8_t algorithm, const std::string& dir, std::string& error) {
    if (algorithm != kEcdsaP256Sha256 && algorithm != kEd25519) {
        error = "algorithm " + std::to_string(algorithm) + ": use 13 (ECDSAP256SHA256) or 15 (ED25519)";
        return "";
    }
    RdfPtr owner(ldns_dname_new_frm_str((zone + ".").c_str()));
    if (!owner || zone.empty() || zone.back() == '.') {
        error = "\"" + zone + "\" is not a zone name (give it without the trailing dot)";
        return "";
    }
    for (int attempt = 0; attempt < 8; ++attempt) {  // another pair with the same tag in `dir`: a new key
        PkeyPtr fresh(algorithm == kEd25519 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")
                                            : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"),
                      EVP_PKEY_free);
        std::string d = fresh ? private_bytes(algorithm, fresh.get()) : "", pub;
        PkeyPtr again = key_from_private(algorithm, d, pub);  // the public half as a DNSKEY holds it
        if (!again) {
            error = "OpenSSL could not make a key";
            return "";
        }
        uint16_t tag = key_tag(dnskey_rdata(kFlagZone | kFlagSep, algorithm, pub));
        char name[32];
        std::snprintf(name, sizeof name, ".+%03u+%05u", algorithm, tag);
        std::string base = dir + "/K" + zone + name;
        std::string priv_text = "Private-key-format: v1.2\nAlgorithm: " + std::to_string(algorithm) + " (" +
                                algorithm_name(algorithm) + ")\nPrivateKey: " + wire::base64_encode(d) + "\n";
        OPENSSL_cleanse(d.data(), d.size());
        std::string pub_text = "; This is a key-signing key, keyid " + std::to_string(tag) + ", for " + zone + ".\n" +
                               zone + ". IN DNSKEY 257 3 " + std::to_string(algorithm) + " " +
                               wire::base64_encode(pub) + "\n";
        Fd fd(::open((base + ".private").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        if (!fd && errno == EEXIST) continue;
        if (!fd) {
            OPENSSL_cleanse(priv_text.data(), priv_text.size());
            error = "cannot write " + base + ".private: " + std::strerror(errno);
            return "";
        }
        bool ok = ::write(fd.get(), priv_text.data(), priv_text.size()) == static_cast<ssize_t>(priv_text.size());
        OPENSSL_cleanse(priv_text.data(), priv_text.size());
        ok = fd.close() && ok;
        Fd pfd(ok ? ::open((base + ".key").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1);
        const bool made_pub = pfd.valid();
        if (pfd) {
            ok = ::write(pfd.get(), pub_text.data(), pub_text.size()) == static_cast<ssize_t>(pub_text.size());
            ok = pfd.close() && ok;
        } else {
            ok = false;
        }
        if (!ok) {
            error = "cannot write " + base + ": " + std::strerror(errno);
            ::unlink((base + ".private").c_str());
            if (made_pub) ::unlink((base + ".key").c_str());
            return "";
        }
        return base;
    }
    error = "eight fresh keys in a row had tags of keys already in " + dir;
    return "";
}

}  // namespace glbd::dnssec
