#include "server/app/peer_keys.hpp"

#include <netdb.h>

#include <random>

#include "resolver/dnssec/keys.hpp"
#include "resolver/wire/builder.hpp"
#include "resolver/wire/consts.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"
#include "server/app/udp_ask.hpp"

namespace glbd {
namespace {

constexpr uint16_t kDnskey = 48;

// What a member said to a DNSKEY query: "" and the set's RDATAs, or what went wrong.
struct Asked {
    std::string error;
    std::vector<std::string> rdatas;
};

Asked ask_dnskey(const sockaddr_storage& to, socklen_t to_len, const std::string& zone, int timeout_ms) {
    Asked out;
    auto qname = wire::name_to_wire(zone);
    if (!qname) return {"not a zone name", {}};
    const auto id = static_cast<uint16_t>(std::random_device{}());
    wire::Builder q;
    q.u16(id), q.u16(0), q.u16(1), q.u16(0), q.u16(0), q.u16(1);  // one question, one OPT; RD clear
    q.bytes(*qname), q.u16(kDnskey), q.u16(wire::kClassIn);
    q.u8(0), q.u16(wire::type::OPT), q.u16(1232), q.u32(0), q.u16(0);  // OPT: no options
    std::string error;
    const std::vector<uint8_t> answer = udp_ask(to, to_len, q.vec(), timeout_ms, error);
    if (answer.empty()) return {error, {}};
    const uint8_t* r = answer.data();
    const size_t n = answer.size();
    uint16_t flags = wire::get16(r + 2);
    if ((flags & 0x0200) != 0) return {"the answer is truncated", {}};
    if ((flags & 0xf) != 0) return {"it answers " + wire::rcode_name(flags & 0xf), {}};
    wire::Records records(r, n, wire::skip_questions(r, n, wire::kHeaderSize, wire::get16(r + 4)));
    wire::Record rr;
    for (unsigned i = 0, an = wire::get16(r + 6); i < an && records.next(rr); ++i) {
        if (rr.type == kDnskey) out.rdatas.emplace_back(reinterpret_cast<const char*>(r + rr.rdata), rr.rdlen);
    }
    return out;
}

}  // namespace

std::vector<std::string> peer_key_report(const conf::Config& config, int timeout_ms) {
    std::vector<std::string> out;
    if (!config.peers) return out;
    std::vector<std::string> ours;  // per zone: the set this config publishes ("" unsigned)
    for (const auto& z : config.zones) ours.push_back(z.dnssec ? dnssec::published_id(z.dnssec->keys) : "");
    auto name = [](const std::string& id) { return id.empty() ? std::string("none (unsigned)") : id; };
    for (const auto& m : config.peers->members) {
        bool own = false;
        for (const auto& l : config.listen.dns) own |= l.str() == m.str();
        if (own) continue;
        addrinfo hints{}, *found = nullptr;
        hints.ai_socktype = SOCK_DGRAM;
        hints.ai_flags = AI_NUMERICSERV;
        if (::getaddrinfo(m.host.c_str(), std::to_string(m.port).c_str(), &hints, &found) != 0 || !found) {
            out.push_back("warning: peer " + m.str() + ": cannot look up its address; its DNSKEY sets not compared");
            continue;
        }
        sockaddr_storage to{};
        auto to_len = static_cast<socklen_t>(std::min<size_t>(found->ai_addrlen, sizeof to));
        std::memcpy(&to, found->ai_addr, to_len);
        ::freeaddrinfo(found);
        for (size_t i = 0; i < config.zones.size(); ++i) {
            const auto& z = config.zones[i];
            Asked a = ask_dnskey(to, to_len, z.origin, timeout_ms);
            std::string where = "zone " + z.origin + ": peer " + m.str();
            if (!a.error.empty()) {
                out.push_back("warning: " + where + ": DNSKEY not compared: " + a.error);
                continue;
            }
            std::string theirs = a.rdatas.empty() ? "" : dnssec::published_id(a.rdatas);
            if (theirs == ours[i]) {
                out.push_back(where + " publishes the same DNSKEY set (" + name(ours[i]) + ")");
            } else {
                out.push_back("warning: " + where + " publishes DNSKEY " + name(theirs) + ", this config " +
                              name(ours[i]) + ": resolvers that ask both fail to validate");
            }
        }
    }
    return out;
}

}  // namespace glbd
