#include "sync/zone_keys.hpp"

#include <charconv>

namespace glbd::sync {

std::string format_zone_keys(const std::string& zone, const std::string& id) { return zone + " " + id; }

namespace {
bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'; }
bool hex_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool valid_tags(std::string_view tags) {
    size_t count = 0;
    while (true) {
        size_t comma = tags.find(',');
        std::string_view t = tags.substr(0, comma);
        unsigned n = 0;
        auto r = std::from_chars(t.data(), t.data() + t.size(), n);
        if (t.empty() || t.size() > 5 || r.ec != std::errc() || r.ptr != t.data() + t.size() || n > 65535) return false;
        if (++count > 16) return false;
        if (comma == std::string_view::npos) return true;
        tags.remove_prefix(comma + 1);
    }
}
}  // namespace

bool parse_zone_keys(std::string_view v, ZoneKeys& out) {
    size_t sp1 = v.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : v.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || out.size() >= kMaxSignedZones) return false;
    std::string_view zone = v.substr(0, sp1), tags = v.substr(sp1 + 1, sp2 - sp1 - 1), digest = v.substr(sp2 + 1);
    if (zone.empty() || zone.size() > 253 || zone.front() == '.' || zone.back() == '.') return false;
    for (char c : zone) {
        if (!name_char(c)) return false;
    }
    if (!valid_tags(tags) || digest.size() != 16) return false;
    for (char c : digest) {
        if (!hex_char(c)) return false;
    }
    return out.emplace(std::string(zone), std::string(v.substr(sp1 + 1))).second;
}

std::vector<std::string> key_mismatches(const std::vector<std::string>& served, const ZoneKeys& own,
                                        const ZoneKeys& peer) {
    std::vector<std::string> out;
    for (const auto& zone : served) {
        auto a = own.find(zone), b = peer.find(zone);
        bool same = a == own.end() ? b == peer.end() : b != peer.end() && a->second == b->second;
        if (!same) out.push_back(zone);
    }
    return out;
}

}  // namespace glbd::sync
