// resolver/dnssec/sign.cpp — the data RFC 4034 3.1.8.1 signs, in canonical order, signed with the key.
#include "resolver/dnssec/sign.hpp"

#include <algorithm>

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

std::string sign(const Key& key, std::string_view signer, const RRset& set, uint32_t inception, uint32_t expiration) {
    wire::Builder rrsig;  // the RDATA up to the signature
    rrsig.u16(set.type), rrsig.u8(key.algorithm()), rrsig.u8(labels_of(set.owner)), rrsig.u32(set.ttl);
    rrsig.u32(expiration), rrsig.u32(inception), rrsig.u16(key.tag()), rrsig.bytes(signer);

    // RFC 4034 6.3: the RRs sorted by their RDATA as left-justified octet strings, each once.
    std::vector<std::string_view> sorted = set.rdatas;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    wire::Builder data;
    data.bytes(rrsig.view());
    for (std::string_view rd : sorted) {
        data.bytes(set.owner), data.u16(set.type), data.u16(wire::kClassIn), data.u32(set.ttl);
        size_t at = data.begin_rdata();
        data.bytes(rd);
        data.end_rdata(at);
    }
    std::string signature = key.sign_data(data.view());
    if (signature.empty()) return "";
    return std::string(rrsig.view()) + signature;
}

ZoneSigner::ZoneSigner(std::string origin, std::vector<std::shared_ptr<const Key>> keys, uint32_t validity)
    : origin_(std::move(origin)), keys_(std::move(keys)), validity_(validity) {
    id_ = origin_ + "/" + std::to_string(validity_);
    for (const auto& k : keys_) {
        has_zsk_ = has_zsk_ || !k->sep();
        id_ += "/" + std::to_string(k->algorithm()) + "+" + std::to_string(k->tag());
    }
}

std::vector<std::string> ZoneSigner::sign(const RRset& set, uint32_t now) const {
    std::vector<std::string> out;
    const bool by_sep = set.type == wire::type::DNSKEY || !has_zsk_;
    for (const auto& k : keys_) {
        if (k->sep() != by_sep) continue;
        std::string rrsig = dnssec::sign(*k, origin_, set, now - 3600, now + validity_);
        if (!rrsig.empty()) out.push_back(std::move(rrsig));
    }
    return out;
}

std::vector<std::string> ZoneSigner::dnskeys() const {
    std::vector<std::string> out;
    out.reserve(keys_.size());
    for (const auto& k : keys_) out.push_back(k->rdata());
    return out;
}

}  // namespace glbd::dnssec
