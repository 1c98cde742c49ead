// SnapshotBuilder: a snapshot built from the last one (only the hosts a change touches built again) is the
// snapshot a first build makes from the same view, name by name and byte by byte, whatever the change.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "resolver/snapshot/builder.hpp"
#include "resolver/snapshot/plan.hpp"
#include "resolver/wire/text.hpp"
#include "server/app/answer_ids.hpp"
#include "tests/dns_util.hpp"
#include "tests/view_builder.hpp"

using namespace glbd;
using namespace glbd::test;

namespace {

Endpoint ep(const std::string& text) { return endpoint_of(text); }

const char* kConfig = R"(
cluster: {id: c2, instance: t}
listen: {dns: ["127.0.0.1:5300"]}
geoip: {fallback: nearest}
zones:
  - origin: glb.test
    nameservers: [{name: ns1.glb.test, addresses: [192.0.2.53]}]
    records: |
      www        IN A   192.0.2.80
      deep.sub   IN TXT "x"
  - origin: other.test
    nameservers: [{name: ns1.glb.test}]
)";

// Names the views use: hosts in both zones, nested ones (empty non-terminals), a wildcard, a name that
// also holds a record, and names outside every zone (ignored).
const std::vector<std::string> kNames = {
    "a.glb.test",   "b.glb.test",     "x.sub.glb.test", "y.sub.glb.test", "sub.glb.test", "*.w.glb.test",
    "www.glb.test", "a.b.c.glb.test", "c.glb.test",     "app.other.test", "q.other.test", "out.example",
    "n0.glb.test",  "n1.glb.test",    "n2.glb.test",    "n3.glb.test",    "n4.glb.test",  "n5.glb.test",
};
const std::vector<std::string> kGeos = {"US", "IE", "GEO-EU", "JP", "GEO-OC", ""};

HostEntry random_entry(std::mt19937& rng, const std::string& name) {
    HostEntry h{name, static_cast<uint32_t>(30 + rng() % 3 * 30), std::nullopt, {}};
    if (rng() % 4 != 0) {
        h.load_balancing =
            model::LoadBalancing{static_cast<uint16_t>(rng() % 3 * 50), kGeos[rng() % kGeos.size()], rng() % 3 == 0};
    }
    size_t n = 1 + rng() % 3;
    for (size_t i = 0; i < n; ++i) {
        switch (rng() % 4) {
            case 0: h.endpoints.push_back({ep("2001:db8::" + std::to_string(rng() % 20 + 1)), rng() % 3 != 0}); break;
            case 1:
                h.endpoints.push_back({ep("lb" + std::to_string(rng() % 3) + ".example.net"), rng() % 3 != 0});
                break;
            default:
                h.endpoints.push_back(
                    {ep("10.0." + std::to_string(rng() % 4) + "." + std::to_string(rng() % 50 + 1)), rng() % 3 != 0});
        }
    }
    return h;
}

ClusterView random_cluster(std::mt19937& rng, const std::string& id) {
    ClusterView c{id, rng() % 5 != 0, {}, std::nullopt};
    if (rng() % 2) c.location = model::Coordinates{static_cast<float>(rng() % 90), static_cast<float>(rng() % 180)};
    for (const auto& n : kNames) {
        if (rng() % 3 != 0) c.hosts.push_back(random_entry(rng, n));
        if (rng() % 5 == 0) {  // a second entry of the name (another gateway of the cluster)
            c.hosts.push_back(random_entry(rng, n));
            c.hosts.back().entry = "gw" + std::to_string(rng() % 3);
        }
    }
    return c;
}

// One random change to one cluster: the kinds of change the daemon sees.
void mutate(std::mt19937& rng, ClusterView& c) {
    auto pick = [&]() -> HostEntry* { return c.hosts.empty() ? nullptr : &c.hosts[rng() % c.hosts.size()]; };
    switch (rng() % 9) {
        case 0:  // a health flip
            if (HostEntry* h = pick()) h->endpoints[rng() % h->endpoints.size()].healthy ^= true;
            break;
        case 1:  // loadBalancing changed (weight, geo, default, or gone)
            if (HostEntry* h = pick()) h->load_balancing = random_entry(rng, h->host.str()).load_balancing;
            break;
        case 2:  // a host withdrawn
            if (!c.hosts.empty()) c.hosts.erase(c.hosts.begin() + static_cast<long>(rng() % c.hosts.size()));
            break;
        case 3: {  // a host added (or given anew)
            const std::string& n = kNames[rng() % kNames.size()];
            auto it = std::find_if(c.hosts.begin(), c.hosts.end(), [&](const HostEntry& h) { return h.host == n; });
            if (it == c.hosts.end())
                c.hosts.push_back(random_entry(rng, n));
            else
                *it = random_entry(rng, n);
            break;
        }
        case 4: c.alive = !c.alive; break;
        case 5: c.location = rng() % 2 ? std::nullopt : std::optional(model::Coordinates{-33.9f, 151.2f}); break;
        case 6:  // the same hosts in another order
            std::shuffle(c.hosts.begin(), c.hosts.end(), rng);
            break;
        case 7:  // a TTL, or an entry's name
            if (HostEntry* h = pick()) {
                if (rng() % 2) {
                    h->ttl += 1;
                } else {
                    h->entry = h->entry.empty() ? "gw" + std::to_string(rng() % 3) : "";
                }
            }
            break;
        default:  // nothing changed, but the cluster is a new object
            break;
    }
}

// Every name a lookup can meet (hosts, their ancestors, records, misses) finds the same in both.
void expect_same_snapshot(const Snapshot& inc, const Snapshot& full) {
    ASSERT_EQ(inc.hosts.size(), full.hosts.size());
    EXPECT_EQ(inc.counters, full.counters);
    std::map<std::string, const HostBlock*> by_name;  // hosts are in no set order
    for (const auto& b : inc.hosts) by_name[b->host.name] = b.get();
    for (const auto& b : full.hosts) {
        auto it = by_name.find(b->host.name);
        ASSERT_NE(it, by_name.end()) << wire::wire_to_name(b->host.name);
        EXPECT_TRUE(it->second->host == b->host) << wire::wire_to_name(b->host.name);
        EXPECT_EQ(it->second->plan_bytes(), b->plan_bytes()) << wire::wire_to_name(b->host.name);
    }
    std::vector<std::string> probe = {"glb.test",          "other.test",       "ns1.glb.test",
                                      "deep.sub.glb.test", "missing.glb.test", "w.glb.test",
                                      "b.c.glb.test",      "c.glb.test",       "zz.other.test"};
    probe.insert(probe.end(), kNames.begin(), kNames.end());
    for (const auto& name : probe) {
        auto w = wire::name_to_wire(name);
        ASSERT_TRUE(w);
        const Zone* zi = inc.find_zone(*w);
        const Zone* zf = full.find_zone(*w);
        ASSERT_EQ(zi == nullptr, zf == nullptr) << name;
        if (!zi) continue;
        Zone::Ref ri = zi->find(*w), rf = zf->find(*w);
        EXPECT_EQ(ri.node == nullptr, rf.node == nullptr) << name;
        EXPECT_EQ(ri.host < 0, rf.host < 0) << name;
        EXPECT_EQ(ri.has_ns, rf.has_ns) << name;
        EXPECT_EQ(ri.plan == nullptr, rf.plan == nullptr) << name;
        if (ri.node && rf.node) {
            EXPECT_EQ(ri.node->rrsets.size(), rf.node->rrsets.size()) << name;
        }
        if (ri.host >= 0 && rf.host >= 0) {  // the index points at the host's own block
            EXPECT_EQ(inc.hosts[static_cast<size_t>(ri.host)]->host.name, *w) << name;
            EXPECT_EQ(ri.plan, inc.hosts[static_cast<size_t>(ri.host)]->plan()) << name;
            EXPECT_EQ(rf.plan, full.hosts[static_cast<size_t>(rf.host)]->plan()) << name;
        }
    }
}

// Stable counter ids, as the daemon keeps them.
struct Counters {
    std::map<std::pair<std::string, std::string>, uint32_t> ids;
    CounterIds fn() {
        return [this](std::string_view h, std::span<const std::string_view> clusters, std::span<uint32_t> out) {
            for (size_t i = 0; i < clusters.size(); ++i) {
                out[i] = ids.try_emplace({std::string(h), std::string(clusters[i])}, static_cast<uint32_t>(ids.size()))
                             .first->second;
            }
        };
    }
};

TEST(SnapshotBuilder, EachBuildFromTheLastIsTheFirstBuildOfTheSameView) {
    auto config = config_from(kConfig);
    for (unsigned seed = 1; seed <= 8; ++seed) {
        std::mt19937 rng(seed);
        std::vector<std::shared_ptr<const ClusterView>> view;
        for (const char* id : {"c1", "c2", "c3", "c4", "c5"})
            view.push_back(std::make_shared<const ClusterView>(random_cluster(rng, id)));
        SnapshotBuilder builder;
        Counters counters;
        size_t partial = 0;
        for (int step = 0; step < 150; ++step) {
            // Change one or two clusters; now and then a cluster comes or goes.
            for (int k = 0, n = 1 + static_cast<int>(rng() % 2); k < n; ++k) {
                size_t i = rng() % view.size();
                ClusterView c = *view[i];
                mutate(rng, c);
                view[i] = std::make_shared<const ClusterView>(std::move(c));
            }
            if (rng() % 25 == 0 && view.size() > 2) view.erase(view.begin() + static_cast<long>(rng() % view.size()));
            if (rng() % 25 == 0)
                view.push_back(
                    std::make_shared<const ClusterView>(random_cluster(rng, "c" + std::to_string(6 + step))));
            auto inc = builder.build(config, view, nullptr, static_cast<uint32_t>(step), counters.fn());
            if (!builder.last().full) ++partial;
            auto full = SnapshotBuilder().build(config, view, nullptr, static_cast<uint32_t>(step), counters.fn());
            SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
            expect_same_snapshot(*inc, *full);
            if (HasFailure()) return;
        }
        EXPECT_EQ(partial, 149u);  // only the first of the 150 builds is a full one
    }
}

// A build of many hosts is shared out among threads (SnapshotBuilder::kParallelFrom): the same snapshot as
// one thread makes, the counter ids asked for from every thread (under the builder's lock) each given once;
// and the next build, from the one the threads made, is again the first build of its view.
TEST(SnapshotBuilder, ThreadsBuildTheSnapshotOneThreadBuilds) {
    auto config = config_from(kConfig);
    std::mt19937 rng(42);
    std::vector<std::shared_ptr<const ClusterView>> view;
    for (const char* id : {"c1", "c2", "c3"}) {
        ClusterView c = random_cluster(rng, id);
        for (size_t h = 0; h < SnapshotBuilder::kParallelFrom + 500; ++h) {
            c.hosts.push_back(random_entry(rng, "p" + std::to_string(h) + (h % 2 ? ".glb.test" : ".other.test")));
        }
        view.push_back(std::make_shared<const ClusterView>(std::move(c)));
    }
    Counters counters;
    SnapshotBuilder threaded(4);
    auto many = threaded.build(config, view, nullptr, 1, counters.fn());
    ASSERT_GT(many->hosts.size(), SnapshotBuilder::kParallelFrom);
    std::set<uint32_t> distinct;
    for (const auto& [pair, id] : counters.ids) distinct.insert(id);
    EXPECT_EQ(distinct.size(), counters.ids.size());
    EXPECT_EQ(*distinct.rbegin() + 1, counters.ids.size());
    auto one = SnapshotBuilder(1).build(config, view, nullptr, 1, counters.fn());
    expect_same_snapshot(*many, *one);

    ClusterView c2 = *view[1];
    mutate(rng, c2);
    c2.hosts[5].endpoints[0].healthy ^= true;
    view[1] = std::make_shared<const ClusterView>(std::move(c2));
    auto next = threaded.build(config, view, nullptr, 2, counters.fn());
    EXPECT_FALSE(threaded.last().full);
    expect_same_snapshot(*next, *SnapshotBuilder(1).build(config, view, nullptr, 2, counters.fn()));
}

// A host built again keeps the answer counter ids of its last build: the numbering (a lock and two name
// lookups a pair in the daemon) is asked again only for a host with an entry of a cluster it did not have.
TEST(SnapshotBuilder, AHostBuiltAgainKeepsItsCounterIds) {
    auto config = config_from(kConfig);
    auto cluster = [](const std::string& id, bool healthy) {
        ClusterView c{id, true, {}, std::nullopt};
        c.hosts.push_back(HostEntry{"lb.glb.test", 60, model::LoadBalancing{10, "US", true}, {{"10.0.0.1", healthy}}});
        c.hosts.push_back(HostEntry{"s.glb.test", 60, std::nullopt, {{"10.0.0.2", healthy}}});
        return std::make_shared<const ClusterView>(std::move(c));
    };
    SharedView view{cluster("c1", true), cluster("c2", true)};
    Counters counters;
    std::vector<std::string> asked;  // the hosts the numbering was asked for, one per pair
    CounterIds number = [&](std::string_view host, std::span<const std::string_view> clusters,
                            std::span<uint32_t> out) {
        asked.insert(asked.end(), clusters.size(), std::string(host));
        counters.fn()(host, clusters, out);
    };
    SnapshotBuilder builder;
    builder.build(config, view, nullptr, 1, number);
    EXPECT_EQ(asked.size(), 3u);  // (lb, c1), (lb, c2), (s, all)

    asked.clear();
    view[0] = cluster("c1", false);  // both hosts built again: their health changed
    auto flipped = builder.build(config, view, nullptr, 2, number);
    EXPECT_EQ(builder.last().built, 2u);
    EXPECT_TRUE(asked.empty());
    expect_same_snapshot(*flipped, *SnapshotBuilder().build(config, view, nullptr, 2, counters.fn()));

    asked.clear();
    view.push_back(cluster("c3", true));  // a new cluster: lb has an entry without an id, s keeps "all"
    auto grown = builder.build(config, view, nullptr, 3, number);
    EXPECT_FALSE(asked.empty());
    EXPECT_EQ(std::count(asked.begin(), asked.end(), "lb.glb.test"), static_cast<long>(asked.size()));
    EXPECT_EQ(counters.ids.size(), 4u);
    expect_same_snapshot(*grown, *SnapshotBuilder().build(config, view, nullptr, 3, counters.fn()));
}

// 1,000 hosts x 5 clusters: one endpoint's health flip builds that host alone, and its answer moves.
TEST(SnapshotBuilder, OneFlipBuildsOneHost) {
    auto config = config_from(kConfig);
    SharedView view;
    for (int c = 0; c < 5; ++c) {
        ClusterView cv{"c" + std::to_string(c), true, {}, std::nullopt};
        for (int h = 0; h < 1000; ++h) {
            cv.hosts.push_back(HostEntry{
                "h" + std::to_string(h) + ".glb.test",
                60,
                std::nullopt,
                {{ep("10." + std::to_string(c) + "." + std::to_string(h / 250) + "." + std::to_string(h % 250 + 1)),
                  true}}});
        }
        view.push_back(std::make_shared<const ClusterView>(std::move(cv)));
    }
    SnapshotBuilder builder;
    auto before = builder.build(config, view, nullptr, 1);
    EXPECT_TRUE(builder.last().full);
    EXPECT_EQ(builder.last().built, 1000u);
    auto count = [](const Snapshot& s) { return ask(s, make_query("h7.glb.test", 1)).answer.size(); };
    EXPECT_EQ(count(*before), 5u);

    ClusterView c3 = *view[3];
    c3.hosts[7].endpoints[0].healthy = false;
    view[3] = std::make_shared<const ClusterView>(std::move(c3));
    auto after = builder.build(config, view, nullptr, 2);
    EXPECT_FALSE(builder.last().full);
    EXPECT_EQ(builder.last().built, 1u);
    EXPECT_EQ(builder.last().hosts, 1000u);
    EXPECT_EQ(count(*after), 4u);
    EXPECT_EQ(count(*before), 5u);  // the snapshot being served is not touched
    ASSERT_EQ(after->hosts.size(), before->hosts.size());
    for (size_t i = 0; i < after->hosts.size(); ++i) {  // every other host is shared, not copied
        bool changed = after->hosts[i]->host.name == *wire::name_to_wire("h7.glb.test");
        EXPECT_EQ(after->hosts[i] == before->hosts[i], !changed) << i;
    }

    // A cluster gone touches its hosts; a new object with the same content touches nothing.
    view[2] = std::make_shared<const ClusterView>(*view[2]);
    builder.build(config, view, nullptr, 3);
    EXPECT_EQ(builder.last().built, 0u);
    view.erase(view.begin() + 1);
    auto fewer = builder.build(config, view, nullptr, 4);
    EXPECT_EQ(builder.last().built, 1000u);
    EXPECT_EQ(count(*fewer), 3u);

    // Another config (here the nearest fallback) builds everything.
    auto other = config_from(std::string(kConfig).replace(std::string(kConfig).find("nearest"), 7, "default"));
    builder.build(other, view, nullptr, 5);
    EXPECT_TRUE(builder.last().full);
}

}  // namespace

namespace {

// Ids are given once per (host, cluster) and kept; listed by host, then cluster, whatever the order given.
TEST(AnswerIds, OneIdPerPairKeptAndListedInNameOrder) {
    AnswerIds ids;
    EXPECT_EQ(ids.id("b.glb.test", "eu"), 0u);
    EXPECT_EQ(ids.id("a.glb.test", "us"), 1u);
    EXPECT_EQ(ids.id("a.glb.test", "eu"), 2u);
    EXPECT_EQ(ids.id("b.glb.test", "all"), 3u);
    EXPECT_EQ(ids.id("b.glb.test", "eu"), 0u);  // kept
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_EQ(ids.find("a.glb.test", "eu"), 2u);
    EXPECT_EQ(ids.find("a.glb.test", "all"), AnswerIds::kNone);  // both names known, not the pair
    EXPECT_EQ(ids.find("c.glb.test", "eu"), AnswerIds::kNone);
    std::vector<std::string> listed;
    ids.each_sorted([&](const std::string& h, const std::string& c, uint32_t id) {
        listed.push_back(h + "/" + c + "=" + std::to_string(id));
    });
    EXPECT_EQ(listed,
              (std::vector<std::string>{"a.glb.test/eu=2", "a.glb.test/us=1", "b.glb.test/all=3", "b.glb.test/eu=0"}));
}

// The pairs' table grows many times over: every id stays its pair's, found again, and a pair of two known
// names that was never given has none.
TEST(AnswerIds, ManyPairsKeepTheirIdsAsTheTableGrows) {
    AnswerIds ids;
    std::vector<std::pair<std::string, std::string>> given;
    for (int h = 0; h < 700; ++h) {
        for (int c = 0; c < 30; ++c) {
            if ((h + c) % 7 == 0) continue;  // some pairs never given
            given.emplace_back("h" + std::to_string(h) + ".glb.test", "c" + std::to_string(c));
        }
    }
    std::mt19937 rng(7);
    std::shuffle(given.begin(), given.end(), rng);
    for (size_t i = 0; i < given.size(); ++i) ASSERT_EQ(ids.id(given[i].first, given[i].second), i);
    ASSERT_EQ(ids.size(), given.size());
    for (size_t i = 0; i < given.size(); ++i) {
        ASSERT_EQ(ids.find(given[i].first, given[i].second), i);
        ASSERT_EQ(ids.id(given[i].first, given[i].second), i);  // kept
    }
    EXPECT_EQ(ids.size(), given.size());
    EXPECT_EQ(ids.find("h0.glb.test", "c0"), AnswerIds::kNone);
    EXPECT_EQ(ids.find("h3.glb.test", "c4"), AnswerIds::kNone);
    EXPECT_EQ(ids.find("h3.glb.test", "c30"), AnswerIds::kNone);
    size_t listed = 0;
    std::string last;
    ids.each_sorted([&](const std::string& h, const std::string& c, uint32_t id) {
        EXPECT_EQ(ids.find(h, c), id);
        std::string key = h + "/" + c;
        EXPECT_LT(last, key);
        last = key, ++listed;
    });
    EXPECT_EQ(listed, given.size());
}

// A host's clusters asked for together, in any order and with new ones among them: each pair keeps its id, a
// new one gets the next, and the pairs asked one at a time are the same pairs.
TEST(AnswerIds, AHostsClustersAskedTogetherKeepTheirIdsInAnyOrder) {
    AnswerIds ids;
    auto ask = [&](const std::string& host, std::vector<std::string_view> clusters) {
        std::vector<uint32_t> out(clusters.size(), 77);
        ids.ids(host, clusters, out);
        return out;
    };
    EXPECT_EQ(ask("a.glb.test", {"c1", "c2", "c3"}), (std::vector<uint32_t>{0, 1, 2}));
    EXPECT_EQ(ask("b.glb.test", {"c2", "c1"}), (std::vector<uint32_t>{3, 4}));
    EXPECT_EQ(ask("a.glb.test", {"c3", "c1", "c2"}), (std::vector<uint32_t>{2, 0, 1}));
    EXPECT_EQ(ask("a.glb.test", {"c2", "c4", "c3", "c1"}), (std::vector<uint32_t>{1, 5, 2, 0}));
    EXPECT_EQ(ask("a.glb.test", {"c4", "c4"}), (std::vector<uint32_t>{5, 5}));
    EXPECT_EQ(ask("b.glb.test", {}), std::vector<uint32_t>{});
    EXPECT_EQ(ids.id("b.glb.test", "c1"), 4u);
    EXPECT_EQ(ids.find("a.glb.test", "c4"), 5u);
    EXPECT_EQ(ids.find("b.glb.test", "c3"), AnswerIds::kNone);
    EXPECT_EQ(ids.size(), 6u);
}

}  // namespace

// ---- static records from clusters' DNSRecords (ClusterView::records)
namespace {

ZoneRecord zr(const std::string& name, uint16_t type, std::vector<std::string> data, uint32_t ttl = 120) {
    return ZoneRecord{name, type, ttl, std::move(data)};
}

TEST(SnapshotBuilder, StaticRecordsOfEveryClusterAreZoneDataByTheRules) {
    conf::Config config = test::config_from(kGlbTestConfig);
    ClusterView eu{"eu", true, {}};
    eu.hosts.push_back(HostEntry{"shop.glb.test", 60, std::nullopt, {{"192.0.2.7", true}}});
    std::string long_txt(600, 'x');
    eu.records = std::vector<ZoneRecord>{
        zr("sub.glb.test", wire::type::NS, {"ns1.sub.glb.test"}),
        zr("sub.glb.test", wire::type::NS, {"ns.elsewhere.example"}),
        zr("ns1.sub.glb.test", wire::type::A, {"192.0.2.53"}),
        zr("_acme.glb.test", wire::type::TXT, {"token", long_txt}),
        zr("shop.glb.test", wire::type::TXT, {"a host's name: the host's"}),
        zr("static.glb.test", wire::type::TXT, {"the config's name"}),
        zr("glb.test", wire::type::NS, {"ns.evil.example"}),            // the apex
        zr("x.sub.glb.test", wire::type::TXT, {"below a delegation"}),  // occluded
        zr("loose.glb.test", wire::type::A, {"192.0.2.66"}),            // an address that is no glue
    };
    ClusterView us{"us", false, {}};  // dead: its static records still count
    us.records = std::vector<ZoneRecord>{zr("_acme.glb.test", wire::type::TXT, {"token", long_txt}),  // again
                                         zr("_acme.glb.test", wire::type::TXT, {"us-token"})};
    auto snap = build_snapshot(config, {eu, us}, nullptr, 1);

    auto txt = test::ask(*snap, test::make_query("_acme.glb.test", wire::type::TXT));
    ASSERT_EQ(txt.answer.size(), 2u);
    EXPECT_TRUE(txt.aa);
    std::string all = txt.answer[0] + "\n" + txt.answer[1];
    EXPECT_NE(all.find("\"us-token\""), std::string::npos) << all;
    EXPECT_NE(all.find("\"token\" \"" + std::string(255, 'x') + "\" \"" + std::string(255, 'x') + "\" \"" +
                       std::string(90, 'x') + "\""),
              std::string::npos)
        << all;  // 600 bytes in pieces of 255

    auto ref = test::ask(*snap, test::make_query("www.sub.glb.test", wire::type::A));
    EXPECT_EQ(ref.rcode, 0);
    EXPECT_FALSE(ref.aa);  // a referral
    EXPECT_TRUE(ref.answer.empty());
    ASSERT_EQ(ref.authority.size(), 2u);
    EXPECT_EQ(test::field(ref.authority, 0, 3), "NS");
    ASSERT_EQ(ref.additional.size(), 1u);
    EXPECT_EQ(test::field(ref.additional, 0, 4), "192.0.2.53");  // the glue

    auto host = test::ask(*snap, test::make_query("shop.glb.test", wire::type::TXT));
    EXPECT_TRUE(host.answer.empty());  // NODATA: the host's name keeps only its addresses
    auto cfg = test::ask(*snap, test::make_query("static.glb.test", wire::type::TXT));
    EXPECT_TRUE(cfg.answer.empty());
    auto apex = test::ask(*snap, test::make_query("glb.test", wire::type::NS));
    ASSERT_EQ(apex.answer.size(), 1u);
    EXPECT_EQ(test::field(apex.answer, 0, 4), "ns1.glb.test.");
    auto loose = test::ask(*snap, test::make_query("loose.glb.test", wire::type::A));
    EXPECT_EQ(loose.rcode, wire::rcode::NXDOMAIN);
}

// 70,000 addresses in one entry: the plan keeps the first kMaxAddresses of a family, the counts do not wrap,
// the A answer over TCP holds all it keeps (with 4,096 kept, more than a TCP message holds, it was TC and
// empty: this test failed so), and a question for the other family is NODATA (a 16-bit count once wrapped
// and gave "CNAME .").
TEST(SnapshotBuilder, SeventyThousandAddressesNeitherWrapNorOverflow) {
    conf::Config config = test::config_from(kGlbTestConfig);
    ClusterView eu{"eu", true, {}};
    HostEntry h{"wide.glb.test", 60, model::LoadBalancing{100, "IE", true}, {}};
    for (uint32_t i = 0; i < 70'000; ++i) {
        h.endpoints.push_back(EndpointState{
            ep("10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." + std::to_string(i & 255)),
            true});
    }
    eu.hosts.push_back(std::move(h));
    HostEntry h6{"wide6.glb.test", 60, model::LoadBalancing{100, "IE", true}, {}};
    for (uint32_t i = 0; i < 3'000; ++i)
        h6.endpoints.push_back(EndpointState{ep("2001:db8::" + std::to_string(i)), true});
    eu.hosts.push_back(std::move(h6));
    auto snap = build_snapshot(config, {eu}, nullptr, 1);
    auto a = test::ask(*snap, test::make_query("wide.glb.test", wire::type::A), Transport::tcp);
    ASSERT_TRUE(a.ok);
    EXPECT_EQ(a.rcode, 0);
    EXPECT_FALSE(a.tc);
    EXPECT_EQ(a.answer.size(), size_t{plan::Answers::kMaxAddresses});
    for (const auto& rr : a.answer) ASSERT_EQ(test::field(rr, 3), "A") << rr;
    auto six = test::ask(*snap, test::make_query("wide6.glb.test", wire::type::AAAA), Transport::tcp);
    EXPECT_FALSE(six.tc);
    EXPECT_EQ(six.answer.size(), size_t{plan::Answers::kMaxAddresses});  // the larger records fit too
    auto aaaa = test::ask(*snap, test::make_query("wide.glb.test", wire::type::AAAA), Transport::tcp);
    ASSERT_TRUE(aaaa.ok);
    EXPECT_EQ(aaaa.rcode, 0);
    EXPECT_TRUE(aaaa.answer.empty());
    ASSERT_EQ(aaaa.authority.size(), 1u);
    EXPECT_EQ(test::field(aaaa.authority, 0, 3), "SOA");
}

// A simple host's union past the linear search (16 addresses of a family) and through its table's growth:
// each address once, in the order first given (cluster order, then endpoint order), answered where some alive
// cluster has it healthy; IPv4 and IPv6 apart. The union is made from the entries' endpoints as already read
// (host.cpp, Endpoints::merge), and must be what adding every endpoint's text again gave (the code before it
// passes this test too).
TEST(SnapshotBuilder, SimpleHostUnionOfManyKeepsEachAddressOnceInOrder) {
    auto v4 = [](int i) { return "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1); };
    TestEntry a{"a", "", 0, false, {}, true, false}, b{"b", "", 0, false, {}, true, false},
        dead{"c", "", 0, false, {}, false, false};
    for (int i = 0; i < 1200; ++i) a.endpoints.emplace_back(v4(i), i % 7 != 3);    // every 7th from 3 unhealthy
    a.endpoints.emplace_back(v4(10), true);                                        // given again, healthy
    for (int i = 600; i < 1800; ++i) b.endpoints.emplace_back(v4(i), i % 2 == 0);  // half of a's again
    for (int i = 1800; i < 1900; ++i) dead.endpoints.emplace_back(v4(i), true);    // never healthy: dead
    for (int i = 0; i < 40; ++i) b.endpoints.emplace_back("2001:db8::" + std::to_string(i + 1), i != 5);
    a.endpoints.emplace_back("2001:db8::6", true);  // healthy in a
    ViewBuilder view;
    view.add("app.glb.test", std::vector<TestEntry>{a, b, dead});
    auto s = view.snapshot(config_from(kGlbTestConfig));
    auto p = ask(*s, make_query("app.glb.test", wire::type::A), Transport::tcp);
    std::vector<std::string> want;
    for (int i = 0; i < 1800; ++i) {
        bool healthy = (i < 1200 && (i % 7 != 3 || i == 10)) || (i >= 600 && i % 2 == 0);
        if (healthy) want.push_back(v4(i));
    }
    EXPECT_EQ(answer_rdata(p), want);
    auto six = ask(*s, make_query("app.glb.test", wire::type::AAAA), Transport::tcp);
    std::vector<std::string> want6 = {"2001:db8::6"};  // a's, first in cluster order; unhealthy in b: once
    for (int i = 0; i < 40; ++i) {
        if (i != 5) want6.push_back("2001:db8::" + std::to_string(i + 1));
    }
    EXPECT_EQ(answer_rdata(six), want6);
}

}  // namespace
