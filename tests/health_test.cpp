// Health probes against real local targets (tests/tools/targets.py on 127.0.0.41), hysteresis and
// overrides.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sync/health/checker.hpp"
#include "sync/local_view.hpp"
#include "sync/state.hpp"
#include "tests/dns_util.hpp"
#include "tests/fake_clock.hpp"

extern char** environ;

using namespace glbd;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<test::TempDir> suite_dir;  // the Probes suite's targets' certificates and request log
std::string dir() { return suite_dir->path; }

class Probes : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // ctest runs each test in a process of its own, and two at once (-j): the suite's targets listen on
        // fixed ports, so one suite's process at a time holds them (a lock file, waited for up to 60 s).
        // Without it the second bound nothing, and its test was skipped, unseen.
        lock_ = open((::testing::TempDir() + "/glbd-health-targets.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        ASSERT_GE(lock_, 0);
        bool locked = test::wait_for([&] { return flock(lock_, LOCK_EX | LOCK_NB) == 0; }, 60s, 50ms);
        ASSERT_TRUE(locked) << "another test held the targets' ports for 60 s";
        suite_dir = std::make_unique<test::TempDir>();
        std::string d = dir();
        std::string openssl =
            "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=tls.hc.test "
            "-addext subjectAltName=DNS:tls-ok.hc.test,DNS:tls-strict.hc.test -keyout " +
            d + "/key.pem -out " + d + "/cert.pem 2>/dev/null";
        ASSERT_EQ(std::system(openssl.c_str()), 0);
        std::string script = std::string(GLBD_TOOLS) + "/targets.py";
        std::vector<std::string> args = {"python3", script,
                                         "--http",  "127.0.0.41:18041",
                                         "--https", "127.0.0.41:18042",
                                         "--tcp",   "127.0.0.41:18043",
                                         "--http",  "127.0.0.1:18044",
                                         "--cert",  d + "/cert.pem",
                                         "--key",   d + "/key.pem",
                                         "--log",   d + "/requests.log",
                                         "--ready", d + "/ready"};
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ASSERT_EQ(posix_spawnp(&pid_, "python3", nullptr, nullptr, argv.data(), environ), 0);
        ASSERT_TRUE(test::wait_for([&] { return std::filesystem::exists(d + "/ready"); })) << "targets did not start";
    }
    static void TearDownTestSuite() {
        if (pid_ > 0) kill(pid_, SIGTERM), waitpid(pid_, nullptr, 0);
        suite_dir.reset();
        if (lock_ >= 0) close(lock_);  // the ports are free again
    }
    static pid_t pid_;
    static int lock_;
};
pid_t Probes::pid_ = -1;
int Probes::lock_ = -1;

std::string host(const std::string& name, const std::string& endpoint, const std::string& check) {
    // One round decides (failureThreshold 1) and no second round comes while the test reads the first (10 s):
    // a round every 300 ms let a later probe, timed out on a busy machine, overwrite a first success. The
    // 3 s timeout leaves a loaded machine (sanitizers, ctest -j) room; only /hang waits it out.
    return "  - name: " + name + "\n    endpoints: [" + endpoint +
           "]\n    healthCheck: {interval: 10s, timeout: 3s, failureThreshold: 1, " + check + "}\n";
}

// The Probes tests' config, up to its hosts.
const char* kProbesHead = R"(cluster: {id: hc}
listen: {dns: ["127.0.0.41:5341"]}
zones:
  - origin: hc.test
    nameservers: [{name: ns.hc.test, addresses: [127.0.0.41]}]
hosts:
)";

const std::string kConfig =
    std::string(kProbesHead) +
    host("ok.hc.test", "127.0.0.41",
         "protocol: HTTP, port: 18041, path: /healthz, headers: {X-Probe: glbd, X-Team: dns}") +
    host("status500.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /status/500") +
    host("wrongpath.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /nope") +
    host("created.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /created") +
    host("expect204.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /healthz, expectedStatus: [204]") +
    host("hang.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /hang") +
    host("refused.hc.test", "127.0.0.41", "protocol: HTTP, port: 18049, path: /healthz") +
    host("tls-ok.hc.test", "127.0.0.41", "protocol: HTTPS, port: 18042, path: /healthz, insecureSkipVerify: true") +
    host("tls-strict.hc.test", "127.0.0.41", "protocol: HTTPS, port: 18042, path: /healthz") +
    host("tcp-ok.hc.test", "127.0.0.41", "protocol: TCP, port: 18043") +
    host("tcp-refused.hc.test", "127.0.0.41", "protocol: TCP, port: 18049") +
    host("name.hc.test", "localhost", "protocol: HTTP, port: 18044, path: /healthz") +
    host("\"*.wild.hc.test\"", "127.0.0.41", "protocol: HTTP, port: 18041, path: /healthz");

health::States run_round(const conf::Config& c) {
    health::Checker checker(c, nullptr);
    checker.start();
    test::wait_for([&] { return checker.first_round_done(); });
    EXPECT_TRUE(checker.first_round_done());
    auto s = checker.states();
    checker.stop();
    return s;
}

// health_changes() counts endpoints' states becoming known or flipping, not probe rounds: equal results round
// after round leave it alone (the daemon makes this cluster's view again only when it moves).
TEST_F(Probes, HealthChangesCountFlipsNotRounds) {
    const std::string config =
        std::string(kProbesHead) +
        R"(  - {name: up.hc.test, endpoints: [127.0.0.41], healthCheck: {protocol: TCP, port: 18043, interval: 200ms, timeout: 2s}}
  - {name: down.hc.test, endpoints: [127.0.0.41], healthCheck: {protocol: TCP, port: 18049, interval: 200ms, timeout: 2s, failureThreshold: 1}}
)";
    health::Checker checker(test::config_from(config), nullptr);
    EXPECT_EQ(checker.health_changes(), 0u);
    checker.start();
    test::wait_for([&] { return checker.first_round_done(); });
    ASSERT_TRUE(checker.first_round_done());
    uint64_t after_first = checker.health_changes();
    EXPECT_EQ(after_first, 2u);  // each endpoint's first result
    auto before = checker.states();
    test::wait_for([&] {
        return checker.states().at({"up.hc.test", "127.0.0.41"}).probes >=
               before.at({"up.hc.test", "127.0.0.41"}).probes + 3;
    });
    auto s = checker.states();
    checker.stop();
    EXPECT_GE(s.at({"up.hc.test", "127.0.0.41"}).probes, before.at({"up.hc.test", "127.0.0.41"}).probes + 3);
    EXPECT_GE(s.at({"down.hc.test", "127.0.0.41"}).probes, 2u);
    EXPECT_TRUE(s.at({"up.hc.test", "127.0.0.41"}).healthy);
    EXPECT_FALSE(s.at({"down.hc.test", "127.0.0.41"}).healthy);
    EXPECT_EQ(checker.health_changes(), after_first) << "rounds with the same results counted as changes";
}

// One probe for every host that names the same endpoint with the same check (for HTTP, the same Host name).
TEST_F(Probes, HostsNamingTheSameEndpointShareOneProbe) {
    const std::string config =
        std::string(kProbesHead) + host("a.hc.test", "127.0.0.41", "protocol: TCP, port: 18043") +
        host("b.hc.test", "127.0.0.41", "protocol: TCP, port: 18043") +  // shares a's probe
        host("c.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /healthz") +
        host("\"*.c.hc.test\"", "127.0.0.41", "protocol: HTTP, port: 18041, path: /healthz") +  // probes c.hc.test too
        host("d.hc.test", "127.0.0.41", "protocol: HTTP, port: 18041, path: /healthz") +        // another Host header
        host("e.hc.test", "127.0.0.41", "protocol: TCP, port: 18049");                          // another port
    health::Checker checker(test::config_from(config), nullptr);
    EXPECT_EQ(checker.targets(), 4u);
    checker.start();
    test::wait_for([&] { return checker.first_round_done(); });
    ASSERT_TRUE(checker.first_round_done());
    auto s = checker.states();
    checker.stop();
    ASSERT_EQ(s.size(), 6u);  // every host keeps its own state
    for (const char* h : {"a.hc.test", "b.hc.test", "c.hc.test", "*.c.hc.test", "d.hc.test"}) {
        EXPECT_TRUE(s.at({h, "127.0.0.41"}).healthy) << h;
    }
    EXPECT_EQ(s.at({"a.hc.test", "127.0.0.41"}).probes, s.at({"b.hc.test", "127.0.0.41"}).probes);
    EXPECT_FALSE(s.at({"e.hc.test", "127.0.0.41"}).healthy);
}

std::vector<std::string> requests() {
    std::ifstream f(dir() + "/requests.log");
    std::vector<std::string> out;
    for (std::string line; std::getline(f, line);) out.push_back(line);
    return out;
}

bool any_request(const std::vector<std::string>& log, const std::vector<std::string>& parts) {
    for (const auto& l : log) {
        bool all = true;
        for (const auto& p : parts) all = all && l.find(p) != std::string::npos;
        if (all) return true;
    }
    return false;
}

TEST_F(Probes, EveryKindOfTarget) {
    auto s = run_round(test::config_from(kConfig));
    auto st = [&](const std::string& h, const std::string& ep = "127.0.0.41") {
        return s.at({h, test::endpoint_of(ep)});
    };
    EXPECT_TRUE(st("ok.hc.test").healthy) << st("ok.hc.test").reason;
    EXPECT_FALSE(st("status500.hc.test").healthy);
    EXPECT_EQ(st("status500.hc.test").reason, "status 500");
    EXPECT_FALSE(st("wrongpath.hc.test").healthy);
    EXPECT_EQ(st("wrongpath.hc.test").reason, "status 404");
    EXPECT_TRUE(st("created.hc.test").healthy);
    EXPECT_FALSE(st("expect204.hc.test").healthy);
    EXPECT_EQ(st("expect204.hc.test").reason, "status 200");
    EXPECT_FALSE(st("hang.hc.test").healthy);
    EXPECT_EQ(st("hang.hc.test").reason, "timeout");
    EXPECT_FALSE(st("refused.hc.test").healthy);
    EXPECT_EQ(st("refused.hc.test").reason, "connection refused");
    EXPECT_TRUE(st("tls-ok.hc.test").healthy) << st("tls-ok.hc.test").reason;
    EXPECT_FALSE(st("tls-strict.hc.test").healthy);
    EXPECT_EQ(st("tls-strict.hc.test").reason.rfind("TLS error", 0), 0u) << st("tls-strict.hc.test").reason;
    EXPECT_TRUE(st("tcp-ok.hc.test").healthy) << st("tcp-ok.hc.test").reason;
    EXPECT_FALSE(st("tcp-refused.hc.test").healthy);
    EXPECT_EQ(st("tcp-refused.hc.test").reason, "connection refused");
    EXPECT_TRUE(st("name.hc.test", "localhost").healthy) << st("name.hc.test", "localhost").reason;
    EXPECT_TRUE(st("*.wild.hc.test").healthy);

    auto log = requests();
    // Host header and SNI are the host name; configured headers arrive.
    EXPECT_TRUE(any_request(log, {"\"proto\": \"http\"", "\"path\": \"/healthz\"", "\"host\": \"ok.hc.test:18041\"",
                                  "\"X-Probe\": \"glbd\"", "\"X-Team\": \"dns\""}));
    EXPECT_TRUE(any_request(
        log, {"\"proto\": \"https\"", "\"host\": \"tls-ok.hc.test:18042\"", "\"sni\": \"tls-ok.hc.test\""}));
    EXPECT_TRUE(any_request(log, {"\"host\": \"wild.hc.test:18041\""}));  // a wildcard probes its base name
    EXPECT_TRUE(any_request(log, {"\"host\": \"name.hc.test:18044\""}));
}

// Probes of the test's (CheckerSeams): each of two addresses answers as the test says, at once, with no socket
// (nothing listens there: probes over the network would fail).
struct ScriptedProbes final : health::Probes {
    std::atomic<bool>* up;  // [0]: 127.0.91.1 (HTTP), [1]: 127.0.91.2 (TCP)
    std::atomic<int>* probes;
    size_t assign_pool() override { return 0; }
    void http(size_t, const health::HttpRequest& r, const Address& a, health::ProbeDone done) override {
        EXPECT_EQ(r.host, "s.ps.test");
        answer(a, done);
    }
    void tcp(const Address& a, uint16_t port, std::chrono::milliseconds, health::ProbeDone done) override {
        EXPECT_EQ(port, 7001);
        answer(a, done);
    }
    void stop() override {}
    void answer(const Address& a, const health::ProbeDone& done) {
        ++*probes;
        const bool ok = up[a.bytes[3] == 1 ? 0 : 1].load();
        done(ok, ok ? "" : "scripted failure");
    }
};

TEST(ProbeSeam, AChecksResultsAreItsProbesWhateverTheyReach) {
    const std::string config = std::string(R"(
cluster: {id: c1}
listen: {dns: ["127.0.91.10:5391"]}
zones:
  - origin: ps.test
    nameservers: [{name: ns.ps.test, addresses: [127.0.91.10]}]
hosts:
  - {name: s.ps.test, endpoints: [127.0.91.1], healthCheck: {protocol: HTTP, port: 7000, interval: 1s, failureThreshold: 2}}
  - {name: t.ps.test, endpoints: [127.0.91.2], healthCheck: {protocol: TCP, port: 7001, interval: 1s, failureThreshold: 2}}
)");
    std::atomic<bool> up[2] = {true, true};
    std::atomic<int> probes{0};
    health::CheckerSeams seams;
    seams.probes = [&](uv_loop_t*) {
        auto p = std::make_unique<ScriptedProbes>();
        p->up = up, p->probes = &probes;
        return p;
    };
    health::Checker checker(test::config_from(config), nullptr, {}, std::move(seams));
    checker.start();
    ASSERT_TRUE(test::wait_for([&] { return checker.first_round_done(); }));
    auto state = [&](const char* host, const char* ep) { return checker.states().at({host, test::endpoint_of(ep)}); };
    auto s = [&] { return state("s.ps.test", "127.0.91.1"); };
    auto t = [&] { return state("t.ps.test", "127.0.91.2"); };
    EXPECT_TRUE(s().healthy);
    EXPECT_TRUE(t().healthy);
    up[1] = false;  // the TCP endpoint fails: down after two failures in a row, the other unmoved
    ASSERT_TRUE(test::wait_for([&] { return !t().healthy; }));
    EXPECT_GE(t().failures, 2u);
    EXPECT_EQ(t().reason, "scripted failure");
    EXPECT_TRUE(s().healthy);
    up[1] = true;  // back after one success
    ASSERT_TRUE(test::wait_for([&] { return t().healthy; }));
    EXPECT_EQ(t().transitions, 2u);
    checker.stop();
    EXPECT_GE(probes.load(), 5);
}

TEST(Hysteresis, FirstResultDecides) {
    health::Hysteresis h{3, 2};
    EXPECT_TRUE(h.healthy);  // healthy until the first result
    EXPECT_TRUE(h.record(false));
    EXPECT_FALSE(h.healthy);
}

TEST(Hysteresis, ExactlyFailureThresholdFailuresFlipToUnhealthy) {
    health::Hysteresis h{3, 2};
    h.record(true);
    EXPECT_FALSE(h.record(false));
    EXPECT_FALSE(h.record(false));
    EXPECT_TRUE(h.healthy);
    EXPECT_TRUE(h.record(false));  // the third
    EXPECT_FALSE(h.healthy);
}

TEST(Hysteresis, ExactlySuccessThresholdSuccessesFlipBack) {
    health::Hysteresis h{1, 2};
    h.record(false);
    EXPECT_FALSE(h.record(true));
    EXPECT_FALSE(h.healthy);
    EXPECT_TRUE(h.record(true));  // the second
    EXPECT_TRUE(h.healthy);
}

TEST(Hysteresis, AFailureResetsTheSuccessCount) {
    health::Hysteresis h{2, 2};
    h.record(false);
    h.record(true);
    h.record(false);
    h.record(true);
    EXPECT_FALSE(h.healthy);
    h.record(true);
    EXPECT_TRUE(h.healthy);
}

const char* kOverrideConfig = R"(cluster: {id: eu-1, instance: a}
listen: {dns: ["127.0.0.1:5353"]}
zones:
  - origin: glb.test
    nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]
hosts:
  - name: a.glb.test
    endpoints: [192.0.2.10, 192.0.2.11]
  - name: b.glb.test
    endpoints: [192.0.2.10]
)";

bool healthy(const GlobalView& v, const std::string& host, const std::string& ep) {
    for (const auto& c : v) {
        for (const auto& h : c.hosts) {
            for (const auto& e : h.endpoints) {
                if (h.host == host && e.target.str() == ep) return e.healthy;
            }
        }
    }
    ADD_FAILURE() << "no " << host << " " << ep;
    return false;
}

GlobalView view_with(const conf::Config& c, const health::States& probes, const sync::OverrideMap& o) {
    GlobalView v{local_view(c, probes)};
    for (auto& cluster : v) sync::apply_overrides(cluster, sync::overrides_naming(o, cluster.id));
    return v;
}

TEST(Overrides, DrainAnEndpointOnEveryHost) {
    auto c = test::config_from(kOverrideConfig);
    sync::OverrideMap o;
    EXPECT_TRUE(sync::set_override(o, "eu-1/192.0.2.10", "down", 1));
    auto v = view_with(c, {}, o);
    EXPECT_FALSE(healthy(v, "a.glb.test", "192.0.2.10"));
    EXPECT_FALSE(healthy(v, "b.glb.test", "192.0.2.10"));
    EXPECT_TRUE(healthy(v, "a.glb.test", "192.0.2.11"));
}

TEST(Overrides, DrainTheClusterThenBackToAuto) {
    auto c = test::config_from(kOverrideConfig);
    health::States probes{{{"a.glb.test", "192.0.2.11"}, {false, true, "status 500"}}};
    sync::OverrideMap o;
    sync::set_override(o, "eu-1", "down", 1);
    auto v = view_with(c, probes, o);
    EXPECT_FALSE(healthy(v, "a.glb.test", "192.0.2.10"));
    EXPECT_FALSE(healthy(v, "b.glb.test", "192.0.2.10"));
    sync::set_override(o, "eu-1", "up", 2);  // forced: even the failing probe counts as healthy
    EXPECT_TRUE(healthy(view_with(c, probes, o), "a.glb.test", "192.0.2.11"));
    sync::set_override(o, "eu-1", "auto", 3);  // the probes decide again
    sync::Store store;
    store.set_own(sync::InstanceState{"eu-1", "a", 1, 1, local_view(c, probes).hosts, o}, 10);
    v = store.view(10, 1000);
    EXPECT_TRUE(healthy(v, "a.glb.test", "192.0.2.10"));
    EXPECT_FALSE(healthy(v, "a.glb.test", "192.0.2.11"));
}

TEST(Overrides, EndpointOverrideBeatsClusterOverride) {
    auto c = test::config_from(kOverrideConfig);
    sync::OverrideMap o;
    sync::set_override(o, "eu-1", "down", 1);
    sync::set_override(o, "eu-1/192.0.2.10", "up", 2);
    auto v = view_with(c, {}, o);
    EXPECT_TRUE(healthy(v, "a.glb.test", "192.0.2.10"));
    EXPECT_FALSE(healthy(v, "a.glb.test", "192.0.2.11"));
}

TEST(Overrides, BadTargetsAndStatesRejected) {
    sync::OverrideMap o;
    EXPECT_FALSE(sync::set_override(o, "EU_1", "down", 1));
    EXPECT_FALSE(sync::set_override(o, "eu-1/", "down", 1));
    EXPECT_FALSE(sync::set_override(o, "eu-1/a/b", "down", 1));
    EXPECT_FALSE(sync::set_override(o, "eu-1", "drained", 1));
    EXPECT_TRUE(o.empty());
}

// The probe schedule tests' config, up to its hosts (127.0.78.0/24 is theirs).
const char* kScheduleConfig = R"(
cluster: {id: c1}
listen: {dns: ["127.0.78.1:5378"]}
zones:
  - origin: ps.test
    nameservers: [{name: ns.ps.test, addresses: [127.0.78.1]}]
hosts:
)";

// An outside checker (health::kOutsideRole) spreads its first round over each target's interval, so that
// health.outside.maxProbesPerSecond holds from its first probe; an inside one probes everything within about a
// second (readiness waits for it). 200 endpoints every 20 s, side by side: when the inside checker has probed
// all 200, the outside one has probed about 200 x elapsed / 20 s of them.
TEST(ProbeSeam, AnOutsideCheckerSpreadsItsFirstRound) {
    std::string config = kScheduleConfig;  // (the probes are the test's: nothing goes out)
    for (int i = 0; i < 200; ++i) {
        config += "  - {name: h" + std::to_string(i) + ".ps.test, endpoints: [127.0.78." + std::to_string(i + 2) +
                  "], healthCheck: {protocol: TCP, port: 7001, interval: 20s}}\n";
    }
    std::atomic<bool> up[2] = {true, true};
    std::atomic<int> inside_probes{0}, outside_probes{0};
    auto seams = [&](std::atomic<int>& count) {
        health::CheckerSeams s;
        s.probes = [&](uv_loop_t*) {
            auto p = std::make_unique<ScriptedProbes>();
            p->up = up, p->probes = &count;
            return p;
        };
        return s;
    };
    const auto c = test::config_from(config);
    // Two checker threads may log their first lines at once: spdlog's registry is made on first use, in
    // libspdlog, which is not built for ThreadSanitizer (it cannot see that making it is guarded). A checker of
    // one endpoint makes it first, and its thread is joined before the two start.
    {
        health::Checker first(test::config_from(std::string(kScheduleConfig) +
                                                "  - {name: h.ps.test, endpoints: [127.0.78.250], healthCheck: "
                                                "{protocol: TCP, port: 7001, interval: 20s}}\n"),
                              nullptr, {}, seams(inside_probes));
        first.start();
        ASSERT_TRUE(test::wait_for([&] { return first.first_round_done(); }));
        first.stop();
        inside_probes = 0;
    }
    health::Checker inside(c, nullptr, {}, seams(inside_probes));
    health::Checker outside(c, nullptr, {}, seams(outside_probes), health::kOutsideRole);
    const auto t0 = std::chrono::steady_clock::now();
    inside.start(), outside.start();
    ASSERT_TRUE(test::wait_for([&] { return inside_probes.load() >= 200; }));
    const auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int seen = outside_probes.load();
    inside.stop(), outside.stop();
    EXPECT_LT(seen, 200 * (elapsed + 1) / 20 + 20) << "after " << elapsed << " s";
    EXPECT_LT(seen, 150);
}

// A reload or a DNSRecord event starts a new checker with what the last one learnt: its hysteresis goes on
// counting (a failing endpoint whose checker is started again every few seconds must still reach
// failureThreshold). When each round comes is the schedule's (schedule_test.cpp).
TEST(ProbeSchedule, ACheckerStartedAgainGoesOnCounting) {
    // Two failures in a row before, one more after, and it is down.
    std::string refused = std::string(kScheduleConfig) +
                          "  - {name: r.ps.test, endpoints: [127.0.79.30], healthCheck: {protocol: TCP, port: 18077, "
                          "interval: 1s, timeout: 500ms}}\n";
    health::EndpointHealth two_down;
    two_down.known = true, two_down.healthy = true, two_down.failures_in_a_row = 2;
    test::FakeClock clock;  // stamps the rounds: what the next checker's schedule goes on from
    health::Checker third(test::config_from(refused), nullptr, {{{"r.ps.test", "127.0.79.30"}, two_down}},
                          health::CheckerSeams{&clock, {}});
    third.start();
    health::EndpointHealth now;
    test::wait_for([&] {
        now = third.states().at({"r.ps.test", "127.0.79.30"});
        return now.probes > 0;
    });
    third.stop();
    ASSERT_EQ(now.probes, 1u);
    EXPECT_FALSE(now.healthy) << "the third failure in a row did not take it down: " << now.reason;
    EXPECT_EQ(now.last_round_ms, clock.steady_ms());
}

// The probing thread runs at a lower priority than the rest (nice kProbeNice): a core it shares with a DNS
// thread answers first.
TEST(ProbeSchedule, TheProbingThreadYieldsToTheOthers) {
    auto niced = [] {  // threads of this process at the probing thread's nice value
        int n = 0;
        for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
            std::ifstream stat(task.path() / "stat");
            std::string line;
            std::getline(stat, line);
            std::istringstream fields(line.substr(line.rfind(')') + 2));
            std::string f;
            for (int i = 3; i <= 19 && fields >> f; ++i) {
                if (i == 19 && std::stoi(f) == health::Checker::kProbeNice) ++n;
            }
        }
        return n;
    };
    int before = niced();
    health::Checker checker(
        test::config_from(std::string(kScheduleConfig) + "  - {name: a.ps.test, endpoints: [127.0.78.1], healthCheck: "
                                                         "{protocol: TCP, port: 18079, interval: 1s}}\n"),
        nullptr);
    checker.start();
    int during = 0;
    test::wait_for([&] {
        during = niced();
        return during > before;
    });
    checker.stop();
    EXPECT_EQ(during, before + 1);
}

}  // namespace
