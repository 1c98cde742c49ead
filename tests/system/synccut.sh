#!/usr/bin/env bash
# A cut link between two of three servers (the test-only fault switch GLBD_TEST_CUT) withdraws nothing:
# each still hears the other through the third. Killing the third then proves the link was really cut.
source "$(dirname "$0")/lib.sh"
P=5390
declare -A ADDR=([a]=127.0.0.91 [b]=127.0.0.92 [c]=127.0.0.93)
declare -A GEO=([a]=IE [b]=US [c]=GEO-OC)
declare -A IP=([a]=192.0.2.91 [b]=192.0.2.92 [c]=192.0.2.93)
for n in a b c; do
cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["${ADDR[$n]}:$P"]}
geoip: {database: $FIXTURES/test.mmdb}
zones: [{origin: cut.test, nameservers: [{name: ns.cut.test, addresses: [${ADDR[a]}]}]}]
hosts:
  - name: app.cut.test
    endpoints: [${IP[$n]}]
    loadBalancing: {weight: 100, geo: ${GEO[$n]}}
peers:
  key: {name: glb-sync, secret: "$TSIG_SECRET"}
  members: [{address: "${ADDR[a]}:$P"}, {address: "${ADDR[b]}:$P"}, {address: "${ADDR[c]}:$P"}]
  syncInterval: 500ms
  deadAfter: 3s
YAML
done
GLBD_TEST_CUT=${ADDR[b]} start_glbd a "$WORK/a.yaml"
GLBD_TEST_CUT=${ADDR[a]} start_glbd b "$WORK/b.yaml"
start_glbd c "$WORK/c.yaml"

a_sees_b() { [[ $(dig @${ADDR[a]} -p $P +short app.cut.test A +subnet=10.3.0.0/16) == "${IP[b]}" ]]; }
b_sees_a() { [[ $(dig @${ADDR[b]} -p $P +short app.cut.test A +subnet=10.1.0.0/16) == "${IP[a]}" ]]; }
wait_for 10 a_sees_b || fail "a never saw b through c"
wait_for 10 b_sees_a || fail "b never saw a through c"
grep -q "test fault switch GLBD_TEST_CUT" "$WORK/a.log" || fail "fault switch not active"

# Three times deadAfter with the link cut: no withdrawal anywhere.
end=$(( $(now_ms) + 9000 )) checks=0
while (( $(now_ms) < end )); do
    a_sees_b || fail "a withdrew b while the link was cut (after $checks checks)"
    b_sees_a || fail "b withdrew a while the link was cut (after $checks checks)"
    checks=$((checks + 1))
    sleep 0.2
done
pass "cut link a<->b: no withdrawal over 9 s ($checks checks on each side)"

# Without c, a and b cannot hear each other: the cut was real.
kill -KILL "$PID_c"; wait "$PID_c" 2>/dev/null || true
wait_for 10 bash -c "[[ \$(dig @${ADDR[a]} -p $P +short app.cut.test A +subnet=10.3.0.0/16) != ${IP[b]} ]]" || fail "a still answers b without c"
pass "with c gone, a withdrew b: the link was really cut"
