// server/app/kube_feed — this cluster's hosts from its Kuadrant DNSRecords, as the daemon merges them (sync/kube is
// the reading; this is the feeding): the config file's hosts plus the records' (the file wins, said once per
// host), the records' static records and failover group, stateDir's hosts served until the API's first list,
// a burst of events applied at once, and the statuses controller and delegate mode write (a deletion polled until
// the peers hold the report without it). Control thread; its handles are on the daemon's loop.
#pragma once

#include <uv.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "conf/config.hpp"
#include "resolver/model/global_view.hpp"
#include "sync/health/checker.hpp"
#include "sync/kube/source.hpp"
#include "sync/service.hpp"

namespace glbd {
namespace metrics {
class Writer;
}

// Where this cluster's hosts from DNSRecords come from: host (or static record) -> "namespace/name".
using HostSources = std::unordered_map<std::string, std::string>;

class KubeFeed {
public:
    static constexpr uint64_t kSettleMs = 100;        // a burst of events (a list, a rollout) is applied together
    static constexpr uint64_t kDeletionPollMs = 250;  // while a deletion waits for the peers
    // `changed`: records changed (after kSettleMs); `poll`: a deletion waits (every kDeletionPollMs). Throws
    // std::runtime_error when the API server cannot be located.
    KubeFeed(const conf::Config& config, uv_loop_t* loop, std::function<void()> changed, std::function<void()> poll);
    // What stateDir held of this cluster's records (their hosts, without health checks, and static records):
    // served until the API's first list, so that a restart without the API server withdraws nothing.
    void seed(std::vector<HostEntry> hosts, RecordList records);
    // config.hosts = the file's hosts + the records' (the file wins); the records' failover group to `sync`.
    void merge(conf::Config& config, sync::Service& sync);
    // A reload: the new file's hosts and zones (the kubernetes section itself applies at restart).
    void reload(const conf::Config& next);
    [[nodiscard]] const RecordList& records() const { return records_; }
    [[nodiscard]] std::shared_ptr<const HostSources> sources() const { return sources_; }
    [[nodiscard]] bool writes_status() const { return source_->writes_status(); }
    // The statuses of controller and delegate mode; while a deletion waits, `poll` is called again soon.
    void update_statuses(const health::States& health, const kube::Source::Fleet& fleet);
    void start();
    void stop();                                               // the watchers' threads
    void close();                                              // its handles (the loop completes the closes)
    [[nodiscard]] nlohmann::json json_of(uint64_t now) const;  // /v1/summary's and /v1/state's "kubernetes"
    void write_metrics(metrics::Writer& m) const;

private:
    std::unique_ptr<kube::Source> source_;
    std::vector<model::Host> file_hosts_;  // the config file's
    std::vector<HostEntry> seed_;          // stateDir's, until the first list
    RecordList seed_records_;
    RecordList records_;  // this cluster's static records (from its DNSRecords)
    std::shared_ptr<const HostSources> sources_ = std::make_shared<HostSources>();
    kube::Source::Collected counts_;  // the last collect's counts (hosts left empty)
    std::set<std::string> shadowed_;  // hosts both in the file and in a record (the file wins)
    uint64_t shadowed_total_ = 0;
    std::function<void()> changed_, poll_;
    uv_async_t wake_{};      // from the watchers' threads
    uv_timer_t settle_{};    // applies a burst of events at once
    uv_timer_t deletion_{};  // while a deletion waits for the peers
};

}  // namespace glbd
