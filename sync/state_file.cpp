#include "sync/state_file.hpp"

#include "resolver/base/atomic_file.hpp"
#include "resolver/base/read_file.hpp"
#include "resolver/wire/consts.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace glbd::sync {

namespace {

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

// The origin's outside probing and verdicts, its health checks, and each host's in runs over the hosts'
// order ("COUNT:CHECK COUNT:CHECK ...").
void put_health(std::string& out, const InstanceState& s) {
    if (s.probes_outside) out += ',', put_key(out, "probesOutside"), out += "true";
    if (!s.outside.empty()) out += ',', put_key(out, "outside"), put_string(out, format_outside(s.outside));
    if (s.checks.empty()) return;
    std::string all;  // format_check's texts, a line each (a path may hold any other printable byte)
    for (const SharedCheck& c : s.checks) all += (all.empty() ? "" : "\n") + format_check(c);
    out += ',', put_key(out, "checks"), put_string(out, all);
    // Each host's check (0: none) in runs over the hosts' order: "COUNT:CHECK COUNT:CHECK ...".
    std::string runs;
    for (size_t i = 0; i < s.hosts.size();) {
        size_t j = i;
        while (j < s.hosts.size() && s.hosts[j].check == s.hosts[i].check) ++j;
        runs += (runs.empty() ? "" : " ") + std::to_string(j - i) + ":" + std::to_string(s.hosts[i].check);
        i = j;
    }
    out += ',', put_key(out, "checkRuns"), put_string(out, runs);
}

void put_state(std::string& out, const InstanceState& s) {
    out += '{';
    put_key(out, "cluster"), put_string(out, s.cluster);
    out += ',', put_key(out, "instance"), put_string(out, s.instance);
    out += ',', put_key(out, "incarnation"), out += std::to_string(s.incarnation);
    out += ',', put_key(out, "version"), out += std::to_string(s.version);
    out += ',', put_key(out, "heartbeat"), out += std::to_string(s.heartbeat);
    // The count first, so a reader holds the hosts in one array of the right size (no growing, no copies).
    out += ',', put_key(out, "hostCount"), out += std::to_string(s.hosts.size());
    put_health(out, s);  // before the hosts, so that a reader numbers each host's check as it reads it
    out += ',', put_key(out, "hosts"), out += '[';
    // [name, ttl, [[target, healthy], ...], [weight, geo, defaultGeo] or null, entry], the last two only when
    // there is one of them.
    for (size_t i = 0; i < s.hosts.size(); ++i) {
        const HostEntry& h = s.hosts[i];
        if (i) out += ',';
        out += '[', put_string(out, h.host), out += ',', out += std::to_string(h.ttl), out += ",[";
        for (size_t k = 0; k < h.endpoints.size(); ++k) {
            if (k) out += ',';
            out += '[', put_string(out, h.endpoints[k].target.str()),
                out += h.endpoints[k].healthy ? ",true]" : ",false]";
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
    if (!s.forgotten.empty()) {  // "cluster/instance incarnation heartbeat at;...", as the reports' forget= records
        std::string all;
        for (const auto& [origin, t] : s.forgotten) all += (all.empty() ? "" : ";") + format_forgotten(origin, t);
        out += ',', put_key(out, "forgotten"), put_string(out, all);
    }
    if (!s.dnskeys.empty()) {  // "zone id;zone id"; readers before it skip the key
        std::string all;
        for (const auto& [zone, id] : s.dnskeys) all += (all.empty() ? "" : ";") + format_zone_keys(zone, id);
        out += ',', put_key(out, "dnskeys"), put_string(out, all);
    }
    if (s.active_groups.at_ms) {  // "a&&b" as the TXT joins them, and when they were set (or cleared)
        out += ',', put_key(out, "activeGroups"), put_string(out, join_groups(s.active_groups.groups));
        out += ',', put_key(out, "activeGroupsAt"), out += std::to_string(s.active_groups.at_ms);
        if (s.active_groups.cleared) out += ',', put_key(out, "activeGroupsCleared"), out += "true";
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

Status save_state_file(const std::string& dir, const std::vector<InstanceState>& states, uint64_t saved_ms) {
    return save_file(dir, kStateFileName, [&](std::ostream& out) { write_state_file(out, states, saved_ms); });
}

StateFileRead read_state_dir(const std::string& dir) {
    StateFileRead out;
    auto text = read_file(dir + "/" + kStateFileName, kMaxStateFileBytes, &out.missing);
    if (!text) {
        if (!out.missing) out.error = text.error();
        return out;
    }
    try {
        out.origins = read_state_file(*text);
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    return out;
}

StateReadAhead::~StateReadAhead() {
    if (read_.valid()) read_.wait();
}

void StateReadAhead::begin(const std::string& dir) noexcept {
    if (begun_) return;
    begun_ = true;
    try {
        dir_ = dir;
        read_ = std::async(std::launch::async, read_state_dir, dir_);
    } catch (const std::exception&) {
        // No thread (or no memory for the path): the service reads the file itself, as without a read-ahead.
    }
}

std::optional<StateFileRead> StateReadAhead::take(const std::string& dir) {
    if (!read_.valid() || dir != dir_) return std::nullopt;
    return read_.get();
}

}  // namespace glbd::sync
