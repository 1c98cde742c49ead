// server/answer_cache: a repeated query gets the same bytes as a fresh resolution (with its own ID);
// weighted choices, another snapshot generation or another client address never hit.
#include <gtest/gtest.h>

#include <set>

#include "server/net/answer_cache.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

using namespace glbd;
using namespace glbd::test;

namespace {

// Host one.glb.test: one cluster per geo (a fixed answer); two.glb.test: two clusters in one geo.
std::shared_ptr<const Snapshot> snapshot() {
    ViewBuilder view;
    view.add("two.glb.test",
             {{"a", "IE", 100, true, {{"192.0.2.10", true}}}, {"b", "IE", 100, true, {{"192.0.2.20", true}}}});
    view.add("one.glb.test", {"a", "IE", 100, true, {{"192.0.2.10", true}}});
    return view.snapshot(config_from(kGlbTestConfig));
}

geo::Address addr(const char* text) { return test::address_of(text); }

struct Served {
    std::vector<uint8_t> bytes;
    bool hit = false;
};

// What a UDP thread does: the cache, else answer() and remember.
Served serve(AnswerCache& cache, uint64_t gen, const Snapshot& s, std::vector<uint8_t> q, const geo::Address& from) {
    uint8_t out[1500];
    QueryInfo qi;
    size_t n = cache.find(gen, from, q.data(), q.size(), out, sizeof out, qi);
    Served r{{}, n > 0};
    if (n == 0) {
        n = answer(s, q.data(), q.size(), Client{from, Transport::udp}, out, sizeof out, &qi);
        cache.store(gen, from, q.data(), q.size(), out, n, qi);
    }
    r.bytes.assign(out, out + n);
    return r;
}

std::vector<uint8_t> with_id(std::vector<uint8_t> q, uint16_t id) {
    q[0] = static_cast<uint8_t>(id >> 8), q[1] = static_cast<uint8_t>(id);
    return q;
}

TEST(AnswerCache, RepeatIsAHitWithTheSameBytesAndItsOwnId) {
    auto s = snapshot();
    AnswerCache cache;
    QueryOpts o;
    o.ecs = ecs_payload("10.1.0.0/16");
    auto q = make_query("one.glb.test", 1, o);
    auto first = serve(cache, 7, *s, with_id(q, 0x1111), addr("192.0.2.200"));
    auto again = serve(cache, 7, *s, with_id(q, 0x2222), addr("192.0.2.200"));
    EXPECT_FALSE(first.hit);
    ASSERT_TRUE(again.hit);
    ASSERT_EQ(first.bytes.size(), again.bytes.size());
    EXPECT_EQ(again.bytes[0], 0x22);
    EXPECT_EQ(again.bytes[1], 0x22);
    EXPECT_TRUE(std::equal(first.bytes.begin() + 2, first.bytes.end(), again.bytes.begin() + 2));
    auto p = parse(again.bytes.data(), again.bytes.size());
    ASSERT_EQ(p.answer.size(), 1u);
    EXPECT_EQ(field(p.answer, 0, 4), "192.0.2.10");
}

TEST(AnswerCache, WeightedChoiceIsNeverKept) {
    auto s = snapshot();
    AnswerCache cache;
    auto q = make_query("two.glb.test", 1);
    std::set<std::string> seen;
    for (int i = 0; i < 200; ++i) {
        auto r = serve(cache, 7, *s, q, addr("192.0.2.200"));
        EXPECT_FALSE(r.hit);
        auto p = parse(r.bytes.data(), r.bytes.size());
        ASSERT_EQ(p.answer.size(), 1u);
        seen.insert(field(p.answer, 0, 4));
    }
    EXPECT_EQ(seen, (std::set<std::string>{"192.0.2.10", "192.0.2.20"}));
}

TEST(AnswerCache, OtherGenerationClientOrQueryBytesMiss) {
    auto s = snapshot();
    AnswerCache cache;
    auto q = make_query("static.glb.test", 1);
    EXPECT_FALSE(serve(cache, 7, *s, q, addr("192.0.2.200")).hit);
    EXPECT_TRUE(serve(cache, 7, *s, q, addr("192.0.2.200")).hit);
    EXPECT_FALSE(serve(cache, 8, *s, q, addr("192.0.2.200")).hit);  // a newer snapshot
    EXPECT_FALSE(serve(cache, 8, *s, q, addr("192.0.2.201")).hit);  // another client (geo)
    EXPECT_FALSE(serve(cache, 8, *s, q, addr("2001:db8::1")).hit);
    auto upper = make_query("STATIC.glb.test", 1);  // the question is echoed as sent
    auto r = serve(cache, 8, *s, upper, addr("192.0.2.200"));
    EXPECT_FALSE(r.hit);
    EXPECT_NE(std::search(r.bytes.begin(), r.bytes.end(), std::begin("STATIC"), std::end("STATIC") - 1), r.bytes.end());
}

}  // namespace

// The slots start as zeroed memory (so an idle thread's cache costs no resident memory): an untouched slot
// must not answer any query, whatever the generation (0 included) or the client (the zero address included).
TEST(AnswerCache, FreshCacheAnswersNothing) {
    AnswerCache cache;
    uint8_t out[1500];
    QueryInfo qi;
    geo::Address zero{};
    for (const char* name : {"one.glb.test", "two.glb.test", "x"}) {
        auto q = make_query(name, 1);
        for (uint64_t gen : {uint64_t{0}, uint64_t{1}, UINT64_MAX}) {
            EXPECT_EQ(cache.find(gen, zero, q.data(), q.size(), out, sizeof out, qi), 0u) << name << " gen " << gen;
            EXPECT_EQ(cache.find(gen, addr("192.0.2.1"), q.data(), q.size(), out, sizeof out, qi), 0u) << name;
        }
    }
    std::vector<uint8_t> header(12, 0);  // the shortest query that is looked up: a bare header
    EXPECT_EQ(cache.find(0, zero, header.data(), header.size(), out, sizeof out, qi), 0u);
}
