// server/app/peer_keys — `glbd check`'s look at the peers: whether each configured member serves the DNSKEY
// sets this config would publish. Asked over UDP, once, with a timeout; never on a server's threads.
#pragma once

#include <string>
#include <vector>

#include "conf/config.hpp"

namespace glbd {

// One line per (zone, member): "zone Z: peer ADDR publishes the same DNSKEY set (...)", or a warning (the line
// starts with "warning: ") when its set differs, it answers without one or with an error, or does not answer
// within `timeout_ms`. Members that are this config's own listen addresses are skipped; a member given by
// name is looked up. Without peers, nothing.
std::vector<std::string> peer_key_report(const conf::Config& config, int timeout_ms);

}  // namespace glbd
