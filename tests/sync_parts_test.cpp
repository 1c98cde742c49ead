// The sync service's parts with a clock and a wire the test holds (Service::Seams): two services that are not
// started hand each other their heartbeats through a recorder, which drops the ones the test says, while the
// test moves each one's clock. Beats' loss and round trips, suspicion, acknowledgements of a change, the rounds'
// leads and the second connection's delay, all exact. (White box: the parts are sync/'s internal headers.)
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "resolver/base/fd.hpp"
#include "resolver/wire/wire.hpp"
#include "sync/service_impl.hpp"
#include "sync/transfer/codec.hpp"
#include "tests/dns_util.hpp"
#include "tests/fake_clock.hpp"
#include "tests/sync_util.hpp"

namespace glbd::sync {
namespace {

SocketAddress sa(const std::string& text) {
    SocketAddress a;
    EXPECT_TRUE(SocketAddress::parse(text, a)) << text;
    return a;
}

// What a service sent: each datagram, to whom.
struct Wire final : Datagrams {
    std::vector<std::pair<SocketAddress, std::vector<uint8_t>>> sent;
    bool send(const std::optional<Address>&, const SocketAddress& to, std::span<const uint8_t> bytes) override {
        sent.emplace_back(to, std::vector<uint8_t>(bytes.begin(), bytes.end()));
        return true;
    }
};

// One of two instances, eu/a at 127.0.0.1:5301 and us/b at 127.0.0.2:5301, each the other's member.
std::string config(const std::string& cluster, const std::string& instance, int self, int peer) {
    return "cluster: {id: " + cluster + ", instance: " + instance + "}\nlisten: {dns: [\"127.0.0." +
           std::to_string(self) +
           ":5301\"]}\nzones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}]\n"
           "peers:\n  key: {name: glb-sync, secret: \"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=\"}\n"
           "  members: [{address: \"127.0.0." +
           std::to_string(peer) + ":5301\"}]\n  syncInterval: 1s\n  deadAfter: 10s\n";
}

struct Side {
    test::FakeClock clock;
    Wire wire;
    Service::Impl impl;
    SocketAddress at;
    Side(const std::string& yaml, const std::string& address)
        : impl(test::config_from(yaml), nullptr, Service::Seams{&clock, &wire}, std::nullopt), at(sa(address)) {
        impl.membership.resolve();  // the configured member, an address: no lookup, at once
    }
    // Hands `to` every datagram sent since the last call but those numbered (from 0) in `drop`.
    void deliver(Side& to, const std::set<size_t>& drop = {}) {
        for (size_t i = 0; i < wire.sent.size(); ++i) {
            if (!drop.count(i)) to.impl.beats.on_beat(wire.sent[i].second.data(), wire.sent[i].second.size(), at);
        }
        wire.sent.clear();
    }
    // What a pull from `other` would bring: its own report, in this one's store.
    void learn(Side& other) {
        InstanceState theirs;
        {
            MutexLock lock(other.impl.mu);
            theirs = other.impl.own;
        }
        MutexLock lock(impl.mu);
        impl.store.merge(theirs, 0, clock.wall_ms());
    }
    PeerStatus status_of(const SocketAddress& m) {
        MutexLock lock(impl.mu);
        return impl.peer_status[m];
    }
    Core::BeatLink link_of(const std::string& origin) {
        MutexLock lock(impl.mu);
        return impl.beat_links[origin];
    }
    // Moves the clock by `ms` as a loop that turns on time does: a liveness check each turn.
    void turn_for(uint64_t ms) {
        for (uint64_t done = 0; done < ms;) {
            const uint64_t step = std::min(ms - done, Liveness::kTurnMs);
            clock.advance(step);
            done += step;
            impl.liveness.check();
        }
    }
    bool alive(const std::string& origin) {
        MutexLock lock(impl.mu);
        return impl.store.alive(impl.store.known().at(origin), clock.wall_ms(), impl.dead_after());
    }
};

// One of three instances at 127.0.0.SELF:5301, the others its members.
std::string config_of(const std::string& cluster, const std::string& instance, int self, std::vector<int> peers) {
    std::string c = config(cluster, instance, self, peers[0]);
    for (size_t i = 1; i < peers.size(); ++i) {
        const std::string first = "{address: \"127.0.0." + std::to_string(peers[0]) + ":5301\"}";
        c.replace(c.find(first) + first.size(), 0, ", {address: \"127.0.0." + std::to_string(peers[i]) + ":5301\"}");
    }
    return c;
}

// News relayed of an origin whose own beats reach us waits for them (its own beat, and a pull from it, bring it): at
// a fleet's start every member would otherwise pull every member each round. News of an origin not heard for two
// rounds is pulled at once from the member that relayed it, with everything it relays (around a cut link).
TEST(Relays, NewsOfAnOriginHeardDirectlyWaitsForItsOwnBeat) {
    Side a{config_of("eu", "a", 1, {2, 3}), "127.0.0.1:5301"};
    Side b{config_of("us", "b", 2, {1, 3}), "127.0.0.2:5301"};
    Side c{config_of("ap", "c", 3, {1, 2}), "127.0.0.3:5301"};
    ASSERT_EQ(b.impl.membership.members().size(), 2u);
    b.learn(a);
    c.learn(a);
    a.impl.beats.send_all();
    a.deliver(b);  // b hears eu/a directly
    {
        MutexLock lock(a.impl.mu);
        a.impl.bump_own();  // eu/a changes; c learns it first
    }
    c.learn(a);
    c.impl.beats.send_all();
    c.deliver(b);
    EXPECT_FALSE(b.impl.pulls.relay_wanted(c.at));
    b.clock.advance(3000);  // eu/a silent for three rounds: its change may not come directly
    c.clock.advance(3000);
    c.impl.beats.send_all();
    c.deliver(b);
    EXPECT_TRUE(b.impl.pulls.relay_wanted(c.at));
}

struct TwoSides : ::testing::Test {
    Side a{config("eu", "a", 1, 2), "127.0.0.1:5301"};
    Side b{config("us", "b", 2, 1), "127.0.0.2:5301"};
};

TEST_F(TwoSides, EachBeatGoesToTheMemberAndIsHeard) {
    ASSERT_EQ(a.impl.membership.members(), std::vector<SocketAddress>{b.at});
    a.impl.beats.send_all();
    ASSERT_EQ(a.wire.sent.size(), 1u);
    EXPECT_EQ(a.wire.sent[0].first, b.at);
    b.clock.advance(1234);
    a.deliver(b);
    PeerStatus st = b.status_of(a.at);
    EXPECT_EQ(st.last_beat_ms, b.clock.wall_ms());
    EXPECT_EQ(b.link_of("eu/a").received, 1u);
    EXPECT_EQ(b.link_of("eu/a").lost, 0u);
}

// The round trip is the time from our beat to its echo less the time the peer held it before its own beat:
// each side's clock alone, so the two clocks need not agree.
TEST_F(TwoSides, AnEchoTimesTheRoundTripLessWhatThePeerHeldIt) {
    a.impl.beats.send_all();
    a.clock.advance(20);  // on its way
    a.deliver(b);
    b.clock.advance(30);  // held by b until its own beat (and as long on a's clock)
    a.clock.advance(30);
    b.impl.beats.send_all();
    a.clock.advance(30);  // on its way back
    b.deliver(a);
    PeerStatus st = a.status_of(b.at);
    EXPECT_EQ(st.rtt_samples, 1u);
    EXPECT_DOUBLE_EQ(st.rtt_ms, 50.0);  // 80 ms from beat to echo, 30 of them held
}

// A beat relays as many live origins as fit (kMaxBeatBytes with its signature), a different run of them each beat,
// so that every one travels within a few beats however many there are; a dead one never.
TEST_F(TwoSides, BeatsRelayAsManyOriginsAsFitAndEachInTurn) {
    constexpr int kOrigins = 40;
    {
        MutexLock lock(a.impl.mu);
        for (int i = 0; i < kOrigins; ++i) {
            InstanceState s;
            s.cluster = "c" + std::to_string(i), s.instance = "x", s.version = 1, s.heartbeat = a.clock.wall_ms();
            a.impl.store.merge(s, 0, a.clock.wall_ms() - (i == 7 ? 60'000 : 0));  // c7 last heard a minute ago
        }
    }
    std::map<std::string, int> relayed;
    size_t per_beat = 0;
    for (int beat = 0; beat < 12; ++beat) {
        a.impl.beats.send_all();
        ASSERT_EQ(a.wire.sent.size(), 1u);
        const std::vector<uint8_t>& bytes = a.wire.sent[0].second;
        EXPECT_LE(bytes.size(), kMaxBeatBytes);
        Beat parsed;
        std::string error;
        ASSERT_TRUE(parse_beat(bytes.data(), bytes.size(), parsed, error)) << error;
        ASSERT_GE(parsed.reports.size(), 2u);
        if (beat == 0) per_beat = parsed.reports.size() - 1;
        EXPECT_EQ(parsed.reports.size() - 1, per_beat) << "beat " << beat;  // as many each time: all that fit
        // One more would not have fitted: the beat is within one report of its room.
        EXPECT_GT(bytes.size() + beat_record_bytes({"origin=c10/x", "inc=0", "version=1", "heartbeat=1", "age=0"}),
                  kMaxBeatBytes - 100);
        for (const auto& r : parsed.reports) ++relayed[r.state.origin()];
        a.wire.sent.clear();
    }
    EXPECT_GE(per_beat, 5u);
    EXPECT_EQ(relayed.count("c7/x"), 0u) << "a dead origin is relayed";
    for (int i = 0; i < kOrigins; ++i) {
        if (i == 7) continue;
        EXPECT_GE(relayed["c" + std::to_string(i) + "/x"], 1) << "c" << i << " never relayed";
    }
}

// Beats lost on the way show as gaps in their numbers; one that comes late or twice counts nothing more.
TEST_F(TwoSides, LossIsTheGapsInTheNumbersAndALateBeatCountsNothing) {
    for (int i = 0; i < 10; ++i) a.impl.beats.send_all();
    std::vector<std::vector<uint8_t>> beats;
    for (auto& [to, bytes] : a.wire.sent) beats.push_back(bytes);
    a.deliver(b, {2, 4, 5});  // 7 of 10 arrive
    Core::BeatLink link = b.link_of("eu/a");
    EXPECT_EQ(link.received, 7u);
    EXPECT_EQ(link.lost, 3u);
    EXPECT_GT(link.loss, 0.05);
    b.impl.beats.on_beat(beats[4].data(), beats[4].size(), a.at);  // late
    b.impl.beats.on_beat(beats[9].data(), beats[9].size(), a.at);  // twice
    EXPECT_EQ(b.link_of("eu/a").received, 7u);
    EXPECT_EQ(b.link_of("eu/a").lost, 3u);
}

// A member is suspect once nothing has come from it directly for max(3 x syncInterval, deadAfter / 2), and heard
// directly again at its next beat.
TEST_F(TwoSides, SilenceMakesAMemberSuspectAndABeatClearsIt) {
    a.impl.beats.send_all();
    a.deliver(b);
    b.impl.liveness.check();
    EXPECT_FALSE(b.status_of(a.at).suspect);
    b.turn_for(b.impl.suspect_after());
    EXPECT_FALSE(b.status_of(a.at).suspect) << "suspect at the limit";
    b.turn_for(1);
    EXPECT_TRUE(b.status_of(a.at).suspect);
    EXPECT_EQ(b.status_of(a.at).suspect_reason, "nothing directly for over 5000 ms; nor through others");
    EXPECT_EQ(b.status_of(a.at).suspect_limit_ms, 5000u);
    b.turn_for(60'000);  // the reason names the limit, not a time that goes stale
    EXPECT_EQ(b.status_of(a.at).suspect_reason, "nothing directly for over 5000 ms; nor through others");
    a.impl.beats.send_all();
    a.deliver(b);
    b.impl.liveness.check();
    EXPECT_FALSE(b.status_of(a.at).suspect);
}

// The loss a link shows lengthens deadAfter for its origin, within deadAfterMax (a tenth of deadAfter unset).
TEST_F(TwoSides, ALossyLinkGetsGraceWithinDeadAfterMax) {
    b.learn(a);
    for (int i = 0; i < 40; ++i) a.impl.beats.send_all();
    std::set<size_t> drop;
    for (size_t i = 1; i < 40; i += 2) drop.insert(i);  // every other beat
    a.deliver(b, drop);
    b.impl.liveness.check();
    MutexLock lock(b.impl.mu);
    const Known& k = b.impl.store.known().at("eu/a");
    EXPECT_EQ(k.grace_ms, 1000u) << "capped at deadAfter / 10";
}

// Time in which b's loop did not turn (a busy CPU) is not a's silence: b could not have heard it. The spell, less
// the 200 ms a turn may take, lengthens a's limits; a beat read after it clears everything, and a silence heard
// out in full turns still ends in death.
TEST_F(TwoSides, TimeTheLoopWasAwayIsNoPeersSilence) {
    b.learn(a);
    a.impl.beats.send_all();
    a.deliver(b);
    b.turn_for(3000);
    b.clock.advance(12'000);  // b's loop away: past deadAfter (10 s) since a was heard
    b.impl.liveness.check();
    EXPECT_TRUE(b.alive("eu/a")) << "dead for what b did not listen to";
    EXPECT_FALSE(b.status_of(a.at).suspect);
    EXPECT_EQ(b.impl.counters.loop_away_ms.load(), 11'800u);
    {
        MutexLock lock(b.impl.mu);
        EXPECT_EQ(b.impl.store.known().at("eu/a").grace_ms, 11'800u);
    }
    b.turn_for(6800);  // 3 s + 6.8 s listened since a was heard, and 12 s away of which 11.8 s count
    EXPECT_TRUE(b.alive("eu/a"));
    b.turn_for(100);
    EXPECT_FALSE(b.alive("eu/a")) << "a silence heard out in full";

    a.clock.advance(22'000);
    a.impl.beats.send_all();  // a again: heard now, and nothing of the spell before counts for it
    a.deliver(b);
    b.turn_for(100);
    EXPECT_TRUE(b.alive("eu/a"));
    {
        MutexLock lock(b.impl.mu);
        EXPECT_EQ(b.impl.store.known().at("eu/a").grace_ms, 0u);
    }
    b.turn_for(10'000);
    EXPECT_FALSE(b.alive("eu/a")) << "deadAfter after its last beat, turning on time";
}

// Of a spell away, only the part after a peer was last heard counts for it: a beat read in the middle of the long
// turn (the loop reads its sockets before the check that finds the spell) gets the rest of the spell alone.
TEST_F(TwoSides, OnlyTheTimeAwaySinceAPeerWasHeardCounts) {
    b.learn(a);
    b.turn_for(100);
    b.clock.advance(5000);  // the long turn: a's beat is read 5 s into it
    a.clock.advance(5000);  // (its heartbeat moves: a beat that shows none says nothing of a's life)
    a.impl.beats.send_all();
    a.deliver(b);
    b.clock.advance(7000);
    b.impl.liveness.check();  // away 11.8 s, of which 7 s since a's beat
    {
        MutexLock lock(b.impl.mu);
        EXPECT_EQ(b.impl.store.known().at("eu/a").grace_ms, 7000u);
    }
    b.turn_for(10'000);  // 17 s since the beat: deadAfter and the 7 s away
    EXPECT_TRUE(b.alive("eu/a"));
    b.turn_for(100);
    EXPECT_FALSE(b.alive("eu/a"));
}

TEST(BeatLink, TheShareLostFollowsTheGapsAndForgetsThem) {
    using Seen = Core::BeatLink::Seen;
    Core::BeatLink link;
    EXPECT_EQ(link.count(100, 1, 7), Seen::fresh);
    EXPECT_EQ(link.lost, 0u) << "a first beat counts no loss";
    for (uint64_t seq = 102; seq <= 200; seq += 2) EXPECT_EQ(link.count(seq, 2, 7), Seen::fresh);  // every other lost
    EXPECT_EQ(link.lost, 50u);
    EXPECT_NEAR(link.loss, 0.5, 0.05);
    for (uint64_t seq = 201; seq <= 400; ++seq) link.count(seq, 3, 7);  // none lost for 200 beats
    EXPECT_LT(link.loss, 0.01);
    EXPECT_EQ(link.count(390, 4, 7), Seen::again) << "late";
    EXPECT_EQ(link.count(400, 4, 7), Seen::again) << "twice";
    EXPECT_EQ(link.count(10'000, 6, 7), Seen::fresh);
    EXPECT_EQ(link.lost, 50u + Core::BeatLink::kRemembered) << "a long gap counts at most kRemembered";
}

// A beat's number never moves back within its sender's life: one far behind is a replay, whatever its age,
// and is counted as one; an earlier life's beat too. A new life (a higher incarnation) starts afresh, even
// numbered lower (its clock set back), and its first beat counts no loss.
TEST(BeatLink, NumbersNeverMoveBackWithinALife) {
    using Seen = Core::BeatLink::Seen;
    Core::BeatLink link;
    for (uint64_t seq = 1000; seq < 1100; ++seq) ASSERT_EQ(link.count(seq, 1, 7), Seen::fresh);
    EXPECT_EQ(link.count(1099 - Core::BeatLink::kRemembered, 2, 7), Seen::replay) << "further back than reordering";
    EXPECT_EQ(link.count(5, 2, 7), Seen::replay) << "far back (it once read as a new life's numbering)";
    EXPECT_EQ(link.last_seq, 1099u) << "moved back";
    EXPECT_EQ(link.count(1100, 3, 6), Seen::replay) << "an earlier life's beat";
    EXPECT_EQ(link.count(1100, 3, 7), Seen::fresh);
    EXPECT_EQ(link.lost, 0u);
    EXPECT_EQ(link.count(20, 4, 8), Seen::fresh) << "a new life, numbered from a clock set back";
    EXPECT_EQ(link.lost, 0u) << "a new life's first beat counts no loss";
    EXPECT_EQ(link.count(21, 5, 8), Seen::fresh);
    EXPECT_EQ(link.count(1100, 5, 7), Seen::replay) << "the old life is gone";
}

// A captured beat sent again many times, from another address too: no loss counted, the sender not heard
// (so a stopped peer still becomes suspect), each counted as a replay.
TEST_F(TwoSides, AReplayedBeatIsCountedAndChangesNothing) {
    a.impl.beats.send_all();
    const std::vector<uint8_t> captured = a.wire.sent[0].second;
    for (int i = 0; i < 80; ++i) a.impl.beats.send_all();  // a's life goes on past the captured one
    a.deliver(b);
    const Core::BeatLink before = b.link_of("eu/a");
    ASSERT_EQ(before.received, 81u);
    const uint64_t heard = b.status_of(a.at).last_beat_ms;
    const uint64_t replays = b.impl.counters.rejected_replay.load();
    b.clock.advance(b.impl.suspect_after() + 1);  // a stopped: nothing new from it
    for (int i = 0; i < 20; ++i) {
        b.impl.beats.on_beat(captured.data(), captured.size(), i % 2 ? a.at : sa("192.0.2.66:5301"));
    }
    const Core::BeatLink after = b.link_of("eu/a");
    EXPECT_EQ(after.last_seq, before.last_seq);
    EXPECT_EQ(after.lost, 0u);
    EXPECT_EQ(after.received, before.received);
    EXPECT_EQ(b.status_of(a.at).last_beat_ms, heard) << "a replay refreshed the sender";
    EXPECT_EQ(b.impl.counters.rejected_replay.load(), replays + 20);
    b.impl.liveness.check();
    EXPECT_TRUE(b.status_of(a.at).suspect) << "a replay kept a stopped peer from being suspect";
}

// A change is sent again to the members that have not acknowledged it: by echoing our beat (or a later one),
// or by pulling from us since the change.
TEST(Acks, AMemberAcknowledgesByItsEchoOrByAPull) {
    const std::vector<SocketAddress> members{sa("192.0.2.1:53"), sa("192.0.2.2:53"), sa("192.0.2.3:53"),
                                             sa("192.0.2.4:53")};
    std::map<SocketAddress, uint64_t> echoes{{members[0], 7}, {members[1], 6}, {members[2], 8}};
    std::map<Address, uint64_t> pulled_at{{members[1].address, 5000}, {members[3].address, 4999}};
    auto echoed = [&](const SocketAddress& m) { return echoes.count(m) ? echoes.at(m) : uint64_t{0}; };
    // Our change was beat 7 at 5000 ms: 1 echoed it, 3 a later one, 2 pulled at the change; 4 pulled before it.
    auto still = Beats::still_unacked(members, 7, 5000, echoed, pulled_at);
    EXPECT_EQ(still, std::vector<SocketAddress>{members[3]});
}

// Each round's lead is the next member due, in turn; a member heard by beats lately is not due until its beats
// stop for two rounds, it relayed news, or ten rounds pass without a pull.
TEST(Rounds, LeadsGoRoundTheMembersDue) {
    const uint64_t interval = 1000, now = 1'000'000;
    const std::vector<SocketAddress> members{sa("192.0.2.1:53"), sa("192.0.2.2:53"), sa("192.0.2.3:53")};
    std::map<SocketAddress, PeerStatus> status;
    size_t leads = 7;
    std::vector<SocketAddress> order;
    for (int round = 0; round < 3; ++round) {
        auto plan = Pulls::plan_round(members, status, {}, now, interval, leads);
        ASSERT_TRUE(plan.lead);
        EXPECT_EQ(plan.rest.size(), 2u);
        order.push_back(*plan.lead);
    }
    EXPECT_EQ(leads, 10u);
    EXPECT_EQ(order, (std::vector<SocketAddress>{members[1], members[2], members[0]}));  // from 7 % 3, in turn

    for (const auto& m : members) status[m].last_beat_ms = now - 2 * interval, status[m].last_ok_ms = now - 5000;
    EXPECT_FALSE(Pulls::plan_round(members, status, {}, now, interval, leads).lead) << "all heard lately by beats";
    auto relay = Pulls::plan_round(members, status, {members[2]}, now, interval, leads);
    EXPECT_EQ(relay.lead, members[2]);
    EXPECT_TRUE(relay.rest.empty());
    status[members[0]].last_beat_ms = now - 2 * interval - 1;                       // beats stopped
    status[members[1]].last_ok_ms = now - Pulls::kPullAtLeastEvery * interval - 1;  // not pulled for ten rounds
    auto due = Pulls::plan_round(members, status, {}, now, interval, leads);
    ASSERT_TRUE(due.lead);
    std::set<SocketAddress> pulled{*due.lead};
    pulled.insert(due.rest.begin(), due.rest.end());
    EXPECT_EQ(pulled, (std::set<SocketAddress>{members[0], members[1]}));
}

TEST(Rounds, ASecondConnectionWaitsThreeTimesTheUsualWithinBounds) {
    EXPECT_EQ(Pulls::hedge_ms(0), 200u);  // nothing measured yet
    EXPECT_EQ(Pulls::hedge_ms(100), 300u);
    EXPECT_EQ(Pulls::hedge_ms(250), 750u);
    EXPECT_EQ(Pulls::hedge_ms(400), 900u) << "before Linux sends a lost SYN again";
}

// A pull from eu/a (its clock at the real time: a real server's report carries its real start) to a listener of the
// test's own, whose loop the test turns itself; pull() starts it and reads the whole request at the listener.
struct PullToListener : ::testing::Test {
    Fd listener{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    Fd conn;
    std::string member;
    std::unique_ptr<Side> side;
    SocketAddress peer;
    std::vector<uint8_t> request;

    void SetUp() override {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(0x7f000001);
        ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        socklen_t l = sizeof a;
        ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &l);
        ASSERT_EQ(::listen(listener.get(), 4), 0);
        member = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
        std::string yaml = config("eu", "a", 1, 2);
        yaml.replace(yaml.find("127.0.0.2:5301"), 14, member);
        side = std::make_unique<Side>(yaml, "127.0.0.1:5301");
        const auto now_ms = static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count());
        side->clock.advance(now_ms - side->clock.wall_ms());
        ASSERT_EQ(uv_loop_init(&side->impl.loop), 0);
        ASSERT_EQ(uv_async_init(&side->impl.loop, &side->impl.wake, [](uv_async_t*) {}), 0);  // a merge wakes it
        side->impl.running = true;
        peer = sa(member);
    }
    void TearDown() override {
        side->impl.running = false;
        uv_close(reinterpret_cast<uv_handle_t*>(&side->impl.wake), nullptr);
        for (int i = 0; i < 100 && uv_loop_alive(&side->impl.loop); ++i) uv_run(&side->impl.loop, UV_RUN_NOWAIT);
        EXPECT_EQ(uv_loop_close(&side->impl.loop), 0);
    }
    // Starts the pull and turns the loop until the listener has the whole request (false: it never came).
    bool pull() {
        side->impl.pulls.exchange(peer, false);
        for (int i = 0; i < 500 && (request.size() < 2 || request.size() < 2u + wire::get16(request.data())); ++i) {
            uv_run(&side->impl.loop, UV_RUN_NOWAIT);
            if (!conn) conn = Fd(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
            uint8_t buf[4096];
            if (ssize_t n = conn ? ::recv(conn.get(), buf, sizeof buf, 0) : -1; n > 0)
                request.insert(request.end(), buf, buf + n);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return request.size() >= 2u + wire::kHeaderSize && request.size() == 2u + wire::get16(request.data());
    }
};

// A pull whose answer came while the loop was away (a busy CPU): the loop's next turn runs the timeout's timer
// before it reads the socket, and took the answer waiting there for the peer's silence. The listener answers
// REFUSED while the loop does not turn for longer than the pull's timeout (2 s). The pull ends on the answer,
// not in a timeout.
TEST_F(PullToListener, AnAnswerThatCameWhileTheLoopWasAwayIsReadBeforeTheTimeout) {
    ASSERT_TRUE(pull()) << "no request";
    const uint8_t refused[] = {0, 12, request[2], request[3], 0x80, 5, 0, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_EQ(::send(conn.get(), refused, sizeof refused, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof refused));
    std::this_thread::sleep_for(std::chrono::milliseconds(2300));  // away past the timeout
    for (int i = 0; i < 20 && side->status_of(peer).exchanges == 0; ++i) uv_run(&side->impl.loop, UV_RUN_ONCE);
    EXPECT_EQ(side->status_of(peer).last_error, "peer answered REFUSED");
}

// A transfer read as TCP hands it over: a message split across reads, several in one read, a length's two
// bytes apart. The puller reads each message where it lies in its input and drops what it read once all are
// read (Pulls::on_data); whatever the pieces, the report arrives whole and the pull ends well. The listener
// answers the pull with what a real server (us/b, 3,000 hosts: many messages) answers its request.
TEST_F(PullToListener, ATransferInPiecesOfAnySizeArrivesWhole) {
    Service server(test::config_from(config("us", "b", 2, 1)), nullptr);
    server.set_own_hosts(test::hosts(3000));
    ASSERT_TRUE(pull()) << "no request";
    std::vector<std::vector<uint8_t>> messages;
    ASSERT_EQ(server.handle(request.data() + 2, request.size() - 2, test::address_of("127.0.0.1"), messages),
              Service::Handled::answered_member);
    ASSERT_GE(messages.size(), 4u) << "3,000 hosts take several messages";
    std::vector<uint8_t> stream;  // the messages as TCP carries them: each after its length
    for (const auto& m : messages) {
        stream.push_back(static_cast<uint8_t>(m.size() >> 8)), stream.push_back(static_cast<uint8_t>(m.size()));
        stream.insert(stream.end(), m.begin(), m.end());
    }
    // Pieces of 1 byte (a length split), a few bytes, part of a message, and more than two messages at once.
    uv_loop_t& loop = side->impl.loop;
    const size_t sizes[] = {1, 3, 1000, 7, 40000, 1, 90000, 12345};
    size_t sent = 0;
    for (size_t k = 0; sent < stream.size(); ++k) {
        const size_t n = std::min(sizes[k % std::size(sizes)], stream.size() - sent);
        for (size_t off = 0; off < n;) {  // the kernel may take part of it: the rest after a turn of the loop
            ssize_t w = ::send(conn.get(), stream.data() + sent + off, n - off, MSG_NOSIGNAL);
            if (w > 0) off += static_cast<size_t>(w);
            uv_run(&loop, UV_RUN_NOWAIT);
        }
        sent += n;
        for (int turn = 0; turn < 3; ++turn) uv_run(&loop, UV_RUN_NOWAIT);  // read before the next piece
    }
    for (int i = 0; i < 500 && side->status_of(peer).exchanges == 0; ++i) {
        uv_run(&loop, UV_RUN_NOWAIT);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(side->status_of(peer).last_error, "");
    EXPECT_TRUE(side->status_of(peer).reachable);
    MutexLock lock(side->impl.mu);
    auto it = side->impl.store.known().find("us/b");
    ASSERT_NE(it, side->impl.store.known().end()) << "the report did not arrive";
    const auto want = test::hosts(3000);
    const std::vector<HostEntry>& got = it->second.state.hosts;
    ASSERT_EQ(got.size(), want.size());
    std::map<std::string, const HostEntry*> by_name;  // the store keeps them in name order
    for (const auto& h : got) by_name[h.host.str()] = &h;
    for (const auto& w : want) {
        auto g = by_name.find(w.host.str());
        ASSERT_NE(g, by_name.end()) << w.host;
        EXPECT_EQ(g->second->endpoints, w.endpoints) << w.host;
    }
}

}  // namespace
}  // namespace glbd::sync
