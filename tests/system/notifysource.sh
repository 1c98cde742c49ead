#!/usr/bin/env bash
# A peer's NOTIFY and pulls leave from its listen address, so that the server notified knows which member
# changed and pulls that one alone. Before, they left from whatever address the kernel picked (127.0.0.1 on
# loopback, a node's primary address in a cluster): the NOTIFY matched no member and set off a pull from
# every member, twenty at once on twenty peers. Member c is listed but never runs: a's failed exchanges
# with it count how often a pulled from everyone.
source "$(dirname "$0")/lib.sh"
P=5545 ADMIN=127.0.0.245:9545
declare -A ADDR=([a]=127.0.0.245 [b]=127.0.0.246 [c]=127.0.0.247)
config() {  # NAME ENDPOINT
    # syncInterval 60s: no round in this test's time but the first; what moves, a NOTIFY moved.
    cat > "$WORK/$1.yaml" <<YAML
cluster: {id: $1, instance: $1-0}
listen: {dns: ["${ADDR[$1]}:$P"]}
$([[ $1 == a ]] && echo "admin: {listen: \"$ADMIN\"}")
zones: [{origin: ns.test, nameservers: [{name: ns.ns.test, addresses: [${ADDR[a]}]}]}]
hosts:
  - {name: $1.ns.test, endpoints: [$2]}
$(peers_yaml --interval 60s --dead 120s "${ADDR[a]}:$P" "${ADDR[b]}:$P" "${ADDR[c]}:$P")
YAML
}
sees() { [[ $(dig @${ADDR[$1]} -p $P +short $2.ns.test A) == "$3" ]]; }
failures_with_c() { curl -sf "http://$ADMIN/metrics" | awk -v p="glbd_sync_failures_total{peer=\"${ADDR[c]}:$P\"}" '$1 == p {print $2}'; }
config a 192.0.2.245
config b 192.0.2.246
start_glbd a "$WORK/a.yaml"
wait_for 20 sees a a 192.0.2.245 || fail "a does not answer"
start_glbd b "$WORK/b.yaml"   # b pulls a and notifies it: a pulls b
wait_for 20 sees a b 192.0.2.246 || fail "a did not learn b from b's NOTIFY"
wait_for 20 sees b a 192.0.2.245 || fail "b did not learn a"
wait_for 10 bash -c "[[ -n \$(curl -sf http://$ADMIN/metrics | grep 'glbd_sync_failures_total{peer=\"${ADDR[c]}:$P\"}') ]]" ||
    fail "a never tried member c"
sleep 0.5  # a pull from every member would have failed against c by now
before=$(failures_with_c)
for ep in 192.0.2.100 192.0.2.101 192.0.2.102; do
    config b $ep
    kill -HUP "$PID_b"
    wait_for 20 sees a b $ep || fail "a did not take b's change to $ep"
done
sleep 0.5
after=$(failures_with_c)
(( after == before )) || fail "b's NOTIFYs made a pull from every member (failures with c: $before -> $after)"
pass "three NOTIFYs from b: a pulled b alone each time (failures with the absent member stayed at $after)"
