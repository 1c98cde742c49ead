#include "sync/transfer/tsig.hpp"

#include <algorithm>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstring>
#include <initializer_list>
#include <string_view>

#include "resolver/wire/builder.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::tsig {
namespace {

const std::string kAlgorithm = std::string("\x0bhmac-sha256", 12) + std::string(1, '\0');

// HMAC-SHA256 over pieces given one after another, on a context keyed once per thread and secret: OpenSSL 3
// looks the algorithm and its digest up in its provider store (a lock and a search) on every one-shot EVP_Q_mac,
// which cost a fifth of a sync exchange's CPU at 50 peers. Each MAC starts the thread's context again with its
// key (EVP_MAC_init without one: the keyed pads are kept, nothing allocated) instead of a copy of it
// (EVP_MAC_CTX_dup and its free: a dozen allocations, a third of a beat's verification).
class Mac {
public:
    explicit Mac(const std::string& secret) {
        Keyed& keyed = Keyed::of_thread();
        if (keyed.busy) {  // (never: MACs are not nested)
            ctx_ = keyed_context(secret);
            return;
        }
        if (keyed.ctx && keyed.secret == secret) {
            if (!EVP_MAC_init(keyed.ctx, nullptr, 0, nullptr)) keyed.reset(nullptr, "");
        } else {
            keyed.reset(keyed_context(secret), secret);
        }
        if (!keyed.ctx) return;
        keyed.busy = true;
        ctx_ = keyed.ctx, keyed_ = &keyed;
    }
    ~Mac() {
        if (keyed_) {
            keyed_->busy = false;
            if (!ctx_) keyed_->reset(nullptr, "");  // failed: keyed again next time
        } else {
            EVP_MAC_CTX_free(ctx_);
        }
    }
    Mac(const Mac&) = delete;
    Mac& operator=(const Mac&) = delete;
    void update(std::string_view bytes) {
        if (ctx_ && !EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size())) {
            fail();
        }
    }
    // The MAC; "" when OpenSSL failed.
    std::string final() {
        unsigned char out[EVP_MAX_MD_SIZE];
        size_t len = 0;
        if (!ctx_ || !EVP_MAC_final(ctx_, out, &len, sizeof out)) {
            fail();
            return "";
        }
        return {reinterpret_cast<char*>(out), len};
    }

private:
    struct Keyed {  // the thread's context and the secret it is keyed with
        std::string secret;
        EVP_MAC_CTX* ctx = nullptr;
        bool busy = false;  // a Mac uses it
        static Keyed& of_thread() {
            thread_local Keyed keyed;
            return keyed;
        }
        void reset(EVP_MAC_CTX* c, const std::string& s) {
            EVP_MAC_CTX_free(ctx);
            ctx = c, secret = c ? s : std::string();
        }
        Keyed() = default;
        Keyed(const Keyed&) = delete;
        Keyed& operator=(const Keyed&) = delete;
        ~Keyed() { EVP_MAC_CTX_free(ctx); }
    };
    // A new context keyed with `secret`, or null.
    static EVP_MAC_CTX* keyed_context(const std::string& secret) {
        static EVP_MAC* const algorithm = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
        EVP_MAC_CTX* c = algorithm ? EVP_MAC_CTX_new(algorithm) : nullptr;
        char digest[] = "SHA256";
        OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
        if (c && EVP_MAC_init(c, reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), params))
            return c;
        EVP_MAC_CTX_free(c);
        return nullptr;
    }
    void fail() {
        if (!keyed_) EVP_MAC_CTX_free(ctx_);
        ctx_ = nullptr;
    }

    EVP_MAC_CTX* ctx_ = nullptr;
    Keyed* keyed_ = nullptr;  // the thread's context is ctx_ (else ctx_ is this MAC's own)
};

std::string hmac(const std::string& key, const std::string& data) {
    Mac mac(key);
    mac.update(data);
    return mac.final();
}

// What the MAC covers, after the message itself (RFC 8945 4.3.3).
void variables(wire::Builder& v, const Key& key, uint64_t time, uint16_t fudge, bool timers_only, uint16_t error,
               const std::string& other) {
    if (!timers_only) {
        v.bytes(key.name);
        v.u16(wire::kClassAny);
        v.u32(0);  // TTL
        v.bytes(kAlgorithm);
    }
    v.u48(time);
    v.u16(fudge);
    if (!timers_only) {
        v.u16(error);
        v.u16(static_cast<uint16_t>(other.size()));
        v.bytes(other);
    }
}

// The MAC over the prior MAC of a chain, the message (its pieces one after another) and the TSIG variables,
// fed to it piece by piece (a message is never copied).
std::string digest(const Key& key, const std::string& prior_mac, std::initializer_list<std::string_view> message,
                   uint64_t time, uint16_t fudge, bool timers_only, uint16_t error, const std::string& other) {
    Mac mac(key.secret);
    if (!prior_mac.empty()) {
        wire::Builder size;
        size.u16(static_cast<uint16_t>(prior_mac.size()));
        mac.update(size.view());
        mac.update(prior_mac);
    }
    for (std::string_view piece : message) mac.update(piece);
    wire::Builder v;
    variables(v, key, time, fudge, timers_only, error, other);
    mac.update(v.view());
    return mac.final();
}

}  // namespace

Key Key::from(const std::string& name, const std::string& base64_secret) {
    Key k;
    k.name = wire::name_to_wire(name).value_or(std::string(1, '\0'));
    k.secret = wire::base64_decode(base64_secret).value_or("");
    return k;
}

std::string sign(std::vector<uint8_t>& msg, const Key& key, const std::string& prior_mac, bool timers_only,
                 uint64_t now_s, uint16_t fudge) {
    std::string mac = digest(key, prior_mac, {{reinterpret_cast<const char*>(msg.data()), msg.size()}}, now_s, fudge,
                             timers_only, 0, "");
    wire::Builder rr;
    rr.bytes(key.name);
    rr.u16(wire::type::TSIG);
    rr.u16(wire::kClassAny);
    rr.u32(0);  // TTL
    size_t rdata = rr.begin_rdata();
    rr.bytes(kAlgorithm);
    rr.u48(now_s);
    rr.u16(fudge);
    rr.u16(static_cast<uint16_t>(mac.size()));
    rr.bytes(mac);
    rr.u16(wire::get16(msg.data()));  // original ID
    rr.u16(0);                        // error
    rr.u16(0);                        // other len
    rr.end_rdata(rdata);
    msg.insert(msg.end(), rr.vec().begin(), rr.vec().end());
    wire::Header h;
    wire::read_header(msg.data(), msg.size(), h);
    wire::set_arcount(msg.data(), static_cast<uint16_t>(h.arcount + 1));
    return mac;
}

Status verify(const uint8_t* msg, size_t len, const Key& key, const std::string& prior_mac, bool timers_only,
              uint64_t now_s, std::string* mac_out) {
    wire::Header h;
    if (!wire::read_header(msg, len, h)) return Status::malformed;
    unsigned counts[4] = {h.qdcount, h.ancount, h.nscount, h.arcount};
    if (counts[3] == 0) return Status::unsigned_;
    // Walk to the last record of the additional section: the TSIG must be there.
    size_t pos = wire::skip_questions(msg, len, wire::kHeaderSize, counts[0]);
    wire::Records records(msg, len, pos);
    wire::Record rr;
    for (unsigned i = 0, n = counts[1] + counts[2] + counts[3]; i < n; ++i) {
        if (!records.next(rr)) return Status::malformed;
    }
    size_t last = rr.owner, rdata = rr.rdata, rdlen = rr.rdlen;
    uint16_t type = rr.type;
    if (type != wire::type::TSIG) return Status::unsigned_;
    // The key name, uncompressed, must be ours; then algorithm, time, fudge, MAC, original ID, error.
    uint8_t name[wire::kMaxName];
    size_t name_len = 0;
    if (wire::read_plain_name(msg, len, last, name, &name_len) == 0 ||
        std::string(reinterpret_cast<char*>(name), name_len) != key.name) {
        return Status::badkey;
    }
    uint8_t alg[wire::kMaxName];
    size_t alg_len = 0;
    size_t alg_used = wire::read_plain_name(msg, rdata + rdlen, rdata, alg, &alg_len);
    if (alg_used == 0 || std::string(reinterpret_cast<char*>(alg), alg_len) != kAlgorithm) return Status::badkey;
    size_t p = rdata + alg_used;
    if (p + 10 > rdata + rdlen) return Status::malformed;
    uint64_t signed_at = 0;
    for (int i = 0; i < 6; ++i) signed_at = signed_at << 8 | msg[p + static_cast<size_t>(i)];
    uint16_t fudge = wire::get16(msg + p + 6);
    uint16_t mac_len = wire::get16(msg + p + 8);
    p += 10;
    if (p + mac_len + 6 > rdata + rdlen) return Status::malformed;
    std::string mac(reinterpret_cast<const char*>(msg + p), mac_len);
    p += mac_len;
    uint16_t original_id = wire::get16(msg + p);
    uint16_t error = wire::get16(msg + p + 2);
    uint16_t other_len = wire::get16(msg + p + 4);
    if (p + 6 + other_len > rdata + rdlen) return Status::malformed;
    std::string other(reinterpret_cast<const char*>(msg + p + 6), other_len);

    // The message as it was before signing: without the TSIG, its original ID and ARCOUNT (a header of its own
    // before the rest, which is digested where it lies).
    uint8_t head[wire::kHeaderSize];
    std::memcpy(head, msg, sizeof head);
    wire::set_id(head, original_id);
    wire::set_arcount(head, static_cast<uint16_t>(counts[3] - 1));
    const auto* body = reinterpret_cast<const char*>(msg) + sizeof head;
    std::string expected =
        digest(key, prior_mac, {{reinterpret_cast<const char*>(head), sizeof head}, {body, last - sizeof head}},
               signed_at, fudge, timers_only, error, other);
    // An empty MAC (HMAC could not be computed) never matches, not even an empty one: fail closed.
    if (expected.empty() || expected.size() != mac.size() ||
        CRYPTO_memcmp(expected.data(), mac.data(), mac.size()) != 0) {
        return Status::badsig;
    }
    // The signer chose the fudge it signed; we accept at most kMaxFudge of clock difference whatever it says.
    uint64_t allowed = std::min<uint64_t>(fudge, kMaxFudge);
    if (signed_at + allowed < now_s || signed_at > now_s + allowed) return Status::badtime;
    if (mac_out) *mac_out = mac;
    return Status::ok;
}

bool hmac_works() {
    // RFC 4231, test case 2.
    static const unsigned char want[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24,
                                           0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27,
                                           0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
    std::string got = hmac("Jefe", "what do ya want for nothing?");
    return got.size() == sizeof want && std::memcmp(got.data(), want, sizeof want) == 0;
}

}  // namespace glbd::tsig
