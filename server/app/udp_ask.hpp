#pragma once
// One blocking DNS exchange over UDP, for the command line's own questions (glbd check asking a member for its
// DNSKEY set, glbd demo asking its clusters). Never on a server thread: it waits up to `timeout_ms`.
#include <sys/socket.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace glbd {

// Sends `query` to `to` and returns the first datagram that comes back with the query's id within
// `timeout_ms` (a late answer to an earlier query is skipped). Empty, with `error` saying why, when none does
// or the socket cannot be used; an answer shorter than a DNS header counts as none.
std::vector<uint8_t> udp_ask(const sockaddr_storage& to, socklen_t to_len, std::span<const uint8_t> query,
                             int timeout_ms, std::string& error);

}  // namespace glbd
