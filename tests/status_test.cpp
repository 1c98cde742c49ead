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

}  // namespace
