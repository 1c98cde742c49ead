// resolver/responder — internal to resolver/: the state of one answer in progress, shared by the stages in
// resolver.cpp and the load-balanced selection in select.cpp. Nothing here allocates, locks or throws.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "resolver/cookie.hpp"
#include "resolver/resolver.hpp"
#include "resolver/snapshot.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::detail {

using wire::kHeaderSize;
using wire::kMaxName;
using wire::Writer;

inline constexpr uint16_t kFlagQR = 0x8000, kFlagAA = 0x0400, kFlagTC = 0x0200, kFlagRD = 0x0100, kFlagCD = 0x0010;
inline constexpr uint16_t kOptEcs = 8;
inline constexpr uint16_t kOptCookie = 10;
inline constexpr size_t kCookieOptLen = 4 + cookie::kClientLen + cookie::kServerLen;  // what we send
inline constexpr int kMaxChain = 8;
inline constexpr uint32_t kShortTtl = 10;

struct Query {
    // header
    uint16_t id = 0, flags = 0, qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
    // question
    uint8_t qname_buf[kMaxName];
    std::string_view qname;  // lower-case wire form
    unsigned labels = 0;     // of qname
    size_t question_end = 0;
    uint16_t qtype = 0, qclass = 0;
    // EDNS
    bool edns = false, do_bit = false;
    uint8_t edns_version = 0;
    uint16_t payload = 512;
    bool ecs = false;
    uint16_t ecs_family = 0;
    uint8_t ecs_source = 0;
    uint8_t ecs_addr[16] = {};
    uint8_t ecs_addr_len = 0;
    bool cookie = false;  // a COOKIE option (RFC 7873): the client's 8 bytes, and a server cookie if any
    uint8_t client_cookie[cookie::kClientLen] = {};
    const uint8_t* server_cookie = nullptr;
    uint8_t server_cookie_len = 0;
};

enum class LookupKind { exact, wildcard, delegation, nxdomain };
struct Lookup {
    LookupKind kind = LookupKind::nxdomain;
    Zone::Ref ref;         // the node found (exact or wildcard) or the cut
    std::string_view cut;  // delegation point (suffix of the looked-up name)
};

// A piece of a host's plan (see plan:: in snapshot.hpp).
template <class T>
inline const T& at(const std::byte* plan, uint32_t offset) {
    return *reinterpret_cast<const T*>(plan + offset);
}

class Responder {
public:
    Responder(const Snapshot& snap, const uint8_t* q, size_t len, const Client& client, uint8_t* out, size_t cap,
              QueryInfo& info)
        : snap_(snap), msg_(q), len_(len), client_(client), w_(out, cap), cap_(cap), info_(info) {}

    size_t run();

private:
    // stages
    Outcome parse();
    Outcome parse_additional(size_t pos);
    Outcome parse_opt(size_t rdata, size_t rdlen, uint16_t payload, uint32_t ttl);
    Outcome classify();
    Outcome resolve();
    size_t finish(Outcome outcome);

    // helpers
    Lookup lookup(const Zone& z, std::string_view name, unsigned labels);
    bool host_answer(const Zone::Ref& ref, std::string_view owner, bool owner_is_qname, std::string_view* cname_target);
    const plan::Group* choose_group(const std::byte* plan, bool& fallback, bool& fail_open);
    // Owner, type, class, TTL and a zero RDLENGTH; returns where RDLENGTH is, for finish_rr().
    size_t begin_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl);
    void finish_rr(size_t rdlen_at);
    void write_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, const RData& rd);
    void write_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, const uint8_t* rdata,
                  size_t len);
    // A record whose rdata is one (compressible) name, e.g. a CNAME to a hostname endpoint.
    void write_name_rr(std::string_view owner, bool owner_is_qname, uint16_t type, uint32_t ttl, std::string_view target);
    void write_rrset(std::string_view owner, bool owner_is_qname, const RRset& set);
    void write_soa(const Zone& z);
    void add_glue(const RRset& set);
    void count(int section) { ++counts_[section]; }
    geo::Location locate();

    const Snapshot& snap_;
    uint8_t server_cookie_[cookie::kServerLen] = {};
    const uint8_t* msg_;
    size_t len_;
    const Client& client_;
    Writer w_;
    size_t cap_;
    QueryInfo& info_;
    Query q_;
    uint16_t rflags_ = 0;
    uint8_t rcode_ = 0;
    uint16_t ext_rcode_ = 0;
    uint16_t counts_[3] = {0, 0, 0};  // answer, authority, additional
    int section_ = 0;
    bool question_written_ = false;
    size_t question_end_out_ = kHeaderSize;
    uint8_t scope_ = 0;
    bool short_ttl_ = false;
    bool located_ = false;
    geo::Location loc_;
    size_t limit_ = 512;
    const Zone* qzone_ = nullptr;  // the zone of the question name
};


}  // namespace glbd::detail
