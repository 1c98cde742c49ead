// resolver/select.cpp — the load-balanced part of an answer (product.md's answer semantics): where the client
// is, which group of a host's plan answers it (country, continent, default geo, all; health fallback and
// fail-open), and the weighted draw within the group.
#include <algorithm>
#include <cstring>

#include "resolver/responder.hpp"

namespace glbd {
namespace detail {
namespace {

thread_local uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
inline uint64_t next_random() {
    // xorshift64*: fast, good enough for picking among weighted entries.
    uint64_t x = rng_state;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

}  // namespace

using namespace wire;

geo::Location Responder::locate() {
    if (located_) return loc_;
    located_ = true;
    if (!snap_.geo) return loc_;
    geo::Address a = client_.address;
    if (q_.ecs && q_.ecs_source > 0) {
        a = geo::Address{};
        a.family = q_.ecs_family == 1 ? 4 : 6;
        std::memcpy(a.bytes.data(), q_.ecs_addr, q_.ecs_addr_len);
        uint8_t source = q_.ecs_source;
        a.unmap(&source);
    } else {
        a.unmap();
    }
    loc_ = snap_.geo->locate(a);
    return loc_;
}

const plan::Group* Responder::choose_group(const std::byte* plan, bool& fallback, bool& fail_open) {
    const auto& h = at<plan::Head>(plan, 0);
    const auto* groups = &at<plan::Group>(plan, sizeof(plan::Head));
    const plan::Group* order[4] = {nullptr, nullptr, nullptr, nullptr};
    int n = 0;
    if (h.geo_groups > 0) {
        geo::Location loc = locate();
        if (h.geo_dependent) scope_ = std::max(scope_, loc.prefix);
        for (size_t i = 0; i < h.geo_groups; ++i) {
            const plan::Group& g = groups[i];
            if (g.code == loc.code_key && g.len == loc.code.size() && !loc.code.empty() &&
                (g.len <= 8 || std::memcmp(plan + g.long_code, loc.code.data(), g.len) == 0)) {
                order[0] = &g;
            }
            if (g.continent != 0 && g.continent == loc.continent_key) order[1] = &g;
        }
        if (order[0] == order[1]) order[1] = nullptr;
        n = 2;
    }
    if (h.has_default) order[n++] = &groups[h.geo_groups];
    order[n++] = &groups[h.geo_groups + h.has_default];
    const plan::Group* first = nullptr;
    for (int i = 0; i < n; ++i) {
        if (!order[i] || order[i]->entries == 0) continue;
        if (!first) first = order[i];
        if (order[i]->usable) {
            fallback = order[i] != first;
            return order[i];
        }
    }
    fail_open = true;
    return first;
}

// Answers A/AAAA/CNAME/ANY at a load-balanced host. Returns false for NODATA. A hostname endpoint
// makes the answer a CNAME, whose target is returned for the caller to chase.
bool Responder::host_answer(const Zone::Ref& ref, std::string_view owner, bool owner_is_qname,
                            std::string_view* cname_target) {
    const std::byte* plan = ref.plan;
    const auto& h = at<plan::Head>(plan, 0);
    const uint16_t qtype = q_.qtype;
    uint32_t answers = 0;
    int mode = 0;
    if (h.simple) {
        answers = h.answers;
        const auto& a = at<plan::Answers>(plan, answers);
        mode = a.n4[0] + a.n6[0] > 0 || a.cname[0] != 0 ? 0 : 1;
        if (mode == 1) short_ttl_ = true, info_.fail_open = true;
    } else {
        bool fallback = false, fail_open = false;
        const plan::Group* g = choose_group(plan, fallback, fail_open);
        if (!g) return false;
        mode = fail_open ? 1 : 0;
        if (fallback || fail_open) short_ttl_ = true;
        info_.fallback |= fallback;
        info_.fail_open |= fail_open;
        // ANY and CNAME use the A pick, and fall back to AAAA when no entry has A data.
        uint32_t pick = g->pick[qtype == type::AAAA ? 1 : 0][mode];
        if (pick == 0 && qtype != type::A) pick = g->pick[1][mode];
        if (pick == 0) return false;
        const auto& p = at<plan::Pick>(plan, pick);
        const auto* choices = &at<plan::Choice>(plan, pick + sizeof(plan::Pick));
        uint32_t choice = 0;
        if (p.count > 1) {
            info_.varies = true;
            if (p.total == 0) {
                choice = static_cast<uint32_t>(next_random() % p.count);
            } else {
                auto r = static_cast<uint32_t>(next_random() % p.total);
                while (choices[choice].cumulative <= r) ++choice;
            }
        }
        if (ref.host == info_.host) info_.entry = choices[choice].entry, info_.counter = choices[choice].counter;
        answers = choices[choice].answers;
    }
    const auto& a = at<plan::Answers>(plan, answers);
    uint16_t atype = 0;
    const std::byte* addr = nullptr;
    unsigned count = 0, len = 0;
    if ((qtype == type::A || qtype == type::ANY) && a.n4[mode] > 0) {
        atype = type::A, addr = plan + a.v4[mode], count = a.n4[mode], len = 4;
    } else if ((qtype == type::AAAA || qtype == type::ANY) && a.n6[mode] > 0) {
        atype = type::AAAA, addr = plan + a.v6[mode], count = a.n6[mode], len = 16;
    }
    uint32_t ttl = short_ttl_ ? std::min(h.ttl, kShortTtl) : h.ttl;
    if (atype != 0) {
        for (unsigned i = 0; i < count; ++i, addr += len) {
            write_rr(owner, owner_is_qname, atype, ttl, reinterpret_cast<const uint8_t*>(addr), len);
        }
        return true;
    }
    if (a.cname[mode] != 0) {
        const auto* c = reinterpret_cast<const char*>(plan + a.cname[mode]);
        std::string_view target(c + 1, static_cast<uint8_t>(c[0]));
        write_name_rr(owner, owner_is_qname, type::CNAME, ttl, target);
        *cname_target = target;
        return true;
    }
    return false;
}

}  // namespace detail

void seed_selection(uint64_t seed) noexcept { detail::rng_state = seed ? seed : 0x9e3779b97f4a7c15ULL; }

}  // namespace glbd
