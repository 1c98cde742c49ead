#include "resolver/snapshot/signed.hpp"

#include <algorithm>
#include <unordered_map>

#include "resolver/select.hpp"
#include "resolver/wire/builder.hpp"

namespace glbd {
namespace {

// A name in wire form, lower-cased: the canonical form RFC 4034 6.2 signs.
std::string lower(std::string_view name) {
    std::string out(name);
    for (char& c : out) c = static_cast<char>(wire::lower(static_cast<uint8_t>(c)));
    return out;
}

// What an RRSIG over a host's RRset covers besides the owner: the type, the original TTL and the set in
// canonical order (RFC 4034 6.3, duplicates once), each RDATA after its length. Equal for equal sets in any order.
std::string set_identity(uint16_t type, uint32_t ttl, std::vector<std::string_view> rdatas) {
    std::sort(rdatas.begin(), rdatas.end());
    rdatas.erase(std::unique(rdatas.begin(), rdatas.end()), rdatas.end());
    wire::Builder k;
    k.u16(type), k.u32(ttl);
    for (std::string_view rd : rdatas) k.u16(static_cast<uint16_t>(rd.size())), k.bytes(rd);
    return std::string(k.view());
}

}  // namespace

uint32_t SignatureCache::sign_zone(Zone& z, uint32_t now) {
    if (!z.signer) return 0;
    const dnssec::ZoneSigner& signer = *z.signer;
    uint32_t first = 0;
    std::string key;
    std::vector<std::string_view> rdatas;
    for (auto& [name, node] : z.nodes) {
        // Only sets the zone is authoritative for: not the NS at a cut (the child's, RFC 4035 2.2), nor glue.
        if (z.under_cut(name, true)) continue;
        for (RRset& set : node.rrsets) {
            // Keyed as an RRSIG covers the set (the owner, then set_identity), by this signer.
            rdatas.clear();
            for (const RData& rd : set.rdata) rdatas.emplace_back(rd.wire);
            key.assign(signer.id()).append(name).append(set_identity(set.type, set.ttl, rdatas));
            Made& m = sets_[key];
            if (m.rrsigs.empty() || now >= signer.refresh_at(m.made) || now < m.made) {
                dnssec::RRset rrset{name, set.type, set.ttl, {}};
                for (const RData& rd : set.rdata) rrset.rdatas.push_back(rd.wire);
                m.rrsigs.clear();
                HostSignatures::store(signer.sign(rrset, now), m.rrsigs);
                m.made = now;
            }
            m.used = true;
            set.rrsigs = m.rrsigs;
            if (set.type == wire::type::SOA && name == z.origin) z.soa.rrsigs = m.rrsigs;
            uint32_t due = signer.refresh_at(m.made);
            first = first == 0 ? due : std::min(first, due);
        }
    }
    return first;
}

void SignatureCache::sweep() {
    for (auto it = sets_.begin(); it != sets_.end();) {
        if (!it->second.used) {
            it = sets_.erase(it);
        } else {
            it->second.used = false;
            ++it;
        }
    }
}

namespace {

// f(answers, mode, type, ttl, rdatas) for each RRset `b`'s plan can answer with: per Answers block the plan
// names (a simple host's one, or each pick's choices; each once) and mode (1 only where its bytes differ
// from 0's), its A, its AAAA and a hostname endpoint's CNAME (the target lower-cased), each when not empty.
template <class F>
void each_set(const HostBlock& b, F&& f) {
    const std::byte* plan = b.plan();
    const auto& head = select::at<plan::Head>(plan, 0);
    std::vector<uint32_t> blocks;
    if (head.simple) {
        blocks.push_back(head.answers);
    } else {
        const unsigned groups = head.geo_groups + head.has_default + 1u;
        for (unsigned g = 0; g < groups; ++g) {
            const auto& group = select::at<plan::Group>(plan, sizeof(plan::Head) + g * sizeof(plan::Group));
            for (const auto& by_type : group.pick) {
                for (uint32_t pick : by_type) {
                    if (pick == 0) continue;
                    const auto& p = select::at<plan::Pick>(plan, pick);
                    for (uint32_t c = 0; c < p.count; ++c) {
                        blocks.push_back(
                            select::at<plan::Choice>(plan, pick + sizeof(plan::Pick) + c * sizeof(plan::Choice))
                                .answers);
                    }
                }
            }
        }
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    std::vector<std::string_view> rdatas;
    std::string target;
    for (uint32_t answers : blocks) {
        const auto& a = select::at<plan::Answers>(plan, answers);
        for (int mode = 0; mode < (a.every == 0 ? 1 : 2); ++mode) {  // every == 0: mode 1 is mode 0's bytes
            const char* v4 = reinterpret_cast<const char*>(plan + a.v4(answers, mode));
            const char* v6 = reinterpret_cast<const char*>(plan + a.v6(answers, mode));
            rdatas.clear();
            for (size_t i = 0; i < a.n4[mode]; ++i) rdatas.emplace_back(v4 + 4 * i, 4);
            if (!rdatas.empty()) f(answers, mode, wire::type::A, a.ttl, rdatas);
            rdatas.clear();
            for (size_t i = 0; i < a.n6[mode]; ++i) rdatas.emplace_back(v6 + 16 * i, 16);
            if (!rdatas.empty()) f(answers, mode, wire::type::AAAA, a.ttl, rdatas);
            if (a.cname[mode] != 0) {
                const char* c = reinterpret_cast<const char*>(plan + a.name(answers, mode));
                target = lower(std::string_view(c + 1, static_cast<uint8_t>(c[0])));
                rdatas.assign(1, target);
                f(answers, mode, wire::type::CNAME, a.ttl, rdatas);
            }
        }
    }
}

}  // namespace

void defer_host(HostBlock& b, uint32_t now, SignCount& count) {
    HostSignatures& out = b.sigs;
    out = HostSignatures{};
    out.deferred = true;
    out.refresh_at = now;
    each_set(b, [&](uint32_t, int, uint16_t type, uint32_t, const std::vector<std::string_view>&) {
        if (type == wire::type::A) out.types |= HostSignatures::kHasA;
        if (type == wire::type::AAAA) out.types |= HostSignatures::kHasAaaa;
    });
    ++count.deferred;
}

void sign_host(HostBlock& b, const dnssec::ZoneSigner& signer, uint32_t now, const HostBlock* before,
               SignCount& count) {
    HostSignatures& out = b.sigs;
    out = HostSignatures{};
    out.signer = signer.id_hash();
    out.refresh_at = signer.refresh_at(now);
    // The sets `before` signed, by what their signatures cover, when they may still be given.
    std::unordered_map<std::string, std::string_view> kept;
    if (before && before->sigs.signer == out.signer && now < before->sigs.refresh_at &&
        before->sigs.refresh_at <= out.refresh_at) {
        each_set(*before, [&](uint32_t answers, int mode, uint16_t type, uint32_t ttl,
                              const std::vector<std::string_view>& rdatas) {
            std::string_view stored = before->sigs.find(HostSignatures::key(answers, mode, type));
            if (!stored.empty()) kept.emplace(set_identity(type, ttl, rdatas), stored);
        });
    }
    const std::string owner = lower(b.host.name);
    // The sets signed here, by what their signatures cover: a set that more than one block answers with
    // (the same cluster's choice in several groups) is signed once.
    std::unordered_map<std::string, HostSignatures::Set> mine;
    each_set(b, [&](uint32_t answers, int mode, uint16_t type, uint32_t ttl,
                    const std::vector<std::string_view>& rdatas) {
        HostSignatures::Set set{HostSignatures::key(answers, mode, type), static_cast<uint32_t>(out.bytes.size()), 0};
        std::string identity = set_identity(type, ttl, rdatas);
        if (auto same = mine.find(identity); same != mine.end()) {
            set.at = same->second.at, set.len = same->second.len;  // the bytes of the one signed already
        } else {
            if (auto it = kept.find(identity); it != kept.end()) {
                out.bytes += it->second;
                out.refresh_at = std::min(out.refresh_at, before->sigs.refresh_at);
                ++count.kept;
            } else {
                HostSignatures::store(signer.sign(dnssec::RRset{owner, type, ttl, rdatas}, now), out.bytes);
                ++count.made;
            }
            set.len = static_cast<uint32_t>(out.bytes.size() - set.at);
            mine.emplace(std::move(identity), set);
        }
        out.sets.push_back(set);
        if (type == wire::type::A) out.types |= HostSignatures::kHasA;
        if (type == wire::type::AAAA) out.types |= HostSignatures::kHasAaaa;
    });
    std::sort(out.sets.begin(), out.sets.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
}

}  // namespace glbd
