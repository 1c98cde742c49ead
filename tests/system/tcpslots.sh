#!/usr/bin/env bash
# The TCP slots cannot be held against the peers: at most tcpMaxConnectionsPerSource connections per client
# address, bytes that never make an answerable message (empty frames) do not keep a connection open past
# tcpIdleTimeout, and over tcpMaxConnections the connection that never had an answer goes first. 200
# connections from 50 sources, reconnecting whenever closed and writing an empty frame every 300 ms, for 10
# s: the peer b never loses a (it would after deadAfter without a slot) and a change on a reaches b.
source "$(dirname "$0")/lib.sh"
ulimit -n 4096
A=127.0.0.165 B=127.0.0.166 P=5465
pair_configs slots.test $A $B $P ", tcpMaxConnections: 40, tcpMaxConnectionsPerSource: 4, tcpIdleTimeout: 2s" ""
start_glbd a "$WORK/a.yaml"
start_glbd b "$WORK/b.yaml"
b_sees_a() { [[ $(answers $B $P app-a.slots.test A) == "$1" ]]; }
wait_for 20 b_sees_a 192.0.2.1 || fail "b never learned a's host"

# 6 connections from each of two sources, cap 4 per source: 2 of each closed at once, the rest after the
# idle timeout although they keep writing empty frames.
"$DNSCLIENT" squat $A $P 12 6 4 0 > "$WORK/per.out" || fail "squat failed"
read -r closed fast longest < <(sed 's/[a-z_]*=//g' "$WORK/per.out")
(( fast == 4 )) || fail "per-source cap of 4: $fast of 12 connections closed at once, want 4 ($(cat "$WORK/per.out"))"
(( closed == 12 && longest >= 1900 && longest < 3000 )) || fail "empty frames kept connections open: $(cat "$WORK/per.out")"
pass "per source: 4 of 12 refused at once, the rest closed after $longest ms despite empty frames"

logged_before=$(wc -l < "$WORK/b.log")  # a start-up line may say a was down (b pulled before a listened)
"$DNSCLIENT" squat $A $P 200 4 10 1 > "$WORK/squat.out" &
squatter=$!
sleep 1
sed -i 's/endpoints: \[192.0.2.1\]/endpoints: [192.0.2.11]/' "$WORK/a.yaml"
kill -HUP "$PID_a"
checks=0 changed=no
while kill -0 $squatter 2>/dev/null; do
    got=$(answers $B $P app-a.slots.test A)
    [[ -n $got ]] || fail "b withdrew a under the squat (after $checks checks)"
    [[ $got == 192.0.2.11 ]] && changed=yes
    checks=$((checks + 1))
    sleep 0.2
done
wait $squatter || fail "squat failed: $(cat "$WORK/squat.out")"
read -r closed fast longest < <(sed 's/[a-z_]*=//g' "$WORK/squat.out")
[[ $changed == yes ]] || fail "a's change never reached b during the squat"
(( longest < 3500 )) || fail "a squatting connection lived $longest ms (idle timeout 2 s): $(cat "$WORK/squat.out")"
! tail -n +$((logged_before + 1)) "$WORK/b.log" | contains "sync: peer $A:$P down" || fail "b saw a down during the squat"
pass "200 squatting connections for 10 s ($closed closed by a, the longest after $longest ms): b kept a ($checks checks) and got its change"
stop_glbd a
stop_glbd b
