// server/app/dns_ask — glbd as a DNS client, one blocking exchange: the command line's questions (glbd check
// asking each member for its DNSKEY set, glbd demo's own answers) and the daemon's rare one (the parent's DS at
// a KSK change, on a reload, over TCP alone). UDP, then TCP when the answer is truncated (RFC 7766 5). Messages are
// made and read with resolver/wire/query.hpp. Never on a query thread: it waits up to its timeout per transport.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "resolver/base/address.hpp"
#include "resolver/base/result.hpp"

namespace glbd {

// The response to `query` from `server`: the first with the query's id and QR set within `timeout_ms` (a late
// answer to an earlier query is skipped); asked again over TCP, with the same timeout, when it is truncated.
Result<std::vector<uint8_t>> dns_ask(const SocketAddress& server, std::span<const uint8_t> query, int timeout_ms);
// The same over TCP only, all within `timeout_ms`: where an answer must come from the server itself (the parent's
// DS at a KSK change: a datagram's source is easily forged, a TCP connection's is not).
Result<std::vector<uint8_t>> dns_ask_tcp(const SocketAddress& server, std::span<const uint8_t> query, int timeout_ms);

}  // namespace glbd
