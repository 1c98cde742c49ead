// sync/groups — failover groups: the active-groups record's name, text and reading (see groups.hpp).
#include "sync/groups.hpp"

#include <algorithm>

#include "resolver/model/names.hpp"

namespace glbd::sync {

std::string join_groups(const std::vector<std::string>& groups) {
    std::string out;
    for (const auto& g : groups) out += (out.empty() ? "" : "&&") + g;
    return out;
}

std::vector<std::string> split_groups(std::string_view list, size_t max) {
    std::vector<std::string> out;
    while (!list.empty() && out.size() <= max) {
        size_t amp = list.find("&&");
        out.emplace_back(list.substr(0, amp));
        if (amp == std::string_view::npos) break;
        list.remove_prefix(amp + 2);
    }
    return out;
}

std::string format_active_groups(const std::vector<std::string>& groups) {
    return groups.empty() ? "version=1" : "version=1;groups=" + join_groups(groups);
}

namespace {
void sort_unique(std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}
}  // namespace

std::vector<std::string> parse_active_groups(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty() && text.front() == '"') text.remove_prefix(1);
    while (!text.empty() && text.back() == '"') text.remove_suffix(1);
    while (true) {
        size_t semi = text.find(';');
        std::string_view pair = text.substr(0, semi);
        size_t eq = pair.find('=');
        if (eq != std::string_view::npos && pair.find('=', eq + 1) == std::string_view::npos &&
            pair.substr(0, eq) == "groups") {
            constexpr size_t kMaxRead = 1024;
            for (auto& g : split_groups(pair.substr(eq + 1), kMaxRead)) {
                if (model::is_group_name(g)) out.push_back(std::move(g));
            }
        }
        if (semi == std::string_view::npos) break;
        text.remove_prefix(semi + 1);
    }
    sort_unique(out);
    return out;
}

std::optional<std::vector<std::string>> group_set(const std::vector<std::string>& list, std::string* bad) {
    for (const auto& g : list) {
        if (!model::is_group_name(g)) {
            if (bad) *bad = g;
            return std::nullopt;
        }
    }
    std::vector<std::string> out = list;
    sort_unique(out);
    return out;
}

bool stands_by(const std::string& group, const std::optional<GroupsInForce>& in_force) {
    if (group.empty() || !in_force) return false;
    return !std::binary_search(in_force->groups.begin(), in_force->groups.end(), group);
}

}  // namespace glbd::sync
