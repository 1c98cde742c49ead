#include "resolver/dnssec/rollover.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "resolver/wire/text.hpp"

namespace glbd::dnssec {

void KeyHistory::update(const ZoneKeys& zones, uint64_t now_ms) {
    std::map<std::string, std::map<std::string, uint64_t>> next;
    for (const auto& [zone, keys] : zones) {
        auto known = published_.find(zone);
        auto& times = next[zone];
        for (const auto& k : keys) {
            uint64_t at = now_ms;
            if (known != published_.end()) {
                if (auto it = known->second.find(k->rdata()); it != known->second.end()) at = it->second;
            }
            times[k->rdata()] = at;
        }
    }
    published_ = std::move(next);
}

uint64_t KeyHistory::published_at(const std::string& zone, const Key& key) const {
    auto z = published_.find(zone);
    if (z == published_.end()) return 0;
    auto it = z->second.find(key.rdata());
    return it == z->second.end() ? 0 : it->second;
}

namespace {
constexpr std::string_view kFileHeader = "glbd-dnssec-keys 1";
}  // namespace

std::string KeyHistory::to_text() const {
    std::string out(kFileHeader);
    out += '\n';
    for (const auto& [zone, keys] : published_) {
        for (const auto& [rdata, at] : keys)
            out += zone + ' ' + std::to_string(at) + ' ' + wire::base64_encode(rdata) + '\n';
    }
    return out;
}

bool KeyHistory::from_text(std::string_view text, std::string& error) {
    std::map<std::string, std::map<std::string, uint64_t>> read;
    size_t keys = 0, line_no = 0;
    while (!text.empty()) {
        const size_t eol = text.find('\n');
        if (eol == std::string_view::npos) {
            error = "line " + std::to_string(line_no + 1) + ": not ended by a newline (a file cut short?)";
            return false;
        }
        const std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol + 1);
        auto bad = [&](const std::string& why) {
            error = "line " + std::to_string(line_no) + ": " + why;
            return false;
        };
        if (++line_no == 1) {
            if (line != kFileHeader) return bad("not \"" + std::string(kFileHeader) + "\"");
            continue;
        }
        const size_t a = line.find(' '), b = a == std::string_view::npos ? a : line.find(' ', a + 1);
        if (b == std::string_view::npos || line.find(' ', b + 1) != std::string_view::npos)
            return bad("not ZONE MS DNSKEY");
        const std::string_view zone = line.substr(0, a), ms = line.substr(a + 1, b - a - 1);
        if (!wire::name_to_wire(zone) || zone.empty()) return bad("not a zone name");
        uint64_t at = 0;
        auto [end, ec] = std::from_chars(ms.data(), ms.data() + ms.size(), at);
        if (ms.empty() || ec != std::errc() || end != ms.data() + ms.size()) return bad("not a time in ms");
        auto rdata = wire::base64_decode(line.substr(b + 1));
        if (!rdata || rdata->size() < 4 || rdata->size() > 2048) return bad("not a DNSKEY RDATA in base64");
        if (++keys > kMaxKeys) return bad("more than " + std::to_string(kMaxKeys) + " keys");
        if (!read[std::string(zone)].emplace(std::move(*rdata), at).second) return bad("a key listed twice");
    }
    if (line_no == 0) {
        error = "empty";
        return false;
    }
    published_ = std::move(read);
    return true;
}

namespace {
// The keys that sign each Role (split_roles), as DNSKEY RDATAs.
std::array<std::vector<std::string>, 2> roles(const std::vector<std::string>& rdatas) {
    return split_roles(
        rdatas, [](const std::string& rd) { return rd.size() > 1 && (static_cast<uint8_t>(rd[1]) & kFlagSep) != 0; });
}
bool contains(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}
std::string tags(const std::vector<std::string>& rdatas) {
    std::string out;
    for (const auto& rd : rdatas) out += (out.empty() ? "" : ", ") + std::to_string(key_tag(rd));
    return out;
}
constexpr const char* kRoleName[2] = {"the answers", "the DNSKEY set"};  // by Role
}  // namespace

std::string KeyHistory::check(const std::string& zone, const std::vector<std::shared_ptr<const Key>>& next,
                              uint64_t now_ms, uint64_t wait_ms) const {
    auto z = published_.find(zone);
    if (z == published_.end() || next.empty()) return "";  // newly signed, or no longer signed
    std::vector<std::string> before, after;
    for (const auto& [rdata, at] : z->second) before.push_back(rdata);
    for (const auto& k : next) after.push_back(k->rdata());
    // How long ago a key was first published (none: it is not yet).
    auto age_of = [&](const std::string& rdata) -> std::optional<uint64_t> {
        auto it = z->second.find(rdata);
        if (it == z->second.end()) return std::nullopt;
        return now_ms - std::min(now_ms, it->second);
    };
    auto mature = [&](const std::string& rdata) {
        auto a = age_of(rdata);
        return a && *a >= wait_ms;
    };
    auto age = [&](const std::string& rdata) {
        auto a = age_of(rdata);
        return a ? "was published " + std::to_string(*a / 1000) + " s ago" : std::string("is not published yet");
    };
    const std::string hold = std::to_string((wait_ms + 999) / 1000);
    const auto old_roles = roles(before), new_roles = roles(after);
    for (Role r : {kAnswers, kKeySets}) {
        // A resolver may hold a DNSKEY set from `wait` ago: one of the keys that will sign must be in it, or
        // sign now (then every DNSKEY set a resolver may hold has it, as this rule held when it began).
        const auto& signers = new_roles[r];
        const auto& old_signers = old_roles[r];
        if (std::none_of(signers.begin(), signers.end(),
                         [&](const auto& k) { return mature(k) || contains(old_signers, k); })) {
            return "key tag " + tags(signers) + " would sign " + kRoleName[r] + " alone, and " + tags(signers) + " " +
                   age(signers.front()) + "; resolvers may hold a DNSKEY set without it for " + hold +
                   " s (RFC 7583): keep a key that signs them now beside it until then";
        }
        // A resolver may hold answers signed by the keys that sign now: one of them must stay published.
        if (std::none_of(old_signers.begin(), old_signers.end(), [&](const auto& k) { return contains(after, k); })) {
            return "no key that signs " + std::string(kRoleName[r]) + " now (tag " + tags(old_signers) +
                   ") stays published, and resolvers hold answers signed by them alone (RFC 7583)";
        }
    }
    std::vector<std::string> removed;
    for (const auto& k : before) {
        if (!contains(after, k)) removed.push_back(k);
    }
    if (removed.empty()) return "";
    // Every key that stays must have been published for the hold time; the youngest says how long is left.
    const std::string* youngest = nullptr;
    for (const auto& k : after) {
        if (!mature(k) && (!youngest || age_of(k).value_or(0) < age_of(*youngest).value_or(0))) youngest = &k;
    }
    if (!youngest) return "";
    return "removing key tag " + tags(removed) + " now would break validation: key tag " +
           std::to_string(key_tag(*youngest)) + " " + age(*youngest) +
           ", and resolvers may hold the DNSKEY set and answers from before it for " + hold +
           " s (RFC 7583): remove the old key in " +
           std::to_string((wait_ms - age_of(*youngest).value_or(0) + 999) / 1000) + " s or later";
}

}  // namespace glbd::dnssec
