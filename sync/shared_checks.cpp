// sync/shared_checks — hosts' health checks as reports carry them (SharedCheck, sync/state.hpp): their text,
// and this instance's own from its config.
#include <algorithm>
#include <map>

#include "resolver/base/number.hpp"
#include "resolver/model/names.hpp"
#include "sync/state.hpp"

namespace glbd::sync {

namespace {

constexpr const char* protocol_name(model::Protocol p) {
    return p == model::Protocol::https ? "HTTPS" : p == model::Protocol::tcp ? "TCP" : "HTTP";
}

// The next space-separated field of `text` from `at` (the last one runs to the end when `last`).
std::string_view field(std::string_view text, size_t& at, bool last = false) {
    if (at > text.size()) return {};
    size_t end = last ? text.size() : std::min(text.find(' ', at), text.size());
    std::string_view f = text.substr(at, end - at);
    at = end + 1;
    return f;
}

}  // namespace

std::string format_check(const SharedCheck& c) {
    const model::HealthCheck& h = c.check;
    std::string out = protocol_name(h.protocol);
    for (uint64_t n :
         {uint64_t{h.port}, static_cast<uint64_t>(h.interval.count()), static_cast<uint64_t>(h.timeout.count()),
          uint64_t{h.failure_threshold}, uint64_t{h.success_threshold}}) {
        out += ' ' + std::to_string(n);
    }
    out += ' ';
    for (size_t i = 0; i < h.expected_status.size(); ++i) out += (i ? "," : "") + std::to_string(h.expected_status[i]);
    std::string flags = std::string(h.insecure_skip_verify ? "k" : "") + (c.inside_only ? "i" : "");
    out += ' ' + (flags.empty() ? "-" : flags) + ' ' + h.path;
    return out;
}

bool parse_check(std::string_view text, SharedCheck& out, std::string& why) {
    out = SharedCheck{};
    model::HealthCheck& h = out.check;
    h.expected_status.clear();
    auto bad = [&why](std::string w) {
        why = std::move(w);
        return false;
    };
    if (text.size() > ReportLimits::kMaxCheckText) return bad("a check longer than its limit");
    size_t at = 0;
    std::string_view proto = field(text, at);
    if (proto == "HTTP") {
        h.protocol = model::Protocol::http;
    } else if (proto == "HTTPS") {
        h.protocol = model::Protocol::https;
    } else if (proto == "TCP") {
        h.protocol = model::Protocol::tcp;
    } else {
        return bad("a check's protocol is not HTTP, HTTPS or TCP");
    }
    uint64_t port = 0, interval = 0, timeout = 0, failures = 0, successes = 0;
    // The config's ranges, and Kuadrant's (an interval of days, a failureThreshold of 1,000 plus one).
    if (!parse_unsigned(field(text, at), port, 1, 65535)) return bad("a check's port");
    if (!parse_unsigned(field(text, at), interval, 100, uint64_t{30} * 86'400'000)) return bad("a check's interval");
    if (!parse_unsigned(field(text, at), timeout, 10, 600'000)) return bad("a check's timeout");
    if (!parse_unsigned(field(text, at), failures, 1, 1001)) return bad("a check's failure threshold");
    if (!parse_unsigned(field(text, at), successes, 1, 1001)) return bad("a check's success threshold");
    h.port = static_cast<uint16_t>(port);
    h.interval = std::chrono::milliseconds(interval);
    h.timeout = std::chrono::milliseconds(timeout);
    h.failure_threshold = static_cast<unsigned>(failures);
    h.success_threshold = static_cast<unsigned>(successes);
    std::string_view statuses = field(text, at);
    for (size_t s = 0; s <= statuses.size();) {
        size_t end = std::min(statuses.find(',', s), statuses.size());
        uint64_t code = 0;
        if (!parse_unsigned(statuses.substr(s, end - s), code, 100, 599) || h.expected_status.size() == 16)
            return bad("a check's expected status");
        h.expected_status.push_back(static_cast<int>(code));
        s = end + 1;
    }
    std::string_view flags = field(text, at);
    if (flags != "-") {
        for (char f : flags) {
            if (f == 'k') {
                h.insecure_skip_verify = true;
            } else if (f == 'i') {
                out.inside_only = true;
            } else {
                return bad("a check's flags");
            }
        }
    }
    std::string_view path = field(text, at, true);
    if (!model::is_probe_path(path)) return bad("a check's path");
    h.path = std::string(path);
    return true;
}

std::vector<SharedCheck> own_checks(const std::vector<model::Host>& config_hosts, HostList& hosts) {
    std::vector<SharedCheck> checks;
    std::map<std::string, uint16_t> number_of;                             // by format_check's text
    std::map<std::pair<std::string_view, std::string_view>, uint16_t> of;  // (host, entry) -> its number
    for (const model::Host& h : config_hosts) {
        if (!h.health_check) continue;
        SharedCheck c{*h.health_check, !h.health_check->headers.empty()};
        c.check.headers.clear();  // never in a report
        auto [it, added] = number_of.try_emplace(format_check(c), static_cast<uint16_t>(checks.size() + 1));
        if (added) {
            if (checks.size() == ReportLimits::kMaxChecks) {  // beyond it: probed inside only, as before
                number_of.erase(it);
                continue;
            }
            checks.push_back(std::move(c));
        }
        of[{h.name, h.entry}] = it->second;
    }
    if (of.empty() && std::none_of(hosts.vec().begin(), hosts.vec().end(), [](const HostEntry& e) { return e.check; }))
        return checks;  // nothing to number: the list stays shared
    for (HostEntry& e : hosts) {
        auto it = of.find({e.host, e.entry});
        e.check = it == of.end() ? 0 : it->second;
    }
    return checks;
}

}  // namespace glbd::sync

namespace glbd::sync {

std::string format_outside(const OutsideMap& m) {
    std::string out;
    for (const auto& [cluster, v] : m) {
        out += (out.empty() ? "=" : "\n=") + cluster + ' ' + std::to_string(v.probed);
        for (const auto& [host, ep] : v.failing) out += '\n' + host + ' ' + ep.str();
    }
    return out;
}

bool parse_outside(std::string_view text, OutsideMap& out, std::string& why) {
    out.clear();
    OutsideVerdicts* cur = nullptr;
    size_t failing = 0;
    for (size_t at = 0; at < text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        const size_t sp = line.find(' ');
        if (sp == std::string_view::npos) return why = "\"" + std::string(line) + "\" is not a verdict line", false;
        std::string_view first = line.substr(0, sp), second = line.substr(sp + 1);
        if (!first.empty() && first[0] == '=') {
            uint64_t probed = 0;
            if (!parse_unsigned(second, probed, 0, UINT32_MAX)) return why = "a bad count of endpoints probed", false;
            cur = &out[std::string(first.substr(1))];
            cur->probed = static_cast<uint32_t>(probed);
            continue;
        }
        auto ep = Endpoint::parse(second);
        if (!cur || !ep) return why = "\"" + std::string(line) + "\" is not HOST ENDPOINT under a cluster", false;
        if (++failing > ReportLimits::kMaxOutsideFailing) return why = "more outside failures than the limit", false;
        cur->failing.emplace_back(std::string(first), std::move(*ep));
    }
    return true;
}

}  // namespace glbd::sync
