#!/usr/bin/env bash
# Heartbeats over UDP, apart from the TCP transfers, in a network namespace of the test's own where iptables
# cuts links on purpose. Two pairs of peers:
# - a and b (syncInterval 500 ms, deadAfter 3 s): with every TCP packet between them dropped for 7 s, neither
#   declares the other dead (the heartbeats still come; before them, a transfer was the only sign of life and
#   both were dead after 3 s); with half their UDP dropped, each counts the lost beats; with everything
#   dropped, b marks a suspect and then dead within deadAfter + 2 s, saying what it last heard, and a is
#   alive again once the link is back. Their round trip and loss are in /metrics, /v1/state and glbd status.
#   While nothing changes, they pull from each other only every ten rounds.
# - c and d (syncInterval 30 s): c's TCP connections to d are dropped, so c's NOTIFY never arrives; d learns
#   c's change from the beat that c sends at once, and pulls (d's connections to c pass). Before the beats,
#   the change waited for d's next round: up to 30 s.
source "$(dirname "$0")/netns.sh"
P=5560
A=127.0.23.60 B=127.0.23.61 C=127.0.23.62 D=127.0.23.63
declare -A ADDR=([a]=$A [b]=$B [c]=$C [d]=$D) IP=([a]=192.0.2.1 [b]=192.0.2.2 [c]=192.0.2.3 [d]=192.0.2.4)
for n in a b c d; do
    if [[ $n == [ab] ]]; then peers=$(peers_yaml --interval 500ms --dead 3s "$A:$P" "$B:$P"); else
        peers=$(peers_yaml --interval 30s --dead 120s "$C:$P" "$D:$P"); fi
    cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["${ADDR[$n]}:$P"]}
admin: {listen: "${ADDR[$n]}:9560"}
zones: [{origin: beats.test, nameservers: [{name: ns.beats.test, addresses: [$A]}]}]
hosts:
  - {name: app.beats.test, endpoints: [${IP[$n]}]}
$peers
YAML
    start_glbd $n "$WORK/$n.yaml"
done
sees() { [[ $(dig @"$1" -p $P +short app.beats.test A | sort | tr '\n' ' ') == "$2" ]]; }
wait_for 30 sees $B "192.0.2.1 192.0.2.2 " || fail "b never learnt a"
wait_for 30 sees $A "192.0.2.1 192.0.2.2 " || fail "a never learnt b"
wait_for 30 sees $D "192.0.2.3 192.0.2.4 " || fail "d never learnt c"
admin() { curl -sf --interface 127.0.0.1 "http://$1:9560$2"; }
# peer_field SERVER PEER FIELD: FIELD of PEER's entry in SERVER's /v1/summary (JSON: true, 3, "text", null)
peer_field() {
    admin "$1" /v1/summary | python3 -c 'import json, sys
for p in json.load(sys.stdin)["peers"]:
    if p["address"] == sys.argv[1]: print(json.dumps(p.get(sys.argv[2])))' "$2" "$3"
}
rtt_known() { [[ -n $(metric "glbd_sync_peer_rtt_seconds{peer=\"$B:$P\"}" "$A:9560") ]]; }
wait_for 10 rtt_known || fail "a has no round trip to b from the heartbeats' echo"
rtt=$(metric "glbd_sync_peer_rtt_seconds{peer=\"$B:$P\"}" "$A:9560")
# (How the echo times a round trip is sync_parts_test's, with clocks of its own; here: it is measured at all.)
awk -v r="$rtt" 'BEGIN { exit !(r >= 0) }' || fail "a's round trip to b is not a duration: $rtt s"

# 0. A quiet pair pulls little: each one's beats show there is nothing new, so a round pulls a member only
#    every ten rounds (5 s here); before, every round (about 8 pulls in these 4 s).
x0=$(metric "glbd_sync_exchanges_total{peer=\"$A:$P\"}" "$B:9560")
sleep 4
x1=$(metric "glbd_sync_exchanges_total{peer=\"$A:$P\"}" "$B:9560")
(( x1 - x0 <= 2 )) || fail "b made $(( x1 - x0 )) exchanges with a in 4 s of quiet (syncInterval 500 ms): a round should pull only when due"
echo "4 s of quiet: b made $(( x1 - x0 )) exchange(s) with a"

# 0b. A reload is not loss: a SIGHUP (same config) restarts a's sync loop, and its beats go on counting from
#     where they were (they were renumbered from the clock, which b counted as 64 beats lost each time).
lost0=$(peer_field $B "$A:$P" beatsLost)
for i in 1 2 3; do
    kill -HUP "${GLBD_PIDS[a]}"
    wait_for 10 bash -c "(( \$(grep -c 'reloaded ' '$WORK/a.log') >= $i ))" || fail "a did not reload ($i)"
    sleep 1
done
sleep 1
lost1=$(peer_field $B "$A:$P" beatsLost)
loss=$(metric "glbd_sync_peer_loss_ratio{peer=\"$A:$P\"}" "$B:9560")
(( lost1 - lost0 <= 2 )) || fail "three reloads of a cost $(( lost1 - lost0 )) beats lost at b"
awk -v l="$loss" 'BEGIN { exit !(l < 0.1) }' || fail "b's loss ratio for a is $loss after a's reloads"
echo "three reloads of a: $(( lost1 - lost0 )) beat(s) lost at b, loss ratio $loss"

# 1. No TCP between a and b for 7 s (more than twice deadAfter): the heartbeats keep both alive.
drop() { iptables "$1" OUTPUT -s "$2" -d "$3" "${@:4}" -j DROP; iptables "$1" OUTPUT -s "$3" -d "$2" "${@:4}" -j DROP; }
drop -A $A $B -p tcp
dig -b $B @$A -p $P +tcp +time=1 +tries=1 app.beats.test A >/dev/null 2>&1 && fail "TCP from b to a still passes: the cut is not real"
t_end=$(( $(now_ms) + 7000 ))
while (( $(now_ms) < t_end )); do
    sees $B "192.0.2.1 192.0.2.2 " || fail "b dropped a while only TCP was cut (heartbeats over UDP should keep it alive)"
    sees $A "192.0.2.1 192.0.2.2 " || fail "a dropped b while only TCP was cut"
    sleep 0.25
done
contains "is dead" < "$WORK/b.log" && fail "b logged a death while only TCP was cut: $(grep 'is dead' "$WORK/b.log")"
drop -D $A $B -p tcp
echo "7 s without TCP between a and b: both alive throughout"

# 2. Half of their UDP lost for 6 s (12 beats each way): the gaps in the beats' numbers are counted on both
#    sides, each when the next beat arrives after a gap.
drop -A $A $B -p udp -m statistic --mode random --probability 0.5
sleep 6
drop -D $A $B -p udp -m statistic --mode random --probability 0.5
lost_counted() {
    local lost
    for n in a b; do
        other=$B; [[ $n == b ]] && other=$A
        lost=$(peer_field "${ADDR[$n]}" "$other:$P" beatsLost)
        [[ $lost =~ ^[0-9]+$ ]] && ((lost > 0)) || return 1
    done
}
wait_for 10 lost_counted || fail "no lost heartbeats counted on both sides with 50 % loss"
for n in a b; do
    other=$B; [[ $n == b ]] && other=$A
    lost=$(peer_field "${ADDR[$n]}" "$other:$P" beatsLost)
    ratio=$(peer_field "${ADDR[$n]}" "$other:$P" lossRatio)
    [[ $lost =~ ^[0-9]+$ ]] && ((lost > 0)) || fail "$n counted no lost heartbeats from its peer with 50 % loss: '$lost'"
    awk -v r="$ratio" 'BEGIN { exit !(r > 0 && r < 1) }' || fail "$n's loss ratio is '$ratio'"
done
echo "50 % UDP loss for 6 s: a lost $lost beats from b (loss ratio now $ratio)"
contains "is dead" < "$WORK/b.log" && fail "b logged a death with half the heartbeats lost: $(grep 'is dead' "$WORK/b.log")"

# 3. Everything between a and b dropped: b marks a suspect, then dead, with evidence. (When exactly, deadAfter
#    from the last beat, is asserted with clocks of its own in sync_parts_test and sync_test; bench/sync-converge.sh
#    measures it end to end.)
drop -A $A $B
t0=$(now_ms)
dead_logged() { contains "sync: a/a-0 is dead" < "$WORK/b.log"; }
wait_for 10 dead_logged || fail "b never declared a dead with the link cut"
dead_ms=$(( $(now_ms) - t0 ))
contains "peer $A:$P (a/a-0) is suspect" < "$WORK/b.log" || fail "b did not log a as suspect before its death"
contains "last heartbeat" < "$WORK/b.log" || fail "b's death line gives no evidence: $(grep 'is dead' "$WORK/b.log")"
sees $B "192.0.2.2 " || fail "b still answers a's endpoint after a's death"
[[ $(peer_field $B "$A:$P" suspect) == true ]] || fail "b's /v1/summary does not show a as suspect"
reason=$(peer_field $B "$A:$P" suspectReason)
[[ $reason == *"nothing directly"* ]] || fail "b's /v1/summary gives no reason for suspecting a: $reason"
"$GLBD" status --admin "$B:9560" >"$WORK/status.out" 2>&1 || fail "glbd status failed: $(cat "$WORK/status.out")"
contains "SUSPECT: nothing directly for [0-9.]*s (limit [0-9.]*s); " < "$WORK/status.out" ||
    fail "glbd status does not show a as suspect, with its silence and the limit: $(cat "$WORK/status.out")"
drop -D $A $B
wait_for 10 sees $B "192.0.2.1 192.0.2.2 " || fail "b did not take a back once the link returned"
echo "link cut: b declared a dead after $dead_ms ms (deadAfter 3 s), suspect first; back once the link returned"

# 4. c's TCP connections to d dropped (its NOTIFY is lost), d's to c pass: d learns c's change from its beat.
iptables -A OUTPUT -p tcp --syn -s $C -d $D -j DROP
t0=$(now_ms)
curl -sf --interface 127.0.0.1 -o /dev/null -X PUT -d '{"target":"c/192.0.2.3","state":"down"}' "http://$C:9560/v1/overrides" ||
    fail "override refused"
wait_for 10 sees $D "192.0.2.4 " || fail "d did not take c's change within 10 s (syncInterval 30 s; c's NOTIFY cannot reach d)"
change_ms=$(( $(now_ms) - t0 ))
pass "no false death without TCP for 7 s; lost beats counted; a real cut seen in $dead_ms ms; a change announced by a beat alone reached d in $change_ms ms"
