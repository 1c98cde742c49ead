// Helpers of the sync tests (sync_test, codec_test, transfer_test, statedir_test): an origin of one host, a config with
// peers and a stateDir, hosts made by the thousand, a stateDir with a state.json written by hand, a peer's origin as
// glbd writes it.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "resolver/model/global_view.hpp"
#include "sync/state.hpp"
#include "tests/dns_util.hpp"

namespace glbd::test {

// One origin of one host, shop.glb.test, with these endpoints (healthy or not).
inline sync::InstanceState inst(const std::string& cluster, const std::string& instance, uint64_t version,
                                uint64_t heartbeat,
                                std::vector<std::pair<std::string, bool>> eps = {{"192.0.2.1", true}}) {
    sync::InstanceState s{cluster, instance, version, heartbeat, {}, {}};
    HostEntry h{"shop.glb.test", 60, model::LoadBalancing{100, "IE", false}, {}};
    for (auto& [t, ok] : eps) h.endpoints.push_back(EndpointState{endpoint_of(t), ok});
    s.hosts.push_back(h);
    return s;
}

// A copy: views are temporaries.
inline std::optional<ClusterView> cluster(const GlobalView& v, const std::string& id) {
    for (const auto& c : v) {
        if (c.id == id) return c;
    }
    return std::nullopt;
}

// An origin of instance us/b in its life `incarnation`, with one host of one endpoint (none for "": a state
// whose data does not matter).
inline sync::InstanceState life(uint64_t incarnation, uint64_t version, uint64_t heartbeat, const std::string& ep) {
    std::vector<EndpointState> eps;
    if (!ep.empty()) eps.push_back({endpoint_of(ep), true});
    return sync::InstanceState{"us", "b",        version, heartbeat, {HostEntry{"a.glb.test", 60, std::nullopt, eps}},
                               {},   incarnation};
}

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
        HostEntry h{"h" + std::to_string(i) + tag + ".glb.test", 60, model::LoadBalancing{100, "IE", i == 0}, {}};
        h.endpoints.push_back(EndpointState{endpoint_of("192.0.2." + std::to_string(i % 250 + 1)), true});
        h.endpoints.push_back(EndpointState{endpoint_of("2001:db8::" + std::to_string(i % 9999 + 1)), i % 3 != 0});
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
