// resolver/snapshot/signed — a signed zone's RRSIGs, made when a snapshot is built (README.md): its static
// RRsets (through a cache, so an unchanged set is not signed again at every build) and each host's answer
// RRsets, every set a plan can answer with. Control and building threads only; never the query path.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "resolver/snapshot/snapshot.hpp"

namespace glbd {

// The static RRsets' signatures of the last builds, by the set's bytes and its zone's signer: a set signed
// before is not signed again until its refresh time. Control thread only.
class SignatureCache {
public:
    // Signs every RRset of `zone` the zone is authoritative for (not the NS of a cut, nor glue below one),
    // the SOA copy in `zone.soa` too; from the cache when made within the refresh window. Returns the first
    // refresh time of the zone's signatures (0 for an unsigned zone).
    uint32_t sign_zone(Zone& zone, uint32_t now);
    // Forgets every set no build used since the last call: the cache holds one build's sets.
    void sweep();
    [[nodiscard]] size_t size() const { return sets_.size(); }

private:
    struct Made {
        std::string rrsigs;  // as HostSignatures::store() writes them
        uint32_t made = 0;
        bool used = false;
    };
    std::unordered_map<std::string, Made> sets_;
};

// Signs each RRset `b`'s plan can answer with (see HostSignatures), with `signer`, at `now`. A set that
// `before` (the host as the last build left it, or null) also answers with keeps the signatures it has
// there, when the same signer made them and they are not yet due (before its refresh_at, not after `now`):
// a change re-signs only the sets it changed. A set several of the plan's blocks answer with is signed and
// stored once. Any thread; `before` is read only. Adds to `count` the distinct sets signed anew and kept.
struct SignCount {
    size_t made = 0, kept = 0;  // RRsets
    size_t deferred = 0;        // hosts left to sign (defer_host)
};
void sign_host(HostBlock& b, const dnssec::ZoneSigner& signer, uint32_t now, const HostBlock* before, SignCount& count);
// `b` with no signature yet (HostSignatures::deferred), due at `now`: its types, for the NSEC of a denial at
// its name, and nothing else. Counts the host in `count.deferred`.
void defer_host(HostBlock& b, uint32_t now, SignCount& count);

}  // namespace glbd
