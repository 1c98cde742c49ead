// sync/transfer/decoder — reading reports from the `_glbd.` TXT records (Decoder, decode; codec.hpp): one record
// at a time, each origin's report handed on once complete, every field and limit checked as it comes.

#include "resolver/base/number.hpp"
#include "sync/transfer/codec.hpp"

namespace glbd::sync {

namespace {

// "key=value" -> {key, value}; no '=': {s, ""}.
std::pair<std::string_view, std::string_view> split(std::string_view s) {
    auto eq = s.find('=');
    return eq == std::string_view::npos ? std::pair{s, std::string_view()}
                                        : std::pair{s.substr(0, eq), s.substr(eq + 1)};
}

// The fields of a host record after its name: ttl, weight, geo, default, ep=ADDRESS up|down, and `more`
// (more=1: endpoints of the host the last record began). False when the record is wrong (`why`: how); an
// endpoint that is neither an address nor a host name leaves the host out (`unreadable`: why), not the report.
bool decode_host(Decoder::Record rec, HostEntry& h, bool& more, std::string& unreadable, std::string& why) {
    auto wrong = [&why](std::string problem) {
        why = std::move(problem);
        return false;
    };
    model::LoadBalancing lb;
    bool has_lb = false;
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, v] = split(rec[k]);
        uint64_t n = 0;
        if (key == "ep") {  // the most frequent first
            auto sp = v.rfind(' ');
            if (sp == std::string_view::npos) return wrong("bad endpoint " + std::string(v));
            std::string_view st = v.substr(sp + 1);
            if (st != "up" && st != "down") return wrong("bad endpoint state " + std::string(st));
            if (auto ep = Endpoint::parse(v.substr(0, sp))) {
                h.endpoints.push_back(EndpointState{std::move(*ep), st == "up"});
            } else if (unreadable.empty()) {
                unreadable = h.host + ": bad endpoint " + std::string(v.substr(0, sp));
            }
        } else if (key == "ttl") {
            if (!parse_unsigned(v, n, 0, 2147483647)) return wrong("bad ttl");
            h.ttl = static_cast<uint32_t>(n);
        } else if (key == "weight") {
            if (!parse_unsigned(v, n, 0, 65535)) return wrong("bad weight");
            lb.weight = static_cast<uint16_t>(n), has_lb = true;
        } else if (key == "geo") {
            lb.geo = SharedText(v), has_lb = true;
        } else if (key == "check") {
            if (!parse_unsigned(v, n, 1, ReportLimits::kMaxChecks)) return wrong("bad check");
            h.check = static_cast<uint16_t>(n);
        } else if (key == "entry") {
            h.entry = SharedText(v);
        } else if (key == "default") {
            lb.default_geo = v == "1", has_lb = true;
        } else if (key == "more") {
            more = more || v == "1";
        }
    }
    if (has_lb) h.load_balancing = lb;
    return true;
}

}  // namespace

bool Decoder::bad(const std::string& why, bool limit) {
    over_limit_ = limit;
    error_ = "record " + std::to_string(index_ - 1) + ": " + why;
    cur_.reset();
    return false;
}

bool Decoder::add(const std::vector<std::string>& record, std::vector<Report>& done) {
    std::vector<std::string_view> views(record.begin(), record.end());
    return add(Record(views), done);
}

bool Decoder::add(Record rec, std::vector<Report>& done) {
    if (!error_.empty()) return false;
    ++index_;
    if (rec.empty()) return bad("empty");
    auto [k0, v0] = split(rec[0]);
    if (cur_ && k0 != "origin") {
        for (const auto& str : rec) bytes_ += str.size() + 1;
        if (bytes_ > kMaxReportBytes) {
            return bad("the report of " + cur_->state.origin() + " is larger than " +
                           std::to_string(kMaxReportBytes >> 20) + " MiB",
                       true);
        }
    }
    if (skipping_ && k0 != "origin") return true;  // held already: not decoded (its bytes counted above)
    if (cur_ && cur_->outside_only &&
        (k0 == "host" || k0 == "zone" || k0 == "override" || k0 == "active-groups" || k0 == "check" || k0 == "forget"))
        return bad(std::string(k0) + " record in a report of outside verdicts alone");
    if (k0 == "glbd-sync") {
        if (v0 != "1") return bad("unsupported version " + std::string(v0));
        for (const auto& str : rec) {
            auto [k, v] = split(str);
            if (k == "from") from_ = std::string(v);
        }
        return true;
    }
    if (k0 == "origin") return add_origin(rec, v0, done);
    if (k0 == "host") return add_host(rec, v0);
    if (k0 == "zone") return add_zone(rec, v0);
    if (k0 == "override") return add_override(rec, v0);
    if (k0 == "active-groups") return add_active_groups(rec, v0);
    if (k0 == "check") return add_check(rec, v0);
    if (k0 == "outside") return add_outside(rec, v0);
    if (k0 == "forget") {
        if (!cur_) return bad("forget before any origin");
        if (cur_->state.forgotten.size() >= ReportLimits::kMaxForgotten)
            return bad("too many forgotten instances", true);
        return parse_forgotten(v0, cur_->state.forgotten) || bad("bad forget record");
    }
    return true;  // unknown record kinds are skipped: a newer peer may send more
}

bool Decoder::add_origin(Record rec, std::string_view v0, std::vector<Report>& done) {
    auto slash = v0.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == v0.size())
        return bad("bad origin " + std::string(v0));
    if (++origins_ > ReportLimits::kMaxOrigins) {
        return bad("more than " + std::to_string(ReportLimits::kMaxOrigins) + " origins in one transfer", true);
    }
    if (cur_) done.push_back(std::move(*cur_));
    cur_.emplace();
    left_out_.reset();
    bytes_ = 0, outside_failing_ = 0;
    skipping_ = false;
    cur_->state.cluster = std::string(v0.substr(0, slash));
    cur_->state.instance = std::string(v0.substr(slash + 1));
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, v] = split(rec[k]);
        uint64_t n = 0;
        if (key == "data" && v == "0") cur_->has_data = false;
        if (rec[k] == kOutsidePart) cur_->outside_only = true;
        if (key == "group") cur_->state.group = std::string(v);  // checked with the rest (check_report)
        if (key == "outside") cur_->state.probes_outside = v == "1";
        if (key == "reach" && !parse_reach(v, cur_->state.reach)) return bad("bad reach " + std::string(v));
        if (key == "dnskey" && !parse_zone_keys(v, cur_->state.dnskeys)) return bad("bad dnskey " + std::string(v));
        if (key == "loc") {
            cur_->state.location = parse_location(v);
            if (!cur_->state.location) return bad("bad location " + std::string(v));
        }
        if (key != "inc" && key != "version" && key != "heartbeat" && key != "age" && key != "base") continue;
        if (!parse_unsigned(v, n)) return bad("bad " + std::string(key));
        (key == "inc"         ? cur_->state.incarnation
         : key == "version"   ? cur_->state.version
         : key == "heartbeat" ? cur_->state.heartbeat
         : key == "base"      ? cur_->state.base_version
                              : cur_->age_ms) = n;
    }
    if (cur_->state.base_version > cur_->state.version) return bad("base version after the version");
    if (cur_->outside_only && (!cur_->has_data || !cur_->state.base_version))
        return bad("a report of outside verdicts alone without data or a base version");
    if (cur_->has_data && held_ && held_(cur_->state)) {
        skipping_ = cur_->skipped = true;
        cur_->has_data = false;
    }
    names_ = NameSharer(cur_->has_data && names_for_ ? names_for_(cur_->state) : HostList{});
    return true;
}

bool Decoder::add_host(Record rec, std::string_view v0) {
    if (!cur_ || !cur_->has_data) return bad("host without an origin that carries data");
    HostEntry h{names_(v0), kUnwrittenTtl, std::nullopt, {}};
    bool more = false;
    std::string unreadable, why;
    if (!decode_host(rec, h, more, unreadable, why)) return bad(why);
    auto& hosts = cur_->state.hosts;
    auto leave_out = [&] {
        left_out_ = std::pair{h.host, h.entry};
        if (cur_->state.unreadable++ == 0) cur_->state.unreadable_why = unreadable;
        return true;
    };
    if (more) {  // the endpoints of the host the last record began
        if (left_out_ && *left_out_ == std::pair{h.host, h.entry}) return true;  // that host was left out
        if (hosts.empty() || hosts.back().host != h.host || hosts.back().entry != h.entry) {
            return bad("more= without its host");
        }
        if (!unreadable.empty()) {
            hosts.pop_back();
            return leave_out();
        }
        auto& eps = hosts.back().endpoints;
        eps.insert(eps.end(), h.endpoints.begin(), h.endpoints.end());
        return true;
    }
    left_out_.reset();
    if (!unreadable.empty()) return leave_out();
    hosts.emplace_back(std::move(h));
    return true;
}

bool Decoder::add_check(Record rec, std::string_view v0) {
    if (!cur_ || !cur_->has_data) return bad("check without an origin that carries data");
    auto& checks = cur_->state.checks;
    uint64_t n = 0;
    if (!parse_unsigned(v0, n) || n != checks.size() + 1) return bad("checks out of order");
    if (checks.size() == ReportLimits::kMaxChecks) return bad("too many checks", true);
    std::string text;
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, v] = split(rec[k]);
        if (key == "probe" || key == "probe+") text += v;
        if (text.size() > ReportLimits::kMaxCheckText) return bad("a check longer than its limit");
    }
    SharedCheck c;
    std::string why;
    if (!parse_check(text, c, why)) return bad("bad check " + std::to_string(n) + ": " + why);
    checks.push_back(std::move(c));
    return true;
}

bool Decoder::add_outside(Record rec, std::string_view v0) {
    if (!cur_ || !cur_->has_data) return bad("outside verdicts without an origin that carries data");
    bool more = false;
    for (size_t k = 1; k < rec.size(); ++k) more |= rec[k] == "more=1";
    auto& all = cur_->state.outside;
    auto it = all.find(std::string(v0));
    if (more != (it != all.end())) return bad(more ? "more= without its outside record" : "a cluster's verdicts twice");
    if (!more && all.size() == ReportLimits::kMaxOrigins) return bad("outside verdicts of too many clusters", true);
    OutsideVerdicts& v = more ? it->second : all[std::string(v0)];
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, value] = split(rec[k]);
        uint64_t n = 0;
        if (key == "probed") {
            if (!parse_unsigned(value, n, 0, UINT32_MAX)) return bad("bad count of endpoints probed");
            v.probed = static_cast<uint32_t>(n);
        } else if (key == "fail") {
            auto sp = value.find(' ');
            auto ep = sp == std::string_view::npos ? std::nullopt : Endpoint::parse(value.substr(sp + 1));
            if (!ep) return bad("bad outside failure " + std::string(value));
            if (++outside_failing_ > ReportLimits::kMaxOutsideFailing) return bad("too many outside failures", true);
            v.failing.emplace_back(std::string(value.substr(0, sp)), std::move(*ep));
        }
    }
    return true;
}

bool Decoder::add_zone(Record rec, std::string_view v0) {
    if (!cur_ || !cur_->has_data) return bad("zone record without an origin that carries data");
    ZoneRecord z;
    z.name = std::string(v0);
    bool known_type = false;  // a record without type= is skipped, as one of an unknown type is
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, v] = split(rec[k]);
        uint64_t n = 0;
        if (key == "type") {
            auto t = wire::type_from_name(v);
            known_type = t.has_value();
            z.type = t.value_or(0);
        } else if (key == "ttl") {
            if (!parse_unsigned(v, n, 0, 2147483647)) return bad("bad ttl");
            z.ttl = static_cast<uint32_t>(n);
        } else if (key == "d") {
            z.data.emplace_back(v);
        } else if (key == "d+") {
            if (z.data.empty()) return bad("d+= without its d=");
            z.data.back() += v;
        }
    }
    if (known_type) cur_->state.records.push_back(std::move(z));  // a type a newer peer sends, or none: skipped
    return true;
}

bool Decoder::add_override(Record rec, std::string_view v0) {
    if (!cur_) return bad("override before any origin");
    OverrideEntry e;
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, v] = split(rec[k]);
        if (key == "state") {
            e.state = v == "up" ? OverrideState::up : v == "down" ? OverrideState::down : OverrideState::automatic;
            if (v != "up" && v != "down" && v != "auto") return bad("bad override state " + std::string(v));
        } else if (key == "at" && !parse_unsigned(v, e.at_ms)) {
            return bad("bad override time");
        }
    }
    cur_->state.overrides[std::string(v0)] = e;
    return true;
}

bool Decoder::add_active_groups(Record rec, std::string_view v0) {
    if (!cur_) return bad("active groups before any origin");
    ActiveGroups a;
    for (size_t k = 1; k < rec.size(); ++k) {
        auto [key, v] = split(rec[k]);
        if (key == "at" && !parse_unsigned(v, a.at_ms)) return bad("bad active groups time");
        if (key == "clear") a.cleared = v == "1";
    }
    if (a.at_ms == 0) return bad("active groups without a time");
    a.groups = split_groups(v0, ReportLimits::kMaxGroups);  // the names are checked with the rest (check_report)
    if (a.groups.size() > ReportLimits::kMaxGroups) return bad("too many active groups", true);
    cur_->state.active_groups = std::move(a);
    return true;
}

void Decoder::finish(std::vector<Report>& done) {
    if (cur_ && error_.empty()) done.push_back(std::move(*cur_));
    cur_.reset();
}

bool decode(const std::vector<std::vector<std::string>>& records, std::string& from, std::vector<Report>& out,
            std::string& error) {
    Decoder d;
    for (const auto& rec : records) {
        if (!d.add(rec, out)) {
            error = d.error();
            return false;
        }
    }
    d.finish(out);
    from = d.from();
    return true;
}

}  // namespace glbd::sync
