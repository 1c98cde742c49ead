#include "sync/state_file.hpp"

#include "resolver/wire/consts.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <streambuf>

namespace glbd::sync {

namespace {

// An ostream's buffer writing to a file descriptor, 64 KiB at a time.
class FdStreambuf : public std::streambuf {
public:
    explicit FdStreambuf(int fd) : fd_(fd), buf_(size_t{64} << 10) { setp(buf_.data(), buf_.data() + buf_.size()); }
    [[nodiscard]] bool ok() const { return ok_; }

protected:
    int_type overflow(int_type ch) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) *pptr() = traits_type::to_char_type(ch), pbump(1);
        return traits_type::not_eof(ch);
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain() {
        for (char* p = pbase(); p < pptr();) {
            ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ok_ = false;
                break;
            }
            p += n;
        }
        setp(buf_.data(), buf_.data() + buf_.size());
        return ok_;
    }
    int fd_;
    std::vector<char> buf_;
    bool ok_ = true;
};

// ---- writing: straight to text, no JSON tree per origin

// A JSON string. What the store holds was checked (names, addresses, codes: ASCII), yet a byte that is not
// printable ASCII is written as \u00XX rather than trusted to be UTF-8, so the file is always valid JSON.
void put_string(std::string& out, std::string_view v) {
    out += '"';
    for (unsigned char c : v) {
        if (c == '"' || c == '\\') {
            out += '\\', out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7f) {
            static const char* hex = "0123456789abcdef";
            out += "\\u00";
            out += hex[c >> 4], out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
}

void put_key(std::string& out, const char* key) { out += '"', out += key, out += "\":"; }

void put_state(std::string& out, const InstanceState& s) {
    out += '{';
    put_key(out, "cluster"), put_string(out, s.cluster);
    out += ',', put_key(out, "instance"), put_string(out, s.instance);
    out += ',', put_key(out, "incarnation"), out += std::to_string(s.incarnation);
    out += ',', put_key(out, "version"), out += std::to_string(s.version);
    out += ',', put_key(out, "heartbeat"), out += std::to_string(s.heartbeat);
    // The count first, so a reader holds the hosts in one array of the right size (no growing, no copies).
    out += ',', put_key(out, "hostCount"), out += std::to_string(s.hosts.size());
    out += ',', put_key(out, "hosts"), out += '[';
    // [name, ttl, [[target, healthy], ...], [weight, geo, defaultGeo] or null, entry], the last two only when
    // there is one of them.
    for (size_t i = 0; i < s.hosts.size(); ++i) {
        const HostEntry& h = s.hosts[i];
        if (i) out += ',';
        out += '[', put_string(out, h.host), out += ',', out += std::to_string(h.ttl), out += ",[";
        for (size_t k = 0; k < h.endpoints.size(); ++k) {
            if (k) out += ',';
            out += '[', put_string(out, h.endpoints[k].target), out += h.endpoints[k].healthy ? ",true]" : ",false]";
        }
        out += ']';
        if (h.load_balancing) {
            out += ",[", out += std::to_string(h.load_balancing->weight), out += ',';
            put_string(out, h.load_balancing->geo);
            out += h.load_balancing->default_geo ? ",true]" : ",false]";
        } else if (!h.entry.empty()) {
            out += ",null";
        }
        if (!h.entry.empty()) out += ',', put_string(out, h.entry);
        out += ']';
    }
    out += "],";
    put_key(out, "overrides"), out += '{';
    bool first = true;
    for (const auto& [t, e] : s.overrides) {
        if (!first) out += ',';
        first = false;
        put_string(out, t), out += ':';
        out += '{', put_key(out, "state"), put_string(out, state_name(e.state));
        out += ',', put_key(out, "at"), out += std::to_string(e.at_ms), out += '}';
    }
    out += '}';
    if (s.location) out += ',', put_key(out, "location"), put_string(out, format_location(*s.location));
    if (!s.group.empty()) out += ',', put_key(out, "group"), put_string(out, s.group);
    if (!s.reach.empty()) out += ',', put_key(out, "reach"), put_string(out, join_reach(s.reach));
    if (!s.dnskeys.empty()) {  // "zone id;zone id"; readers before it skip the key
        std::string all;
        for (const auto& [zone, id] : s.dnskeys) all += (all.empty() ? "" : ";") + format_zone_keys(zone, id);
        out += ',', put_key(out, "dnskeys"), put_string(out, all);
    }
    if (s.active_groups.at_ms) {  // "a&&b" as the TXT joins them, and when they were set
        out += ',', put_key(out, "activeGroups"), put_string(out, join_groups(s.active_groups.groups));
        out += ',', put_key(out, "activeGroupsAt"), out += std::to_string(s.active_groups.at_ms);
    }
    if (!s.records.empty()) {  // [name, type, ttl, [data, ...]]; readers before it skip the key
        out += ',', put_key(out, "records"), out += '[';
        for (size_t i = 0; i < s.records.size(); ++i) {
            const ZoneRecord& z = s.records[i];
            out += i ? ",[" : "[";
            put_string(out, z.name), out += ',', put_string(out, wire::type_name(z.type));
            out += ',', out += std::to_string(z.ttl), out += ",[";
            for (size_t k = 0; k < z.data.size(); ++k) {
                if (k) out += ',';
                put_string(out, z.data[k]);
            }
            out += "]]";
        }
        out += ']';
    }
    out += '}';
}

}  // namespace

std::string state_json(const InstanceState& s) {
    std::string out;
    put_state(out, s);
    return out;
}

void write_state_file(std::ostream& out, const std::vector<InstanceState>& states, uint64_t saved_ms) {
    out << "{\"format\":" << kStateFileFormat << ",\"saved\":" << saved_ms << ",\"origins\":[";
    std::string one;
    for (size_t i = 0; i < states.size(); ++i) {
        one.clear();
        put_state(one, states[i]);
        if (i) out << ',';
        out << one;
    }
    out << "]}\n";
}

// The temporary file is created afresh (O_EXCL: never one that exists; O_NOFOLLOW: never through a link
// someone put there), readable by glbd's user only, synced, then renamed over state.json, and the directory
// synced, so that a crash leaves the old file or the new one, whole.
bool save_state_file(const std::string& dir, const std::vector<InstanceState>& states, uint64_t saved_ms,
                     std::string* error) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string path = dir + "/" + kStateFileName, tmp = path + ".tmp";
    ::unlink(tmp.c_str());  // a leftover (or a planted link) goes; unlink never follows a link
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *error = "cannot create " + tmp + ": " + std::strerror(errno);
        return false;
    }
    FdStreambuf buf(fd);
    std::ostream out(&buf);
    write_state_file(out, states, saved_ms);
    out.flush();
    bool ok = out.good() && buf.ok() && ::fsync(fd) == 0;
    ok = ::close(fd) == 0 && ok;
    if (!ok) {
        *error = "cannot write " + tmp + ": " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        *error = "cannot rename " + tmp + ": " + std::strerror(errno);
        return false;
    }
    if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
        ::fsync(d);
        ::close(d);
    }
    return true;
}

}  // namespace glbd::sync
