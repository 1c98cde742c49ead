// sync/groups — failover groups as dns-operator (>= 0.16) has them: each cluster may belong to a group, and
// the active groups are a set kept as the TXT record `kuadrant-active-groups.<zone>`, "version=1;groups=a&&b",
// or set through glbd's admin API. A cluster whose group is not active stands by: its entries are answered only
// while no entry of an active (or ungrouped) cluster is usable for the host (docs/kuadrant.md). Pure data and
// functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glbd::sync {

// The active groups as set (or cleared) through one origin's admin API (`glbd groups`) at `at_ms` on its clock;
// of every origin's, the latest wins (as an override does). at_ms 0: never set.
struct ActiveGroups {
    std::vector<std::string> groups;  // sorted, each once, each model::is_group_name; empty when cleared
    uint64_t at_ms = 0;
    bool cleared = false;  // `glbd groups clear`: no set of the admin's from then on
    bool operator==(const ActiveGroups&) const = default;
};

// The active groups in force, the same on every server that holds the same reports: the latest admin set
// (pinned: it holds until cleared, whatever a record says), else the groups of the records
// `kuadrant-active-groups.<zone>` that the clusters' DNSRecords publish (each cluster's glbd lets only the
// namespaces of its kubernetes.groupsFrom write one), joined; else none, and every group is active.
struct GroupsInForce {
    std::vector<std::string> groups;  // sorted, each once
    bool pinned = false;              // the admin's set, made at `at_ms`
    uint64_t at_ms = 0;
    // Each groups record in the view, as written: (cluster, text), by cluster; several texts that differ are a
    // mistake of the fleet's set-up, and their groups are joined.
    std::vector<std::pair<std::string, std::string>> records;
    bool operator==(const GroupsInForce&) const = default;
};

constexpr uint32_t kActiveGroupsTtl = 60;  // dns-operator's GroupRecordTTL
// Group names joined with "&&" (as the TXT record and glbd's own report and state file hold them), and split
// again: empty parts are kept (a set read back is checked whole: check_report); at most `max` + 1 parts.
std::string join_groups(const std::vector<std::string>& groups);
std::vector<std::string> split_groups(std::string_view list, size_t max);
// The TXT record's text: "version=1", then ";groups=a&&b" when any (sorted), as dns-operator's plugin writes it.
std::string format_active_groups(const std::vector<std::string>& groups);
// The groups in a TXT record's text (its strings joined), read as dns-operator's getActiveGroups reads them:
// ';'-separated pairs, a pair without exactly one '=' skipped, "groups" split on "&&", empty parts skipped;
// quotes around the whole text are dropped first, as dns-operator's CLI drops them (its records may hold them
// literally). A name that is not a group name (model::is_group_name) is skipped too. Sorted, each once.
std::vector<std::string> parse_active_groups(std::string_view text);
// `list` as a set of group names (sorted, each once); nullopt and the bad name in `bad` when one is not valid.
std::optional<std::vector<std::string>> group_set(const std::vector<std::string>& list, std::string* bad);
// Whether a cluster of `group` stands by under the set in force (none: no cluster stands by, every group is
// active). Ungrouped clusters never stand by.
bool stands_by(const std::string& group, const std::optional<GroupsInForce>& in_force);

}  // namespace glbd::sync
