// resolver/ — query bytes in, response bytes out, from one immutable Snapshot. No sockets, no locks,
// no allocation, never throws. The network layer calls answer() and sends whatever it returns.
#pragma once

#include <cstddef>
#include <cstdint>

#include "geo/geo.hpp"
#include "resolver/snapshot/snapshot.hpp"

namespace glbd {

enum class Transport : uint8_t { udp, tcp };

// The longest CNAME chain followed inside our zones for one answer (explain follows the same).
inline constexpr int kMaxCnameChain = 8;

// What happened to a query, for metrics and tests.
enum class Outcome : uint8_t {
    answer,      // positive answer (possibly a CNAME chain)
    nodata,      // the name exists, the type does not
    nxdomain,    // the name does not exist
    delegation,  // a referral below a zone cut
    refused,     // outside our zones, a zone transfer, or a class we do not serve
    formerr,     // malformed query
    notimp,      // opcode or meta type we do not implement
    badvers,     // EDNS version above 0
    dropped,     // not answered at all (too short, or a response)
};
inline constexpr size_t kOutcomes = static_cast<size_t>(Outcome::dropped) + 1;  // counters are sized from it
// Response codes counted one by one: 0..22 (BADVERS is 16), and every other one in the last slot.
inline constexpr size_t kCountedRcodes = 24;

// How many signatures answering may make now (online signing costs some 34 us each, ECDSA P-256: a flood of
// random names with DO would otherwise be signed before the rate limiter drops most of it). The server gives
// one per UDP worker (per second, for the thread and for each client prefix) and one per TCP connection; none:
// no bound (tests, explain). Called on the query's thread; never blocks, never allocates.
class SigningBudget {
public:
    virtual ~SigningBudget() = default;
    // Whether one more signature may be made for `client` now; `cookie_valid`: its address is proven by a
    // DNS cookie (a larger share).
    virtual bool take(const geo::Address& client, bool cookie_valid) noexcept = 0;
};

struct Client {
    geo::Address address;  // the packet's source
    Transport transport = Transport::udp;
    SigningBudget* signing = nullptr;  // none: sign whatever the answer needs
};

struct QueryInfo {
    Outcome outcome = Outcome::dropped;
    uint16_t qtype = 0;
    uint8_t rcode = 0;
    bool truncated = false;
    bool fallback = false;          // answered from a group reached because a preferred one was unusable
    bool fail_open = false;         // no usable entry anywhere: answered as if all were healthy
    int host = -1;                  // the load-balanced host answered (the first, along a CNAME chain), if any
    int entry = -1;                 // the entry chosen for it (-1 for a simple host)
    uint32_t counter = kNoCounter;  // that host's (or entry's) answers counter id, if any
    bool varies = false;  // a random draw chose the answer (or a fresh cookie): the same query may get another one
    bool cookie_valid = false;  // the query carried a server cookie we made for its address (RFC 7873)
    // A signature the answer needed was not made (over the client's SigningBudget): the server sends it
    // truncated over UDP (the client asks again over TCP) and REFUSED over TCP, never unsigned.
    bool over_signing_budget = false;
    // How that host's answer was chosen, for the query log (describe_answer): the role of the group that
    // answered ("country", "continent", "nearest", ...) and where the client was placed (a view into the
    // snapshot's geo data, valid while the snapshot is).
    const char* group = nullptr;
    std::string_view located;  // the client's geo code; empty when unknown or never asked
    uint8_t located_by = 0;    // geo::Location::Source
    uint8_t located_prefix = 0;
    bool by_ecs = false;  // placed by the query's EDNS Client Subnet, not its source address
};

// Writes the response to `query` into `out` (at most `cap` bytes) and returns its length; 0 means
// send nothing. UDP answers respect the client's EDNS payload size (512 without EDNS) and the
// snapshot's udp_payload, truncating with TC=1 when the answer does not fit.
size_t answer(const Snapshot& snap, const uint8_t* query, size_t len, const Client& client, uint8_t* out, size_t cap,
              QueryInfo* info = nullptr) noexcept;

// Seeds the calling thread's generator for weighted choices (tests use a fixed seed).
void seed_selection(uint64_t seed) noexcept;

}  // namespace glbd
