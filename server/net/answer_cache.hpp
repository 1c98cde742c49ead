// server/net/answer_cache — one UDP thread's memory of its recent answers, so a repeated query costs a
// lookup and a copy instead of a resolution.
//
// A response depends only on the query's bytes after its ID, the client's address (geo without ECS)
// and the snapshot; answer() reports in QueryInfo::varies when it also drew a random number (a weighted
// choice among several entries), and such answers are never kept, so weights hold query by query. The
// key holds the publisher's generation: a new snapshot (a reload, a health or sync change) is never
// answered from an older one. Two-way set-associative and fixed-size (allocated once, about 1.4 MB, as
// zeroed pages the kernel hands out when a slot is first written: an idle thread's cache costs no memory);
// no lock (one thread).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include "geo/geo.hpp"
#include "resolver/resolver.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd {

class AnswerCache {
public:
    static constexpr size_t kSets = 1024, kWays = 2;  // a set's newest answer first
    static constexpr size_t kMaxQuery = 128;          // longer queries are not kept
    static constexpr size_t kMaxAnswer = 512;         // nor longer answers

    AnswerCache() : slots_(static_cast<Slot*>(std::calloc(kSets * kWays, sizeof(Slot)))) {
        if (!slots_) throw std::bad_alloc();
    }

    // Writes the remembered answer to `query` into `out` (with the query's ID) and returns its length,
    // or 0 when there is none.
    size_t find(uint64_t generation, const geo::Address& from, const uint8_t* query, size_t len, uint8_t* out,
                size_t cap, QueryInfo& info) const {
        if (len < wire::kHeaderSize || len > kMaxQuery) return 0;
        const Slot* set = &slots_[set_of(from, query, len) * kWays];
        for (size_t w = 0; w < kWays; ++w) {
            const Slot& s = set[w];
            if (s.generation != generation || s.qlen != len || s.rlen > cap || !same_from(s.from, from) ||
                std::memcmp(s.query + 2, query + 2, len - 2) != 0) {
                continue;
            }
            std::memcpy(out, s.answer, s.rlen);
            out[0] = query[0], out[1] = query[1];
            info = s.info;
            return s.rlen;
        }
        return 0;
    }

    // Remembers `answer` to `query` unless it varies from one query to the next or does not fit.
    void store(uint64_t generation, const geo::Address& from, const uint8_t* query, size_t len, const uint8_t* answer,
               size_t answer_len, const QueryInfo& info) {
        if (info.varies || len < wire::kHeaderSize || len > kMaxQuery || answer_len > kMaxAnswer) return;
        Slot* set = &slots_[set_of(from, query, len) * kWays];
        // The older way goes; the newer moves down unless it is from an older snapshot (then it goes).
        if (set[0].generation == generation) set[1] = set[0];
        Slot& s = set[0];
        s.generation = generation;
        s.from = from;
        s.qlen = static_cast<uint16_t>(len);
        s.rlen = static_cast<uint16_t>(answer_len);
        s.info = info;
        std::memcpy(s.query, query, len);
        std::memcpy(s.answer, answer, answer_len);
    }

private:
    // All zero is an empty slot: its qlen 0 matches no query (a query is at least a header long).
    struct Slot {
        uint64_t generation;
        geo::Address from;
        uint16_t qlen, rlen;
        QueryInfo info;
        uint8_t query[kMaxQuery];
        uint8_t answer[kMaxAnswer];
    };

    static bool same_from(const geo::Address& a, const geo::Address& b) {
        return a.family == b.family && std::memcmp(a.bytes.data(), b.bytes.data(), a.family == 4 ? 4 : 16) == 0;
    }
    static size_t set_of(const geo::Address& from, const uint8_t* query, size_t len) {
        uint64_t h = wire::name_hash(std::string_view(reinterpret_cast<const char*>(query) + 2, len - 2));
        uint64_t a;
        std::memcpy(&a, from.bytes.data(), 8);
        h = (h ^ a ^ from.family) * 0x9e3779b97f4a7c15ULL;
        return static_cast<size_t>(h >> 54) % kSets;
    }

    static_assert(std::is_trivially_copyable_v<Slot> && std::is_trivially_destructible_v<Slot>, "calloc'd slots");
    struct Free {
        void operator()(Slot* p) const { std::free(p); }
    };
    std::unique_ptr<Slot[], Free> slots_;
};

}  // namespace glbd
