// sync/transfer/tsig — TSIG (RFC 8945, hmac-sha256) on raw DNS messages: sign by appending the TSIG record,
// verify by recomputing the MAC. Works on wire bytes so that large transfers need no packet objects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glbd::tsig {

struct Key {
    std::string name;    // wire form, lower case
    std::string secret;  // raw bytes (decoded from base64)
    static Key from(const std::string& name, const std::string& base64_secret);
};

enum class Status { ok, unsigned_, badkey, badsig, badtime, malformed };

// The most clock difference a signature may claim (its fudge) that we accept, in seconds.
constexpr uint16_t kMaxFudge = 300;

// Whether HMAC-SHA256 computes correctly here (RFC 4231 test vector): false with an OpenSSL configured
// without it, where every MAC would come out empty. glbd refuses to start with peers then.

// Appends a TSIG record to `msg` (whose ARCOUNT does not yet count it). `prior_mac` is the request's
// MAC for a response, the previous message's for the next ones of a transfer (then `timers_only`).
// Returns the new MAC.
std::string sign(std::vector<uint8_t>& msg, const Key& key, const std::string& prior_mac, bool timers_only,
                 uint64_t now_s, uint16_t fudge = 300);

bool hmac_works();

// Verifies the TSIG record that ends `msg`. On success `mac` holds its MAC. A MAC that cannot be computed
// fails (badsig); a time outside min(the signer's fudge, kMaxFudge) of `now_s` is badtime.
Status verify(const uint8_t* msg, size_t len, const Key& key, const std::string& prior_mac, bool timers_only,
              uint64_t now_s, std::string* mac);

}  // namespace glbd::tsig
