#!/usr/bin/env bash
# A peer that holds the key but sends bad state (a buggy or compromised cluster): a cluster name with byte
# 0xff, a version of 2^64-1, a heartbeat an hour ahead, an endpoint that is no address or name, an unknown
# geo code, a bad override target. glbd (with stateDir) takes the good report of the same transfer,
# rejects each bad one whole, counts and logs them, keeps /v1/state and /metrics valid, saves and restarts.
source "$(dirname "$0")/lib.sh"
A=127.0.0.212 PEER=127.0.0.213 P=5512 ADMIN=127.0.0.212:9512
mkdir -p "$WORK/state"
# deadAfter 60s: the fake peer's heartbeat never moves, and liveness is not what this test is about.
cat > "$WORK/a.yaml" <<YAML
cluster: {id: a, instance: a-0}
listen: {dns: ["$A:$P"]}
admin: {listen: "$ADMIN"}
stateDir: $WORK/state
zones: [{origin: bad.test, nameservers: [{name: ns.bad.test, addresses: [$A]}]}]
hosts:
  - {name: app.bad.test, endpoints: [192.0.2.1], loadBalancing: {weight: 1, geo: IE}}
$(peers_yaml --interval 300ms --dead 60s "$A:$P" "$PEER:$P")
YAML
future=$(( ($(date +%s) + 3600) * 1000 )) now=$(( $(date +%s) * 1000 ))
cat > "$WORK/peer.zone" <<ZONE
_glbd. 0 IN TXT "glbd-sync=1" "from=good/g-0"
o1._glbd. 0 IN TXT "origin=good/g-0" "inc=1" "version=$now" "heartbeat=$now" "age=0"
h1.o1._glbd. 0 IN TXT "host=app.bad.test" "ttl=60" "weight=1" "geo=US" "ep=192.0.2.50 up"
o2._glbd. 0 IN TXT "origin=ev\255l/x-0" "inc=1" "version=$now" "heartbeat=$now" "age=0"
h1.o2._glbd. 0 IN TXT "host=app.bad.test" "ttl=60" "ep=192.0.2.66 up"
o3._glbd. 0 IN TXT "origin=pinned/p-0" "inc=1" "version=18446744073709551615" "heartbeat=$now" "age=0"
o4._glbd. 0 IN TXT "origin=ahead/h-0" "inc=1" "version=$now" "heartbeat=$future" "age=0"
o5._glbd. 0 IN TXT "origin=badep/e-0" "inc=1" "version=$now" "heartbeat=$now" "age=0"
h1.o5._glbd. 0 IN TXT "host=app.bad.test" "ep=not\032an\032endpoint! up"
o6._glbd. 0 IN TXT "origin=badgeo/g-0" "inc=1" "version=$now" "heartbeat=$now" "age=0"
h1.o6._glbd. 0 IN TXT "host=app.bad.test" "geo=X\255Y" "ep=192.0.2.67 up"
o7._glbd. 0 IN TXT "origin=badov/o-0" "inc=1" "version=$now" "heartbeat=$now" "age=0"
v1.o7._glbd. 0 IN TXT "override=a/\"quoted\"" "state=down" "at=1"
ZONE
"$DNSCLIENT" peer $PEER $P 1000 glb-sync. "$TSIG_SECRET" "$WORK/peer.zone" > "$WORK/peer.out" 2>&1 &
PIDS+=($!)
start_glbd a "$WORK/a.yaml"
us_client() { answers $A $P app.bad.test A +subnet=10.3.0.0/16; }
wait_for 20 bash -c "[[ \$(dig @$A -p $P +short app.bad.test A +subnet=10.3.0.0/16 | sort | tr '\n' ' ') == *192.0.2.50* ]]" ||
    fail "a never took the good report (answers: $(us_client | tr '\n' ' '))"
# A report whose origin is bad (its name, its times, an override) is rejected whole; a report with a bad host
# loses that host only: the rest of the cluster's report is taken.
rejected() { curl -s "http://$ADMIN/metrics" | awk '/^glbd_sync_reports_rejected_total / {print $2}'; }
left_out() { curl -s "http://$ADMIN/metrics" | awk '/^glbd_sync_hosts_rejected_total / {print $2}'; }
wait_for 20 bash -c "(( \$(curl -s http://$ADMIN/metrics | awk '/^glbd_sync_reports_rejected_total / {print \$2}') >= 4 ))" ||
    fail "bad reports not counted: $(rejected)"
wait_for 20 bash -c "(( \$(curl -s http://$ADMIN/metrics | awk '/^glbd_sync_hosts_rejected_total / {print \$2}') >= 2 ))" ||
    fail "bad hosts not counted: $(left_out)"
for why in "bad cluster name" "version 18446744073709551615 is ahead" "heartbeat $future is ahead" "bad override target"; do
    wait_for 10 grep -q "sync: rejected the report of .*: .*$why" "$WORK/a.log" || fail "no log line for: $why"
done
for why in "bad endpoint" "bad geo code"; do
    wait_for 10 grep -q "sync: left out 1 host(s) or record(s) of .*: .*$why" "$WORK/a.log" || fail "no log line for: $why"
done
grep -q 'ev\\xffl/x-0' "$WORK/a.log" || fail "the bad cluster name is not logged escaped"
sleep 1  # a few more pulls: the same rejections are logged once a minute, not at every pull
(( $(grep -c "rejected the report of pinned" "$WORK/a.log") == 1 )) || fail "a rejection repeated in the log at every pull"
for ip in 192.0.2.66 192.0.2.67; do
    ! us_client | grep -qx $ip || fail "an endpoint of a rejected report is served: $ip"
done
curl -sf "http://$ADMIN/v1/state" | python3 -c 'import json,sys; s=json.load(sys.stdin); assert not any("x-0" in json.dumps(c) for c in s.get("clusters", []))' ||
    fail "/v1/state is not valid JSON or shows a rejected origin"
curl -sf "http://$ADMIN/metrics" > "$WORK/metrics"
python3 "$(dirname "$0")/../tools/promcheck.py" "$WORK/metrics" >/dev/null || fail "/metrics: $(python3 "$(dirname "$0")/../tools/promcheck.py" "$WORK/metrics")"
# The save carries only what was accepted, and a restart reads it back.
wait_for 10 grep -q "\"cluster\": *\"good\"" "$WORK/state/state.json" || fail "state.json was not saved"
! grep -q "pinned\|ahead/\|badov" "$WORK/state/state.json" || fail "state.json holds a rejected report"
! grep -q "192.0.2.67\|not an endpoint" "$WORK/state/state.json" || fail "state.json holds a host that was left out"
stop_glbd a
start_glbd a "$WORK/a.yaml"
wait_for 20 bash -c "[[ \$(dig @$A -p $P +short app.bad.test A +subnet=10.3.0.0/16) == *192.0.2.50* ]]" || fail "a did not come back with the good state"
kill -0 "$PID_a" || fail "a died"
pass "a hostile peer's four bad reports rejected ($(rejected)) and two bad hosts left out ($(left_out)), counted and logged; its good one served; state saved and reloaded"
stop_glbd a
