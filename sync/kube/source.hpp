// sync/kube/source — this cluster's hosts from Kuadrant DNSRecords: one Watcher per namespace (or one for
// the whole cluster), the records selected by the mode (coredns: labelled kuadrant.io/coredns-zone-name with
// one of glbd's zones; controller: every record whose rootHost lies in glbd's zones), mapped by records.hpp.
// The watchers run on their threads; collect() runs on the control thread. Never throws after construction.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "sync/kube/client.hpp"

namespace glbd::kube {

class Source {
public:
    // Throws std::runtime_error when the API server cannot be located (no kubeconfig, not in a cluster).
    Source(const conf::Config& config, std::function<void()> on_change);
    ~Source();
    void start();
    void stop();
    // A reload: the zones records are matched against (the kubernetes section itself applies at restart).
    void set_zones(std::vector<conf::Zone> zones);

    struct Collected {
        std::vector<conf::Host> hosts;              // sorted by name
        std::map<std::string, std::string> source;  // host name -> "namespace/name"
        size_t valid = 0, invalid = 0, other_zone = 0;
    };
    // Maps every record held now. Each invalid record is logged once per resourceVersion.
    Collected collect();

    struct Stats {
        uint64_t events = 0, relists = 0, errors = 0, bad_events = 0, last_event_ms = 0;
        bool synced = true;  // every watcher has listed at least once
    };
    [[nodiscard]] Stats stats() const;
    [[nodiscard]] std::string label_selector() const { return selector_; }

private:
    std::vector<conf::Zone> zones_;
    std::string selector_;
    std::vector<std::unique_ptr<Watcher>> watchers_;
    std::set<std::string> logged_;  // "key@resourceVersion" of invalid records already logged
};

// The label selector of coredns mode for these zones.
std::string coredns_selector(const std::vector<conf::Zone>& zones);

}  // namespace glbd::kube
