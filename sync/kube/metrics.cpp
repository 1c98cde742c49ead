// The Kubernetes source's counters as Prometheus families: records by state, events, lists, errors, sync.
#include <algorithm>
#include <chrono>

#include "resolver/base/clock.hpp"
#include "resolver/base/metrics.hpp"
#include "sync/kube/source.hpp"

namespace glbd::kube {

void write_metrics(metrics::Writer& m, const Source& kube, const Source::Collected& counts, uint64_t shadowed) {
    auto ks = kube.stats();
    m.some("glbd_kubernetes_records", "gauge",
           "DNSRecords held, by state: valid, invalid (skipped), other_zone (for a zone this glbd does not serve), "
           "not_input (not read in this mode), deleting (delegate mode: withdrawn, being deleted).",
           {{"state=\"valid\"", static_cast<double>(counts.valid)},
            {"state=\"invalid\"", static_cast<double>(counts.invalid)},
            {"state=\"other_zone\"", static_cast<double>(counts.other_zone)},
            {"state=\"not_input\"", static_cast<double>(counts.not_input)},
            {"state=\"deleting\"", static_cast<double>(counts.deleting)}});
    m.one("glbd_kubernetes_names_refused", "gauge",
          "Names the records publish that are refused now (out of scope, contested, conflicting).",
          static_cast<double>(counts.refused));
    m.one("glbd_kubernetes_refusals_total", "counter",
          "Refusals logged: a record refused whole or one of its names, once per record version.",
          static_cast<double>(kube.refusals_total()));
    m.one("glbd_kubernetes_records_mapped_total", "counter", "Records mapped (once per resourceVersion).",
          static_cast<double>(kube.maps_total()));
    m.one("glbd_kubernetes_objects_over_limit_total", "counter",
          "Objects kept as a name only (or not at all): over 256 KiB, past 64 MiB held or 20,000 objects.",
          static_cast<double>(ks.over_limit));
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
