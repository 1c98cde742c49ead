// Helpers of the sync tests (transfer_test, statedir_test): a config with peers and a stateDir, hosts made by
// the thousand, a stateDir with a state.json written by hand, a peer's origin as glbd writes it.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "resolver/global_view.hpp"
#include "tests/dns_util.hpp"

namespace glbd::test {

inline std::string sync_config(const std::string& state_dir = "") {
    std::string c = R"(cluster: {id: eu, instance: a}
listen: {dns: ["127.0.0.1:5399"]}
zones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}]
peers:
  key: {name: glb-sync, secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="}
)";
    if (!state_dir.empty()) c += "stateDir: " + state_dir + "\n";
    return c;
}

inline std::vector<HostEntry> hosts(size_t n, const std::string& tag = "") {
    std::vector<HostEntry> out;
    for (size_t i = 0; i < n; ++i) {
        HostEntry h{"h" + std::to_string(i) + tag + ".glb.test", 60, conf::LoadBalancing{100, "IE", i == 0}, {}};
        h.endpoints.push_back(EndpointState{"192.0.2." + std::to_string(i % 250 + 1), true});
        h.endpoints.push_back(EndpointState{"2001:db8::" + std::to_string(i % 9999 + 1), i % 3 != 0});
        out.push_back(std::move(h));
    }
    return out;
}

// A stateDir holding the given state.json.
struct StateDir : TempDir {
    void write(const std::string& text) const { std::ofstream(*this / "state.json") << text; }
};

// A peer's origin "us/b" saved in a state file, as glbd writes it.
inline std::string us_origin(uint64_t version, const std::string& weight = "50", const std::string& ttl = "30") {
    return R"({"cluster":"us","instance":"b","version":)" + std::to_string(version) + R"(,"heartbeat":)" +
           std::to_string(version) + R"(,"overrides":{},"hosts":[{"host":"shop.glb.test","ttl":)" + ttl +
           R"(,"loadBalancing":{"weight":)" + weight +
           R"(,"geo":"US","defaultGeo":true},"endpoints":[{"target":"198.51.100.1","healthy":true}]}]})";
}

}  // namespace glbd::test
