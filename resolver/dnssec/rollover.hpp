// resolver/dnssec/rollover — when a zone's keys may change (RFC 7583, the double-signature method), and
// since when each key has been published. Pure data and functions; the daemon keeps one on its control thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/dnssec/keys.hpp"

namespace glbd::dnssec {

// glbd signs every RRset with every key of its role, so a key added is at once in the DNSKEY set and on
// every answer: adding a key is always safe. Removing one is safe only once each key that stays has been
// published for `wait`: the longest a resolver may hold the DNSKEY set or an answer from before that key
// (the zone's largest TTL, negative answers' included, and the time the change takes to reach every
// server). Until then a resolver holding the old DNSKEY set, or an answer signed by the removed key alone,
// would fail to validate.
class KeyHistory {
public:
    // Every signed zone and its keys.
    using ZoneKeys = std::map<std::string, std::vector<std::shared_ptr<const Key>>>;
    // The signed zones' keys are `zones`' from `now_ms` on: a key not known yet is published now; keys and
    // zones no longer there are forgotten (published again later, they start over).
    void update(const ZoneKeys& zones, uint64_t now_ms);
    // When `key` was first published for `zone` (ms; 0 when it is not).
    [[nodiscard]] uint64_t published_at(const std::string& zone, const Key& key) const;
    // Whether `zone`'s keys may become `next` at `now_ms` (from what update() was last told): "" when they
    // may; else why not, naming the key and when the change may be made.
    [[nodiscard]] std::string check(const std::string& zone, const std::vector<std::shared_ptr<const Key>>& next,
                                    uint64_t now_ms, uint64_t wait_ms) const;

    // The parent's side of a KSK roll: a resolver follows the parent's DS set to the zone's KSKs, so a KSK
    // may go only once the parent's DS set points at a KSK that stays, and has for the DS set's TTL (a
    // resolver may hold the set from before it that long). What one of the parent zone's servers answered:
    struct ParentAnswer {
        std::string server;           // "192.0.2.53:53"
        std::string error;            // why it gave no answer; "" when it did
        std::vector<std::string> ds;  // the DS RDATAs (wire form) of its answer; none: an insecure delegation
        uint32_t ttl = 0;             // the DS set's TTL
    };
    // The KSKs (or CSKs) published for `zone` that `next` no longer has: the parent is asked only then.
    [[nodiscard]] std::vector<std::string> dropped_ksks(const std::string& zone,
                                                        const std::vector<std::shared_ptr<const Key>>& next) const;
    // Notes, at `now_ms`, which KSKs of `keys` every server's answer points at, since when (a KSK no longer
    // pointed at starts over; nothing changes when a server did not answer). Kept with the keys' history.
    void note_parent(const std::string& zone, const std::vector<std::shared_ptr<const Key>>& keys,
                     const std::vector<ParentAnswer>& answers, uint64_t now_ms);
    // Whether the KSKs dropped_ksks() names may go at `now_ms`, from `answers` (after note_parent): "" when
    // every server answered and its DS set is empty (no chain of trust to break), or they all point at a KSK
    // of `next`, as they have for the DS set's TTL; else why not, and what to do.
    [[nodiscard]] std::string check_parent(const std::string& zone, const std::vector<std::shared_ptr<const Key>>& next,
                                           const std::vector<ParentAnswer>& answers, uint64_t now_ms) const;

    // The history as text, kept in stateDir (kFileName) so that a restart is checked as a reload is: the line
    // "glbd-dnssec-keys 2", then one line a key: ZONE MS DNSKEY-RDATA (base64), and " ds=MS" when the parent's
    // DS set has pointed at it since then. Version 1 (without ds=) is read too.
    static constexpr const char* kFileName = "dnssec-keys";
    [[nodiscard]] std::string to_text() const;
    // Reads what to_text() wrote, strictly: another first line, a line that is not a zone name, a time in ms
    // and a DNSKEY RDATA (base64, 4 to 2048 bytes) and an optional ds=MS, a key twice, or more than kMaxKeys
    // keys, and nothing is taken: false, with `error` naming the line and the problem.
    static constexpr size_t kMaxKeys = 1024;
    bool from_text(std::string_view text, std::string& error);

private:
    struct Published {
        uint64_t at = 0;       // first published, ms
        uint64_t ds_seen = 0;  // since when the parent's DS set points at it (ms), or 0
    };
    std::map<std::string, std::map<std::string, Published>> published_;  // zone -> DNSKEY RDATA -> times
};

}  // namespace glbd::dnssec
