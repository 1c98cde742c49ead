// Microbenchmarks (Google Benchmark): the resolver entry point per query kind, and snapshot builds.
//   build/bench/resolver_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

extern "C" {
#include <libloc/database.h>
#include <libloc/libloc.h>
#include <libloc/network.h>
}

#include <cstdlib>
#include <cstring>
#include <random>

#include "resolver/dnssec/keys.hpp"
#include "resolver/resolver.hpp"
#include "server/app/answer_ids.hpp"
#include "server/net/rrl.hpp"
#include "sync/outside.hpp"
#include "sync/state.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

// An endpoint of the bench's making (always one).
Endpoint endpoint(const std::string& text) { return Endpoint::parse(text).value(); }

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
        ClusterView cv{"c" + std::to_string(c), true, {}, std::nullopt};
        for (int h = 0; h < hosts; ++h) {
            HostEntry he{"h" + std::to_string(h) + ".glb.example.test",
                         60,
                         model::LoadBalancing{static_cast<uint16_t>(100 + c), geos[c % 8], c == 1},
                         {}};
            he.endpoints.push_back({endpoint("10." + std::to_string(c) + "." + std::to_string(h / 250) + "." +
                                             std::to_string(h % 250 + 1)),
                                    true});
            he.endpoints.push_back({endpoint("2001:db8:" + std::to_string(c) + "::" + std::to_string(h + 1)), true});
            cv.hosts.push_back(std::move(he));
        }
        v.push_back(std::move(cv));
    }
    return v;
}

std::shared_ptr<const geo::GeoDb> geodb() {
    return std::make_shared<const geo::GeoDb>(test::fixture_path("test.mmdb"), std::vector<geo::Network>{});
}

// kConfig with the zone signed by a fresh CSK (`alg`: 13 or 15), written once per run under /tmp.
conf::Config signed_config(uint8_t alg = dnssec::kEcdsaP256Sha256) {
    static std::string dir;
    if (dir.empty()) {
        char tmpl[] = "/tmp/glbd-bench-XXXXXX";
        if (!mkdtemp(tmpl)) std::abort();
        dir = tmpl;
    }
    std::string error, key = dnssec::generate("glb.example.test", alg, dir, error);
    if (key.empty()) std::abort();
    return test::config_from(std::string(kConfig) + "      *.wild IN A 192.0.2.11\n    dnssec: {keys: [" + key +
                             "]}\n");
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
    for (int i = 0; i < names; ++i)
        queries.push_back(test::make_query("h" + std::to_string(i * hosts / names) + ".glb.example.test", 1, o));
    run(state, *s, queries);
}
// The same with DO in a signed zone (issue 38): RRSIGs made at build time, copied out.
void signed_load_balanced(benchmark::State& state, int names) {
    const int hosts = static_cast<int>(state.range(0));
    auto s = build_snapshot(signed_config(), view(hosts, static_cast<int>(state.range(1))), geodb(), 1);
    test::QueryOpts o;
    o.ecs = test::ecs_payload("10.1.0.0/16");
    o.do_bit = true;
    std::vector<std::vector<uint8_t>> queries;
    for (int i = 0; i < names; ++i)
        queries.push_back(test::make_query("h" + std::to_string(i * hosts / names) + ".glb.example.test", 1, o));
    run(state, *s, queries);
}
void BM_SignedLoadBalancedEcs(benchmark::State& state) { signed_load_balanced(state, 1); }
void BM_SignedLoadBalancedEcsSpread(benchmark::State& state) { signed_load_balanced(state, 1000); }
// Signed while answering: a compact denial (NSEC + RRSIG) and a wildcard's answer, per algorithm.
void signed_now(benchmark::State& state, const char* name) {
    auto c = signed_config(static_cast<uint8_t>(state.range(0)));
    auto s = build_snapshot(c, {local_cluster_view(c)}, geodb(), 1);
    test::QueryOpts o;
    o.do_bit = true;
    run(state, *s, test::make_query(name, 1, o));
}
void BM_SignedNxdomain(benchmark::State& state) { signed_now(state, "nope.glb.example.test"); }
void BM_SignedWildcard(benchmark::State& state) { signed_now(state, "x.wild.glb.example.test"); }
void BM_LoadBalancedEcs(benchmark::State& state) { load_balanced(state, 1); }
void BM_LoadBalancedEcsSpread(benchmark::State& state) { load_balanced(state, 1000); }
// A full build, as the daemon's first (or after a reload): every host of a shared view.
void full_builds(benchmark::State& state, const conf::Config& c) {
    auto v = share(view(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
    auto g = geodb();
    for (auto _ : state) {
        auto b = std::make_unique<SnapshotBuilder>();
        auto s = b->build(c, v, g, 1);
        benchmark::DoNotOptimize(s);
        state.PauseTiming();  // freeing is BM_FreeSnapshot's (a daemon's first build frees nothing)
        s.reset();
        b.reset();
        state.ResumeTiming();
    }
}
void BM_BuildSnapshot(benchmark::State& state) { full_builds(state, test::config_from(kConfig)); }
// The same in a signed zone: every host's answer sets signed (ECDSA P-256).
void BM_BuildSnapshotSigned(benchmark::State& state) { full_builds(state, signed_config()); }

// A build after one endpoint's health flipped in one cluster (the cluster's view is a new object, the
// others the same): what the daemon's builder does for a health flip, an endpoint override or a peer's
// update of one host.
void BM_BuildAfterOneFlip(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    auto v = share(view(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
    ClusterView flipped = *v[3];
    flipped.hosts[7].endpoints[0].healthy = false;
    std::shared_ptr<const ClusterView> versions[2] = {v[3], std::make_shared<const ClusterView>(std::move(flipped))};
    auto g = geodb();
    SnapshotBuilder b;
    b.build(c, v, g, 1);
    uint32_t serial = 2;
    for (auto _ : state) {
        v[3] = versions[serial % 2];
        auto s = b.build(c, v, g, serial++);
        benchmark::DoNotOptimize(s);
        state.PauseTiming();
        s.reset();  // the snapshot it replaces goes on the control thread too, but is timed by BM_FreeSnapshot
        state.ResumeTiming();
    }
    state.counters["built"] = static_cast<double>(b.last().built);
}

// A build after a cluster came (or went) in a fleet's cold start: `clusters` clusters, each with the same
// `hosts` simple hosts of one IPv4 endpoint (as bench/sync-converge.sh runs them), the last one there in every
// other build. Every host is touched (the cluster names them all) and built again from all its entries, its
// answers counted as the daemon counts them.
void BM_BuildAfterNewCluster(benchmark::State& state) {
    auto c = test::config_from(kConfig);
    GlobalView v;
    for (int k = 0; k < state.range(1); ++k) {
        ClusterView cv{"c" + std::to_string(k), true, {}, std::nullopt};
        for (int h = 0; h < state.range(0); ++h) {
            std::string ep =
                "10." + std::to_string(k) + "." + std::to_string(h / 250) + "." + std::to_string(h % 250 + 1);
            cv.hosts.push_back(
                HostEntry{"h" + std::to_string(h) + ".glb.example.test", 60, std::nullopt, {{endpoint(ep), true}}});
        }
        v.push_back(std::move(cv));
    }
    SharedView with = share(v), without = with;
    without.pop_back();
    auto g = geodb();
    SnapshotBuilder b;
    SharedAnswerIds ids;  // the answer counters, numbered as the daemon numbers them
    CounterIds number = [&ids](std::string_view host, std::span<const std::string_view> clusters,
                               std::span<uint32_t> out) { ids.ids(host, clusters, out); };
    b.build(c, without, g, 1, number);
    uint32_t serial = 2;
    for (auto _ : state) {
        auto s = b.build(c, serial % 2 ? with : without, g, serial, number);
        ++serial;
        benchmark::DoNotOptimize(s);
        state.PauseTiming();
        s.reset();
        state.ResumeTiming();
    }
    state.counters["built"] = static_cast<double>(b.last().built);
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

// Geo lookups that miss the per-thread cache (65,536 random addresses cycle through its 512 slots):
// glbd's flattened table of Debian's location database against libloc's own lookup (which allocates a
// network object per call) and against libmaxminddb on the small test database.
const char* kLocationDb = "/var/lib/location/database.db";

std::vector<geo::Address> random_addresses(bool v6) {
    std::mt19937_64 rng(42);
    std::vector<geo::Address> out(65536);
    for (auto& a : out) {
        for (auto& b : a.bytes) b = static_cast<uint8_t>(rng());
        a.family = v6 ? 6 : 4;
        if (v6)
            a.bytes[0] = static_cast<uint8_t>(0x20 | (a.bytes[0] & 0x0f));
        else
            std::fill(a.bytes.begin() + 4, a.bytes.end(), 0);
    }
    return out;
}

void locate_loop(benchmark::State& state, const geo::GeoDb& db, bool v6) {
    auto addrs = random_addresses(v6);
    size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(db.locate(addrs[i++ & 65535]));
    state.SetItemsProcessed(state.iterations());
}

void BM_LocateLocationDbTable(benchmark::State& state) {
    static geo::GeoDb db(kLocationDb, {});
    locate_loop(state, db, state.range(0) == 6);
}

void BM_LocateMaxMindTestDb(benchmark::State& state) {
    static geo::GeoDb db(test::fixture_path("test.mmdb"), {});
    locate_loop(state, db, state.range(0) == 6);
}

void BM_LiblocOwnLookup(benchmark::State& state) {
    static loc_ctx* ctx = [] {
        loc_ctx* c = nullptr;
        loc_new(&c);
        return c;
    }();
    static loc_database* db = [] {
        loc_database* d = nullptr;
        loc_database_new(ctx, &d, std::fopen(kLocationDb, "r"));
        return d;
    }();
    auto addrs = random_addresses(state.range(0) == 6);
    std::vector<in6_addr> mapped(addrs.size());
    for (size_t k = 0; k < addrs.size(); ++k) {
        if (addrs[k].family == 4) {
            mapped[k].s6_addr[10] = mapped[k].s6_addr[11] = 0xff;
            std::memcpy(mapped[k].s6_addr + 12, addrs[k].bytes.data(), 4);
        } else {
            std::memcpy(mapped[k].s6_addr, addrs[k].bytes.data(), 16);
        }
    }
    size_t i = 0;
    for (auto _ : state) {
        loc_network* n = nullptr;
        loc_database_lookup(db, &mapped[i++ & 65535], &n);
        if (n) benchmark::DoNotOptimize(loc_network_get_country_code(n)), loc_network_unref(n);
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_LoadLocationDb(benchmark::State& state) {
    for (auto _ : state) {
        geo::GeoDb db(kLocationDb, {}, geo::DatabaseOptions{state.range(0) != 0, "/var/lib/location/signing-key.pem"});
        benchmark::DoNotOptimize(db.describe());
    }
}

// One cluster's view after its one instance's report changed, with a host of N endpoints: the store's
// merge (a copy of the report) and the view's check that no target repeats.
void BM_ViewOfLargeHost(benchmark::State& state) {
    sync::Store st;
    sync::InstanceState s{"eu", "a", 1, 1, {}, {}};
    HostEntry h{"wide.glb.test", 60, model::LoadBalancing{1, "IE", true}, {}};
    for (int64_t i = 0; i < state.range(0); ++i) {
        h.endpoints.push_back(EndpointState{endpoint("10." + std::to_string(i >> 16) + "." +
                                                     std::to_string((i >> 8) & 255) + "." + std::to_string(i & 255)),
                                            true});
    }
    s.hosts.push_back(std::move(h));
    uint64_t v = 1;
    for (auto _ : state) {
        s.version = s.heartbeat = ++v;
        st.merge(s, 0, 1000);
        benchmark::DoNotOptimize(st.view(1000, 10'000));
    }
}

// One origin's report of N simple hosts (one endpoint each, as bench/sync-converge.sh's), as a transfer's
// messages carry it. With `health`, as issue 60 has it at 10,000 x 20: every host with a health check, and
// the origin a vantage of 19 other clusters' endpoints (3 of 20 probe each: 1,579 per cluster), 1 % failing.
sync::InstanceState report_state(int hosts, bool health) {
    sync::InstanceState s{"c7", "c7-0", 1796037623033, 1796037623033, {}, {}};
    s.incarnation = 1796037500;
    std::vector<HostEntry> list;
    for (int h = 0; h < hosts; ++h) {
        list.push_back(HostEntry{"h" + std::to_string(h) + ".bench.test",
                                 60,
                                 std::nullopt,
                                 {EndpointState{endpoint("100.64.7." + std::to_string(h % 250 + 1)), true}}});
    }
    s.hosts = HostList(std::move(list));
    order_entries(s.hosts);  // as a glbd sends its list
    if (health) {
        sync::SharedCheck check;
        check.check.protocol = model::Protocol::https, check.check.port = 443, check.check.path = "/healthz";
        s.checks = {check};
        for (HostEntry& h : s.hosts) h.check = 1;
        s.probes_outside = true;
        const int probed = hosts * 3 / 19;
        for (int c = 0; c < 20; ++c) {
            if (c == 7) continue;
            auto& v = s.outside["c" + std::to_string(c)];
            v.probed = static_cast<uint32_t>(probed);
            for (int f = 0; f < probed / 100; ++f) {
                v.failing.emplace_back("h" + std::to_string(f * 97) + ".bench.test",
                                       endpoint("100.64." + std::to_string(c) + "." + std::to_string(f % 250 + 1)));
            }
            std::sort(v.failing.begin(), v.failing.end());
        }
    }
    return s;
}

// The transfer's messages of one report.
std::vector<std::vector<uint8_t>> messages_of(const sync::InstanceState& s) {
    std::vector<std::vector<std::string>> recs{sync::encode_header("c1/c1-0")};
    sync::encode_report(s, s.heartbeat, 0, true, recs);
    std::vector<std::vector<uint8_t>> out;
    sync::Message m(1, 0);
    for (const auto& r : recs) {
        if (m.size() > sync::kMessageBudget) out.push_back(m.finish()), m = sync::Message(1, 0);
        m.txt("h1.o1._glbd.", r);
    }
    out.push_back(m.finish());
    return out;
}

std::vector<std::vector<uint8_t>> report_messages(int hosts) { return messages_of(report_state(hosts, false)); }

// The pulling side's reading of one report (`msgs`) by `d`: its messages parsed and each record decoded.
std::vector<sync::Report> read_report(const std::vector<std::vector<uint8_t>>& msgs, sync::Decoder& d) {
    std::vector<sync::Report> done;
    sync::TxtViews txts;
    for (const auto& m : msgs) {
        txts.clear();
        int soas = 0;
        uint32_t serial = 0;
        sync::parse_transfer_answers(m.data(), m.size(), txts, soas, serial);
        for (size_t i = 0; i < txts.size(); ++i) d.add(txts[i], done);
    }
    d.finish(done);
    return done;
}

// A report of N hosts read, decoded and checked.
void BM_DecodeReport(benchmark::State& state) {
    auto msgs = report_messages(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        sync::Decoder d;
        auto done = read_report(msgs, d);
        if (done.size() != 1) state.SkipWithError("no report");
        benchmark::DoNotOptimize(sync::check_report(done.front().state, 1796037623033));
    }
}

// A report of N hosts built, sent (its messages) and read (decoded and checked), without and with health
// (range 1: checks and outside verdicts, report_state): issue 60 wants the second within 1.3x the first.
void BM_ReportRoundTrip(benchmark::State& state) {
    const sync::InstanceState s = report_state(static_cast<int>(state.range(0)), state.range(1) != 0);
    size_t bytes = 0;
    for (auto _ : state) {
        auto msgs = messages_of(s);
        bytes = 0;
        for (const auto& m : msgs) bytes += m.size();
        sync::Decoder d;
        auto done = read_report(msgs, d);
        if (done.size() != 1) state.SkipWithError("no report");
        benchmark::DoNotOptimize(sync::check_report(done.front().state, 1796037623033));
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}

// The same report held already: its records read and skipped (Decoder::skip_held).
void BM_SkipReport(benchmark::State& state) {
    auto msgs = report_messages(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        sync::Decoder d;
        d.skip_held([](const sync::InstanceState&) { return true; });
        benchmark::DoNotOptimize(read_report(msgs, d));
    }
}

// Which endpoints a vantage probes from outside at 10,000 hosts x 20 clusters, each endpoint checked, after one
// origin's new version: read afresh (range 0: every origin's endpoints hashed for every cluster) or kept
// between changes (range 1: sync::OutsideTargets, that origin's alone). OutsideProbes does it at every change
// of the live reports, on the control thread.
void BM_OutsideTargetsAfterOneChange(benchmark::State& state) {
    std::vector<sync::InstanceState> all;
    for (int c = 0; c < 20; ++c) {
        sync::InstanceState s = report_state(10000, true);
        s.cluster = "c" + std::to_string(c), s.instance = s.cluster + "-0";
        std::vector<HostEntry> list = s.hosts.vec();
        for (HostEntry& h : list) h.endpoints[0].target = endpoint("100." + std::to_string(64 + c) + ".0.1");
        s.hosts = HostList(std::move(list));
        all.push_back(std::move(s));
    }
    std::vector<sync::LiveReport> reports;
    for (const auto& s : all) reports.push_back({&s, true});
    sync::OutsideTargets kept;
    kept.update(reports, "c3", "c3-0", 3);
    size_t n = 0;
    for (auto _ : state) {
        ++all[7].version;
        n = state.range(0) ? kept.update(reports, "c3", "c3-0", 3).size()
                           : sync::outside_targets(reports, "c3", "c3-0", 3).size();
    }
    state.counters["targets"] = static_cast<double>(n);
}

// Response rate limiting's check of one UDP answer, over 4,096 client /24s (the table's lookup per query).
void BM_RrlCheck(benchmark::State& state) {
    RateLimiter rl(RrlOptions{200, 2, 24, 56});
    std::vector<geo::Address> clients;
    for (uint32_t i = 0; i < 4096; ++i) {
        geo::Address a;
        geo::Address::parse("10." + std::to_string(i >> 8) + "." + std::to_string(i & 255) + ".1", a);
        clients.push_back(a);
    }
    size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(rl.check(clients[i++ & 4095], Outcome::answer, 100));
    }
}

BENCHMARK(BM_LocateLocationDbTable)->Arg(4)->Arg(6);
BENCHMARK(BM_LiblocOwnLookup)->Arg(4)->Arg(6);
BENCHMARK(BM_LocateMaxMindTestDb)->Arg(4)->Arg(6);
BENCHMARK(BM_LoadLocationDb)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ViewOfLargeHost)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RrlCheck);
BENCHMARK(BM_DecodeReport)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SkipReport)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReportRoundTrip)->Args({10000, 0})->Args({10000, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OutsideTargetsAfterOneChange)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Static);
BENCHMARK(BM_CnameChase);
BENCHMARK(BM_Nxdomain);
BENCHMARK(BM_Refused);
BENCHMARK(BM_LoadBalancedEcs)->Args({1, 3})->Args({1000, 20})->Args({10000, 20});
BENCHMARK(BM_SignedLoadBalancedEcs)->Args({1000, 20});
BENCHMARK(BM_SignedLoadBalancedEcsSpread)->Args({1000, 20});
BENCHMARK(BM_SignedNxdomain)->Arg(13)->Arg(15);
BENCHMARK(BM_SignedWildcard)->Arg(13)->Arg(15);
BENCHMARK(BM_BuildSnapshotSigned)->Args({1000, 20})->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_LoadBalancedEcsSpread)->Args({1000, 20})->Args({10000, 20});
BENCHMARK(BM_BuildSnapshot)->Args({1000, 20})->Args({10000, 20})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildAfterOneFlip)->Args({1000, 20})->Args({10000, 20})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildAfterNewCluster)->Args({1000, 20})->Args({1000, 50})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FreeSnapshot)->Args({1000, 20})->Args({10000, 20})->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
