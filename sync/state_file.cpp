#include "sync/state_file.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace glbd::sync {

namespace {

nlohmann::json to_json(const InstanceState& s) {
    nlohmann::json hosts = nlohmann::json::array();
    for (const auto& h : s.hosts) {
        nlohmann::json eps = nlohmann::json::array();
        for (const auto& e : h.endpoints) eps.push_back({{"target", e.target}, {"healthy", e.healthy}});
        nlohmann::json jh{{"host", h.host}, {"ttl", h.ttl}, {"endpoints", eps}};
        if (h.load_balancing) {
            jh["loadBalancing"] = {{"weight", h.load_balancing->weight}, {"geo", h.load_balancing->geo},
                                   {"defaultGeo", h.load_balancing->default_geo}};
        }
        hosts.push_back(jh);
    }
    nlohmann::json ov = nlohmann::json::object();
    for (const auto& [t, e] : s.overrides) ov[t] = {{"state", state_name(e.state)}, {"at", e.at_ms}};
    nlohmann::json out{{"cluster", s.cluster}, {"instance", s.instance}, {"incarnation", s.incarnation}, {"version", s.version},
                       {"heartbeat", s.heartbeat}, {"hosts", hosts}, {"overrides", ov}};
    if (s.location) out["location"] = format_location(*s.location);
    return out;
}

// An unsigned integer field no larger than `max`. nlohmann's get<uint16_t>() would cast 70000 or -1 silently.
uint64_t uint_at(const nlohmann::json& j, const char* key, uint64_t max) {
    const auto& v = j.at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
        throw std::out_of_range(std::string("\"") + key + "\": " + v.dump() + " is not an integer 0.." + std::to_string(max));
    }
    return v.get<uint64_t>();
}

InstanceState from_json(const nlohmann::json& j) {
    InstanceState s;
    s.cluster = j.at("cluster").get<std::string>();
    s.instance = j.at("instance").get<std::string>();
    s.incarnation = j.contains("incarnation") ? uint_at(j, "incarnation", UINT64_MAX) : 0;
    s.version = uint_at(j, "version", UINT64_MAX);
    s.heartbeat = j.contains("heartbeat") ? uint_at(j, "heartbeat", UINT64_MAX) : 0;
    if (j.contains("location")) {
        s.location = parse_location(j.at("location").get<std::string>());
        if (!s.location) throw std::out_of_range("\"location\": " + j.at("location").dump() + " is not \"LAT,LON\"");
    }
    auto array_at = [](const nlohmann::json& o, const char* key) -> const nlohmann::json& {
        const auto& v = o.at(key);
        if (!v.is_array()) throw std::out_of_range(std::string("\"") + key + "\" is not an array");
        return v;
    };
    for (const auto& jh : array_at(j, "hosts")) {
        HostEntry h{jh.at("host").get<std::string>(), static_cast<uint32_t>(uint_at(jh, "ttl", 2147483647)), std::nullopt, {}};
        if (jh.contains("loadBalancing")) {
            const auto& lb = jh["loadBalancing"];
            h.load_balancing = conf::LoadBalancing{static_cast<uint16_t>(uint_at(lb, "weight", 65535)),
                                                   lb.at("geo").get<std::string>(), lb.at("defaultGeo").get<bool>()};
        }
        for (const auto& e : array_at(jh, "endpoints")) {
            h.endpoints.push_back(EndpointState{e.at("target").get<std::string>(), e.at("healthy").get<bool>()});
        }
        s.hosts.push_back(std::move(h));
    }
    if (!j.at("overrides").is_object()) throw std::out_of_range("\"overrides\" is not an object");
    for (const auto& [t, e] : j.at("overrides").items()) {
        std::string st = e.at("state").get<std::string>();
        if (st != "up" && st != "down" && st != "auto") throw std::out_of_range("override state \"" + st + "\"");
        s.overrides[t] = OverrideEntry{st == "up" ? OverrideState::up : st == "down" ? OverrideState::down : OverrideState::automatic,
                                       uint_at(e, "at", UINT64_MAX)};
    }
    return s;
}

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

}  // namespace

std::string state_json(const InstanceState& s) { return to_json(s).dump(-1, ' ', false, kReplace); }

void write_state_file(std::ostream& out, const std::vector<InstanceState>& states, uint64_t saved_ms) {
    out << "{\"saved\":" << saved_ms << ",\"origins\":[";
    for (size_t i = 0; i < states.size(); ++i) out << (i ? "," : "") << state_json(states[i]);
    out << "]}\n";
}

std::vector<InstanceState> read_state_file(std::istream& in) {
    // Each origin is converted as soon as it is parsed and dropped from the document.
    std::vector<InstanceState> origins;
    bool in_origins = false;
    nlohmann::json rest = nlohmann::json::parse(in, [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        if (event == E::key && depth == 1) in_origins = parsed == "origins";
        if (event == E::object_end && depth == 2 && in_origins) {
            origins.push_back(from_json(parsed));
            return false;
        }
        return true;
    });
    if (!rest.is_object() || !rest.contains("origins") || !rest["origins"].is_array()) {
        throw std::runtime_error("no \"origins\" array");
    }
    return origins;
}

}  // namespace glbd::sync
