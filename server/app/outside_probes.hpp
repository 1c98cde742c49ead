// server/app/outside_probes — this instance's outside probes, as the daemon runs them (control thread): which
// other clusters' endpoints it probes (sync/outside.hpp, read again when the live reports change), a checker
// of their own for them (health::kOutsideRole: thread glbd-outside), the intervals stretched under
// health.outside.maxProbesPerSecond, and what they find going into this instance's report.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "conf/config.hpp"
#include "sync/health/checker.hpp"
#include "sync/outside.hpp"
#include "sync/service.hpp"

namespace glbd {
namespace metrics {
class Writer;
}

class OutsideProbes {
public:
    // The TTL of a dead cluster's entries kept by its vantages (health.outside.keepDead), as fail-open's.
    static constexpr uint32_t kKeptTtl = 10;
    // `changed` runs on the checker's thread when a verdict changes (it wakes the control loop).
    explicit OutsideProbes(std::function<void()> changed) : changed_(std::move(changed)) {}
    ~OutsideProbes() { stop(); }
    OutsideProbes(const OutsideProbes&) = delete;
    OutsideProbes& operator=(const OutsideProbes&) = delete;

    // Each rebuild: the targets and the fleet's verdict again when the live reports changed (a new checker,
    // carrying what the last one knew, when the targets differ), and the verdicts into this instance's report.
    // Returns in how many ms a rebuild is due (a dead cluster's keepDead ends, or a batch of verdicts is to be
    // published), or 0.
    uint64_t update(const conf::Config& config, sync::Service& sync);
    // The view with the fleet's verdict: each endpoint its own cluster calls healthy and a quorum of its
    // vantages fails is withdrawn. A cluster with nothing withdrawn stays the same object (so does one whose
    // withdrawals and entries did not change), so the snapshot builder keeps what it built of it.
    [[nodiscard]] SharedView apply(SharedView view);
    // The fleet's verdict as last read (shared: the admin thread may hold it while the next one is made).
    [[nodiscard]] std::shared_ptr<const sync::FleetVerdicts> fleet() const { return fleet_; }
    // The fleet's verdict on `cluster`'s (host, endpoint), explained: each vantage's part and whether it
    // counts, and what the fleet made of it.
    struct Explained {
        std::string cluster;  // the endpoint's
        std::vector<health::outside::Vantage> vantages;
        bool failed = false;  // a quorum of them fails it (withdrawn where its cluster calls it healthy)
        bool kept = false;    // its cluster dead, a quorum of them reaches it, within keepDead
    };
    [[nodiscard]] Explained explain(const std::string& cluster, const std::string& host, const Endpoint& endpoint,
                                    unsigned vantages) const;
    // A few series at any size: targets, the stretch, probes, published verdicts, the fleet's withdrawals
    // and keepings, the vantages cut off.
    void write_metrics(metrics::Writer& m) const;
    void stop();

    [[nodiscard]] const std::vector<sync::OutsideTarget>& targets() const { return targets_; }
    [[nodiscard]] double stretch() const { return stretch_; }  // >= 1: how far the cap stretched the intervals
    [[nodiscard]] health::States states() const { return checker_ ? checker_->states() : health::States{}; }
    // What the probes found, by cluster (sync::OutsideVerdicts).
    [[nodiscard]] sync::OutsideMap verdicts() const;

private:
    void restart(const conf::Config& config);
    std::function<void()> changed_;
    std::unique_ptr<health::Checker> checker_;
    sync::OutsideTargets choice_;  // which endpoints, kept per origin between changes
    std::vector<sync::OutsideTarget> targets_;
    uint64_t fingerprint_ = 0;  // of the live reports the targets and the fleet's verdict were read from
    std::shared_ptr<const sync::FleetVerdicts> fleet_ = std::make_shared<const sync::FleetVerdicts>();
    // What fleet_ was read from (explain): the live reports, and their vantages' side (pointing into them).
    std::vector<sync::Service::InstanceStatus> instances_;
    std::vector<sync::LiveReport> reports_;
    std::unique_ptr<const sync::Vantages> vantages_;
    uint64_t fleet_generation_ = 0;  // bumped when fleet_ changes
    // Each cluster view given to apply() with withdrawals, and what it gave for it then.
    struct Applied {
        std::shared_ptr<const ClusterView> in, out;
        uint64_t fleet_generation = 0;
    };
    std::map<std::string, Applied> applied_;
    double stretch_ = 1;
    // What the probes found (current_), what this instance's report says (published_), since when a change
    // waits (steady ms; 0: none), and how long a change waits for those that come with it.
    sync::OutsideMap current_, published_;
    uint64_t pending_since_ = 0, window_ms_ = 0;
    uint64_t generation_ = 0;   // bumped with each new checker (or none)
    uint64_t verdicts_of_ = 0;  // the checker and its count of changes the report's verdicts were made from
    uint64_t verdicts_at_ = 0;
};

}  // namespace glbd
