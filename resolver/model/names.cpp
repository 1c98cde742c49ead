#include "resolver/model/names.hpp"

#include <algorithm>
#include <cctype>

#include "resolver/base/address.hpp"
#include "resolver/model/endpoint.hpp"
#include "resolver/wire/consts.hpp"

namespace glbd::model {

bool is_cluster_id(std::string_view s) {
    return !s.empty() && s.size() <= wire::kMaxLabel && std::all_of(s.begin(), s.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
    });
}

bool is_group_name(std::string_view s) {
    constexpr size_t kMaxGroupName = 16;  // dns-operator's types.MaxGroupNameLength
    return !s.empty() && s.size() <= kMaxGroupName && std::all_of(s.begin(), s.end(), [](char ch) {
        return ch > ' ' && ch < 0x7f && std::string_view(";&,\"'=").find(ch) == std::string_view::npos;
    });
}

std::string active_groups_name(std::string_view zone_origin) {
    return "kuadrant-active-groups." + std::string(zone_origin);
}

bool is_instance_name(std::string_view s) {
    return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
    });
}

bool is_host_name(std::string_view s) {
    if (!s.empty() && s.back() == '.') s.remove_suffix(1);
    if (s.empty()) return false;
    for (char ch : s) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') return false;
    }
    auto last = s.substr(s.rfind('.') == std::string_view::npos ? 0 : s.rfind('.') + 1);
    return !std::all_of(last.begin(), last.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
}

// Read in one pass, without building the wire form: every peer's report checks each of its host names.
bool is_canonical_name(std::string_view s) {
    if (s == ".") return true;
    if (s.empty() || s.size() > 253 || s.back() == '.') return false;  // 253: its wire form within 255 bytes
    size_t label = 0;
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
        } else if (c <= ' ' || c >= 0x7f || c == '\\' || c == '"' || (c >= 'A' && c <= 'Z') || ++label > 63) {
            return false;
        }
    }
    return true;
}

bool is_lb_host_name(std::string_view s) {
    if (s.empty() || s == "." || !is_canonical_name(s)) return false;
    if (s.find('*', 1) != std::string_view::npos) return false;
    return s[0] != '*' || s.rfind("*.", 0) == 0;
}

bool is_endpoint(std::string_view s) { return Endpoint::parse(s).has_value(); }

bool is_custom_geo_code(std::string_view s) {
    return !s.empty() && s.size() <= 32 && std::all_of(s.begin(), s.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
    });
}

bool is_subdomain(std::string_view name, std::string_view origin) {
    if (name == origin) return true;
    return name.size() > origin.size() && name.substr(name.size() - origin.size()) == origin &&
           name[name.size() - origin.size() - 1] == '.';
}

bool is_api_server_url(std::string_view url) {
    if (url.rfind("https://", 0) == 0) return url.size() > 8;
    if (url.rfind("http://", 0) != 0) return false;
    size_t end = url.find_first_of("/?#", 7);
    std::string_view authority = url.substr(7, end == std::string_view::npos ? end : end - 7);
    if (authority.find('@') != std::string_view::npos) return false;  // no user info before the host
    std::string_view host = authority, rest;
    if (!authority.empty() && authority[0] == '[') {
        size_t close = authority.find(']');
        if (close == std::string_view::npos) return false;
        host = authority.substr(1, close - 1), rest = authority.substr(close + 1);
    } else {
        size_t colon = authority.find(':');
        host = authority.substr(0, colon);
        rest = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
    }
    if (!rest.empty() && (rest[0] != ':' || rest.size() == 1 ||
                          !std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; })))
        return false;
    if (host == "localhost") return true;
    Address a;
    return Address::parse(std::string(host), a) && a.is_loopback();
}

std::string canonical_name(std::string name) {
    if (!name.empty() && name.back() == '.') name.pop_back();
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
}

bool is_probe_path(std::string_view s) {
    if (s.empty() || s.size() > 2048 || (s[0] != '/' && s[0] != '?')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace glbd::model
