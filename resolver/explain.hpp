// resolver/explain — why a client gets the answer it gets, for /v1/explain and `glbd explain`. The choice of
// group is select::choose() on the host's plan (the answer path's own function) and the answer is answer()'s
// for a query built as the client would send it, so the explanation and the real answer cannot disagree.
// Control thread; allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "geo/geo.hpp"
#include "resolver/resolver.hpp"
#include "resolver/snapshot/snapshot.hpp"

namespace glbd {

struct ExplainRequest {
    std::string name;                    // presentation form
    uint16_t qtype = 1;                  // A
    geo::Address client;                 // the resolver's address (ECS absent)
    std::optional<geo::Address> subnet;  // an ECS client subnet: its address and...
    uint8_t subnet_len = 0;              // ...its source prefix length
};

struct Explanation {
    std::string error;  // set when the name cannot be explained (then only `serial` is meaningful)
    uint32_t serial = 0;
    std::string zone, host;  // presentation forms; `host` may be a wildcard that matched
    // The CNAMEs followed from the name asked to the host ("www.example.com CNAME shop.example.com"), in order.
    std::vector<std::string> cnames;
    bool load_balanced = false;
    // Where the client is and which data said so.
    bool located = false;  // false: the host's answer does not depend on the client
    std::string country, continent, located_by;
    unsigned prefix = 0;
    // The client's point for the nearest fallback: the database's coordinates, or its country's point.
    bool has_point = false, point_from_database = false;
    float lat = 0, lon = 0;
    // Each group tried, in order: role (country, continent, defaultGeo, all), its geo code, and what
    // happened: "no group" (nothing for that code), "no entry", "none usable", "chosen", "not needed".
    struct Step {
        std::string role, geo, result;
        double km = -1;  // the nearest step: the group's distance from the client
    };
    std::vector<Step> steps;
    bool fallback = false, fail_open = false;
    // The chosen group's entries (for a simple host, every cluster's), with their endpoints' health.
    struct Endpoint {
        std::string target;
        bool healthy = false;
    };
    struct Candidate {
        std::string cluster, geo;
        std::string entry;  // its name in its cluster ("" for a cluster's only entry)
        unsigned weight = 0;
        bool usable = false;
        std::vector<Endpoint> endpoints;
        bool standby = false;  // not usable because its failover group is not active
    };
    std::vector<Candidate> candidates;
    // The real answer to this client now (one weighted draw).
    std::string rcode;
    std::vector<std::string> answers;  // "A 192.0.2.1", "CNAME target"
    uint32_t ttl = 0;
    unsigned scope = 0;  // the ECS scope answered (with a subnet)
};

Explanation explain(const Snapshot& snap, const ExplainRequest& req);

// One line on how answer() chose a load-balanced answer, from what it noted in `info` (for the query log's
// dnstap `extra`): host=NAME cluster=ID entry=NAME geo=CODE group=ROLE client=CODE/by/PREFIX(ecs|source)
// fallback=yes|no fail-open=yes|no serial=N. Empty when the answer was no load-balanced host's. Writes at
// most `cap` bytes into `out`; returns the length. Query threads: no allocation, no exception.
size_t describe_answer(const Snapshot& snap, const QueryInfo& info, char* out, size_t cap) noexcept;

}  // namespace glbd
