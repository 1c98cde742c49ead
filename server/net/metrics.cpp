// The DNS server's counters as Prometheus families: queries by transport, rcode and type, drops, truncation,
// rate limiting, fallback and fail-open answers, answer latency, TCP connections.
#include <sstream>
#include <string>

#include "resolver/base/metrics.hpp"
#include "resolver/wire/consts.hpp"
#include "server/net/server.hpp"

namespace glbd {

void write_metrics(metrics::Writer& m, const dnstap::Sink& tap) {
    m.one("glbd_dnstap_frames_total", "counter", "dnstap messages written to the sink.",
          static_cast<double>(tap.written()));
    m.one("glbd_dnstap_dropped_total", "counter",
          "dnstap messages dropped: a query thread's queue was full, or the sink was gone or failed.",
          static_cast<double>(tap.dropped()));
    m.one("glbd_dnstap_connected", "gauge", "1 while the dnstap sink (socket or file) is open.",
          tap.connected() ? 1 : 0);
}

void write_metrics(metrics::Writer& m, const ServerCounters& c) {
    const char* transports[] = {"udp", "tcp"};
    m.family("glbd_queries_total", "counter", "DNS queries answered, by transport and response code.");
    for (int t = 0; t < 2; ++t) {
        for (size_t rc = 0; rc < kCountedRcodes; ++rc) {
            uint64_t v = c.rcode[t][rc].load();
            if (v || rc == 0)
                m.sample("glbd_queries_total",
                         std::string("transport=\"") + transports[t] + "\",rcode=\"" +
                             (rc + 1 < kCountedRcodes ? wire::rcode_name(static_cast<uint16_t>(rc)) : "OTHER") + "\"",
                         static_cast<double>(v));
        }
    }
    m.family("glbd_queries_by_type_total", "counter", "DNS queries answered, by transport and query type.");
    for (int t = 0; t < 2; ++t) {
        for (int q = 0; q < ServerCounters::kQtypes; ++q) {
            m.sample("glbd_queries_by_type_total",
                     std::string("transport=\"") + transports[t] + "\",qtype=\"" + ServerCounters::qtype_name(q) + "\"",
                     static_cast<double>(c.qtype[t][q].load()));
        }
    }
    m.family("glbd_queries_dropped_total", "counter",
             "Messages not answered (malformed beyond a reply, or responses).");
    for (int t = 0; t < 2; ++t)
        m.sample("glbd_queries_dropped_total", std::string("transport=\"") + transports[t] + "\"",
                 static_cast<double>(c.dropped[t].load()));
    m.one("glbd_responses_truncated_total", "counter", "UDP answers sent truncated (TC=1).",
          static_cast<double>(c.truncated.load()));
    m.some("glbd_rrl_limited_total", "counter",
           "UDP responses limited by rateLimit: slipped (sent truncated) or dropped.",
           {{"action=\"slip\"", static_cast<double>(c.rrl_slipped.load())},
            {"action=\"drop\"", static_cast<double>(c.rrl_dropped.load())}});
    m.some("glbd_signing_over_budget_total", "counter",
           "Answers that needed a signature over the signing budget (per thread, client prefix and TCP "
           "connection, a second): sent truncated over UDP, REFUSED over TCP, never unsigned.",
           {{"transport=\"udp\"", static_cast<double>(c.over_signing_budget[0].load())},
            {"transport=\"tcp\"", static_cast<double>(c.over_signing_budget[1].load())}});
    m.some("glbd_sync_udp_notifies_total", "counter",
           "UDP NOTIFYs for _glbd. (peers' heartbeats) handed to the sync thread, or dropped because it was behind.",
           {{"result=\"handed\"", static_cast<double>(c.handed_off.load())},
            {"result=\"dropped\"", static_cast<double>(c.handoff_dropped.load())}});
    m.one("glbd_fallback_answers_total", "counter",
          "Answers from a geo group reached because a preferred group had no usable entry.",
          static_cast<double>(c.fallback.load()));
    m.one("glbd_failopen_answers_total", "counter", "Answers given as if every endpoint were healthy (nothing usable).",
          static_cast<double>(c.fail_open.load()));
    m.family("glbd_answer_duration_seconds", "histogram",
             "Time to answer a UDP query, from receipt to the answer being ready.");
    uint64_t cumulative = 0;
    for (int b = 0; b < ServerCounters::kBuckets; ++b) {
        cumulative += c.duration_bucket[b].load();
        std::ostringstream le;
        if (b == ServerCounters::kBuckets - 1)
            le << "+Inf";
        else
            le << ServerCounters::kBucketUs[b] / 1e6;
        m.sample("glbd_answer_duration_seconds_bucket", "le=\"" + le.str() + "\"", static_cast<double>(cumulative));
    }
    m.sample("glbd_answer_duration_seconds_sum", "", static_cast<double>(c.duration_sum_ns.load()) / 1e9);
    m.sample("glbd_answer_duration_seconds_count", "", static_cast<double>(c.duration_count.load()));
    m.one("glbd_tcp_connections_total", "counter", "TCP connections accepted.",
          static_cast<double>(c.tcp_connections.load()));
    m.some("glbd_tcp_refused_total", "counter", "TCP connections closed at once, by reason.",
           {{"reason=\"full\"", static_cast<double>(c.tcp_refused.load())},
            {"reason=\"per_source\"", static_cast<double>(c.tcp_source_refused.load())}});
    m.one("glbd_tcp_evicted_total", "counter", "TCP connections closed to make room over tcpMaxConnections.",
          static_cast<double>(c.tcp_evicted.load()));
    m.one("glbd_tcp_rejected_closed_total", "counter", "TCP connections closed after a rejected sync request.",
          static_cast<double>(c.tcp_rejected_closed.load()));
    m.one("glbd_tcp_idle_closed_total", "counter", "TCP connections closed after tcpIdleTimeout.",
          static_cast<double>(c.tcp_idle_closed.load()));
}

}  // namespace glbd
