// sync/kube/source — this cluster's hosts from Kuadrant DNSRecords: one Watcher per namespace (or one for
// the whole cluster), the records selected by the mode (coredns: labelled kuadrant.io/coredns-zone-name with
// one of glbd's zones; controller: every record whose rootHost lies in glbd's zones), mapped by records.hpp.
// The watchers run on their threads; collect() runs on the control thread. Never throws after construction.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "conf/config.hpp"
#include "resolver/base/mutex.hpp"
#include "sync/health/checker.hpp"
#include "sync/kube/client.hpp"

namespace glbd::kube {

class Source {
public:
    // Throws std::runtime_error when the API server cannot be located (no kubeconfig, not in a cluster).
    Source(const conf::Config& config, const std::function<void()>& on_change);
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

    // Controller mode: the status each record should have now (Ready from the mapping, Healthy from the
    // probes of its hosts), written by the status thread with a merge patch to /status when it differs from
    // what the record shows. Control thread.
    void update_statuses(const health::States& health);
    [[nodiscard]] bool controller() const { return controller_; }
    [[nodiscard]] uint64_t statuses_written() const { return written_.load(); }

    struct Stats {
        uint64_t events = 0, relists = 0, errors = 0, bad_events = 0, last_event_ms = 0;
        bool synced = true;  // every watcher has listed at least once
    };
    [[nodiscard]] Stats stats() const;
    [[nodiscard]] std::string label_selector() const { return selector_; }

private:
    void write_statuses();  // the status thread
    bool controller_ = false;
    std::unique_ptr<Watcher> writer_;  // not started: its requests are the status thread's
    std::thread status_thread_;
    Mutex status_mu_;
    CondVar status_cv_;
    std::map<std::string, nlohmann::json> pending_ GLBD_GUARDED_BY(status_mu_);  // key -> status to write
    bool status_stop_ GLBD_GUARDED_BY(status_mu_) = false;
    std::atomic<uint64_t> written_{0};
    std::vector<conf::Zone> zones_;
    std::string selector_;
    std::vector<std::unique_ptr<Watcher>> watchers_;
    std::set<std::string> logged_;  // "key@resourceVersion" of invalid records already logged
};

}  // namespace glbd::kube
namespace glbd::metrics {
class Writer;
}
namespace glbd::kube {
// The source's counters as Prometheus families (sync/kube/metrics.cpp); `shadowed`: hosts the config file
// named too (the daemon counts them).
void write_metrics(metrics::Writer& out, const Source& source, const Source::Collected& counts, uint64_t shadowed);

// The label selector of coredns mode for these zones.
std::string coredns_selector(const std::vector<conf::Zone>& zones);

}  // namespace glbd::kube
