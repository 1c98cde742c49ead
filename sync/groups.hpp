// sync/groups — failover groups as dns-operator (>= 0.16) has them: each cluster may belong to a group, and
// the active groups are a set kept as the TXT record `kuadrant-active-groups.<zone>`, "version=1;groups=a&&b".
// A cluster whose group is not active stands by: its entries are answered only while no entry of an active
// (or ungrouped) cluster is usable for the host (docs/kuadrant.md). Pure data and functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glbd::sync {

// The active groups as set through one origin (the admin API, `glbd groups`, or a DNSRecord holding the TXT)
// at `at_ms` on its clock; of every origin's, the latest set wins (as an override does). at_ms 0: never set.
struct ActiveGroups {
    std::vector<std::string> groups;  // sorted, each once, each conf::is_group_name
    uint64_t at_ms = 0;
    bool operator==(const ActiveGroups&) const = default;
};

// The name of the record dns-operator queries: "kuadrant-active-groups.<zone origin>".
std::string active_groups_name(std::string_view zone_origin);
constexpr uint32_t kActiveGroupsTtl = 60;  // dns-operator's GroupRecordTTL
// Group names joined with "&&" (as the TXT record and glbd's own report and state file hold them), and split
// again: empty parts are kept (a set read back is checked whole: check_report); at most `max` + 1 parts.
std::string join_groups(const std::vector<std::string>& groups);
std::vector<std::string> split_groups(std::string_view list, size_t max);
// The TXT record's text: "version=1", then ";groups=a&&b" when any (sorted), as dns-operator's plugin writes it.
std::string format_active_groups(const std::vector<std::string>& groups);
// The groups in a TXT record's text (its strings joined), read as dns-operator's getActiveGroups reads them:
// ';'-separated pairs, a pair without exactly one '=' skipped, "groups" split on "&&", empty parts skipped.
// A name that is not a group name (conf::is_group_name) is skipped too. Sorted, each once.
std::vector<std::string> parse_active_groups(std::string_view text);
// `list` as a set of group names (sorted, each once); nullopt and the bad name in `bad` when one is not valid.
std::optional<std::vector<std::string>> group_set(const std::vector<std::string>& list, std::string* bad);
// Whether a cluster of `group` stands by under `active` (no set in force: every grouped cluster does, as
// dns-operator finds no record and treats every group as inactive). Ungrouped clusters never stand by.
bool stands_by(const std::string& group, const std::optional<ActiveGroups>& active);

}  // namespace glbd::sync
