// server/app's pieces that stand alone: the walk over the view's hosts that pages /v1/hosts (HostWalk), how long
// a key change must wait for what resolvers hold (KeyGovernance::hold_ms), the cookie secrets' rotation
// (CookieSecrets), and what the service manager is told (Notifier, through a socket of the test's standing in for
// systemd's).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <uv.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "resolver/base/clock.hpp"
#include "resolver/base/fd.hpp"
#include "server/app/admin_routes.hpp"
#include "server/app/cookies.hpp"
#include "server/app/daemon.hpp"
#include "server/app/key_governance.hpp"
#include "server/app/notify.hpp"
#include "sync/service.hpp"
#include "tests/dns_util.hpp"

namespace glbd {
namespace {

ClusterView cluster(const std::string& id, const std::vector<std::string>& hosts) {
    ClusterView v{id, true, {}};
    for (const auto& h : hosts) v.hosts.push_back(HostEntry{h, 60, std::nullopt, {{"192.0.2.1", true}}});
    order_entries(v.hosts);
    return v;
}

// The names walked and, for each, which clusters' entries came with it.
std::vector<std::string> walk(const GlobalView& view, std::string_view from, bool after) {
    std::vector<std::string> out;
    HostWalk w(view, from, after);
    while (const HostEntries* e = w.next()) {
        std::string line = e->front().second->host + ":";
        for (const auto& [cv, entry] : *e) line += " " + cv->id;
        out.push_back(line);
    }
    return out;
}

// log.format json: each line one JSON object, whatever bytes the message carries (a quote, a backslash, a control
// byte; bytes that are not UTF-8, from a peer or a file, become U+FFFD rather than an exception or a broken line).
TEST(Logging, JsonLinesStayJsonWhateverTheMessageCarries) {
    auto before = spdlog::default_logger();
    testing::internal::CaptureStderr();
    setup_logging("info", "json");
    spdlog::warn("x\"y\\z\x01 and \xff\xfe");
    spdlog::default_logger()->flush();
    const std::string out = testing::internal::GetCapturedStderr();
    spdlog::drop("glbd");
    spdlog::set_default_logger(before);
    spdlog::set_pattern("%+");
    std::istringstream lines(out);
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
        auto obj = nlohmann::json::parse(line);  // throws when the line is not one JSON object of valid UTF-8
        EXPECT_EQ(obj.at("level"), "warning");
        EXPECT_EQ(obj.at("msg"), "x\"y\\z\x01 and \xef\xbf\xbd\xef\xbf\xbd");
        ++n;
    }
    EXPECT_EQ(n, 1) << out;
}

TEST(HostWalk, NamesInOrderEachWithEveryClustersEntries) {
    GlobalView view{cluster("eu", {"b.test", "d.test", "a.test"}), cluster("us", {"c.test", "b.test"}),
                    cluster("ap", {})};
    view[1].hosts.push_back(HostEntry{"b.test", 60, std::nullopt, {}, "gw-2"});  // a second entry of one name
    order_entries(view[1].hosts);
    EXPECT_EQ(walk(view, "", false),
              (std::vector<std::string>{"a.test: eu", "b.test: eu us us", "c.test: us", "d.test: eu"}));
    EXPECT_EQ(walk(view, "b.test", false), (std::vector<std::string>{"b.test: eu us us", "c.test: us", "d.test: eu"}));
    EXPECT_EQ(walk(view, "b.test", true), (std::vector<std::string>{"c.test: us", "d.test: eu"}));  // the next page
    EXPECT_EQ(walk(view, "bb", false), (std::vector<std::string>{"c.test: us", "d.test: eu"}));
    EXPECT_TRUE(walk(view, "e", false).empty());
    EXPECT_TRUE(walk({}, "", false).empty());
}

// The hold before a key change: the largest TTL of the running config, the next one and the view (in the zone
// only), two syncIntervals for the change to reach the peers, and a second.
TEST(KeyHold, LargestTtlInTheZoneAndTheTimeToReachThePeers) {
    const std::string base = R"(cluster: {id: eu, instance: a}
listen: {dns: ["127.0.0.1:5399"]}
zones:
  - {origin: glb.test, ttl: 300, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}
  - {origin: other.test, ttl: 9000, nameservers: [{name: ns.other.test, addresses: [127.0.0.1]}]}
)";
    auto current = test::config_from(base + "hosts: [{name: a.glb.test, ttl: 60, endpoints: [192.0.2.1]}]\n");
    auto next = test::config_from(base + "hosts: [{name: a.glb.test, ttl: 600, endpoints: [192.0.2.1]}]\n" +
                                  "peers:\n  key: {name: k, secret: \"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\"}\n"
                                  "  syncInterval: 2s\n");
    sync::Service sync(current, nullptr);
    EXPECT_EQ(KeyGovernance::hold_ms(current, current, sync, "glb.test"), 300'000u + 1000);
    EXPECT_EQ(KeyGovernance::hold_ms(current, next, sync, "glb.test"), 600'000u + 4000 + 1000);
    sync.set_own_hosts({HostEntry{"b.glb.test", 3600, std::nullopt, {{"192.0.2.2", true}}}}, {});
    EXPECT_EQ(KeyGovernance::hold_ms(current, current, sync, "glb.test"), 3'600'000u + 1000) << "a cluster's entry";
    EXPECT_EQ(KeyGovernance::hold_ms(current, current, sync, "other.test"), 9'000'000u + 1000);
}

// A datagram socket standing in for systemd's notify socket; NOTIFY_SOCKET and WATCHDOG_USEC point at it for
// the test's time.
struct ServiceManager : ::testing::Test {
    test::TempDir dir;
    Fd fd{::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)};
    void SetUp() override {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::string path = dir / "notify";
        ASSERT_LT(path.size(), sizeof a.sun_path);
        std::copy(path.begin(), path.end(), a.sun_path);
        ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
    }
    void TearDown() override {
        ::unsetenv("NOTIFY_SOCKET");
        ::unsetenv("WATCHDOG_USEC");
    }
    std::vector<std::string> received() {
        std::vector<std::string> out;
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0;) out.emplace_back(buf, static_cast<size_t>(n));
        return out;
    }
};

TEST_F(ServiceManager, ReadyReloadingStoppingAndTheStatusLine) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    Notifier n([] { return std::string("3 peers, 12 hosts"); });
    n.start(&loop);  // no WATCHDOG_USEC: no heartbeat
    n.ready();
    n.reloading();
    n.stopping();
    auto got = received();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], "READY=1\nSTATUS=3 peers, 12 hosts");
    EXPECT_EQ(got[1].rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << got[1];
    EXPECT_EQ(got[2], "STOPPING=1");
    n.stop();
    uv_run(&loop, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop), 0);
}

TEST_F(ServiceManager, TheWatchdogGetsItsHeartbeat) {
    ::setenv("WATCHDOG_USEC", "100000", 1);  // 100 ms: a beat every 50 ms
    uv_loop_t loop;
    uv_loop_init(&loop);
    Notifier n([] { return std::string("ok"); });
    n.start(&loop);
    std::vector<std::string> beats;
    const uint64_t until = steady_ms() + 5000;
    while (beats.size() < 3 && steady_ms() < until) {
        uv_run(&loop, UV_RUN_ONCE);
        for (auto& m : received()) beats.push_back(m);
    }
    n.stop();
    uv_run(&loop, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop), 0);
    ASSERT_GE(beats.size(), 3u);
    for (const auto& b : beats) EXPECT_EQ(b.rfind("WATCHDOG=1", 0), 0u) << b;
}

// Cookies (RFC 9018 section 5): a random secret rotated with the one before it still accepted; a configured one
// is not rotated, and a reload's new one takes over with the one in use kept as the previous.
TEST(CookieSecrets, RotatedWithThePreviousKeptUnlessConfigured) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    CookieSecrets random;
    int rotations = 0;
    random.start(
        &loop, std::nullopt, [&] { ++rotations; }, 20);
    const cookie::Secret first = random.current();
    EXPECT_FALSE(random.previous());
    CookieSecrets fixed;
    cookie::Secret file{};
    file.fill(7);
    int fixed_rotations = 0;
    fixed.start(
        &loop, file, [&] { ++fixed_rotations; }, 20);
    const uint64_t until = steady_ms() + 5000;
    while (rotations < 2 && steady_ms() < until) uv_run(&loop, UV_RUN_ONCE);
    ASSERT_GE(rotations, 2);
    EXPECT_NE(random.current(), first);
    ASSERT_TRUE(random.previous());
    EXPECT_NE(*random.previous(), first) << "two rotations: the previous is the second secret";
    EXPECT_EQ(fixed_rotations, 0);
    EXPECT_EQ(fixed.current(), file);
    cookie::Secret next{};
    next.fill(9);
    fixed.configure(next);  // a reload with a new file
    EXPECT_EQ(fixed.current(), next);
    EXPECT_EQ(fixed.previous(), file);
    fixed.configure(next);  // the same again: nothing moves
    EXPECT_EQ(fixed.previous(), file);
    random.close();
    fixed.close();
    uv_run(&loop, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop), 0);
}

TEST(Notifier, WithoutTheServiceManagerNothingIsSent) {
    ::unsetenv("NOTIFY_SOCKET");
    uv_loop_t loop;
    uv_loop_init(&loop);
    Notifier n([] { return std::string("unused"); });
    n.start(&loop);
    n.ready();
    n.stopping();
    n.stop();
    EXPECT_EQ(uv_loop_close(&loop), 0) << "a handle was left open";
}

}  // namespace
}  // namespace glbd
