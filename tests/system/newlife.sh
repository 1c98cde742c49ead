#!/usr/bin/env bash
# A node whose clock ran ahead, restarted with the clock corrected and no stateDir, is heard at once.
# Its "earlier life" is played by a fake peer (tools/dnsclient peer) that relays a/a-0 with an incarnation
# and version 200 s ahead (within the 5-minute skew peers accept), and an endpoint 192.0.2.99. b learns that.
# Then the real a starts with the right clock: its versions are lower, but it hears its own origin from b,
# begins the next incarnation, and b serves a's real endpoint within seconds instead of 200 s later.
source "$(dirname "$0")/lib.sh"
A=127.0.0.175 B=127.0.0.176 OLD=127.0.0.177 P=5475
for n in a b; do
    addr=$A members=("$A:$P" "$B:$P")
    [[ $n == b ]] && addr=$B members=("$A:$P" "$B:$P" "$OLD:$P")
cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["$addr:$P"]}
zones: [{origin: life.test, nameservers: [{name: ns.life.test, addresses: [$A]}]}]
hosts:
  - {name: app-$n.life.test, endpoints: [192.0.2.$([[ $n == a ]] && echo 1 || echo 2)]}
$(peers_yaml --interval 300ms --dead 30s "${members[@]}")
YAML
done
ahead_s=$(( $(date +%s) + 200 ))
cat > "$WORK/old.zone" <<ZONE
_glbd. 0 IN TXT "glbd-sync=1" "from=a/a-0"
o1._glbd. 0 IN TXT "origin=a/a-0" "inc=$ahead_s" "version=${ahead_s}000" "heartbeat=${ahead_s}000" "age=0"
h1.o1._glbd. 0 IN TXT "host=app-a.life.test" "ttl=60" "ep=192.0.2.99 up"
ZONE
"$DNSCLIENT" peer $OLD $P 100000 glb-sync. "$TSIG_SECRET" "$WORK/old.zone" > "$WORK/old.out" 2>&1 &
PIDS+=($!)
start_glbd b "$WORK/b.yaml"
b_serves() { [[ $(answers $B $P app-a.life.test A) == "$1" ]]; }
wait_for 20 b_serves 192.0.2.99 || fail "b never learned a's earlier life"
start_glbd a "$WORK/a.yaml"
t0=$(now_ms)
wait_for 20 b_serves 192.0.2.1 || fail "b still serves a's earlier life: $(answers $B $P app-a.life.test A)"
ms=$(( $(now_ms) - t0 ))
grep -q "sync: peers hold this instance at incarnation $ahead_s .*taking incarnation $(( ahead_s + 1 ))" "$WORK/a.log" ||
    fail "a did not log its new incarnation"
# The earlier life, still relayed by the fake peer, changes nothing any more.
sleep 1
b_serves 192.0.2.1 || fail "b went back to the earlier life"
pass "a restarted with its clock 200 s behind its earlier life: b serves it after $ms ms (new incarnation $(( ahead_s + 1 )))"
stop_glbd a
stop_glbd b
