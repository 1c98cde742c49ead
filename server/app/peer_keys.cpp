#include "server/app/peer_keys.hpp"

#include <netdb.h>

#include <random>

#include "resolver/dnssec/keys.hpp"
#include "resolver/wire/consts.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/text.hpp"
#include "server/app/dns_ask.hpp"

namespace glbd {
namespace {

// What a member said to a DNSKEY query: "" and the set's RDATAs, or what went wrong.
struct Asked {
    std::string error;
    std::vector<std::string> rdatas;
};

Asked ask_dnskey(const SocketAddress& to, const std::string& zone, int timeout_ms) {
    Asked out;
    auto qname = wire::name_to_wire(zone);
    if (!qname) return {"not a zone name", {}};
    wire::QueryOptions o;
    o.id = static_cast<uint16_t>(std::random_device{}());
    auto answer = dns_ask(to, wire::make_query(*qname, wire::type::DNSKEY, o), timeout_ms);
    if (!answer) return {answer.error(), {}};
    wire::Header h;
    wire::read_header(answer->data(), answer->size(), h);
    if (h.rcode() != wire::rcode::NOERROR) return {"it answers " + wire::rcode_name(h.rcode()), {}};
    wire::ResponseRecords records(answer->data(), answer->size());
    wire::Record rr;
    wire::Section section{};
    while (records.next(rr, section)) {
        if (section == wire::Section::answer && rr.type == wire::type::DNSKEY)
            out.rdatas.emplace_back(reinterpret_cast<const char*>(answer->data() + rr.rdata), rr.rdlen);
    }
    if (!records.ok()) return {"its answer is malformed", {}};
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
        SocketAddress to;
        bool usable = SocketAddress::from_sockaddr(found->ai_addr, to);
        ::freeaddrinfo(found);
        if (!usable) {
            out.push_back("warning: peer " + m.str() + ": not an IP address; its DNSKEY sets not compared");
            continue;
        }
        for (size_t i = 0; i < config.zones.size(); ++i) {
            const auto& z = config.zones[i];
            Asked a = ask_dnskey(to, z.origin, timeout_ms);
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
