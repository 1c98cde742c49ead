// sync/zone_keys — the DNSKEY sets instances publish, as their reports carry them, and which differ from
// ours. Pure data and functions.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace glbd::sync {

// The DNSKEY set an instance publishes for each zone it signs: zone (lower case, no trailing dot) -> its id
// as dnssec::published_id() makes it, "12345,33420 0123456789abcdef". A zone served unsigned is absent.
using ZoneKeys = std::map<std::string, std::string>;
inline constexpr size_t kMaxSignedZones = 64;  // in one report

// "glb.example.com 12345,33420 0123456789abcdef": one zone's entry, in a report's origin record and stateDir.
std::string format_zone_keys(const std::string& zone, const std::string& id);
// Adds the entry `v` to `out`. False (nothing added) when it is not a name (1..253 characters of letters
// in lower case, digits, '-', '_' and '.'), 1 to 16 tags of 0..65535 and 16 hex digits, or when `out`
// already holds kMaxSignedZones zones or this one.
bool parse_zone_keys(std::string_view v, ZoneKeys& out);

// The zones of `served` whose keys `peer` publishes otherwise than `own` does: signed with another set, or
// signed by one of the two only. Zones the peer signs and we do not serve are its own business.
std::vector<std::string> key_mismatches(const std::vector<std::string>& served, const ZoneKeys& own,
                                        const ZoneKeys& peer);

}  // namespace glbd::sync
