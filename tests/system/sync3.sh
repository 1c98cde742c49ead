#!/usr/bin/env bash
# Three clusters (IE, US as default geo, GEO-OC) on 127.0.0.81-83 sharing state over DNS with TSIG:
# convergence, geo answers and ECS scope from every server, a health change spreading, authentication,
# kill -9 and restart.
source "$(dirname "$0")/lib.sh"
P=5380 TP=18080
declare -A ADDR=([ie]=127.0.0.81 [us]=127.0.0.82 [oc]=127.0.0.83)
T1=127.0.0.84 T2=127.0.0.85
start_target t1 $T1:$TP
start_target t2 $T2:$TP

config() {  # CLUSTER -> $WORK/CLUSTER.yaml
    local c=$1 eps lb hc=""
    case $c in
        ie) eps="[$T1, $T2]" lb="{weight: 100, geo: IE}"
            hc="    healthCheck: {protocol: HTTP, port: $TP, path: /healthz, interval: 300ms, timeout: 250ms, failureThreshold: 1}" ;;
        us) eps="[198.51.100.10]" lb="{weight: 100, geo: US, defaultGeo: true}" ;;
        oc) eps="[203.0.113.10, \"2001:db8::10\"]" lb="{weight: 100, geo: GEO-OC}" ;;
    esac
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["${ADDR[$c]}:$P"]}
geoip: {database: $FIXTURES/test.mmdb}
zones:
  - origin: sync.test
    nameservers:
      - {name: ns-ie.sync.test, addresses: [${ADDR[ie]}]}
      - {name: ns-us.sync.test, addresses: [${ADDR[us]}]}
      - {name: ns-oc.sync.test, addresses: [${ADDR[oc]}]}
hosts:
  - name: shop.sync.test
    ttl: 60
    endpoints: $eps
    loadBalancing: $lb
$hc
$(peers_yaml --interval 500ms --dead 3s "${ADDR[ie]}:$P" "${ADDR[us]}:$P" "${ADDR[oc]}:$P")
YAML
}
for c in ie us oc; do config $c; done

# ecs SERVER SUBNET -> "answer | scope"
ecs() {
    local out
    out=$(dig @"$1" -p $P shop.sync.test A +subnet="$2" +norec +time=2 +tries=1)
    echo "$(awk '/^shop.sync.test.*IN\tA/ {print $5}' <<<"$out" | sort | tr '\n' ' ')| $(sed -n 's/.*CLIENT-SUBNET: [^/]*\/[0-9]*\/\([0-9]*\).*/\1/p' <<<"$out")"
}
converged() {
    local s
    for s in "${ADDR[@]}"; do
        [[ $(ecs $s 10.1.0.0/16) == "$T1 $T2 | 16" ]] || return 1
        [[ $(ecs $s 10.2.0.0/16) == "203.0.113.10 | 16" ]] || return 1
        [[ $(ecs $s 10.3.0.0/16) == "198.51.100.10 | 16" ]] || return 1
    done
}

t0=$(now_ms)
for c in ie us oc; do start_glbd $c "$WORK/$c.yaml"; done
wait_for 30 converged || fail "no convergence within 30 s"
ms=$(( $(now_ms) - t0 ))
pass "three clusters converged $ms ms after start"

# Geo answers and ECS scope, the same from every server.
for s in "${ADDR[@]}"; do
    [[ $(ecs $s 10.1.0.0/16) == "$T1 $T2 | 16" ]] || fail "$s: IE client: $(ecs $s 10.1.0.0/16)"
    [[ $(ecs $s 10.2.0.0/24) == "203.0.113.10 | 16" ]] || fail "$s: AU client (continent only): $(ecs $s 10.2.0.0/24)"
    [[ $(ecs $s 10.3.0.0/16) == "198.51.100.10 | 16" ]] || fail "$s: US client: $(ecs $s 10.3.0.0/16)"
    [[ $(ecs $s 10.5.0.0/16) == "198.51.100.10 | 16" ]] || fail "$s: JP client (default geo): $(ecs $s 10.5.0.0/16)"
    [[ $(ecs $s 10.4.0.0/24) == "198.51.100.10 | 24" ]] || fail "$s: DE client (EU, no EU entry): $(ecs $s 10.4.0.0/24)"
    [[ $(ecs $s 2001:db8:2::/56) == "203.0.113.10 | 48" ]] || fail "$s: AU IPv6 client: $(ecs $s 2001:db8:2::/56)"
    unmapped=$(ecs $s 10.9.0.0/16)
    [[ ${unmapped%|*} == "198.51.100.10 " ]] || fail "$s: unmapped client: $unmapped"
    [[ $(dig @$s -p $P shop.sync.test AAAA +short +subnet=10.2.0.0/16) == 2001:db8::10 ]] || fail "$s: AAAA from OC"
done
pass "geo answers and scopes agree on all three servers (unmapped 10.9.0.0/16 -> default, scope ${unmapped#*| })"

# A health change on one cluster reaches every server (printed: how long after its detection). The
# questions are the ones asked above, byte for byte: a cached answer that outlived the change would show.
us_serial0=$(dig @${ADDR[us]} -p $P +short sync.test SOA | awk '{print $3}')
kill -TERM "$PID_t2"; wait "$PID_t2" 2>/dev/null || true
wait_for 20 bash -c "[[ \$(dig @${ADDR[ie]} -p $P +short shop.sync.test A +subnet=10.1.0.0/16) == $T1 ]]" || fail "ie did not detect the stopped target"
t1=$(now_ms)
others() { [[ $(dig @${ADDR[us]} -p $P +short shop.sync.test A +subnet=10.1.0.0/16) == "$T1" && $(dig @${ADDR[oc]} -p $P +short shop.sync.test A +subnet=10.1.0.0/16) == "$T1" ]]; }
wait_for 20 others || fail "the change did not reach the other servers"
ms=$(( $(now_ms) - t1 ))
us_serial1=$(dig @${ADDR[us]} -p $P +short sync.test SOA | awk '{print $3}')
(( us_serial1 > us_serial0 )) || fail "us's SOA serial did not rise with a peer's change ($us_serial0 -> $us_serial1)"
pass "an endpoint going down reached every server $ms ms after detection"

# Authentication: the state cannot be read without the key; wrong keys are rejected and logged.
dig @${ADDR[ie]} -p $P _glbd. AXFR +time=2 +tries=1 | contains "Transfer failed" || fail "unsigned AXFR not refused"
dig -y hmac-sha256:glb-sync:$(head -c 32 /dev/urandom | base64) @${ADDR[ie]} -p $P _glbd. AXFR +time=2 +tries=1 | contains "Transfer failed" || fail "wrong-key AXFR accepted"
dig -y hmac-sha256:other-key:$TSIG_SECRET @${ADDR[ie]} -p $P _glbd. AXFR +time=2 +tries=1 | contains "Transfer failed" || fail "unknown key accepted"
[[ $(status_of ${ADDR[ie]} $P _glbd. TXT) == REFUSED ]] || fail "UDP query for the sync zone not refused"
grep -q "rejected transfer request from 127.0.0.1: unsigned" "$WORK/ie.log" || fail "unsigned request not logged"
grep -q "rejected transfer request from 127.0.0.1: bad signature" "$WORK/ie.log" || fail "bad signature not logged"
grep -q "rejected transfer request from 127.0.0.1: unknown key" "$WORK/ie.log" || fail "unknown key not logged"
state=$(dig -y hmac-sha256:glb-sync:$TSIG_SECRET @${ADDR[ie]} -p $P _glbd. AXFR +time=2 +tries=1)
for o in ie/ie-0 us/us-0 oc/oc-0; do contains "\"origin=$o\"" <<<"$state" || fail "signed AXFR lacks $o"; done
contains "\"ep=$T2 down\"" <<<"$state" || fail "signed AXFR lacks the down endpoint"
pass "state readable only with the key; unsigned, wrong and unknown keys rejected and logged"

# kill -9 of one server: its entries are withdrawn everywhere, not before deadAfter (3 s) less one
# syncInterval; back after a restart.
kill9_glbd us
t0=$(now_ms)
withdrawn() {
    local s a
    for s in ${ADDR[ie]} ${ADDR[oc]}; do
        a=$(dig @$s -p $P +short shop.sync.test A +subnet=10.3.0.0/16 | sort | tr '\n' ' ')
        [[ $a != *198.51.100.10* && -n $a ]] || return 1
    done
}
wait_for 30 withdrawn || fail "the killed cluster was not withdrawn"
ms=$(( $(now_ms) - t0 ))
(( ms >= 2500 )) || fail "withdrawn after $ms ms, before deadAfter (3 s) less one syncInterval"
ttl=$(dig @${ADDR[ie]} -p $P shop.sync.test A +subnet=10.3.0.0/16 +noall +answer | awk '{print $2; exit}')
(( ttl <= 10 )) || fail "fallback answer TTL $ttl, want <= 10"
pass "kill -9: withdrawn everywhere after $ms ms (fallback TTL $ttl)"

start_glbd us2 "$WORK/us.yaml"
t0=$(now_ms)
back() { local s; for s in ${ADDR[ie]} ${ADDR[oc]}; do [[ $(dig @$s -p $P +short shop.sync.test A +subnet=10.3.0.0/16) == 198.51.100.10 ]] || return 1; done; }
wait_for 30 back || fail "the restarted cluster did not come back"
ms=$(( $(now_ms) - t0 ))
pass "restarted cluster answered everywhere again after $ms ms"

# A server whose peers.key has our name and another secret: ie logs what differs (once a minute, not twice a
# second), counts it, and the stranger's glbd status shows ie as KEY MISMATCH.
X=127.0.0.86 OTHER=$(head -c 32 /dev/urandom | base64)
sed -e "s/id: us, instance: us-0/id: xx, instance: xx-0/" -e "s/${ADDR[us]}:$P\"\]}/$X:$P\"]}\nadmin: {listen: \"$X:9386\"}/" \
    -e "s|secret: \"$TSIG_SECRET\"|secret: \"$OTHER\"|" "$WORK/us.yaml" > "$WORK/xx.yaml"
grep -q "$OTHER" "$WORK/xx.yaml" && grep -q "admin: {listen: \"$X:9386\"}" "$WORK/xx.yaml" || fail "the stranger's config: $(cat "$WORK/xx.yaml")"
start_glbd xx "$WORK/xx.yaml"
mismatch() { GLBD_ADMIN_TOKEN= "$GLBD" status --admin $X:9386 2>&1 | grep -q "^ *${ADDR[ie]}:$P .*KEY MISMATCH: peers.key differs"; }
wait_for 20 mismatch || fail "the stranger's glbd status does not show ie as KEY MISMATCH: $(GLBD_ADMIN_TOKEN= "$GLBD" status --admin $X:9386 2>&1)"
sleep 3  # beats twice a second and pulls: ie logs the stranger once every 5 s at most (it was twice a second)
lines=$(grep -c "rejected .* request from $X: bad signature: the key name is ours (glb-sync" "$WORK/ie.log" || true)
(( lines >= 1 && lines <= 2 )) || fail "ie logged the stranger's bad signature $lines times: $(grep "from $X" "$WORK/ie.log")"
stop_glbd xx
pass "a peer with our key's name and another secret: logged as such at ie ($lines line(s)), KEY MISMATCH in its glbd status"
