#!/usr/bin/env bash
# Started by peers.sh (--extra) for bench/dnstap.sh: Knot DNS serving the peers' plain zone with its dnstap
# module logging every query and response to the Unix socket KNOT_DNSTAP_SOCK, which bench/dnstap.sh's
# reader (fstrm_capture) listens on.
set -euo pipefail
D=${PEER_DIR:?}
mkdir -p "$D/run" "$D/db"
sock=${KNOT_DNSTAP_SOCK:?}
cat > "$D/knot.conf" <<CONF
server:
    rundir: "$D/run"
    listen: 127.0.0.1@$PEER_PORT
    udp-workers: ${PEER_THREADS:-1}
    tcp-workers: ${PEER_THREADS:-1}
    background-workers: 1
log:
  - target: stderr
    any: notice
database:
    storage: "$D/db"
mod-dnstap:
  - id: tap
    sink: "unix:$sock"
    log-queries: on
    log-responses: on
template:
  - id: default
    storage: "$(dirname "$PEER_ZONE_FILE")"
    file: "$(basename "$PEER_ZONE_FILE")"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
    global-module: mod-dnstap/tap
zone:
  - domain: $PEER_ZONE
CONF
exec knotd -c "$D/knot.conf"
