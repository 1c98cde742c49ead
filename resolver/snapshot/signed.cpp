#include "resolver/snapshot/signed.hpp"

#include <algorithm>

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

}  // namespace

uint32_t SignatureCache::sign_zone(Zone& z, uint32_t now) {
    if (!z.signer) return 0;
    const dnssec::ZoneSigner& signer = *z.signer;
    uint32_t first = 0;
    std::string key;
    for (auto& [name, node] : z.nodes) {
        // Only sets the zone is authoritative for: not the NS at a cut (the child's, RFC 4035 2.2), nor glue.
        if (z.under_cut(name, true)) continue;
        for (RRset& set : node.rrsets) {
            wire::Builder k;
            k.bytes(signer.id()), k.bytes(name), k.u16(set.type), k.u32(set.ttl);
            for (const RData& rd : set.rdata) k.u16(static_cast<uint16_t>(rd.wire.size())), k.bytes(rd.wire);
            key.assign(k.view());
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

void sign_host(HostBlock& b, const dnssec::ZoneSigner& signer, uint32_t now) {
    const std::byte* plan = b.plan();
    const auto& head = select::at<plan::Head>(plan, 0);
    // Every Answers block the plan names: a simple host's one, or each pick's choices.
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

    HostSignatures& out = b.sigs;
    out = HostSignatures{};
    const std::string owner = lower(b.host.name);
    auto add = [&](uint32_t answers, int mode, uint16_t type, uint32_t ttl, std::vector<std::string_view> rdatas) {
        HostSignatures::Set set{HostSignatures::key(answers, mode, type), static_cast<uint32_t>(out.bytes.size()), 0};
        HostSignatures::store(signer.sign(dnssec::RRset{owner, type, ttl, std::move(rdatas)}, now), out.bytes);
        set.len = static_cast<uint32_t>(out.bytes.size() - set.at);
        out.sets.push_back(set);
    };
    for (uint32_t answers : blocks) {
        const auto& a = select::at<plan::Answers>(plan, answers);
        for (int mode = 0; mode < (a.every == 0 ? 1 : 2); ++mode) {  // every == 0: mode 1 is mode 0's bytes
            const char* v4 = reinterpret_cast<const char*>(plan + a.v4(answers, mode));
            const char* v6 = reinterpret_cast<const char*>(plan + a.v6(answers, mode));
            std::vector<std::string_view> rdatas;
            for (size_t i = 0; i < a.n4[mode]; ++i) rdatas.emplace_back(v4 + 4 * i, 4);
            if (!rdatas.empty()) add(answers, mode, wire::type::A, a.ttl, rdatas), out.types |= HostSignatures::kHasA;
            rdatas.clear();
            for (size_t i = 0; i < a.n6[mode]; ++i) rdatas.emplace_back(v6 + 16 * i, 16);
            if (!rdatas.empty())
                add(answers, mode, wire::type::AAAA, a.ttl, rdatas), out.types |= HostSignatures::kHasAaaa;
            if (a.cname[mode] != 0) {
                const char* c = reinterpret_cast<const char*>(plan + a.name(answers, mode));
                std::string target = lower(std::string_view(c + 1, static_cast<uint8_t>(c[0])));
                add(answers, mode, wire::type::CNAME, a.ttl, {target});
            }
        }
    }
    std::sort(out.sets.begin(), out.sets.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
    out.refresh_at = signer.refresh_at(now);
}

}  // namespace glbd
