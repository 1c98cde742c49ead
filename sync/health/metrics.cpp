// The health checker's counters as Prometheus families, per host and endpoint: probes, failures,
// transitions, and the health this instance sees.
#include "resolver/base/metrics.hpp"
#include "sync/health/checker.hpp"

namespace glbd::health {

void write_metrics(metrics::Writer& m, const Checker& checker) {
    auto probes = checker.states();
    auto per_endpoint = [&](const char* name, const char* type, const char* help, auto value) {
        m.family(name, type, help);
        for (const auto& [k, st] : probes) {
            m.sample(name, metrics::label("host", k.first) + "," + metrics::label("endpoint", k.second),
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
