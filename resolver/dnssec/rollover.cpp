#include "resolver/dnssec/rollover.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "resolver/wire/text.hpp"

namespace glbd::dnssec {

void KeyHistory::update(const ZoneKeys& zones, uint64_t now_ms) {
    std::map<std::string, std::map<std::string, Published>> next;
    for (const auto& [zone, keys] : zones) {
        auto known = published_.find(zone);
        auto& times = next[zone];
        for (const auto& k : keys) {
            Published p{now_ms, 0};
            if (known != published_.end()) {
                if (auto it = known->second.find(k->rdata()); it != known->second.end()) p = it->second;
            }
            times[k->rdata()] = p;
        }
    }
    published_ = std::move(next);
}

uint64_t KeyHistory::published_at(const std::string& zone, const Key& key) const {
    auto z = published_.find(zone);
    if (z == published_.end()) return 0;
    auto it = z->second.find(key.rdata());
    return it == z->second.end() ? 0 : it->second.at;
}

namespace {
constexpr std::string_view kFileHeader = "glbd-dnssec-keys 2", kFileHeaderV1 = "glbd-dnssec-keys 1";

bool parse_ms(std::string_view text, uint64_t& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}
}  // namespace

std::string KeyHistory::to_text() const {
    std::string out(kFileHeader);
    out += '\n';
    for (const auto& [zone, keys] : published_) {
        for (const auto& [rdata, p] : keys) {
            out += zone + ' ' + std::to_string(p.at) + ' ' + wire::base64_encode(rdata);
            if (p.ds_seen) out += " ds=" + std::to_string(p.ds_seen);
            out += '\n';
        }
    }
    return out;
}

bool KeyHistory::from_text(std::string_view text, std::string& error) {
    std::map<std::string, std::map<std::string, Published>> read;
    size_t keys = 0, line_no = 0;
    bool v1 = false;
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
            v1 = line == kFileHeaderV1;
            if (line != kFileHeader && !v1) return bad("not \"" + std::string(kFileHeader) + "\"");
            continue;
        }
        std::vector<std::string_view> field;
        for (std::string_view rest = line; field.size() < 5;) {
            const size_t sp = rest.find(' ');
            field.push_back(rest.substr(0, sp));
            if (sp == std::string_view::npos) break;
            rest.remove_prefix(sp + 1);
        }
        if (field.size() != 3 && (v1 || field.size() != 4))
            return bad(v1 ? "not ZONE MS DNSKEY" : "not ZONE MS DNSKEY [ds=MS]");
        if (!wire::name_to_wire(field[0]) || field[0].empty()) return bad("not a zone name");
        Published p;
        if (!parse_ms(field[1], p.at)) return bad("not a time in ms");
        if (field.size() == 4 &&
            (field[3].substr(0, 3) != "ds=" || !parse_ms(field[3].substr(3), p.ds_seen) || p.ds_seen == 0))
            return bad("not ds=MS after the DNSKEY");
        auto rdata = wire::base64_decode(field[2]);
        if (!rdata || rdata->size() < 4 || rdata->size() > 2048) return bad("not a DNSKEY RDATA in base64");
        if (++keys > kMaxKeys) return bad("more than " + std::to_string(kMaxKeys) + " keys");
        if (!read[std::string(field[0])].emplace(std::move(*rdata), p).second) return bad("a key listed twice");
    }
    if (line_no == 0) {
        error = "empty";
        return false;
    }
    published_ = std::move(read);
    return true;
}

namespace {
// Whether a DNSKEY RDATA is a KSK's or a CSK's (SEP in its flags' low byte).
bool is_sep(const std::string& rdata) { return rdata.size() > 1 && (static_cast<uint8_t>(rdata[1]) & kFlagSep) != 0; }
// The keys that sign each Role (split_roles), as DNSKEY RDATAs.
std::array<std::vector<std::string>, 2> roles(const std::vector<std::string>& rdatas) {
    return split_roles(rdatas, is_sep);
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
    for (const auto& [rdata, p] : z->second) before.push_back(rdata);
    for (const auto& k : next) after.push_back(k->rdata());
    // How long ago a key was first published (none: it is not yet).
    auto age_of = [&](const std::string& rdata) -> std::optional<uint64_t> {
        auto it = z->second.find(rdata);
        if (it == z->second.end()) return std::nullopt;
        return now_ms - std::min(now_ms, it->second.at);
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

std::vector<std::string> KeyHistory::dropped_ksks(const std::string& zone,
                                                  const std::vector<std::shared_ptr<const Key>>& next) const {
    std::vector<std::string> out;
    auto z = published_.find(zone);
    if (z == published_.end() || next.empty()) return out;  // newly signed, or no longer signed
    for (const auto& published : z->second) {
        const std::string& rdata = published.first;  // named: clang 14 captures no structured binding
        if (is_sep(rdata) && std::none_of(next.begin(), next.end(), [&](const auto& k) { return k->rdata() == rdata; }))
            out.push_back(rdata);
    }
    return out;
}

namespace {
using ParentAnswers = std::vector<KeyHistory::ParentAnswer>;
// Whether one server's DS set points at `key`.
bool points_at(const Key& key, const KeyHistory::ParentAnswer& a) {
    return std::any_of(a.ds.begin(), a.ds.end(), [&](const auto& ds) { return key.names_ds(ds); });
}
// Whether every server's DS set points at `key`.
bool all_point_at(const Key& key, const ParentAnswers& answers) {
    return !answers.empty() &&
           std::all_of(answers.begin(), answers.end(), [&](const auto& a) { return points_at(key, a); });
}
// The key tags a DS set names: "33420, 4151".
std::string ds_tags(const std::vector<std::string>& ds) {
    std::string out;
    for (const auto& d : ds) {
        if (d.size() < 2) continue;
        out +=
            (out.empty() ? "" : ", ") + std::to_string((static_cast<uint8_t>(d[0]) << 8) | static_cast<uint8_t>(d[1]));
    }
    return out;
}
}  // namespace

void KeyHistory::note_parent(const std::string& zone, const std::vector<std::shared_ptr<const Key>>& keys,
                             const ParentAnswers& answers, uint64_t now_ms) {
    auto z = published_.find(zone);
    if (z == published_.end() ||
        std::any_of(answers.begin(), answers.end(), [](const auto& a) { return !a.error.empty(); }))
        return;
    for (const auto& k : keys) {
        auto it = z->second.find(k->rdata());
        if (!k->sep() || it == z->second.end()) continue;  // not a KSK, or not published yet
        if (!all_point_at(*k, answers)) {
            it->second.ds_seen = 0;
        } else if (it->second.ds_seen == 0) {
            it->second.ds_seen = std::max<uint64_t>(now_ms, 1);
        }
    }
}

std::string KeyHistory::check_parent(const std::string& zone, const std::vector<std::shared_ptr<const Key>>& next,
                                     const ParentAnswers& answers, uint64_t now_ms) const {
    const auto dropped = dropped_ksks(zone, next);
    if (dropped.empty()) return "";
    const std::string removing = "removing KSK tag " + tags(dropped);
    for (const auto& a : answers) {
        if (!a.error.empty()) {
            return removing + " waits for the parent: its server " + a.server + " gave no DS set (" + a.error +
                   "); reload again later, or take dnssec.parent out of the zone to remove it unchecked";
        }
    }
    if (std::all_of(answers.begin(), answers.end(), [](const auto& a) { return a.ds.empty(); })) return "";
    // Of the KSKs that stay and that every DS set points at, the one pointed at longest.
    std::vector<std::string> staying;
    const Key* best = nullptr;
    uint64_t best_seen = 0;
    for (const auto& k : next) {
        if (!k->sep()) continue;
        staying.push_back(k->rdata());
        if (!all_point_at(*k, answers)) continue;
        uint64_t seen = now_ms;
        if (auto z = published_.find(zone); z != published_.end()) {
            if (auto it = z->second.find(k->rdata()); it != z->second.end() && it->second.ds_seen)
                seen = it->second.ds_seen;
        }
        if (!best || seen < best_seen) best = k.get(), best_seen = seen;
    }
    if (!best) {
        for (const auto& a : answers) {
            if (std::none_of(next.begin(), next.end(), [&](const auto& k) { return k->sep() && points_at(*k, a); })) {
                return removing + " would break the chain of trust: the parent's DS set at " + a.server +
                       " points at " + (a.ds.empty() ? "no key" : "key tag " + ds_tags(a.ds)) +
                       " and at no KSK that stays (tag " + tags(staying) +
                       "): publish the DS of one there first (glbd ds " + zone + ")";
            }
        }
        return removing + " waits for the parent's servers to point at one KSK that stays (tag " + tags(staying) + ")";
    }
    uint32_t ttl = 0;
    for (const auto& a : answers) ttl = std::max(ttl, a.ttl);
    const uint64_t wait = uint64_t{ttl} * 1000, age = now_ms - std::min(now_ms, best_seen);
    if (age >= wait) return "";
    return removing + " would break validation: the parent's DS set has pointed at key tag " +
           std::to_string(best->tag()) + " for " + std::to_string(age / 1000) +
           " s (since glbd first saw it), and resolvers may hold the set from before that for its TTL, " +
           std::to_string(ttl) + " s: remove it in " + std::to_string((wait - age + 999) / 1000) + " s or later";
}

}  // namespace glbd::dnssec
