// The Kubernetes source's counters as Prometheus families: records by state, events, lists, errors, sync.
#include <algorithm>
#include <chrono>

#include "resolver/base/clock.hpp"
#include "resolver/base/metrics.hpp"
#include "sync/kube/source.hpp"

namespace glbd::kube {

void write_metrics(metrics::Writer& m, const Source& kube, const Source::Collected& counts, uint64_t shadowed) {
    auto ks = kube.stats();
    m.some("glbd_kubernetes_records", "gauge", "DNSRecords held, by state: valid, invalid (skipped), other_zone.",
           {{"state=\"valid\"", static_cast<double>(counts.valid)},
            {"state=\"invalid\"", static_cast<double>(counts.invalid)},
            {"state=\"other_zone\"", static_cast<double>(counts.other_zone)}});
    m.one("glbd_kubernetes_hosts_shadowed_total", "counter",
          "Hosts named by a DNSRecord and by the config file (the file's served).", static_cast<double>(shadowed));
    m.one("glbd_kubernetes_events_total", "counter", "Watch events applied.", static_cast<double>(ks.events));
    m.one("glbd_kubernetes_relists_total", "counter", "Lists of DNSRecords (at start and after 410 Gone).",
          static_cast<double>(ks.relists));
    m.one("glbd_kubernetes_errors_total", "counter", "Failed requests to the API server (retried with backoff).",
          static_cast<double>(ks.errors));
    m.one("glbd_kubernetes_synced", "gauge", "1 once every watch has listed.", ks.synced ? 1 : 0);
    m.family("glbd_kubernetes_last_event_age_seconds", "gauge", "Seconds since the last event or list.");
    double age = ks.last_event_ms ? static_cast<double>(wall_ms() - std::min(wall_ms(), ks.last_event_ms)) / 1000 : -1;
    m.sample("glbd_kubernetes_last_event_age_seconds", "", age);
}

}  // namespace glbd::kube
