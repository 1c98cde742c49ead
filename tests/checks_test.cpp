// Hosts' health checks in reports (SharedCheck): their text, this instance's own from the config, the codec
// and the state file carrying them, check_report refusing what a hostile peer could send, and which of
// another cluster's endpoints each instance probes from outside.
#include <gtest/gtest.h>

#include <sstream>

#include "conf/config.hpp"
#include "sync/local_view.hpp"
#include "sync/outside.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/sync_util.hpp"

using namespace glbd;
using namespace glbd::sync;

namespace {

SharedCheck https_check() {
    SharedCheck c;
    c.check.protocol = model::Protocol::https;
    c.check.port = 8443;
    c.check.path = "/healthz?x=1;y=2";
    c.check.interval = std::chrono::milliseconds(5000);
    c.check.timeout = std::chrono::milliseconds(2000);
    c.check.failure_threshold = 6;
    c.check.success_threshold = 2;
    c.check.expected_status = {200, 204};
    c.check.insecure_skip_verify = true;
    return c;
}

// An origin of three hosts: the first two with check 1, the third with check 2 (TCP, inside only).
InstanceState checked_origin() {
    InstanceState s = test::inst("eu-1", "pod-a", 5, 6);
    s.hosts = test::hosts(3);
    SharedCheck tcp;
    tcp.check.protocol = model::Protocol::tcp;
    tcp.check.port = 5432;
    tcp.inside_only = true;
    s.checks = {https_check(), tcp};
    s.hosts[0].check = 1, s.hosts[1].check = 1, s.hosts[2].check = 2;
    s.probes_outside = true;
    return s;
}

TEST(SharedChecks, TextRoundTripsAndIsExact) {
    SharedCheck c = https_check();
    EXPECT_EQ(format_check(c), "HTTPS 8443 5000 2000 6 2 200,204 k /healthz?x=1;y=2");
    SharedCheck back;
    std::string why;
    ASSERT_TRUE(parse_check(format_check(c), back, why)) << why;
    EXPECT_EQ(back, c);
    c.inside_only = true, c.check.insecure_skip_verify = false;
    EXPECT_EQ(format_check(c), "HTTPS 8443 5000 2000 6 2 200,204 i /healthz?x=1;y=2");
    ASSERT_TRUE(parse_check(format_check(c), back, why));
    EXPECT_EQ(back, c);
    EXPECT_EQ(format_check(SharedCheck{}), "HTTP 80 5000 2000 3 1 200,201 - /");
    for (const char* bad :
         {"", "FTP 80 5000 2000 3 1 200 - /", "HTTP 0 5000 2000 3 1 200 - /", "HTTP 80 50 2000 3 1 200 - /",
          "HTTP 80 5000 5 3 1 200 - /", "HTTP 80 5000 2000 0 1 200 - /", "HTTP 80 5000 2000 3 1 99 - /",
          "HTTP 80 5000 2000 3 1 200, - /", "HTTP 80 5000 2000 3 1 200 x /", "HTTP 80 5000 2000 3 1 200 - healthz",
          "HTTP 80 5000 2000 3 1 200 - /a b", "HTTP 80 5000 2000 3 1 200 -",
          "HTTP 80 5000 2000 3 1 200,200,200,200,200,200,200,200,200,200,200,200,200,200,200,200,200 - /",
          "HTTP 80 +5000 2000 3 1 200 - /"}) {
        EXPECT_FALSE(parse_check(bad, back, why)) << bad;
    }
}

// The config's checks, numbered once each; headers never go into a report (such a check is inside only).
TEST(SharedChecks, OwnChecksNumberTheConfigsHosts) {
    auto r = conf::load_text(R"(cluster: {id: eu-1, instance: a}
listen: {dns: ["127.0.0.1:5353"]}
zones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [192.0.2.53]}]}]
hosts:
  - {name: a.glb.test, endpoints: [192.0.2.1], healthCheck: {protocol: HTTPS, path: /hz}}
  - {name: b.glb.test, endpoints: [192.0.2.2], healthCheck: {protocol: HTTPS, path: /hz}}
  - {name: c.glb.test, endpoints: [192.0.2.3]}
  - {name: d.glb.test, endpoints: [192.0.2.4], healthCheck: {protocol: HTTP, path: /, headers: {X-Key: secret}}}
)",
                             "glbd.yaml");
    ASSERT_TRUE(r.config) << r.errors[0].str();
    std::vector<SharedCheck> checks;
    ClusterView v = local_view(*r.config, {}, &checks);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(format_check(checks[0]), "HTTPS 443 5000 2000 3 1 200,201 - /hz");
    EXPECT_TRUE(checks[1].inside_only);
    EXPECT_TRUE(checks[1].check.headers.empty());
    std::map<std::string, uint16_t> numbers;
    for (const HostEntry& h : v.hosts) numbers[h.host.str()] = h.check;
    EXPECT_EQ(numbers, (std::map<std::string, uint16_t>{
                           {"a.glb.test", 1}, {"b.glb.test", 1}, {"c.glb.test", 0}, {"d.glb.test", 2}}));
    for (const auto& c : checks) EXPECT_EQ(format_check(c).find("secret"), std::string::npos);
}

TEST(SharedChecks, TheCodecCarriesThemAndOlderReportsReadAsBefore) {
    InstanceState s = checked_origin();
    s.checks[0].check.path = "/" + std::string(600, 'p');  // past a character-string: in pieces
    auto records = encode("eu-1/pod-a", {{s, 0}});
    for (const auto& rec : records) {
        for (const auto& str : rec) EXPECT_LE(str.size(), 255u);
    }
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(records, from, out, err)) << err;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].state.checks, s.checks);
    EXPECT_EQ(out[0].state.hosts, s.hosts);
    EXPECT_TRUE(out[0].state.probes_outside);
    EXPECT_TRUE(check_report(out[0].state, 10).error.empty());
    // A report without checks (an older glbd's) reads as before: no check, every host 0.
    InstanceState old = test::inst("us-1", "pod-b", 5, 6);
    out.clear();
    ASSERT_TRUE(decode(encode("us-1/pod-b", {{old, 0}}), from, out, err)) << err;
    EXPECT_TRUE(out[0].state.checks.empty());
    EXPECT_EQ(out[0].state.hosts[0].check, 0);
    EXPECT_FALSE(out[0].state.probes_outside);  // an older glbd probes no other cluster
}

TEST(SharedChecks, AHostileReportIsRefusedOrItsHostLeftOut) {
    std::string from, err;
    std::vector<Report> out;
    const std::string probe = "probe=HTTP 80 5000 2000 3 1 200 - /";
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"check=2", probe}}, from, out, err));  // out of order
    EXPECT_NE(err.find("checks out of order"), std::string::npos) << err;
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"check=1", "probe=HTTP 80 5000 2000 3 1 200 - /x y"}}, from, out, err));
    EXPECT_NE(err.find("bad check 1: a check's path"), std::string::npos) << err;
    EXPECT_FALSE(decode(
        {{"origin=eu/a"},
         {"check=1", "probe=" + std::string(250, 'x'), "probe+=" + std::string(250, 'x'),
          "probe+=" + std::string(250, 'x'), "probe+=" + std::string(250, 'x'), "probe+=" + std::string(250, 'x'),
          "probe+=" + std::string(250, 'x'), "probe+=" + std::string(250, 'x'), "probe+=" + std::string(250, 'x'),
          "probe+=" + std::string(250, 'x')}},
        from, out, err));
    EXPECT_NE(err.find("longer than its limit"), std::string::npos) << err;
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"host=a.glb.test", "check=0"}}, from, out, err));
    // A host naming a check the report does not carry is left out; the rest stands.
    InstanceState s = checked_origin();
    s.hosts[1].check = 3;
    CheckResult r = check_report(s, 10);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.dropped, 1u);
    EXPECT_EQ(r.dropped_why, "h1.glb.test: check 3 is not in the report");
    EXPECT_EQ(s.hosts.size(), 2u);
    // A check with headers (never sent) refuses the report.
    s = checked_origin();
    s.checks[0].check.headers = {{"X-Key", "secret"}};
    EXPECT_NE(check_report(s, 10).error.find("headers"), std::string::npos);
}

// The state file keeps the checks, and each host's in runs over the rows; a row left out (an unreadable
// endpoint) takes its place in the runs, so the hosts after it keep theirs.
TEST(SharedChecks, TheStateFileKeepsThem) {
    InstanceState s = checked_origin();
    std::stringstream file;
    write_state_file(file, {s}, 1);
    EXPECT_NE(file.str().find(R"("checkRuns":"2:1 1:2")"), std::string::npos) << file.str();
    auto read = read_state_file(file);
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(read[0].checks, s.checks);
    EXPECT_EQ(read[0].hosts, std::vector<HostEntry>(s.hosts));
    EXPECT_TRUE(read[0].probes_outside);
    std::string text = file.str();
    text.replace(text.find("192.0.2.2\""), 10, "300.1.1.1\"");  // the second row's endpoint
    std::stringstream again(text);
    read = read_state_file(again);
    ASSERT_EQ(read.size(), 1u);
    ASSERT_EQ(read[0].hosts.size(), 2u);
    EXPECT_EQ(read[0].hosts[0].check, 1);
    EXPECT_EQ(read[0].hosts[1].host, "h2.glb.test");
    EXPECT_EQ(read[0].hosts[1].check, 2);
    for (const char* bad : {R"("checkRuns":"2:1 1:2")", R"("checks":"HTTPS)"}) {
        std::string t = file.str();
        const std::string broken =
            std::string(bad) == R"("checks":"HTTPS)" ? R"("checks":"HTTPX)" : R"("checkRuns":"2:1 1:x")";
        t.replace(t.find(bad), std::string(bad).size(), broken);
        std::stringstream in(t);
        EXPECT_THROW(read_state_file(in), std::exception) << bad;
    }
}

}  // namespace

namespace {

// An origin of cluster `cluster` probing from outside, with `n` hosts of one endpoint each, all with one check.
InstanceState prober_origin(const std::string& cluster, const std::string& instance, int n, bool inside_only = false) {
    InstanceState s{cluster, instance, 5, 6, {}, {}};
    s.probes_outside = true;
    SharedCheck c;
    c.inside_only = inside_only;
    s.checks = {c};
    for (int i = 0; i < n; ++i) {
        HostEntry h{"h" + std::to_string(i) + ".glb.test",
                    60,
                    std::nullopt,
                    {{test::endpoint_of("10." + cluster.substr(1) + ".0." + std::to_string(i + 1)), true}}};
        h.check = 1;
        s.hosts.push_back(std::move(h));
    }
    return s;
}

// How often each (cluster, endpoint) is probed over every instance's own choice.
std::map<std::string, int> probes_by_all(const std::vector<InstanceState>& all, const std::vector<bool>& alive,
                                         unsigned vantages, std::map<std::string, int>* per_instance = nullptr) {
    std::vector<LiveReport> reports;
    for (size_t i = 0; i < all.size(); ++i) reports.push_back({&all[i], alive[i]});
    std::map<std::string, int> n;
    for (size_t i = 0; i < all.size(); ++i) {
        if (!alive[i]) continue;
        for (const OutsideTarget& t : outside_targets(reports, all[i].cluster, all[i].instance, vantages)) {
            EXPECT_NE(t.cluster, all[i].cluster);
            ++n[t.cluster + " " + t.endpoint.str()];
            if (per_instance) ++(*per_instance)[all[i].origin()];
        }
    }
    return n;
}

}  // namespace

// Every endpoint is probed by exactly `vantages` other clusters, by one instance of each; a dead vantage's
// share goes to the others; a dead cluster, a check probed inside only and an instance that does not probe from
// outside take no part.
TEST(OutsideTargets, EachEndpointByItsVantagesOnceEach) {
    std::vector<InstanceState> all{prober_origin("c1", "a", 40),  prober_origin("c2", "b", 0),
                                   prober_origin("c3", "c-0", 0), prober_origin("c3", "c-1", 0),
                                   prober_origin("c4", "d", 0),   prober_origin("c1", "a2", 40)};
    std::map<std::string, int> per_instance;
    auto n = probes_by_all(all, {true, true, true, true, true, true}, 2, &per_instance);
    ASSERT_EQ(n.size(), 40u);  // c1's 40 endpoints (its two replicas list the same), none of the others'
    for (const auto& [ep, times] : n) EXPECT_EQ(times, 2) << ep;
    EXPECT_GT(per_instance["c3/c-0"], 0);  // c3's share split between its instances
    EXPECT_GT(per_instance["c3/c-1"], 0);
    EXPECT_EQ(per_instance["c1/a"] + per_instance["c1/a2"], 0);
    // c2 dies: its share goes to c3 and c4.
    n = probes_by_all(all, {true, false, true, true, true, true}, 2);
    for (const auto& [ep, times] : n) EXPECT_EQ(times, 2) << ep;
    // c1 dies (both replicas): nobody probes its endpoints (that is keepDead's question, not this one's).
    EXPECT_TRUE(probes_by_all(all, {false, true, true, true, true, false}, 2).empty());
    // An instance that does not probe from outside neither probes nor counts as a vantage.
    all[4].probes_outside = false;
    per_instance.clear();
    n = probes_by_all(all, {true, true, true, true, true, true}, 3, &per_instance);
    for (const auto& [ep, times] : n) EXPECT_EQ(times, 2) << ep;  // three asked, two clusters left
    EXPECT_EQ(per_instance.count("c4/d"), 0u);
    // Never an address in the prober's denyNetworks.
    std::vector<LiveReport> reports;
    for (const auto& s : all) reports.push_back({&s, true});
    Prefix deny;
    ASSERT_TRUE(Prefix::parse("10.1.0.0/24", deny));
    EXPECT_FALSE(outside_targets(reports, "c2", "b", 3).empty());
    EXPECT_TRUE(outside_targets(reports, "c2", "b", 3, 0, {deny}).empty());
    // Inside only: nobody.
    std::vector<InstanceState> inside{prober_origin("c1", "a", 5, true), prober_origin("c2", "b", 0)};
    EXPECT_TRUE(probes_by_all(inside, {true, true}, 3).empty());
}

// OutsideTargets keeps each origin's targets between calls: after each change (an origin's new version, a
// vantage dying and coming back, a replica, denyNetworks) it gives what a fresh reading gives.
TEST(OutsideTargets, KeptBetweenChangesAsAFreshReadingGivesThem) {
    std::vector<InstanceState> all{prober_origin("c1", "a", 30), prober_origin("c2", "b", 20),
                                   prober_origin("c3", "c", 25), prober_origin("c4", "d", 10)};
    std::vector<bool> alive{true, true, true, true};
    Prefix deny;
    ASSERT_TRUE(Prefix::parse("10.1.0.0/28", deny));
    std::vector<Prefix> denied;
    OutsideTargets kept;
    auto same = [&](const char* step) {
        std::vector<LiveReport> reports;
        for (size_t i = 0; i < all.size(); ++i) reports.push_back({&all[i], alive[i]});
        const auto fresh = outside_targets(reports, "c3", "c", 2, 0, denied);
        EXPECT_EQ(kept.update(reports, "c3", "c", 2, 0, denied), fresh) << step;
        return fresh.size();
    };
    const size_t first = same("first");
    EXPECT_GT(first, 0u);
    same("again");
    all[0].hosts.pop_back(), ++all[0].version;  // c1 lists one endpoint less
    same("c1's new version");
    alive[3] = false;
    same("c4 dead: its share moves");
    alive[3] = true;
    same("c4 back");
    all.push_back(prober_origin("c2", "b2", 20));  // a replica of c2, listing the same
    alive.push_back(true);
    same("c2's replica");
    denied = {deny};
    same("denyNetworks");
}

// Outside verdicts travel in the report and the state file; a failure that is not an endpoint, or more
// failures than endpoints probed, refuses the report; failures are put in order.
TEST(OutsideVerdicts, TravelAndAreChecked) {
    InstanceState s = checked_origin();
    s.outside["c2"] = OutsideVerdicts{40, {{"a.glb.test", test::endpoint_of("10.2.0.1")}}};
    for (int i = 0; i < 400; ++i)  // past one record: continued in more=1 records
        s.outside["c3"].failing.emplace_back("h" + std::to_string(1000 + i) + ".glb.test",
                                             test::endpoint_of("10.3.0.1"));
    s.outside["c3"].probed = 400;
    std::string from, err;
    std::vector<Report> out;
    ASSERT_TRUE(decode(encode("eu-1/pod-a", {{s, 0}}), from, out, err)) << err;
    EXPECT_EQ(out[0].state.outside, s.outside);
    std::stringstream file;
    write_state_file(file, {s}, 1);
    EXPECT_EQ(read_state_file(file)[0].outside, s.outside);
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"outside=c2", "fail=a.glb.test not-an-endpoint!"}}, from, out, err));
    EXPECT_FALSE(decode({{"origin=eu/a"}, {"outside=c2", "more=1"}}, from, out, err));
    InstanceState bad = checked_origin();
    bad.outside["c2"] = OutsideVerdicts{
        1, {{"a.glb.test", test::endpoint_of("10.2.0.2")}, {"a.glb.test", test::endpoint_of("10.2.0.1")}}};
    EXPECT_NE(check_report(bad, 10).error.find("more outside failures of c2 than it probed"), std::string::npos);
    bad.outside["c2"].probed = 2;
    ASSERT_TRUE(check_report(bad, 10).error.empty());
    EXPECT_EQ(bad.outside["c2"].failing[0].second, test::endpoint_of("10.2.0.1"));  // in order
}

// The fleet's verdict from the reports: two of three vantages withdraw, one does not, a report that is not a
// vantage of the endpoint is not read, a cut-off vantage does not count.
TEST(OutsideVerdicts, TheFleetsVerdict) {
    std::vector<InstanceState> all{prober_origin("c1", "a", 1), prober_origin("c2", "b", 0),
                                   prober_origin("c3", "c", 0), prober_origin("c4", "d", 0)};
    const Endpoint e = all[0].hosts[0].endpoints[0].target;
    const std::string host = all[0].hosts[0].host.str();
    auto verdicts = [&](unsigned vantages) {
        std::vector<LiveReport> reports;
        for (const auto& s : all) reports.push_back({&s, true});
        return fleet_verdicts(reports, vantages, 0);
    };
    auto fails = [&](size_t i, bool f) {
        all[i].outside["c1"] = OutsideVerdicts{1, {}};
        if (f) all[i].outside["c1"].failing = {{host, e}};
    };
    fails(1, true), fails(2, false), fails(3, false);
    EXPECT_TRUE(verdicts(3).failed.empty());  // one of three
    // ... but disputed: some vantage fails it (what status shows beside the inside verdict)
    EXPECT_EQ(verdicts(3).disputed["c1"], (std::set<std::pair<std::string, Endpoint>>{{host, e}}));
    fails(2, true);
    auto v = verdicts(3);
    ASSERT_EQ(v.failed.size(), 1u);
    EXPECT_EQ(v.failed["c1"], (std::set<std::pair<std::string, Endpoint>>{{host, e}}));
    // With one vantage, only one of c2..c4 is read: two failing reports can never withdraw (one alone).
    EXPECT_TRUE(verdicts(1).failed.empty());
    // c4 cut off (it fails everything it probes in two clusters) does not count: c2 and c3 still withdraw;
    // with c3 reaching it again, c2 and the cut-off c4 do not.
    all[3].outside["c2"] = OutsideVerdicts{
        2, {{"x.glb.test", test::endpoint_of("10.2.0.1")}, {"y.glb.test", test::endpoint_of("10.2.0.2")}}};
    fails(3, true);
    v = verdicts(3);
    EXPECT_EQ(v.cut_off, std::set<std::string>{"c4"});
    EXPECT_EQ(v.failed.count("c1"), 1u);
    fails(2, false);
    EXPECT_TRUE(verdicts(3).failed.empty());
    fails(1, false), fails(3, false);
    EXPECT_TRUE(verdicts(3).disputed["c1"].empty());  // (c4 still fails c2's endpoints: disputed there)
    EXPECT_EQ(verdicts(3).disputed["c2"].size(), 2u);
}
