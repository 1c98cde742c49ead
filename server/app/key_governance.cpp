// DNSSEC key governance (control thread): whether every instance publishes the DNSKEY sets this one does (each
// report carries its sets), shown in /v1/state and /v1/summary ("dnssec"), `glbd status`, a metric, and logged
// when it changes; and the key changes a reload or a restart may make (RFC 7583, resolver/dnssec/rollover.hpp),
// the keys' history kept in stateDir.
#include "server/app/key_governance.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <thread>

#include "resolver/base/atomic_file.hpp"
#include "resolver/base/metrics.hpp"
#include "resolver/base/read_file.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/text.hpp"
#include "server/app/dns_ask.hpp"

namespace glbd {

using nlohmann::json;

json KeyGovernance::json_of(const sync::Service& sync) const {
    json zones = json::object();
    for (const auto& [zone, id] : sync.own_zone_keys()) zones[zone] = id;
    json mismatches = json::array();
    for (const auto& m : sync.key_mismatches()) {
        mismatches.push_back({{"instance", m.origin},
                              {"zone", m.zone},
                              {"alive", m.alive},
                              {"ours", m.ours.empty() ? json(nullptr) : json(m.ours)},
                              {"theirs", m.theirs.empty() ? json(nullptr) : json(m.theirs)}});
    }
    return {{"zones", zones}, {"keyMismatches", mismatches}};
}

// Per zone served: a few samples at any number of hosts.
void KeyGovernance::write_metrics(metrics::Writer& m, const sync::Service& sync,
                                  const std::vector<model::Zone>& zones) const {
    m.family("glbd_dnssec_key_mismatch", "gauge",
             "Per zone served: the live instances that publish another DNSKEY set than this one (other keys, or "
             "signed on one side only). Anything but 0 breaks validation of some answers.");
    auto mismatches = sync.key_mismatches();
    for (const auto& z : zones) {
        size_t n = 0;
        for (const auto& mm : mismatches) n += mm.alive && mm.zone == z.origin ? 1 : 0;
        m.sample("glbd_dnssec_key_mismatch", metrics::label("zone", z.origin), static_cast<double>(n));
    }
}

// After each build: a warning when a live instance starts publishing other keys than ours, a note when it
// stops (or is no longer alive).
void KeyGovernance::log_mismatches(const sync::Service& sync) {
    std::set<std::string> now;
    for (const auto& m : sync.key_mismatches()) {
        if (!m.alive) continue;
        std::string line = "zone " + m.zone + ": " + m.origin + " publishes " +
                           (m.theirs.empty() ? "no DNSKEY (unsigned)" : "DNSKEY " + m.theirs) + ", this server " +
                           (m.ours.empty() ? "none (unsigned)" : m.ours);
        if (!mismatches_.count(line)) {
            spdlog::warn("dnssec: {}: resolvers that ask both will fail to validate", line);
        }
        now.insert(std::move(line));
    }
    for (const auto& line : mismatches_) {
        if (!now.count(line)) spdlog::info("dnssec: no longer: {}", line);
    }
    mismatches_ = std::move(now);
}

namespace {
// The largest TTL `zone` gives in `config` (its own records, negative answers, the config's hosts).
uint32_t max_ttl(const conf::Config& config, const std::string& origin) {
    uint32_t out = 0;
    for (const auto& z : config.zones) {
        if (z.origin != origin) continue;
        out = std::max({out, z.ttl, z.soa.minimum});
        for (const auto& r : z.records) out = std::max(out, r.ttl);
    }
    for (const auto& h : config.hosts) {
        if (model::is_subdomain(h.name, origin)) out = std::max(out, h.ttl);
    }
    return out;
}
}  // namespace

// How long a resolver may hold `origin`'s DNSKEY set or an answer: the largest TTL of the running config, the
// next one and every cluster's entries, and the time a change takes to reach the peers.
uint64_t KeyGovernance::hold_ms(const conf::Config& current, const conf::Config& next, const sync::Service& sync,
                                const std::string& origin) {
    uint32_t ttl = std::max(max_ttl(current, origin), max_ttl(next, origin));
    for (const auto& cv : sync.view()) {
        for (const auto& h : cv.hosts) {
            if (model::is_subdomain(h.host, origin)) ttl = std::max(ttl, h.ttl);
        }
    }
    uint64_t propagation = next.peers ? 2 * static_cast<uint64_t>(next.peers->sync_interval.count()) : 0;
    return uint64_t{ttl} * 1000 + propagation + 1000;
}

namespace {
using ParentAnswer = dnssec::KeyHistory::ParentAnswer;

// What `server`, one of the parent zone's, answers for `zone`'s DS: no recursion asked, over TCP, within
// `timeout_ms`. The answer must be authoritative, NOERROR (the DS set, or none: an insecure delegation).
ParentAnswer ask_parent_ds(const std::string& zone, const SocketAddress& server, int timeout_ms) {
    ParentAnswer a;
    a.server = server.str();
    auto qname = wire::name_to_wire(zone);
    if (!qname) {
        a.error = "not a zone name";
        return a;
    }
    wire::QueryOptions o;
    o.id = static_cast<uint16_t>(std::random_device{}());
    auto answer = dns_ask_tcp(server, wire::make_query(*qname, wire::type::DS, o), timeout_ms);
    if (!answer) {
        a.error = answer.error();
        return a;
    }
    const uint8_t* msg = answer->data();
    const size_t len = answer->size();
    wire::Header h;
    wire::read_header(msg, len, h);
    if (h.rcode() != wire::rcode::NOERROR) {
        a.error = "answered " + wire::rcode_name(h.rcode());
        return a;
    }
    if (!h.aa()) {
        a.error = "its answer is not authoritative: list the parent zone's own servers";
        return a;
    }
    bool parents_soa = false;
    wire::ResponseRecords records(msg, len);
    wire::Record rr;
    wire::Section section{};
    std::string owner;
    while (records.next(rr, section)) {
        if (!wire::read_name(msg, len, rr.owner, owner) || rr.klass != wire::kClassIn) continue;
        if (section == wire::Section::answer && rr.type == wire::type::DS && owner == *qname) {
            a.ds.emplace_back(reinterpret_cast<const char*>(msg + rr.rdata), rr.rdlen);
            a.ttl = std::max(a.ttl, rr.ttl);
        }
        // No DS: the parent proves it with its own SOA, of a zone above this one. The zone's own SOA means a
        // server of the zone itself (glbd, a NODATA at its apex), which knows nothing of the parent's DS.
        parents_soa |= section == wire::Section::authority && rr.type == wire::type::SOA && owner != *qname &&
                       model::is_subdomain(zone, wire::wire_to_name(owner));
    }
    if (!records.ok()) {
        a.ds.clear();
        a.error = "its answer is malformed";
    } else if (a.ds.empty() && !parents_soa) {
        a.error = "no DS and no SOA of a zone above " + zone + ": list the parent zone's own servers";
    }
    std::sort(a.ds.begin(), a.ds.end());
    return a;
}

// The servers of one parent that answered with different DS sets, said as "A holds tags X, B holds tags Y"
// ("" when every answer is alike).
std::string disagreement(const std::vector<ParentAnswer>& answers) {
    for (const auto& a : answers) {
        if (a.ds != answers.front().ds) {
            auto held = [](const ParentAnswer& x) {
                return x.server + " holds " +
                       (x.ds.empty() ? std::string("no DS") : std::to_string(x.ds.size()) + " DS");
            };
            return held(answers.front()) + ", " + held(a);
        }
    }
    return "";
}
}  // namespace

Result<std::vector<KeyGovernance::ParentQuestion>> KeyGovernance::precheck(const conf::Config& current,
                                                                           const conf::Config& next,
                                                                           const sync::Service& sync) {
    const uint64_t now = sync::now_ms();
    std::vector<ParentQuestion> questions;
    for (const auto& z : next.zones) {
        if (!z.dnssec) continue;
        if (auto why = history_.check(z.origin, z.dnssec->keys, now, hold_ms(current, next, sync, z.origin));
            !why.empty())
            return Err{"zone " + z.origin + ": " + why};
        // A KSK removed: the parent's DS set must point at one that stays (asked only then).
        if (history_.dropped_ksks(z.origin, z.dnssec->keys).empty()) continue;
        if (z.dnssec->parent.empty()) {
            spdlog::warn(
                "zone {}: a KSK is removed without asking the parent whether its DS set points at one that "
                "stays (set dnssec.parent to have glbd check it)",
                z.origin);
            continue;
        }
        questions.push_back({z.origin, z.dnssec->keys, z.dnssec->parent});
    }
    return questions;
}

KeyGovernance::ParentAnswers KeyGovernance::ask_parents(const std::vector<ParentQuestion>& questions, int budget_ms) {
    ParentAnswers out(questions.size());
    std::vector<std::thread> askers;
    for (size_t q = 0; q < questions.size(); ++q) {
        out[q].resize(questions[q].servers.size());
        for (size_t i = 0; i < questions[q].servers.size(); ++i) {
            askers.emplace_back([&out, &questions, q, i, budget_ms] {
                out[q][i] = ask_parent_ds(questions[q].zone, questions[q].servers[i], budget_ms);
            });
        }
    }
    for (auto& t : askers) t.join();  // each within the budget: the whole within it too
    return out;
}

Status KeyGovernance::conclude(const std::vector<ParentQuestion>& questions, const ParentAnswers& answers) {
    for (size_t q = 0; q < questions.size() && q < answers.size(); ++q) {
        const ParentQuestion& asked = questions[q];
        history_.note_parent(asked.zone, asked.keys, answers[q], sync::now_ms());
        save();
        const bool answered =
            std::all_of(answers[q].begin(), answers[q].end(), [](const auto& a) { return a.error.empty(); });
        if (std::string differ = answered ? disagreement(answers[q]) : ""; !differ.empty()) {
            return Err{"zone " + asked.zone + ": the parent's servers disagree (" + differ +
                       "): a KSK goes only once they all hold one DS set; reload again later"};
        }
        if (auto why = history_.check_parent(asked.zone, asked.keys, answers[q], sync::now_ms()); !why.empty())
            return Err{"zone " + asked.zone + ": " + why};
        for (const auto& a : answers[q]) {
            spdlog::info(
                "zone {}: the parent's server {} holds {} (TTL {} s): the KSK may go", asked.zone, a.server,
                a.ds.empty() ? "no DS (an insecure delegation)" : std::to_string(a.ds.size()) + " DS record(s)", a.ttl);
        }
    }
    return ok();
}

Status KeyGovernance::check(const conf::Config& current, const conf::Config& next, const sync::Service& sync) {
    auto questions = precheck(current, next, sync);
    if (!questions) return Err{questions.error()};
    if (questions->empty()) return ok();
    return conclude(*questions, ask_parents(*questions, kParentBudgetMs));
}

void KeyGovernance::note_published(const conf::Config& config) {
    state_dir_ = config.state_dir;
    dnssec::KeyHistory::ZoneKeys signed_zones;
    for (const auto& z : config.zones) {
        if (z.dnssec) signed_zones.emplace(z.origin, z.dnssec->keys);
    }
    history_.update(signed_zones, sync::now_ms());
    if (state_dir_.empty()) return;
    std::error_code ec;
    if (signed_zones.empty() && !std::filesystem::exists(path(), ec)) return;  // never signed here
    save();
}

void KeyGovernance::save() const {
    if (state_dir_.empty()) return;
    const std::string text = history_.to_text();
    if (auto saved = save_file(state_dir_, dnssec::KeyHistory::kFileName, [&](std::ostream& out) { out << text; });
        !saved) {
        spdlog::warn("cannot save the DNSSEC keys' history: {}; a restart cannot be checked against it", saved.error());
    }
}

std::string KeyGovernance::path() const { return state_dir_ + "/" + dnssec::KeyHistory::kFileName; }

int KeyGovernance::restore(const conf::Config& config, const sync::Service& sync) {
    state_dir_ = config.state_dir;
    if (state_dir_.empty()) return 0;
    const std::string path = this->path();
    // glbd writes some 150 bytes a key (algorithms 13 and 15): a larger file is not one it wrote.
    bool missing = false;
    auto text = read_file(path, size_t{1} << 20, &missing);
    if (missing) return 0;  // the first run with this stateDir, or no zone was signed
    dnssec::KeyHistory saved;
    std::string error = text.error();
    if (!text || !saved.from_text(*text, error)) {
        spdlog::warn("{}: {}: ignored, so this start's keys are not checked against the last run's", path, error);
        return 0;
    }
    history_ = std::move(saved);
    if (auto allowed = check(config, config, sync); !allowed) {
        spdlog::error(
            "refusing to start: {} (the keys published until the last run are listed in {}: a change of "
            "keys is checked at a restart as at a reload)",
            allowed.error(), path);
        return 1;
    }
    return 0;
}

}  // namespace glbd
