// sync/state_file_read — reading state.json (state_file.hpp): events from nlohmann's SAX parser straight
// into InstanceStates, no JSON tree at all.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <istream>
#include <iterator>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "resolver/base/number.hpp"
#include "resolver/wire/consts.hpp"
#include "sync/state_file.hpp"

namespace glbd::sync {

namespace {

using json = nlohmann::json;

// Reads each ';'-separated part of `all` with `read`: the first part it refuses, or nullopt.
template <typename Read>
std::optional<std::string> each_part(const std::string& all, Read read) {
    for (size_t at = 0; at < all.size();) {
        const size_t end = std::min(all.find(';', at), all.size());
        if (!read(std::string_view(all).substr(at, end - at))) return all.substr(at, end - at);
        at = end + 1;
    }
    return std::nullopt;
}

class Reader final : public nlohmann::json_sax<json> {
public:
    std::vector<InstanceState> origins;
    bool saw_origins = false;

    Reader() = default;
    // A reader of origin objects alone, each a text of its own (read_origins_alone): as if inside "origins".
    struct OriginsOnly {};
    explicit Reader(OriginsOnly) : stack_{In::origins}, seen_stack_{0}, item_stack_{0} {}

    bool null() override { return scalar(Value{}); }
    bool boolean(bool v) override { return scalar(Value{Value::flag_, 0, v, {}}); }
    bool number_integer(number_integer_t v) override {
        return v < 0 ? scalar(Value{Value::other, 0, false, std::to_string(v)})
                     : scalar(Value{Value::number_, static_cast<uint64_t>(v), false, {}});
    }
    bool number_unsigned(number_unsigned_t v) override { return scalar(Value{Value::number_, v, false, {}}); }
    bool number_float(number_float_t, const string_t& text) override {
        return scalar(Value{Value::other, 0, false, text});
    }
    bool string(string_t& v) override { return scalar(Value{Value::text_, 0, false, std::move(v)}); }
    bool binary(binary_t&) override { return scalar(Value{}); }
    bool key(string_t& k) override {
        key_ = std::move(k);
        return true;
    }
    bool start_object(std::size_t) override { return open(true); }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& e) override {
        throw std::runtime_error("byte " + std::to_string(at) + ": " + e.what());
    }

private:
    // Where the parser is: each open object or array, what it is.
    // A host is an object (format 1) or a row (format 2): [name, ttl, [[target, healthy], ...], [weight, geo,
    // defaultGeo]], the last one only when the host has loadBalancing.
    enum class In {
        top,
        origins,
        origin,
        hosts,
        host,
        balancing,
        endpoints,
        endpoint,
        overrides,
        override_,
        host_row,
        row_endpoints,
        endpoint_row,
        balancing_row,
        records,
        record_row,
        record_data,
        skip
    };
    struct Value {
        enum Kind { none, flag_, number_, text_, other } kind = none;
        uint64_t number = 0;
        bool flag = false;
        std::string text;
    };
    std::vector<In> stack_;
    std::string key_;
    unsigned seen_ = 0;  // required fields seen in the object being read (bits)
    std::vector<unsigned> seen_stack_;
    uint32_t item_ = 0;  // in a row: the place of the next value
    std::vector<uint32_t> item_stack_;
    InstanceState cur_;
    HostList most_;            // the largest origin's hosts so far: the next origins' names share their texts
    NameSharer names_;         // (reading most_ from its start for each origin)
    uint64_t host_count_ = 0;  // the origin's "hostCount", when it came before its "hosts"
    // The origin's "checkRuns" (before its hosts): (count, check) over the hosts' rows in order, read or not;
    // the run the next row is in, and how many rows of it came.
    std::vector<std::pair<uint64_t, uint16_t>> check_runs_;
    size_t run_ = 0;
    uint64_t run_used_ = 0;

    uint16_t next_check() {
        while (run_ < check_runs_.size() && run_used_ == check_runs_[run_].first) ++run_, run_used_ = 0;
        if (run_ == check_runs_.size()) return 0;
        ++run_used_;
        return check_runs_[run_].second;
    }
    std::string override_target_;
    std::string host_unreadable_;  // the host being read has an endpoint that is not one: why
    OverrideEntry override_{};

    [[noreturn]] static void bad(const std::string& why) { throw std::out_of_range(why); }
    static std::string quoted(const std::string& k) { return "\"" + k + "\""; }
    uint64_t number(const Value& v, uint64_t max) const {
        if (v.kind != Value::number_ || v.number > max) {
            bad(quoted(key_) + ": " +
                (v.kind == Value::text_ ? "\"" + v.text + "\""
                 : v.text.empty()       ? std::to_string(v.number)
                                        : v.text) +
                " is not an integer 0.." + std::to_string(max));
        }
        return v.number;
    }
    std::string text(Value& v) const {
        if (v.kind != Value::text_) bad(quoted(key_) + " is not a string");
        return std::move(v.text);
    }
    // An endpoint's target; one that is neither an address nor a host name leaves its host out (at the host's
    // end), not the file.
    Endpoint endpoint(Value& v) {
        std::string t = text(v);
        if (auto ep = Endpoint::parse(t)) return *ep;
        if (host_unreadable_.empty()) host_unreadable_ = "bad endpoint " + t;
        return Endpoint{};
    }
    bool flag(const Value& v) const {
        if (v.kind != Value::flag_) bad(quoted(key_) + " is not true or false");
        return v.flag;
    }
    In at() const { return stack_.empty() ? In::top : stack_.back(); }

    bool scalar(Value v) {
        if (stack_.empty()) bad("the file is not a JSON object");
        switch (at()) {
            case In::top:
                if (key_ == "origins") bad("\"origins\" is not an array");
                if (key_ == "format" && number(v, UINT32_MAX) > kStateFileFormat) {
                    throw std::runtime_error("format " + std::to_string(v.number) + " is newer than this glbd reads (" +
                                             std::to_string(kStateFileFormat) + ")");
                }
                break;
            case In::origins: bad("an origin is not an object");
            case In::origin: origin_field(v); break;
            case In::hosts: bad("a host is not an object or a row");
            case In::host_row: host_row_item(v); break;
            case In::row_endpoints: bad("an endpoint is not a row");
            case In::endpoint_row: endpoint_row_item(v); break;
            case In::balancing_row: balancing_row_item(v); break;
            case In::records: bad("a record is not a row");
            case In::record_row: record_row_item(v); break;
            case In::record_data: cur_.records.back().data.push_back(text(v)); break;
            case In::host: host_field(v); break;
            case In::balancing: balancing_field(v); break;
            case In::endpoints: bad("an endpoint is not an object");
            case In::endpoint: endpoint_field(v); break;
            case In::overrides: bad("override " + quoted(key_) + " is not an object");
            case In::override_: override_field(v); break;
            case In::skip: break;
        }
        return true;
    }

    // A value of an origin object (format 1 and 2).
    void origin_field(Value& v) {
        if (key_ == "cluster") {
            cur_.cluster = text(v), seen_ |= 1;
        } else if (key_ == "instance") {
            cur_.instance = text(v), seen_ |= 2;
        } else if (key_ == "version") {
            cur_.version = number(v, UINT64_MAX), seen_ |= 4;
        } else if (key_ == "incarnation") {
            cur_.incarnation = number(v, UINT64_MAX);
        } else if (key_ == "heartbeat") {
            cur_.heartbeat = number(v, UINT64_MAX);
        } else if (key_ == "hostCount") {
            host_count_ = number(v, UINT64_MAX);  // a hint: capped, never trusted
        } else if (key_ == "location") {
            std::string where = text(v);
            cur_.location = parse_location(where);
            if (!cur_.location) bad("\"location\": \"" + where + "\" is not \"LAT,LON\"");
        } else if (key_ == "group") {
            cur_.group = text(v);  // checked with the rest (check_report)
        } else if (key_ == "reach") {
            std::string where = text(v);
            if (!parse_reach(where, cur_.reach)) bad("\"reach\": \"" + where + "\" is not a list of addresses");
        } else if (key_ == "probesOutside") {
            cur_.probes_outside = flag(v);
        } else if (key_ == "outside") {  // format_outside's lines
            std::string why;
            if (!parse_outside(text(v), cur_.outside, why)) bad("\"outside\": " + why);
        } else if (key_ == "checks") {  // format_check's texts, a line each
            std::string all = text(v);
            for (size_t at = 0; at <= all.size() && !all.empty();) {
                size_t end = std::min(all.find('\n', at), all.size());
                SharedCheck c;
                std::string why;
                if (cur_.checks.size() == ReportLimits::kMaxChecks) bad("\"checks\": more than its limit");
                if (!parse_check(std::string_view(all).substr(at, end - at), c, why)) bad("\"checks\": " + why);
                cur_.checks.push_back(std::move(c));
                at = end + 1;
            }
        } else if (key_ == "checkRuns") {  // "COUNT:CHECK ...": each host's check, in runs over the hosts' order
            std::string all = text(v);
            for (size_t at = 0; at < all.size();) {
                size_t end = std::min(all.find(' ', at), all.size());
                std::string_view run = std::string_view(all).substr(at, end - at);
                size_t colon = run.find(':');
                uint64_t count = 0, check = 0;
                if (colon == std::string_view::npos || !parse_unsigned(run.substr(0, colon), count) ||
                    !parse_unsigned(run.substr(colon + 1), check, 0, ReportLimits::kMaxChecks)) {
                    bad("\"checkRuns\": \"" + std::string(run) + "\" is not COUNT:CHECK");
                }
                check_runs_.emplace_back(count, static_cast<uint16_t>(check));
                at = end + 1;
            }
        } else if (key_ == "forgotten") {  // "cluster/instance incarnation heartbeat at;...", as forget= records
            std::string all = text(v);
            auto part = each_part(all, [&](std::string_view p) { return parse_forgotten(p, cur_.forgotten); });
            if (part) bad("\"forgotten\": \"" + *part + "\" is not a forgotten instance");
        } else if (key_ == "dnskeys") {  // "zone id;zone id", as the report's dnskey= strings
            std::string all = text(v);
            auto part = each_part(all, [&](std::string_view p) { return parse_zone_keys(p, cur_.dnskeys); });
            if (part) bad("\"dnskeys\": \"" + *part + "\" is not a zone's DNSKEY set");
        } else if (key_ == "activeGroups") {
            cur_.active_groups.groups = split_groups(text(v), ReportLimits::kMaxGroups);  // checked later
        } else if (key_ == "activeGroupsAt") {
            cur_.active_groups.at_ms = number(v, UINT64_MAX);
        } else if (key_ == "activeGroupsCleared") {
            cur_.active_groups.cleared = flag(v);
        } else if (key_ == "hosts") {
            bad("\"hosts\" is not an array");
        } else if (key_ == "overrides") {
            bad("\"overrides\" is not an object");
        }
    }

    // Format 2's rows: [name, ttl, [endpoints], [loadBalancing]]; format 3 adds the entry, with null for
    // the loadBalancing of a simple host: [name, ttl, [endpoints], [loadBalancing] or null, entry].
    void host_row_item(Value& v) {
        HostEntry& h = cur_.hosts.back();
        key_ = item_ == 0   ? "host"
               : item_ == 1 ? "ttl"
               : item_ == 4 ? "entry"
                            : "a host row's item " + std::to_string(item_ + 1);
        if (item_ == 0) {
            h.host = names_(text(v)), seen_ |= 1;
        } else if (item_ == 1) {
            h.ttl = static_cast<uint32_t>(number(v, 2147483647)), seen_ |= 2;
        } else if (item_ == 3 && v.kind == Value::none) {
            // no loadBalancing (a simple host's entry)
        } else if (item_ == 4) {
            h.entry = text(v);
        } else {
            bad(item_ < 4 ? "a host row's item " + std::to_string(item_ + 1) + " is not a list"
                          : "a host row has more than 5 items");
        }
        ++item_;
    }

    void endpoint_row_item(Value& v) {  // [target, healthy]
        EndpointState& e = cur_.hosts.back().endpoints.back();
        key_ = item_ == 0 ? "target" : "healthy";
        if (item_ == 0) {
            e.target = endpoint(v), seen_ |= 1;
        } else if (item_ == 1) {
            e.healthy = flag(v), seen_ |= 2;
        } else {
            bad("an endpoint row has more than 2 items");
        }
        ++item_;
    }

    void balancing_row_item(Value& v) {  // [weight, geo, defaultGeo]
        auto& lb = *cur_.hosts.back().load_balancing;
        key_ = item_ == 0 ? "weight" : item_ == 1 ? "geo" : "defaultGeo";
        if (item_ == 0) {
            lb.weight = static_cast<uint16_t>(number(v, 65535)), seen_ |= 1;
        } else if (item_ == 1) {
            lb.geo = text(v), seen_ |= 2;
        } else if (item_ == 2) {
            lb.default_geo = flag(v), seen_ |= 4;
        } else {
            bad("a loadBalancing row has more than 3 items");
        }
        ++item_;
    }

    // A static record: [name, type, ttl, [data, ...]].
    void record_row_item(Value& v) {
        ZoneRecord& z = cur_.records.back();
        key_ = item_ == 0 ? "record name" : item_ == 1 ? "record type" : "record ttl";
        if (item_ == 0) {
            z.name = text(v), seen_ |= 1;
        } else if (item_ == 1) {
            std::string t = text(v);
            auto type = wire::type_from_name(t);
            if (!type) bad("record type \"" + t + "\"");
            z.type = *type, seen_ |= 2;
        } else if (item_ == 2) {
            z.ttl = static_cast<uint32_t>(number(v, 2147483647)), seen_ |= 4;
        } else {
            bad("a record row's item " + std::to_string(item_ + 1) + " is not " + (item_ == 3 ? "a list" : "expected"));
        }
        ++item_;
    }

    // Format 1's objects (and "entry" since format 3).
    void host_field(Value& v) {
        if (key_ == "host") {
            cur_.hosts.back().host = names_(text(v)), seen_ |= 1;
        } else if (key_ == "entry") {
            cur_.hosts.back().entry = text(v);
        } else if (key_ == "ttl") {
            cur_.hosts.back().ttl = static_cast<uint32_t>(number(v, 2147483647)), seen_ |= 2;
        } else if (key_ == "endpoints") {
            bad("\"endpoints\" is not an array");
        } else if (key_ == "loadBalancing") {
            bad("\"loadBalancing\" is not an object");
        }
    }

    void balancing_field(Value& v) {
        auto& lb = *cur_.hosts.back().load_balancing;
        if (key_ == "weight") {
            lb.weight = static_cast<uint16_t>(number(v, 65535)), seen_ |= 1;
        } else if (key_ == "geo") {
            lb.geo = text(v), seen_ |= 2;
        } else if (key_ == "defaultGeo") {
            lb.default_geo = flag(v), seen_ |= 4;
        }
    }

    void endpoint_field(Value& v) {
        if (key_ == "target") {
            cur_.hosts.back().endpoints.back().target = endpoint(v), seen_ |= 1;
        } else if (key_ == "healthy") {
            cur_.hosts.back().endpoints.back().healthy = flag(v), seen_ |= 2;
        }
    }

    void override_field(Value& v) {
        if (key_ == "state") {
            std::string st = text(v);
            if (st != "up" && st != "down" && st != "auto") bad("override state \"" + st + "\"");
            override_.state = st == "up"     ? OverrideState::up
                              : st == "down" ? OverrideState::down
                                             : OverrideState::automatic;
            seen_ |= 1;
        } else if (key_ == "at") {
            override_.at_ms = number(v, UINT64_MAX), seen_ |= 2;
        }
    }

    bool open(bool object) {
        In next = In::skip;
        if (stack_.empty()) {
            if (!object) bad("the file is not a JSON object");
            next = In::top;
        } else {
            next = child(object);
        }
        stack_.push_back(next);
        seen_stack_.push_back(seen_);
        seen_ = 0;
        item_stack_.push_back(item_);
        item_ = 0;
        return true;
    }

    // What an object (or, `object` false, an array) opened at the current place is.
    In child(bool object) {
        switch (at()) {
            case In::top:
                if (key_ != "origins") return In::skip;
                if (object) bad("\"origins\" is not an array");
                saw_origins = true;
                return In::origins;
            case In::origins:
                if (!object) bad("an origin is not an object");
                cur_ = InstanceState{}, host_count_ = 0, check_runs_.clear(), run_ = 0, run_used_ = 0;
                return In::origin;
            case In::origin: return origin_child(object);
            case In::hosts:
                cur_.hosts.push_back(HostEntry{});
                cur_.hosts.back().check = next_check();
                return object ? In::host : In::host_row;
            case In::host_row: return host_row_child(object);
            case In::row_endpoints:
                if (object) bad("an endpoint is not a row");
                cur_.hosts.back().endpoints.push_back(EndpointState{});
                return In::endpoint_row;
            case In::endpoint_row:
            case In::balancing_row:
                bad(std::string(at() == In::endpoint_row ? "an endpoint" : "a loadBalancing") +
                    " row holds a list or an object");
            case In::records:
                if (object) bad("a record is not a row");
                cur_.records.push_back(ZoneRecord{});
                return In::record_row;
            case In::record_row:
                if (object || item_ != 3) bad("a record row's item " + std::to_string(item_ + 1) + " is not a value");
                seen_ |= 8;
                return In::record_data;
            case In::record_data: bad("a record's data holds a list or an object");
            case In::host: return host_child(object);
            case In::endpoints:
                if (!object) bad("an endpoint is not an object");
                cur_.hosts.back().endpoints.push_back(EndpointState{});
                return In::endpoint;
            case In::overrides:
                if (!object) bad("override " + quoted(key_) + " is not an object");
                override_target_ = key_, override_ = OverrideEntry{};
                return In::override_;
            case In::balancing:
            case In::endpoint:
            case In::override_:
                if (key_ == "weight" || key_ == "geo" || key_ == "defaultGeo" || key_ == "target" ||
                    key_ == "healthy" || key_ == "state" || key_ == "at") {
                    bad(quoted(key_) + " is not a plain value");
                }
                return In::skip;
            case In::skip: return In::skip;
        }
        return In::skip;
    }

    In origin_child(bool object) {
        if (key_ == "hosts") {
            if (object) bad("\"hosts\" is not an array");
            cur_.hosts.clear(), seen_ |= 8;
            cur_.hosts.reserve(std::min<uint64_t>(host_count_, ReportLimits::kMaxHosts));
            return In::hosts;
        }
        if (key_ == "overrides") {
            if (!object) bad("\"overrides\" is not an object");
            cur_.overrides.clear(), seen_ |= 16;
            return In::overrides;
        }
        if (key_ == "records") {
            if (object) bad("\"records\" is not an array");
            cur_.records.clear();
            return In::records;
        }
        if (key_ == "cluster" || key_ == "instance" || key_ == "location") bad(quoted(key_) + " is not a string");
        if (key_ == "version" || key_ == "incarnation" || key_ == "heartbeat") bad(quoted(key_) + " is not an integer");
        return In::skip;
    }

    In host_row_child(bool object) {
        if (object || item_ < 2 || item_ > 3) {
            bad(item_ > 4 ? "a host row has more than 5 items"
                          : "a host row's item " + std::to_string(item_ + 1) + " is not " +
                                (item_ == 0   ? "a name"
                                 : item_ == 1 ? "a number"
                                 : item_ == 4 ? "a string"
                                              : "a list"));
        }
        if (item_ == 2) {
            cur_.hosts.back().endpoints.clear(), seen_ |= 4;
            return In::row_endpoints;
        }
        cur_.hosts.back().load_balancing = model::LoadBalancing{};
        return In::balancing_row;
    }

    In host_child(bool object) {
        if (key_ == "endpoints") {
            if (object) bad("\"endpoints\" is not an array");
            cur_.hosts.back().endpoints.clear(), seen_ |= 4;
            return In::endpoints;
        }
        if (key_ == "loadBalancing") {
            if (!object) bad("\"loadBalancing\" is not an object");
            cur_.hosts.back().load_balancing = model::LoadBalancing{};
            return In::balancing;
        }
        if (key_ == "host" || key_ == "ttl") bad(quoted(key_) + " is not a " + (key_ == "host" ? "string" : "number"));
        return In::skip;
    }

    // The object or array ends: check what it must hold, hand it to its parent.
    bool close() {
        In done = at();
        unsigned seen = seen_;
        auto need = [&](unsigned want, const char* what, std::initializer_list<const char*> fields) {
            if ((seen & want) == want) return;
            unsigned bit = 1;
            for (const char* f : fields) {
                if (!(seen & bit)) bad(std::string(what) + " has no \"" + f + "\"");
                bit <<= 1;
            }
        };
        switch (done) {
            case In::origin:
                need(31, "an origin", {"cluster", "instance", "version", "hosts", "overrides"});
                cur_.hosts.shrink_to_fit();
                if (cur_.hosts.size() >= most_.size()) most_ = cur_.hosts;
                names_ = NameSharer(most_);
                origins.push_back(std::move(cur_));
                cur_ = InstanceState{};
                break;
            case In::host:
            case In::host_row:
                need(7, "a host", {"host", "ttl", "endpoints"});
                if (!host_unreadable_.empty()) {
                    if (cur_.unreadable++ == 0) cur_.unreadable_why = cur_.hosts.back().host + ": " + host_unreadable_;
                    cur_.hosts.pop_back();
                    host_unreadable_.clear();
                }
                break;
            case In::balancing:
            case In::balancing_row: need(7, "loadBalancing", {"weight", "geo", "defaultGeo"}); break;
            case In::endpoint:
            case In::endpoint_row: need(3, "an endpoint", {"target", "healthy"}); break;
            case In::record_row: need(15, "a record", {"name", "type", "ttl", "data"}); break;
            case In::override_:
                need(3, "an override", {"state", "at"});
                cur_.overrides[override_target_] = override_;
                break;
            default: break;
        }
        stack_.pop_back();
        seen_ = seen_stack_.back();
        seen_stack_.pop_back();
        item_ = item_stack_.back() + 1;  // in a row, the list or object just read took a place
        item_stack_.pop_back();
        return true;
    }
};

}  // namespace

std::vector<InstanceState> read_origins_whole(std::string_view text) {
    Reader r;
    nlohmann::json::sax_parse(text.begin(), text.end(), &r);
    if (!r.saw_origins) throw std::runtime_error("no \"origins\" array");
    return std::move(r.origins);
}

std::vector<InstanceState> read_origins_alone(std::string_view text, std::span<const std::pair<size_t, size_t>> spans) {
    Reader r{Reader::OriginsOnly{}};
    for (auto [begin, end] : spans) {
        std::string_view one = text.substr(begin, end - begin);
        nlohmann::json::sax_parse(one.begin(), one.end(), &r);
    }
    return std::move(r.origins);
}

}  // namespace glbd::sync
