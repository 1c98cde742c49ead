#!/usr/bin/env bash
# Started by peers.sh (--extra) to run glbd on the peers' zone and MaxMind DB (PEER_* variables).
# app.glb.example.test becomes a load-balanced host with three clusters, like the peers' geo setup:
# this cluster (geo US, the default) answers the zone's three A records and one AAAA; clusters ie (IE) and
# oc (GEO-OC) answer the geo map's addresses. Their state is what a restarted glbd loads from stateDir
# (its last-known view); with no members, deadAfter 1h keeps it alive for the benchmark.
set -euo pipefail
D=${PEER_DIR:?} 
grep -v '^app ' "$PEER_ZONE_FILE" > "$D/zone"
mkdir -p "$D/state"
now=$(( $(date +%s%N) / 1000000 ))
ie=$(awk '$3 == "IE" {print $4, $5}' "$PEER_GEO_MAP")
oc=$(awk '$3 == "AU" {print $4, $5}' "$PEER_GEO_MAP")
origin() {  # CLUSTER GEO A AAAA
  printf '{"cluster":"%s","instance":"bench","version":%s,"heartbeat":%s,"overrides":{},"hosts":[{"host":"app.%s","ttl":60,"loadBalancing":{"weight":100,"geo":"%s","defaultGeo":false},"endpoints":[{"target":"%s","healthy":true},{"target":"%s","healthy":true}]}]}' \
    "$1" "$now" "$now" "$PEER_ZONE" "$2" "$3" "$4"
}
echo "{\"saved\":$now,\"origins\":[$(origin ie IE $ie),$(origin oc GEO-OC $oc)]}" > "$D/state/state.json"
# peers.sh --dnssec (PEER_DNSSEC=1): the zone is signed online with a CSK of its own (ECDSA P-256, as Knot's).
dnssec=""
if [[ ${PEER_DNSSEC:-0} == 1 ]]; then
  key=$("${GLBD_BIN:?}" keygen --dnssec "$PEER_ZONE" --algorithm 13 --dir "$D")
  dnssec="dnssec: {keys: [${key}]}"
fi
cat > "$D/glbd.yaml" <<YAML
cluster: {id: us, instance: bench}
listen: {dns: ["127.0.0.1:$PEER_PORT"]}
threads: ${PEER_THREADS:-1}
log: {level: warn}
rateLimit: {responsesPerSecond: 0}   # benchmarks measure answering, not limiting
geoip: {database: $PEER_MMDB}
zones:
  - origin: $PEER_ZONE
    file: $D/zone
    $dnssec
hosts:
  - name: app.$PEER_ZONE
    ttl: 60
    endpoints: [192.0.2.11, 192.0.2.12, 192.0.2.13, "2001:db8::11"]
    loadBalancing: {weight: 100, geo: US, defaultGeo: true}
peers:
  key: {name: bench, secret: "$(head -c 32 /dev/urandom | base64)"}
  members: []
  deadAfter: 1h
stateDir: $D/state
YAML
# bench/dnstap.sh: the query log to the Unix socket of a reader (fstrm_capture) it started apart.
if [[ -n ${GLBD_DNSTAP_SOCK:-} ]]; then
  echo "dnstap: {sink: \"unix:$GLBD_DNSTAP_SOCK\"}" >> "$D/glbd.yaml"
fi
exec "${GLBD_BIN:?}" serve --config "$D/glbd.yaml"
