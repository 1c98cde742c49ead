// `glbd status` and `glbd explain` print what a glbd's admin endpoint says, and some of it is a peer's or a
// DNSRecord's bytes (a decoder's error, a record's source): the terminal gets no control byte but line breaks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/app/status.hpp"

using namespace glbd;

namespace {

// No byte a terminal acts on (C0 controls but the line break, DEL, anything outside ASCII).
bool terminal_safe(const std::string& s) {
    for (unsigned char c : s) {
        if ((c < 0x20 && c != '\n') || c >= 0x7f) return false;
    }
    return true;
}

TEST(Status, ForeignBytesReachTheTerminalEscaped) {
    const std::string evil = "bad origin \x1b[2J\x1b]0;owned\x07\nFORGED LINE \xc3\xa9";
    nlohmann::json state = {
        {"cluster", "eu-1"},
        {"instance", "a"},
        {"serial", 7},
        {"ready", true},
        {"clusters",
         {{{"id", "eu-1"},
           {"alive", true},
           {"instances", {{{"instance", "a"}, {"alive", true}, {"self", true}, {"version", 1}}}}}}},
        {"peers",
         {{{"address", "192.0.2.1:53"},
           {"id", "us-1/b"},
           {"alive", false},
           {"lastSeenMsAgo", 1500},
           {"exchanges", 3},
           {"failures", 1},
           {"lastError", evil}}}},
        {"hosts",
         {{{"name", "shop.glb.test"},
           {"entries",
            {{{"cluster", "eu-1"},
              {"alive", true},
              {"source", "dnsrecord:ns/" + evil},
              {"endpoints", {{{"target", "192.0.2.10"}, {"healthy", true}, {"override", nullptr}}}}}}}}}},
    };
    std::string out = render_status("127.0.0.1:9153", state.dump());
    EXPECT_TRUE(terminal_safe(out)) << out;
    EXPECT_NE(out.find("bad origin \\x1b[2J\\x1b]0;owned\\x07\\x0aFORGED LINE \\xc3\\xa9"), std::string::npos) << out;
    EXPECT_EQ(out.find("\nFORGED"), std::string::npos);
}

// A suspect peer: the time since it was last heard directly as of now, beside the limit it went over (not the
// limit shown as if it were that time, as the reason alone once did).
TEST(Status, ASuspectPeerShowsItsSilenceAndTheLimit) {
    nlohmann::json peer = {{"address", "192.0.2.1:53"},
                           {"id", "us-1/b"},
                           {"alive", true},
                           {"lastSeenMsAgo", 42300},
                           {"exchanges", 3},
                           {"failures", 0},
                           {"suspect", true},
                           {"suspectReason", "nothing directly for over 5000 ms; heard through others"},
                           {"suspectLimitMs", 5000},
                           {"lastDirectMsAgo", 42300}};
    nlohmann::json state = {{"cluster", "eu-1"},
                            {"instance", "a"},
                            {"serial", 7},
                            {"ready", true},
                            {"clusters", nlohmann::json::array()},
                            {"peers", nlohmann::json::array({peer})},
                            {"hosts", nlohmann::json::array()}};
    std::string out = render_status("127.0.0.1:9153", state.dump());
    EXPECT_NE(out.find("SUSPECT: nothing directly for 42.3s (limit 5.0s); heard through others"), std::string::npos)
        << out;
    peer["lastDirectMsAgo"] = nullptr;
    state["peers"] = nlohmann::json::array({peer});
    out = render_status("127.0.0.1:9153", state.dump());
    EXPECT_NE(out.find("SUSPECT: never heard directly (limit 5.0s); heard through others"), std::string::npos) << out;
}

// The fleet's verdict: the outside health line, each endpoint marked, and a table of each vantage's verdict
// beside the inside one; a vantage's name (a peer's bytes) escaped like any other.
TEST(Status, TheFleetsVerdictBesideTheInsideOne) {
    auto outside = [](const char* fleet, nlohmann::json vantages) {
        return nlohmann::json{{"cluster", "c1"}, {"fleet", fleet}, {"vantages", std::move(vantages)}};
    };
    nlohmann::json failed =
        outside("failed", {{{"cluster", "c2"}, {"verdict", "fails"}, {"counts", true}},
                           {{"cluster", "c3\x1b[2J"}, {"verdict", "fails"}, {"counts", true}},
                           {{"cluster", "c4"}, {"verdict", "fails"}, {"counts", false}, {"cutOff", true}}});
    nlohmann::json kept = outside("kept", {{{"cluster", "c2"}, {"verdict", "reaches"}, {"counts", true}}});
    nlohmann::json state = {
        {"cluster", "c2"},
        {"instance", "a"},
        {"serial", 7},
        {"ready", true},
        {"clusters", nlohmann::json::array()},
        {"peers", nlohmann::json::array()},
        {"outside",
         {{"targets", 12}, {"intervalStretch", 1.5}, {"failed", 1}, {"kept", 1}, {"disputed", 1}, {"cutOff", {"c4"}}}},
        {"hosts",
         {{{"name", "app.glb.test"},
           {"entries",
            {{{"cluster", "c1"},
              {"alive", true},
              {"endpoints",
               {{{"target", "192.0.2.1"}, {"healthy", true}, {"override", nullptr}, {"outside", failed}}}}},
             {{"cluster", "c5"},
              {"alive", false},
              {"endpoints",
               {{{"target", "192.0.2.5"}, {"healthy", true}, {"override", nullptr}, {"outside", kept}}}}}}}}}},
    };
    std::string out = render_status("127.0.0.1:9153", state.dump());
    EXPECT_TRUE(terminal_safe(out)) << out;
    EXPECT_NE(out.find("probing 12 endpoint(s) of other clusters, intervals stretched x1.50; the fleet's verdict: 1 "
                       "failed, 1 kept, 1 failed by some vantage; vantages cut off: c4"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("192.0.2.1 up (FAILED by its vantages)"), std::string::npos) << out;
    EXPECT_NE(out.find("192.0.2.5 up (kept by its vantages)"), std::string::npos) << out;
    EXPECT_NE(
        out.find("app.glb.test  192.0.2.1  c1       up      c2 fails, c3\\x1b[2J fails, c4 fails (cut off)  failed"),
        std::string::npos)
        << out;
    EXPECT_NE(out.find("192.0.2.5  c5       up      c2 reaches"), std::string::npos) << out;
    // A field of the wrong type is an error the caller reports, never a crash.
    state["outside"]["intervalStretch"] = "1.5";
    EXPECT_THROW(render_status("127.0.0.1:9153", state.dump()), std::exception);
}

}  // namespace
