// resolver/dnssec/sign.cpp — the data RFC 4034 3.1.8.1 signs, in canonical order, signed with the key.
#include "resolver/dnssec/sign.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "resolver/wire/builder.hpp"
#include "resolver/wire/consts.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::dnssec {

namespace {

// RFC 4034 3.1.3: the owner's labels, the root and a leading wildcard label not counted.
uint8_t labels_of(std::string_view owner) {
    unsigned n = wire::label_count(owner);
    if (n > 0 && owner.size() >= 2 && owner[0] == 1 && owner[1] == '*') --n;
    return static_cast<uint8_t>(n);
}

}  // namespace

// RFC 4034 3.1.8.1 into `data` (room for `data_cap` bytes): the RRSIG RDATA without its signature, copied to
// `out` too, then each RR of the set in canonical order (6.3: RDATA as left-justified octet strings, each once);
// the signature is appended to `out`. Returns the RRSIG RDATA's length, or 0 when something does not fit.
size_t sign_into(const Key& key, std::string_view signer, std::string_view owner, uint16_t type, uint32_t ttl,
                 std::string_view* rdatas, size_t n, uint32_t inception, uint32_t expiration, uint8_t* data,
                 size_t data_cap, uint8_t* out, size_t cap) noexcept {
    constexpr size_t kFixed = 18;  // type covered .. key tag
    const size_t head = kFixed + signer.size();
    if (head + Key::kSignatureSize > cap || head > data_cap) return 0;
    auto put16 = [](uint8_t* p, uint16_t v) { p[0] = static_cast<uint8_t>(v >> 8), p[1] = static_cast<uint8_t>(v); };
    auto put32 = [&](uint8_t* p, uint32_t v) {
        put16(p, static_cast<uint16_t>(v >> 16)), put16(p + 2, static_cast<uint16_t>(v));
    };
    put16(data, type);
    data[2] = key.algorithm();
    data[3] = labels_of(owner);
    put32(data + 4, ttl);
    put32(data + 8, expiration);
    put32(data + 12, inception);
    put16(data + 16, key.tag());
    std::memcpy(data + kFixed, signer.data(), signer.size());
    std::memcpy(out, data, head);
    std::sort(rdatas, rdatas + n);
    size_t len = head;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && rdatas[i] == rdatas[i - 1]) continue;
        if (len + owner.size() + 10 + rdatas[i].size() > data_cap) return 0;
        uint8_t* rr = data + len;
        std::memcpy(rr, owner.data(), owner.size());
        rr += owner.size();
        put16(rr, type), put16(rr + 2, wire::kClassIn), put32(rr + 4, ttl);
        put16(rr + 8, static_cast<uint16_t>(rdatas[i].size()));
        std::memcpy(rr + 10, rdatas[i].data(), rdatas[i].size());
        len += owner.size() + 10 + rdatas[i].size();
    }
    size_t signed_len = key.sign_into(std::string_view(reinterpret_cast<const char*>(data), len), out + head);
    return signed_len ? head + signed_len : 0;
}

std::string sign(const Key& key, std::string_view signer, const RRset& set, uint32_t inception, uint32_t expiration) {
    std::vector<std::string_view> rdatas = set.rdatas;
    size_t need = 18 + signer.size();
    for (std::string_view rd : rdatas) need += set.owner.size() + 10 + rd.size();
    std::vector<uint8_t> data(need);
    std::string rrsig(18 + signer.size() + Key::kSignatureSize, '\0');
    size_t n = sign_into(key, signer, set.owner, set.type, set.ttl, rdatas.data(), rdatas.size(), inception, expiration,
                         data.data(), data.size(), reinterpret_cast<uint8_t*>(rrsig.data()), rrsig.size());
    rrsig.resize(n);
    return rrsig;
}

ZoneSigner::ZoneSigner(std::string origin, std::vector<std::shared_ptr<const Key>> keys, uint32_t validity)
    : origin_(std::move(origin)), keys_(std::move(keys)), validity_(validity) {
    id_ = origin_ + "/" + signing_id(keys_, validity_);
    id_hash_ = std::hash<std::string>{}(id_);
    std::vector<const Key*> all;
    for (const auto& k : keys_) all.push_back(k.get());
    signers_ = split_roles(all, [](const Key* k) { return k->sep(); });
}

std::vector<std::string> ZoneSigner::sign(const RRset& set, uint32_t now) const {
    std::vector<std::string> out;
    for (const Key* k : signers(set.type)) {
        std::string rrsig = dnssec::sign(*k, origin_, set, inception(now), expiration(now));
        if (!rrsig.empty()) out.push_back(std::move(rrsig));
    }
    return out;
}

std::string signing_id(const std::vector<std::shared_ptr<const Key>>& keys, uint32_t validity) {
    std::string id = std::to_string(validity);
    for (const auto& k : keys) id += "/" + std::to_string(k->algorithm()) + "+" + std::to_string(k->tag());
    return id;
}

size_t sign_set(const Key& key, std::string_view signer, std::string_view owner, uint16_t type, uint32_t ttl,
                std::string_view* rdatas, size_t n, uint32_t inception, uint32_t expiration, uint8_t* out,
                size_t cap) noexcept {
    uint8_t data[kOnlineData];
    return sign_into(key, signer, owner, type, ttl, rdatas, n, inception, expiration, data, sizeof data, out, cap);
}

std::vector<std::string> ZoneSigner::cds() const {
    std::vector<std::string> out;
    for (const Key* k : signers_[kKeySets]) out.push_back(k->ds_rdata());
    return out;
}

std::vector<std::string> ZoneSigner::cdnskeys() const {
    std::vector<std::string> out;
    for (const Key* k : signers_[kKeySets]) out.push_back(k->rdata());
    return out;
}

std::vector<std::string> ZoneSigner::dnskeys() const {
    std::vector<std::string> out;
    out.reserve(keys_.size());
    for (const auto& k : keys_) out.push_back(k->rdata());
    return out;
}

}  // namespace glbd::dnssec
