#include "sync/transfer/tsig.hpp"

#include <algorithm>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>

#include "resolver/wire/builder.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::tsig {
namespace {

const std::string kAlgorithm = std::string("\x0bhmac-sha256", 12) + std::string(1, '\0');

std::string hmac(const std::string& key, const std::string& data) {
    unsigned char out[EVP_MAX_MD_SIZE];
    size_t len = 0;
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                   reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, sizeof out, &len)) {
        return "";
    }
    return std::string(reinterpret_cast<char*>(out), len);
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

// The bytes a MAC is computed over: the prior MAC of a chain, the message, the TSIG variables.
std::string digest(const Key& key, const std::string& prior_mac, const uint8_t* msg, size_t len, uint64_t time,
                   uint16_t fudge, bool timers_only, uint16_t error, const std::string& other) {
    wire::Builder d;
    if (!prior_mac.empty()) {
        d.u16(static_cast<uint16_t>(prior_mac.size()));
        d.bytes(prior_mac);
    }
    d.bytes({reinterpret_cast<const char*>(msg), len});
    variables(d, key, time, fudge, timers_only, error, other);
    return hmac(key.secret, std::string(d.view()));
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
    std::string mac = digest(key, prior_mac, msg.data(), msg.size(), now_s, fudge, timers_only, 0, "");
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
    uint16_t ar = static_cast<uint16_t>(wire::get16(msg.data() + 10) + 1);
    msg[10] = static_cast<uint8_t>(ar >> 8), msg[11] = static_cast<uint8_t>(ar);
    return mac;
}

Status verify(const uint8_t* msg, size_t len, const Key& key, const std::string& prior_mac, bool timers_only,
              uint64_t now_s, std::string* mac_out) {
    if (len < wire::kHeaderSize) return Status::malformed;
    unsigned counts[4] = {wire::get16(msg + 4), wire::get16(msg + 6), wire::get16(msg + 8), wire::get16(msg + 10)};
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

    // The message as it was before signing: without the TSIG, its original ID and ARCOUNT.
    std::vector<uint8_t> unsigned_msg(msg, msg + last);
    unsigned_msg[0] = static_cast<uint8_t>(original_id >> 8), unsigned_msg[1] = static_cast<uint8_t>(original_id);
    uint16_t ar = static_cast<uint16_t>(counts[3] - 1);
    unsigned_msg[10] = static_cast<uint8_t>(ar >> 8), unsigned_msg[11] = static_cast<uint8_t>(ar);
    std::string expected =
        digest(key, prior_mac, unsigned_msg.data(), unsigned_msg.size(), signed_at, fudge, timers_only, error, other);
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
