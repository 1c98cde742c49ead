#include "resolver/wire/consts.hpp"

namespace glbd::wire {
namespace {

struct Named {
    uint16_t value;
    const char* name;
};

constexpr Named kRcodes[] = {{rcode::NOERROR, "NOERROR"},   {rcode::FORMERR, "FORMERR"}, {rcode::SERVFAIL, "SERVFAIL"},
                             {rcode::NXDOMAIN, "NXDOMAIN"}, {rcode::NOTIMP, "NOTIMP"},   {rcode::REFUSED, "REFUSED"},
                             {rcode::YXDOMAIN, "YXDOMAIN"}, {rcode::YXRRSET, "YXRRSET"}, {rcode::NXRRSET, "NXRRSET"},
                             {rcode::NOTAUTH, "NOTAUTH"},   {rcode::NOTZONE, "NOTZONE"}, {rcode::BADVERS, "BADVERS"}};

constexpr Named kTypes[] = {
    {type::A, "A"},         {type::NS, "NS"},       {type::CNAME, "CNAME"},   {type::SOA, "SOA"},
    {type::PTR, "PTR"},     {type::MX, "MX"},       {type::TXT, "TXT"},       {type::AAAA, "AAAA"},
    {type::SRV, "SRV"},     {type::DNAME, "DNAME"}, {type::OPT, "OPT"},       {type::DS, "DS"},
    {type::RRSIG, "RRSIG"}, {type::NSEC, "NSEC"},   {type::DNSKEY, "DNSKEY"}, {type::TSIG, "TSIG"},
    {type::IXFR, "IXFR"},   {type::AXFR, "AXFR"},   {type::MAILB, "MAILB"},   {type::MAILA, "MAILA"},
    {type::ANY, "ANY"},     {type::CAA, "CAA"},     {type::NXNAME, "NXNAME"}};

}  // namespace

std::string rcode_name(uint16_t rcode) {
    for (const Named& n : kRcodes) {
        if (n.value == rcode) return n.name;
    }
    return "RCODE" + std::to_string(rcode);
}

std::string type_name(uint16_t t) {
    for (const Named& n : kTypes) {
        if (n.value == t) return n.name;
    }
    return "TYPE" + std::to_string(t);
}

std::optional<uint16_t> type_from_name(std::string_view name) {
    for (const Named& n : kTypes) {
        if (name == n.name) return n.value;
    }
    return std::nullopt;
}

}  // namespace glbd::wire
