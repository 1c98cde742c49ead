// resolver/dnssec/sign.cpp — the data RFC 4034 3.1.8.1 signs, in canonical order, signed with the key.
#include "resolver/dnssec/sign.hpp"

#include <algorithm>

#include "resolver/wire/consts.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::dnssec {

namespace {

void put16(std::string& out, uint16_t v) {
    out += static_cast<char>(v >> 8);
    out += static_cast<char>(v & 0xff);
}
void put32(std::string& out, uint32_t v) {
    put16(out, static_cast<uint16_t>(v >> 16));
    put16(out, static_cast<uint16_t>(v & 0xffff));
}

// RFC 4034 3.1.3: the owner's labels, the root and a leading wildcard label not counted.
uint8_t labels_of(std::string_view owner) {
    unsigned n = wire::label_count(owner);
    if (n > 0 && owner.size() >= 2 && owner[0] == 1 && owner[1] == '*') --n;
    return static_cast<uint8_t>(n);
}

}  // namespace

std::string sign(const Key& key, std::string_view signer, const RRset& set, uint32_t inception, uint32_t expiration) {
    std::string rdata;
    put16(rdata, set.type);
    rdata += static_cast<char>(key.algorithm());
    rdata += static_cast<char>(labels_of(set.owner));
    put32(rdata, set.ttl);
    put32(rdata, expiration);
    put32(rdata, inception);
    put16(rdata, key.tag());
    rdata += signer;

    // RFC 4034 6.3: the RRs sorted by their RDATA as left-justified octet strings, each once.
    std::vector<std::string_view> sorted = set.rdatas;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::string data = rdata;
    for (std::string_view rd : sorted) {
        data += set.owner;
        put16(data, set.type);
        put16(data, wire::kClassIn);
        put32(data, set.ttl);
        put16(data, static_cast<uint16_t>(rd.size()));
        data += rd;
    }
    std::string signature = key.sign_data(data);
    if (signature.empty()) return "";
    return rdata + signature;
}

}  // namespace glbd::dnssec
