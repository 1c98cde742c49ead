#!/usr/bin/env bash
# Three clusters with admin endpoints: an override set on one server drains a cluster on every peer
# within 2 s; /v1/state agrees with the answers; glbd status shows every cluster and endpoint.
source "$(dirname "$0")/lib.sh"
P=5420 AP=9420
declare -A ADDR=([ie]=127.0.0.121 [us]=127.0.0.122 [oc]=127.0.0.123)
declare -A LB=([ie]="{weight: 100, geo: IE}" [us]="{weight: 100, geo: US, defaultGeo: true}" [oc]="{weight: 100, geo: GEO-OC}")
declare -A EPS=([ie]="[192.0.2.121, 192.0.2.122]" [us]="[198.51.100.122]" [oc]="[203.0.113.123]")
for c in ie us oc; do
cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["${ADDR[$c]}:$P"]}
admin: {listen: "${ADDR[$c]}:$AP"}
geoip: {database: $FIXTURES/test.mmdb}
zones: [{origin: adm3.test, nameservers: [{name: ns.adm3.test, addresses: [${ADDR[ie]}]}]}]
hosts:
  - {name: shop.adm3.test, ttl: 60, endpoints: ${EPS[$c]}, loadBalancing: ${LB[$c]}}
$(peers_yaml --interval 500ms --dead 3s "${ADDR[ie]}:$P" "${ADDR[us]}:$P" "${ADDR[oc]}:$P")
YAML
start_glbd $c "$WORK/$c.yaml"
done
ie_client() { dig @"$1" -p $P +short shop.adm3.test A +subnet=10.1.0.0/16 | sort | tr '\n' ' '; }
all_ie() { local s; for s in "${ADDR[@]}"; do [[ $(ie_client $s) == "$1" ]] || return 1; done; }
wait_for 15 all_ie "192.0.2.121 192.0.2.122 " || fail "no convergence"

# /v1/state agrees with the answers.
curl -s http://${ADDR[oc]}:$AP/v1/state > "$WORK/state.json"
python3 - "$WORK/state.json" <<'PY' || fail "state disagrees with the answers"
import json, sys
s = json.load(open(sys.argv[1]))
assert {c["id"]: c["alive"] for c in s["clusters"]} == {"ie": True, "us": True, "oc": True}, s["clusters"]
entries = {e["cluster"]: e for e in s["hosts"][0]["entries"]}
assert sorted(ep["target"] for ep in entries["ie"]["endpoints"]) == ["192.0.2.121", "192.0.2.122"]
assert entries["us"]["defaultGeo"] and entries["oc"]["geo"] == "GEO-OC"
assert all(ep["healthy"] for e in entries.values() for ep in e["endpoints"])
assert {p["id"] for p in s["peers"]} == {"ie/ie-0", "us/us-0"}, s["peers"]
PY
pass "/v1/state agrees with the answers"

# No token (loopback): a request naming the endpoint by a DNS name (DNS rebinding from a web page) is
# refused; by address or localhost it is served. At most 4 connections from one source.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[[ $(code -H "Host: evil.example.com" http://${ADDR[oc]}:$AP/v1/state) == 421 ]] || fail "a foreign Host name was served"
[[ $(code -H "Host: evil.example.com:$AP" -X PUT -d '{"target":"ie","state":"down"}' http://${ADDR[oc]}:$AP/v1/overrides) == 421 ]] || fail "a rebinding PUT was served"
[[ $(code http://${ADDR[oc]}:$AP/healthz) == 200 ]] || fail "the address as Host refused"
[[ $(code -H "Host: localhost:$AP" http://${ADDR[oc]}:$AP/healthz) == 200 ]] || fail "localhost refused"
idlers=()
for i in $(seq 1 20); do (exec 3<>/dev/tcp/${ADDR[oc]}/$AP; sleep 5) 2>/dev/null & idlers+=($!); done
wait_for 10 bash -c "(( \$(ss -Htn state established '( dport = :$AP )' dst ${ADDR[oc]} | wc -l) >= 4 ))" || fail "the idle admin clients did not connect"
sleep 0.5
open=$(ss -Htn state established "( sport = :$AP )" src ${ADDR[oc]} | wc -l)
(( open <= 4 )) || fail "$open admin connections held by one source, want at most 4"
kill "${idlers[@]}" 2>/dev/null || true; wait "${idlers[@]}" 2>/dev/null || true
wait_for 10 bash -c "(( \$(ss -Htn state established '( sport = :$AP )' src ${ADDR[oc]} | wc -l) == 0 ))" || fail "the idle admin connections did not close"
pass "admin without a token: DNS-rebinding Host refused (421), at most 4 connections per source ($open held)"

# glbd status shows every cluster and endpoint.
"$GLBD" status --admin ${ADDR[us]}:$AP > "$WORK/status.txt" || fail "glbd status failed"
for want in "CLUSTERS" "ie-0" "us-0" "oc-0" "(this instance)" "PEERS" "shop.adm3.test" \
            "192.0.2.121 up" "192.0.2.122 up" "198.51.100.122 up" "203.0.113.123 up" "GEO-OC"; do
    grep -qF -- "$want" "$WORK/status.txt" || { cat "$WORK/status.txt"; fail "status lacks '$want'"; }
done
pass "glbd status shows every cluster and endpoint"
# Its filters: by host, by cluster, unhealthy only.
"$GLBD" status --admin ${ADDR[us]}:$AP --host shop.adm3.test | grep -qF "192.0.2.121 up" || fail "status --host"
"$GLBD" status --admin ${ADDR[us]}:$AP --host shop.adm3 | grep -qF "shop.adm3.test" && fail "status --host matched a prefix"
"$GLBD" status --admin ${ADDR[us]}:$AP --cluster oc | grep -qF "shop.adm3.test" || fail "status --cluster oc"
"$GLBD" status --admin ${ADDR[us]}:$AP --cluster nowhere | grep -qF "shop.adm3.test" && fail "status --cluster nowhere listed a host"
"$GLBD" status --admin ${ADDR[us]}:$AP --unhealthy | grep -qF "shop.adm3.test" && fail "status --unhealthy listed a healthy host"
pass "glbd status --host, --cluster, --unhealthy"

# Drain cluster ie through the us server's API: every server stops answering ie (printed: how fast). The
# questions are the ones asked above, byte for byte: no cached answer may outlive the override.
t0=$(now_ms)
curl -s -X PUT -d '{"target":"ie","state":"down"}' http://${ADDR[us]}:$AP/v1/overrides >/dev/null
wait_for 20 all_ie "198.51.100.122 " || fail "the drain did not reach every server"
ms=$(( $(now_ms) - t0 ))
"$GLBD" status --admin ${ADDR[oc]}:$AP | grep -q "192.0.2.121 DOWN (override down)" || fail "status does not show the override on a peer"
"$GLBD" status --admin ${ADDR[oc]}:$AP --unhealthy | grep -qF "192.0.2.121 DOWN (override down)" || fail "status --unhealthy misses the drained host"
pass "override drained cluster ie on every server in $ms ms"
curl -s -X PUT -d '{"target":"ie","state":"auto"}' http://${ADDR[oc]}:$AP/v1/overrides >/dev/null
wait_for 20 all_ie "192.0.2.121 192.0.2.122 " || fail "auto (set on another server) did not restore ie everywhere"
pass "auto set on a third server restored ie everywhere"
