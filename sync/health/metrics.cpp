// The health checker's counters as Prometheus families: probes, failures, transitions, and the health this
// instance sees; in all (and endpoints by health) by default, per host and endpoint when asked (a series per
// endpoint: tens of thousands at 10,000 hosts).
#include "resolver/base/metrics.hpp"
#include "sync/health/checker.hpp"

namespace glbd::health {

void write_metrics(metrics::Writer& m, const Checker& checker, bool per_endpoint_series) {
    auto probes = checker.states();
    if (!per_endpoint_series) {
        uint64_t total[3] = {}, healthy = 0;
        for (const auto& [k, st] : probes) {
            total[0] += st.probes, total[1] += st.failures, total[2] += st.transitions;
            healthy += st.healthy ? 1 : 0;
        }
        m.one("glbd_health_probes_total", "counter", "Health probes run.", static_cast<double>(total[0]));
        m.one("glbd_health_probe_failures_total", "counter", "Failed health probes.", static_cast<double>(total[1]));
        m.one("glbd_health_transitions_total", "counter", "Endpoints' healthy/unhealthy transitions.",
              static_cast<double>(total[2]));
        m.some("glbd_endpoints", "gauge", "This cluster's probed endpoints, by the health this instance sees.",
               {{"health=\"healthy\"", static_cast<double>(healthy)},
                {"health=\"unhealthy\"", static_cast<double>(probes.size() - healthy)}});
        return;
    }
    auto per_endpoint = [&](const char* name, const char* type, const char* help, auto value) {
        m.family(name, type, help);
        for (const auto& [k, st] : probes) {
            m.sample(name, metrics::label("host", k.first) + "," + metrics::label("endpoint", k.second.str()),
                     static_cast<double>(value(st)));
        }
    };
    per_endpoint("glbd_health_probes_total", "counter", "Health probes run, by host and endpoint.",
                 [](const EndpointHealth& st) { return st.probes; });
    per_endpoint("glbd_health_probe_failures_total", "counter", "Failed health probes, by host and endpoint.",
                 [](const EndpointHealth& st) { return st.failures; });
    per_endpoint("glbd_health_transitions_total", "counter", "Healthy/unhealthy transitions, by host and endpoint.",
                 [](const EndpointHealth& st) { return st.transitions; });
    per_endpoint("glbd_endpoint_healthy", "gauge", "1 when the endpoint is healthy by this instance's probes.",
                 [](const EndpointHealth& st) { return st.healthy ? 1 : 0; });
}

}  // namespace glbd::health
