// Microbenchmarks (Google Benchmark): the resolver entry point per query kind, and snapshot builds.
//   build/bench/resolver_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "resolver/resolver.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

const char* kConfig = R"(cluster: {id: c0}
listen: {dns: ["127.0.0.1:5353"]}
zones:
  - origin: glb.example.test
    nameservers: [{name: ns1.glb.example.test, addresses: [192.0.2.53]}]
    records: |
      www   IN A     192.0.2.10
      alias IN CNAME www
)";

GlobalView view(int hosts, int clusters) {
    const char* geos[] = {"IE", "US", "GEO-OC", "DE", "JP", "GEO-EU", "BR", "AU"};
    GlobalView v;
    for (int c = 0; c < clusters; ++c) {
        ClusterView cv{"c" + std::to_string(c), true, {}};
        for (int h = 0; h < hosts; ++h) {
            HostEntry he{"h" + std::to_string(h) + ".glb.example.test", 60,
                         conf::LoadBalancing{static_cast<uint16_t>(100 + c), geos[c % 8], c == 1}, {}};
            he.endpoints.push_back({"10." + std::to_string(c) + "." + std::to_string(h / 250) + "." + std::to_string(h % 250 + 1), true});
            he.endpoints.push_back({"2001:db8:" + std::to_string(c) + "::" + std::to_string(h + 1), true});
            cv.hosts.push_back(std::move(he));
        }
        v.push_back(std::move(cv));
    }
    return v;
}

std::shared_ptr<const geo::GeoDb> geodb() {
    return std::make_shared<const geo::GeoDb>(test::fixture_path("test.mmdb"), std::vector<conf::GeoNetwork>{});
}

// Answers the queries in turn, one per iteration.
void run(benchmark::State& state, const Snapshot& snap, const std::vector<std::vector<uint8_t>>& queries) {
    Client c;
    geo::Address::parse("192.0.2.200", c.address);
    uint8_t out[1500];
    size_t i = 0;
    for (auto _ : state) {
        const auto& q = queries[i++ % queries.size()];
        size_t n = answer(snap, q.data(), q.size(), c, out, sizeof out);
        benchmark::DoNotOptimize(n);
    }
    state.SetItemsProcessed(state.iterations());
}
void run(benchmark::State& state, const Snapshot& snap, const std::vector<uint8_t>& q) {
    run(state, snap, std::vector<std::vector<uint8_t>>{q});
}

void BM_Static(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto s = build_snapshot(c, {local_cluster_view(c)}, geodb(), 1);
    run(state, *s, test::make_query("www.glb.example.test", 1));
}
void BM_CnameChase(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto s = build_snapshot(c, {local_cluster_view(c)}, geodb(), 1);
    run(state, *s, test::make_query("alias.glb.example.test", 1));
}
void BM_Nxdomain(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto s = build_snapshot(c, {local_cluster_view(c)}, geodb(), 1);
    run(state, *s, test::make_query("nope.glb.example.test", 1));
}
void BM_Refused(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto s = build_snapshot(c, {local_cluster_view(c)}, geodb(), 1);
    run(state, *s, test::make_query("www.example.org", 1));
}
// A load-balanced host among `clusters` clusters in a view of `hosts` hosts, client placed by ECS: one
// host asked again and again, or 1000 hosts spread over the view in turn (what the caches see under
// real traffic).
void load_balanced(benchmark::State& state, int names) {
    const int hosts = static_cast<int>(state.range(0));
    auto c = test::config_from(kConfig);
    auto s = build_snapshot(c, view(hosts, static_cast<int>(state.range(1))), geodb(), 1);
    test::QueryOpts o;
    o.ecs = test::ecs_payload("10.1.0.0/16");
    std::vector<std::vector<uint8_t>> queries;
    for (int i = 0; i < names; ++i) queries.push_back(test::make_query("h" + std::to_string(i * hosts / names) + ".glb.example.test", 1, o));
    run(state, *s, queries);
}
void BM_LoadBalancedEcs(benchmark::State& state) { load_balanced(state, 1); }
void BM_LoadBalancedEcsSpread(benchmark::State& state) { load_balanced(state, 1000); }
void BM_BuildSnapshot(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto v = view(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    auto g = geodb();
    for (auto _ : state) {
        auto s = build_snapshot(c, v, g, 1);
        benchmark::DoNotOptimize(s);
    }
}

// Freeing a snapshot: what the thread that lets go of the last reference pays (the control thread's,
// see server/publisher.hpp).
void BM_FreeSnapshot(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto v = view(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
    auto g = geodb();
    for (auto _ : state) {
        state.PauseTiming();
        auto s = build_snapshot(c, v, g, 1);
        state.ResumeTiming();
        s.reset();
    }
}

}  // namespace

BENCHMARK(BM_Static);
BENCHMARK(BM_CnameChase);
BENCHMARK(BM_Nxdomain);
BENCHMARK(BM_Refused);
BENCHMARK(BM_LoadBalancedEcs)->Args({1, 3})->Args({1000, 20})->Args({10000, 20});
BENCHMARK(BM_LoadBalancedEcsSpread)->Args({1000, 20})->Args({10000, 20});
BENCHMARK(BM_BuildSnapshot)->Args({1000, 20})->Args({10000, 20})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FreeSnapshot)->Args({1000, 20})->Args({10000, 20})->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
