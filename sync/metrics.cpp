// The sync service's counters as Prometheus families: exchanges and failures per peer, lag, last heard per
// origin, rejected requests and reports, transfers served.
#include <algorithm>
#include <optional>

#include "resolver/base/metrics.hpp"
#include "sync/service.hpp"

namespace glbd::sync {

namespace {
// One family with a sample per peer address: `value(p)`, none where it says nothing yet (nullopt).
template <class Value>
void per_peer(metrics::Writer& m, const char* name, const char* type, const char* help,
              const std::vector<PeerStatus>& peers, Value value) {
    m.family(name, type, help);
    for (const auto& p : peers) {
        if (std::optional<double> v = value(p)) m.sample(name, metrics::label("peer", p.address), *v);
    }
}

// Per peer address: what its connections and heartbeats say of the link.
void write_link_metrics(metrics::Writer& m, const std::vector<PeerStatus>& peers) {
    using V = std::optional<double>;
    per_peer(m, "glbd_sync_peer_connect_seconds", "gauge",
             "How long a TCP connection to the peer address takes to open (smoothed; the round trip, when no SYN is "
             "lost).",
             peers, [](const PeerStatus& p) { return p.connects > 0 ? V(p.connect_ms / 1000.0) : std::nullopt; });
    per_peer(m, "glbd_sync_second_connects_total", "counter",
             "Exchanges with the peer address whose connection was tried a second time, the first being slow to open "
             "(a lost SYN is sent again only after a second).",
             peers, [](const PeerStatus& p) { return V(static_cast<double>(p.second_connects)); });
    per_peer(m, "glbd_sync_peer_loss_ratio", "gauge",
             "The share of the peer address's heartbeats (UDP) lost on the way lately, from the gaps in their numbers "
             "(smoothed over about 32 beats).",
             peers, [](const PeerStatus& p) { return p.beats_received > 0 ? V(p.loss_ratio) : std::nullopt; });
    per_peer(m, "glbd_sync_peer_rtt_seconds", "gauge",
             "The round trip to the peer address, from its heartbeats' echo of ours (smoothed).", peers,
             [](const PeerStatus& p) { return p.rtt_samples > 0 ? V(p.rtt_ms / 1000.0) : std::nullopt; });
    per_peer(m, "glbd_sync_peer_suspect", "gauge",
             "1 while nothing has come from the peer address directly (no heartbeat, no transfer) for max(3 x "
             "syncInterval, deadAfter / 2); its instance stays alive while others still relay it.",
             peers, [](const PeerStatus& p) { return V(p.suspect ? 1 : 0); });
    per_peer(m, "glbd_sync_peer_beats_received_total", "counter", "Heartbeats (UDP) received from the peer address.",
             peers, [](const PeerStatus& p) { return V(static_cast<double>(p.beats_received)); });
}

// Heartbeats sent and received, and the time the loop that reads them was away.
void write_beat_metrics(metrics::Writer& m, const SyncCounters& sc) {
    m.some(
        "glbd_sync_beats_total", "counter",
        "Heartbeats (UDP): sent (resent: a change's beat again to a member that had not acknowledged it), not sent (no "
        "socket or a full buffer), received and verified, rejected as malformed.",
        {{"result=\"sent\"", static_cast<double>(sc.beats_sent.load())},
         {"result=\"resent\"", static_cast<double>(sc.beats_resent.load())},
         {"result=\"unsent\"", static_cast<double>(sc.beats_unsent.load())},
         {"result=\"received\"", static_cast<double>(sc.beats_received.load())},
         {"result=\"rejected\"", static_cast<double>(sc.beats_rejected.load())}});
    m.one("glbd_sync_loop_away_seconds_total", "counter",
          "Time the sync loop turned later than 200 ms after its last turn (a busy CPU, a long callback), summed: "
          "nothing could be heard then, so it counts as no peer's silence.",
          static_cast<double>(sc.loop_away_ms.load()) / 1000.0);
}
}  // namespace

void write_metrics(metrics::Writer& m, const Service& sync) {
    const SyncCounters& sc = sync.counters();
    uint64_t now = now_ms();
    auto peers = sync.peers();
    using V = std::optional<double>;
    per_peer(m, "glbd_sync_exchanges_total", "counter", "Sync exchanges (pulls and notifies) with each peer address.",
             peers, [](const PeerStatus& p) { return V(static_cast<double>(p.exchanges)); });
    per_peer(m, "glbd_sync_failures_total", "counter", "Failed sync exchanges with each peer address.", peers,
             [](const PeerStatus& p) { return V(static_cast<double>(p.failures)); });
    per_peer(m, "glbd_sync_peer_up", "gauge", "1 when the last exchange with the peer address succeeded.", peers,
             [](const PeerStatus& p) { return V(p.reachable ? 1 : 0); });
    write_link_metrics(m, peers);
    const IdentityConflict conflict = sync.identity_conflict();
    m.one("glbd_sync_identity_conflict", "gauge",
          "1 while another glbd runs as this instance (seen in the last 10 minutes): give each its own "
          "cluster.instance.",
          conflict.last_ms && now - std::min(now, conflict.last_ms) < kConflictShownMs ? 1 : 0);
    write_beat_metrics(m, sc);
    per_peer(m, "glbd_sync_lag_seconds", "gauge", "Time since the last successful exchange with the peer address.",
             peers, [now](const PeerStatus& p) {
                 return p.last_ok_ms ? V(static_cast<double>(now - std::min(now, p.last_ok_ms)) / 1000.0)
                                     : std::nullopt;
             });
    m.family("glbd_sync_last_heard_seconds", "gauge",
             "Time since each known instance was last heard, directly or relayed.");
    for (const auto& k : sync.known()) {
        m.sample("glbd_sync_last_heard_seconds", metrics::label("origin", k.state.origin()),
                 static_cast<double>(now - std::min(now, k.last_heard_ms)) / 1000.0);
    }
    m.some("glbd_sync_rejected_total", "counter", "Sync requests rejected, by reason.",
           {{"reason=\"unsigned\"", static_cast<double>(sc.rejected_unsigned.load())},
            {"reason=\"badkey\"", static_cast<double>(sc.rejected_badkey.load())},
            {"reason=\"badsig\"", static_cast<double>(sc.rejected_badsig.load())},
            {"reason=\"badtime\"", static_cast<double>(sc.rejected_badtime.load())},
            {"reason=\"replay\"", static_cast<double>(sc.rejected_replay.load())}});
    m.one("glbd_sync_reports_rejected_total", "counter",
          "Peer reports (one origin's state) rejected by validation or limits.",
          static_cast<double>(sc.rejected_reports.load()));
    m.one("glbd_sync_hosts_rejected_total", "counter",
          "Hosts left out of peer reports by validation or limits (the rest of each report is taken).",
          static_cast<double>(sc.rejected_hosts.load()));
    m.one("glbd_sync_oversized_total", "counter", "Transfers cut off at a report over 64 MiB or past 1,024 origins.",
          static_cast<double>(sc.oversized.load()));
    const uint64_t pulls_all = sc.relay_pulls.load(), pulls = sc.pulls.load();  // in this order: all <= pulls
    m.some(
        "glbd_sync_pulls_total", "counter",
        "Pulls of peers' state: of everything the peer relays (scope=all), or of its own origin's data with "
        "heartbeats of the rest (scope=own, \"relay=0\").",
        {{"scope=\"all\"", static_cast<double>(pulls_all)}, {"scope=\"own\"", static_cast<double>(pulls - pulls_all)}});
    m.one("glbd_sync_reports_received_total", "counter",
          "Peer reports with data (one origin's hosts) received in transfers; a view is learnt once, not from every "
          "peer.",
          static_cast<double>(sc.reports_received.load()));
    m.one("glbd_sync_reports_skipped_total", "counter",
          "Of the reports with data received, those held already at their version (sent by a peer asked before "
          "they arrived from another): read as heartbeats, their data not decoded.",
          static_cast<double>(sc.reports_skipped.load()));
    m.one("glbd_sync_outside_parts_total", "counter",
          "Of the reports with data received, those of outside verdicts alone (what changed since the version held), "
          "made whole with the rest as held.",
          static_cast<double>(sc.outside_parts.load()));
    size_t learnt = 0;
    for (const auto& p : peers) learnt += p.learnt ? 1 : 0;
    m.one("glbd_sync_learnt_members", "gauge", "Members learnt from peers (not in peers.members), answering or not.",
          static_cast<double>(learnt));
    m.one("glbd_sync_learnt_refused_total", "counter",
          "Addresses peers advertised that were not learnt: 64 learnt members were held.",
          static_cast<double>(sc.learnt_refused.load()));
    m.one("glbd_sync_served_total", "counter", "Signed transfers of the sync zone served to peers.",
          static_cast<double>(sc.served.load()));
}

}  // namespace glbd::sync
