#include "server/app/outside_probes.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "resolver/base/clock.hpp"
#include "resolver/base/fnv.hpp"
#include "resolver/base/metrics.hpp"
#include "sync/health/outside/fleet.hpp"

namespace glbd {

namespace {

// What the targets depend on: each known origin's life, version, liveness (and, dead, whether within
// keepDead) and whether it probes from outside (FNV-1a over them; the store lists origins in order).
uint64_t fingerprint(const std::vector<sync::Service::InstanceStatus>& instances, uint64_t keep_dead_ms) {
    Fnv1a h;
    auto mix = [&h](std::string_view s) { h.add(s).add_byte(0xff); };
    for (const auto& i : instances) {
        const sync::InstanceState& s = i.known.state;
        mix(s.origin());
        mix(std::to_string(s.incarnation) + ' ' + std::to_string(s.version) +
            (i.alive                        ? " a"
             : i.dead_for_ms < keep_dead_ms ? " k"
                                            : " d") +
            (s.probes_outside ? " o" : " -"));
    }
    return h.value();
}

}  // namespace

uint64_t OutsideProbes::update(const conf::Config& config, sync::Service& sync) {
    if (!config.peers) return 0;
    const auto& o = config.health.outside;
    const auto keep_dead = static_cast<uint64_t>(o.keep_dead.count());
    auto instances = sync.instances();
    uint64_t next = 0;  // the soonest a dead instance's keepDead ends
    for (const auto& i : instances) {
        if (!i.alive && i.dead_for_ms < keep_dead && (!next || keep_dead - i.dead_for_ms < next))
            next = keep_dead - i.dead_for_ms;
    }
    if (uint64_t fp = fingerprint(instances, keep_dead); fp != fingerprint_) {
        fingerprint_ = fp;
        instances_ = std::move(instances);
        reports_.clear();
        reports_.reserve(instances_.size());
        for (const auto& i : instances_) reports_.push_back({&i.known.state, i.alive, i.dead_for_ms});
        vantages_ = std::make_unique<const sync::Vantages>(reports_);
        // The fleet's verdict is every server's to apply, whether it probes from outside or not.
        auto fleet = sync::fleet_verdicts(reports_, *vantages_, o.vantages, o.quorum, keep_dead);
        if (!(fleet == *fleet_)) {
            fleet_ = std::make_shared<const sync::FleetVerdicts>(std::move(fleet));
            ++fleet_generation_;
        }
        const auto& targets =
            choice_.update(reports_, config.cluster.id, config.cluster.instance, o.vantages, keep_dead,
                           config.kubernetes ? config.kubernetes->deny_networks : std::vector<Prefix>{});
        if (targets != targets_ || !checker_) {
            targets_ = targets;
            restart(config);
        }
    }
    // The verdicts again only when a result came or flipped (the checker counts them) or the checker is new.
    const uint64_t changes = checker_ ? checker_->health_changes() : 0;
    if (generation_ != verdicts_of_ || changes != verdicts_at_) {
        verdicts_of_ = generation_, verdicts_at_ = changes;
        current_ = verdicts();
    }
    // Published in batches: a change waits one window (an interval and a timeout) for those that come with it,
    // so that a vantage cut off itself publishes every failure at once and is judged cut off at once, never
    // counted on a part of them (nor, recovering, on what is left).
    const uint64_t now = steady_ms();
    if (current_ == published_) {
        pending_since_ = 0;
    } else if (pending_since_ == 0) {
        pending_since_ = now;
    }
    if (current_ != published_ && now >= pending_since_ + window_ms_) {
        published_ = current_;
        pending_since_ = 0;
        sync.set_own_outside(published_);
    }
    if (pending_since_) {
        const uint64_t due = pending_since_ + window_ms_ > now ? pending_since_ + window_ms_ - now : 1;
        next = next ? std::min(next, due) : due;
    }
    return next;
}

void OutsideProbes::restart(const conf::Config& config) {
    health::States previous = states();
    stop();
    ++generation_;
    if (targets_.empty()) return;
    // The cap: the probes a second at the checks' own intervals, and every interval stretched alike past it.
    double per_second = 0;
    for (const auto& t : targets_) per_second += 1000.0 / static_cast<double>(t.check.check.interval.count());
    stretch_ = health::outside::stretch(per_second, config.health.outside.max_probes_per_second);
    window_ms_ = 0;
    for (const auto& t : targets_) {
        window_ms_ = std::max<uint64_t>(
            window_ms_, static_cast<uint64_t>(static_cast<double>(t.check.check.interval.count()) * stretch_) +
                            static_cast<uint64_t>(t.check.check.timeout.count()));
    }
    conf::Config c;
    c.cluster = config.cluster;
    c.health = config.health;
    c.hosts.reserve(targets_.size());
    for (const auto& t : targets_) {
        model::Host h;
        h.name = t.host;
        h.endpoints = {t.endpoint};
        h.health_check = t.check.check;
        h.health_check->interval = std::chrono::milliseconds(
            static_cast<int64_t>(std::ceil(static_cast<double>(h.health_check->interval.count()) * stretch_)));
        c.hosts.push_back(std::move(h));
    }
    checker_ = std::make_unique<health::Checker>(c, changed_, previous, health::CheckerSeams{}, health::kOutsideRole);
    spdlog::info("outside health: probing {} endpoint(s) of other clusters{}", targets_.size(),
                 stretch_ > 1 ? fmt::format(" (intervals stretched x{:.2f}: health.outside.maxProbesPerSecond {})",
                                            stretch_, config.health.outside.max_probes_per_second)
                              : "");
    checker_->start();
}

void OutsideProbes::stop() {
    if (checker_) checker_->stop();
    checker_.reset();
}

SharedView OutsideProbes::apply(SharedView view) {
    std::map<std::string, Applied> now;
    for (auto& cluster : view) {
        auto failed = fleet_->failed.find(cluster->id);
        auto kept = fleet_->kept.find(cluster->id);
        const bool keeping = !cluster->alive && kept != fleet_->kept.end();
        if (failed == fleet_->failed.end() && !keeping) continue;
        Applied& was = applied_[cluster->id];
        if (was.in != cluster || was.fleet_generation != fleet_generation_) {
            auto changed = std::make_shared<ClusterView>(*cluster);
            bool any = false;
            if (keeping) {
                // A dead cluster's entries whose endpoints its vantages reach stay, those endpoints alone, with
                // the short TTL (a resolver asks again soon: the glbd may come back, or the keeping end).
                std::vector<HostEntry> hosts;
                for (const HostEntry& h : cluster->hosts.vec()) {
                    HostEntry k = h;
                    std::erase_if(k.endpoints, [&](const EndpointState& ep) {
                        return !kept->second.count({h.host.str(), ep.target});
                    });
                    if (k.endpoints.empty()) continue;
                    for (EndpointState& ep : k.endpoints) ep.healthy = true;
                    k.ttl = std::min(k.ttl, kKeptTtl);
                    hosts.push_back(std::move(k));
                }
                changed->hosts = std::move(hosts);
                changed->alive = any = true;
                changed->tally = std::make_shared<const HostTally>(changed->hosts.vec());
            } else {
                for (HostEntry& h : changed->hosts) {  // (the list is copied only here, for a cluster with withdrawals)
                    const std::string host = h.host.str();
                    for (EndpointState& ep : h.endpoints) {
                        if (ep.healthy && failed->second.count({host, ep.target})) ep.healthy = false, any = true;
                    }
                }
                if (any) changed->tally = std::make_shared<const HostTally>(changed->hosts.vec());
            }
            was = Applied{cluster, any ? std::shared_ptr<const ClusterView>(std::move(changed)) : cluster,
                          fleet_generation_};
        }
        cluster = was.out;
        now[cluster->id] = was;
    }
    applied_ = std::move(now);
    return view;
}

sync::OutsideMap OutsideProbes::verdicts() const {
    sync::OutsideMap out;
    if (!checker_) return out;
    const health::States states = checker_->states();
    for (const auto& t : targets_) {
        auto it = states.find({t.host, t.endpoint});
        if (it == states.end() || !it->second.known) continue;
        sync::OutsideVerdicts& v = out[t.cluster];
        ++v.probed;
        if (!it->second.healthy) v.failing.emplace_back(t.host, t.endpoint);
    }
    for (auto& [cluster, v] : out) {
        std::sort(v.failing.begin(), v.failing.end());
        v.failing.erase(std::unique(v.failing.begin(), v.failing.end()), v.failing.end());
    }
    return out;
}

OutsideProbes::Explained OutsideProbes::explain(const std::string& cluster, const std::string& host,
                                                const Endpoint& endpoint, unsigned vantages) const {
    Explained e;
    e.cluster = cluster;
    if (vantages_) e.vantages = vantages_->seen(cluster, host, endpoint, vantages);
    e.failed = sync::FleetVerdicts::has(fleet_->failed, cluster, host, endpoint);
    e.kept = sync::FleetVerdicts::has(fleet_->kept, cluster, host, endpoint);
    return e;
}

void OutsideProbes::write_metrics(metrics::Writer& m) const {
    m.one("glbd_outside_targets", "gauge", "Other clusters' endpoints this instance probes as their vantage.",
          static_cast<double>(targets_.size()));
    m.one("glbd_outside_interval_stretch", "gauge",
          "How far health.outside.maxProbesPerSecond stretched the outside probes' intervals (1: not at all).",
          stretch_);
    uint64_t probes = 0, failures = 0;
    for (const auto& [k, st] : states()) probes += st.probes, failures += st.failures;
    m.one("glbd_outside_probes_total", "counter",
          "Outside probes run (this checker's, since the targets last changed).", static_cast<double>(probes));
    m.one("glbd_outside_probe_failures_total", "counter", "Failed outside probes (the same).",
          static_cast<double>(failures));
    uint64_t probed = 0, failing = 0;
    for (const auto& [c, v] : published_) probed += v.probed, failing += v.failing.size();
    m.some("glbd_outside_verdicts", "gauge", "This instance's published outside verdicts, by verdict.",
           {{"verdict=\"reaches\"", static_cast<double>(probed - failing)},
            {"verdict=\"fails\"", static_cast<double>(failing)}});
    auto count = [](const auto& by_cluster) {
        size_t n = 0;
        for (const auto& [c, set] : by_cluster) n += set.size();
        return static_cast<double>(n);
    };
    m.some("glbd_fleet_endpoints", "gauge",
           "Endpoints the fleet's verdict changes: failed (by a quorum of their vantages: withdrawn where their own "
           "cluster calls them healthy), kept "
           "(a dead cluster's, reached by a quorum of vantages, within keepDead).",
           {{"verdict=\"failed\"", count(fleet_->failed)}, {"verdict=\"kept\"", count(fleet_->kept)}});
    m.one("glbd_outside_vantages_cut_off", "gauge",
          "Vantage clusters whose outside verdicts do not count: they fail nearly everything they probe.",
          static_cast<double>(fleet_->cut_off.size()));
}

}  // namespace glbd
