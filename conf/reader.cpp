// conf/reader.cpp — typed reads of the document's nodes, each problem recorded with its location.
#include "conf/reader.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "resolver/base/number.hpp"
#include "resolver/wire/text.hpp"

namespace glbd::conf {

std::string Error::str() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += ": ";
    if (!path.empty()) out += path + ": ";
    return out + message;
}

std::string SockAddr::str() const {
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

socklen_t SockAddr::to_sockaddr(sockaddr_storage& out) const {
    Address a;
    if (!Address::parse(host, a)) throw std::runtime_error("address " + str() + " is not numeric");
    return a.to_sockaddr(port, out);
}

std::optional<Millis> parse_duration(std::string_view s) {
    if (s.empty()) return std::nullopt;
    int64_t total = 0;
    size_t i = 0;
    while (i < s.size()) {
        int64_t n = 0;
        size_t digits = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            n = n * 10 + (s[i++] - '0');
            if (++digits > 9) return std::nullopt;
        }
        if (digits == 0) return std::nullopt;
        std::string_view unit = s.substr(i, 2);
        if (unit == "ms") {
            total += n, i += 2;
        } else if (!unit.empty() && unit[0] == 's') {
            total += n * 1000, i += 1;
        } else if (!unit.empty() && unit[0] == 'm') {
            total += n * 60'000, i += 1;
        } else if (!unit.empty() && unit[0] == 'h') {
            total += n * 3'600'000, i += 1;
        } else if (!unit.empty() && unit[0] == 'd') {
            total += n * 86'400'000, i += 1;
        } else {
            return std::nullopt;
        }
    }
    return Millis{total};
}

void Reader::error(const Node& at, const std::string& path, std::string message) {
    errors_.push_back(Error{file_, at.line() >= 0 ? at.line() + 1 : 0, at.column() >= 0 ? at.column() + 1 : 0, path,
                            std::move(message)});
}

void Reader::error_at_line(int line, const std::string& path, std::string message) {
    errors_.push_back(Error{file_, line, 1, path, std::move(message)});
}

namespace {

// Levenshtein distance between two keys, case-insensitive (both are short: a row of numbers suffices).
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            const size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = row[j];
            row[j] = next;
        }
    }
    return row[b.size()];
}

// " (did you mean \"KEY\"?)" for the allowed key nearest a misspelt one: at most 2 edits, and fewer than a
// third of its length (so "ttl" does not suggest "tls"); "" when none is that near.
std::string nearest_key(std::string_view key, std::initializer_list<std::string_view> allowed) {
    std::string_view best;
    size_t best_distance = std::min<size_t>(3, std::max<size_t>(1, key.size() / 3 + 1));
    for (std::string_view a : allowed) {
        if (size_t d = edit_distance(key, a); d < best_distance) best = a, best_distance = d;
    }
    return best.empty() ? "" : " (did you mean \"" + std::string(best) + "\"?)";
}

}  // namespace

bool Reader::map(const Node& n, const std::string& path, std::initializer_list<std::string_view> allowed) {
    if (!n.is_map()) {
        error(n, path, std::string("must be a mapping, got ") + kind(n));
        return false;
    }
    std::set<std::string> seen;
    for (auto [k, v] : n.pairs()) {
        const std::string key(k.scalar());
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            error(k, join(path, key), "unknown key" + nearest_key(key, allowed));
        } else if (!seen.insert(key).second) {
            error(k, join(path, key), "duplicate key");
        }
    }
    return true;
}

bool Reader::seq(const Node& n, const std::string& path) {
    if (!n.is_sequence()) {
        error(n, path, std::string("must be a list, got ") + kind(n));
        return false;
    }
    return true;
}

std::optional<std::string> Reader::str(const Node& n, const std::string& path) {
    if (!n.is_scalar()) {
        error(n, path, std::string("must be a string, got ") + kind(n));
        return std::nullopt;
    }
    return std::string(n.scalar());
}

std::optional<int64_t> Reader::integer(const Node& n, const std::string& path, int64_t lo, int64_t hi) {
    auto bad = [&] {
        error(n, path, "must be an integer " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + shown(n));
        return std::nullopt;
    };
    if (!n.is_scalar()) return bad();
    const std::string_view s = n.scalar();
    const bool negative = !s.empty() && s[0] == '-';
    uint64_t magnitude = 0;  // digits alone (at most 18 with the sign: no overflow)
    if (s.size() > 18 || !parse_unsigned(s.substr(negative ? 1 : 0), magnitude)) return bad();
    const int64_t v = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    if (v < lo || v > hi) return bad();
    return v;
}

std::optional<bool> Reader::boolean(const Node& n, const std::string& path) {
    if (n.is_scalar()) {
        const std::string_view s = n.scalar();
        if (s == "true" || s == "True" || s == "TRUE") return true;
        if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    error(n, path, "must be true or false, got " + shown(n));
    return std::nullopt;
}

std::optional<Millis> Reader::duration(const Node& n, const std::string& path, Millis lo, Millis hi) {
    std::optional<Millis> d;
    if (n.is_scalar()) d = parse_duration(n.scalar());
    if (!d) {
        error(n, path, "must be a duration such as 500ms, 5s or 1m, got " + shown(n));
        return std::nullopt;
    }
    if (*d < lo || *d > hi) {
        error(n, path,
              "must be between " + std::to_string(lo.count()) + "ms and " + std::to_string(hi.count()) + "ms, got " +
                  shown(n));
        return std::nullopt;
    }
    return d;
}

std::optional<SockAddr> Reader::sockaddr(const Node& n, const std::string& path, bool names) {
    auto s = str(n, path);
    if (!s) return std::nullopt;
    SockAddr a;
    std::string port;
    if (!s->empty() && (*s)[0] == '[') {
        auto close = s->find(']');
        if (close == std::string::npos || close + 1 >= s->size() || (*s)[close + 1] != ':') {
            error(n, path, "must be HOST:PORT or [IPv6]:PORT, got \"" + *s + "\"");
            return std::nullopt;
        }
        a.host = s->substr(1, close - 1);
        port = s->substr(close + 2);
    } else {
        auto colon = s->rfind(':');
        if (colon == std::string::npos || s->find(':') != colon) {
            error(n, path, "must be HOST:PORT or [IPv6]:PORT, got \"" + *s + "\"");
            return std::nullopt;
        }
        a.host = s->substr(0, colon);
        port = s->substr(colon + 1);
    }
    bool port_ok = !port.empty() && port.size() <= 5 &&
                   std::all_of(port.begin(), port.end(), [](char c) { return std::isdigit(c); });
    if (!port_ok || std::stoi(port) > 65535) {
        error(n, path, "port must be 0..65535, got \"" + port + "\"");
        return std::nullopt;
    }
    a.port = static_cast<uint16_t>(std::stoi(port));
    if (!is_ip(a.host) && !(names && wire::name_to_wire(a.host))) {
        error(n, path, "\"" + a.host + "\" is not an IP address" + (names ? " or a host name" : ""));
        return std::nullopt;
    }
    return a;
}

std::optional<SocketAddress> Reader::socket_address(const Node& n, const std::string& path) {
    auto a = sockaddr(n, path, false);
    SocketAddress out;
    if (!a || !Address::parse(a->host, out.address)) return std::nullopt;
    out.port = a->port;
    return out;
}

const char* Reader::kind(const Node& n) {
    switch (n.kind()) {
        case Node::Kind::map: return "a mapping";
        case Node::Kind::sequence: return "a list";
        case Node::Kind::scalar: return "a scalar";
        case Node::Kind::null:
        case Node::Kind::undefined: break;
    }
    return "nothing";
}

std::optional<std::string> Section::choice(const char* key, std::initializer_list<std::string_view> choices) {
    auto s = str(key);
    if (!s) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return s;
    std::string list;
    size_t i = 0;
    for (auto c : choices) {
        list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(c);
        ++i;
    }
    error(key, "must be " + list + ", got \"" + *s + "\"");
    return std::nullopt;
}

}  // namespace glbd::conf
