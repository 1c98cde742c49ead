#!/usr/bin/env bash
# A cut link between two of three servers withdraws nothing: each still hears the other through the third.
# a and b reach each other only through TCP proxies (tools/tcpproxy.py) that the test kills to cut the link
# from outside; c reaches both directly. Killing c afterwards proves the link was really cut.
source "$(dirname "$0")/lib.sh"
P=5390
declare -A ADDR=([a]=127.0.0.91 [b]=127.0.0.92 [c]=127.0.0.93)
declare -A GEO=([a]=IE [b]=US [c]=GEO-OC)
declare -A IP=([a]=192.0.2.91 [b]=192.0.2.92 [c]=192.0.2.93)
# a reaches b only at B_VIA (a proxy to b), b reaches a only at A_VIA.
A_VIA=127.0.0.97 B_VIA=127.0.0.98
declare -A MEMBERS=(
    [a]="${ADDR[a]}:$P $B_VIA:$P ${ADDR[c]}:$P"
    [b]="$A_VIA:$P ${ADDR[b]}:$P ${ADDR[c]}:$P"
    [c]="${ADDR[a]}:$P ${ADDR[b]}:$P ${ADDR[c]}:$P")
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
$(peers_yaml --interval 500ms --dead 3s ${MEMBERS[$n]})
$([[ $n != c ]] && echo "  learnMembers: false  # a and b reach each other only through the proxies, not where b says")
YAML
done
start_proxy() {  # NAME LISTEN TARGET
    python3 "$(dirname "$0")/../tools/tcpproxy.py" "$2" "$3" "$WORK/$1.ready" >"$WORK/$1.proxy" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    printf -v "PID_$1" '%s' "$pid"
    wait_for 10 test -e "$WORK/$1.ready" || fail "proxy $1 did not start"
}
start_proxy to_a $A_VIA:$P ${ADDR[a]}:$P
start_proxy to_b $B_VIA:$P ${ADDR[b]}:$P
for n in a b c; do start_glbd $n "$WORK/$n.yaml"; done

a_sees_b() { [[ $(dig @${ADDR[a]} -p $P +short app.cut.test A +subnet=10.3.0.0/16) == "${IP[b]}" ]]; }
b_sees_a() { [[ $(dig @${ADDR[b]} -p $P +short app.cut.test A +subnet=10.1.0.0/16) == "${IP[a]}" ]]; }
wait_for 20 a_sees_b || fail "a never saw b"
wait_for 20 b_sees_a || fail "b never saw a"
wait_for 20 grep -q "sync: peer $B_VIA:$P up" "$WORK/a.log" || fail "a never reached b through the proxy"
wait_for 20 grep -q "sync: peer $A_VIA:$P up" "$WORK/b.log" || fail "b never reached a through the proxy"
pass "a and b reach each other directly (through the proxies) and through c"

# Cut the link: both proxies die, with every connection they carry.
kill -TERM "$PID_to_a" "$PID_to_b"; wait "$PID_to_a" "$PID_to_b" 2>/dev/null || true
wait_for 20 grep -q "sync: peer $B_VIA:$P down" "$WORK/a.log" || fail "a did not notice the cut"
wait_for 20 grep -q "sync: peer $A_VIA:$P down" "$WORK/b.log" || fail "b did not notice the cut"

# Three times deadAfter with the link cut: no withdrawal anywhere.
end=$(( $(now_ms) + 9000 )) checks=0
while (( $(now_ms) < end )); do
    a_sees_b || fail "a withdrew b while the link was cut (after $checks checks)"
    b_sees_a || fail "b withdrew a while the link was cut (after $checks checks)"
    checks=$((checks + 1))
    sleep 0.2
done
pass "cut link a<->b: no withdrawal over 9 s ($checks checks on each side)"

# A change on b crosses the cut through c: a pulls c for c's own origin, sees c's heartbeat of b ahead of
# what it holds, and pulls c again for what c relays.
sed -i "s/${IP[b]}/192.0.2.99/" "$WORK/b.yaml"
kill -HUP "$PID_b"
t0=$(now_ms)
wait_for 20 bash -c "[[ \$(dig @${ADDR[a]} -p $P +short app.cut.test A +subnet=10.3.0.0/16) == 192.0.2.99 ]]" ||
    fail "b's change did not reach a through c"
pass "b's change reached a through c in $(( $(now_ms) - t0 )) ms (syncInterval 500 ms)"

# Without c, a and b cannot hear each other: the cut was real. a's answer for b's client falls back to a
# usable cluster (here its own), never empty.
kill9_glbd c
wait_for 20 bash -c "[[ \$(dig @${ADDR[a]} -p $P +short app.cut.test A +subnet=10.3.0.0/16) == ${IP[a]} ]]" || fail "a still answers b without c"
pass "with c gone, a withdrew b: the link was really cut"
