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

    // The history as text, kept in stateDir (kFileName) so that a restart is checked as a reload is: the line
    // "glbd-dnssec-keys 1", then one line a key: ZONE MS DNSKEY-RDATA (base64).
    static constexpr const char* kFileName = "dnssec-keys";
    [[nodiscard]] std::string to_text() const;
    // Reads what to_text() wrote, strictly: another first line, a line that is not a zone name, a time in ms
    // and a DNSKEY RDATA (base64, 4 to 2048 bytes), a key twice, or more than kMaxKeys keys, and nothing is
    // taken: false, with `error` naming the line and the problem.
    static constexpr size_t kMaxKeys = 1024;
    bool from_text(std::string_view text, std::string& error);

private:
    std::map<std::string, std::map<std::string, uint64_t>> published_;  // zone -> DNSKEY RDATA -> ms
};

}  // namespace glbd::dnssec
