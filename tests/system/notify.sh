#!/usr/bin/env bash
# systemd's notify protocol with a socket of the test's own (NOTIFY_SOCKET, as systemd sets it): READY=1 with
# a STATUS= once glbd serves, RELOADING=1 and READY=1 around a reload (a good and a bad file), the watchdog's
# heartbeat at half of WATCHDOG_USEC, which stops while the process is hung (SIGSTOP) and comes back, and
# STOPPING=1. The unit that asks for all this is checked in manifests.sh (Type=notify, WatchdogSec=).
source "$(dirname "$0")/lib.sh"
A=127.0.23.1 P=5231
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: notify-1}
listen: {dns: ["$A:$P"]}
zones:
  - origin: notify.test
    nameservers: [{name: ns1.notify.test, addresses: [$A]}]
hosts:
  - name: shop.notify.test
    endpoints: [192.0.2.20]
YAML
python3 "$(dirname "$0")/../tools/notify-listen.py" "$WORK/notify.sock" "$WORK/notify.txt" 120 &
PIDS+=($!)
wait_for 10 test -S "$WORK/notify.sock" || fail "the test's notify socket did not appear"
export NOTIFY_SOCKET=$WORK/notify.sock WATCHDOG_USEC=1000000
start_glbd n "$WORK/glbd.yaml"
unset NOTIFY_SOCKET WATCHDOG_USEC
wait_for 20 grep -q 'READY=1' "$WORK/notify.txt" || fail "no READY=1"
q $A $P shop.notify.test A | contains 'status: NOERROR' || fail "READY=1 was sent before glbd answers"
grep 'READY=1' "$WORK/notify.txt" | head -1 | grep -q 'STATUS=cluster notify-1, serial [0-9]*, 1 load-balanced host(s), peers 0 of 0 up' ||
    fail "READY=1 without the STATUS line: $(grep READY "$WORK/notify.txt" | head -1)"
pass "notify: READY=1 with STATUS= once glbd answers"

beats() { grep -c ' WATCHDOG=1' "$WORK/notify.txt" || true; }
b0=$(beats)
wait_for 10 bash -c "(( \$(grep -c ' WATCHDOG=1' '$WORK/notify.txt') >= $b0 + 5 ))" || fail "no heartbeat every 500 ms"
# The heartbeat comes at half the interval: no gap between two of them is longer than the interval.
gaps=$(awk '/ WATCHDOG=1/ { if (last) print $1 - last; last = $1 }' "$WORK/notify.txt" | sort -n | tail -1)
(( gaps < 1000 )) || fail "a heartbeat gap of $gaps ms, over WATCHDOG_USEC"
wait_for 20 grep -q 'WATCHDOG=1;STATUS=cluster notify-1' "$WORK/notify.txt" || fail "STATUS= is not refreshed with the heartbeat"
pass "notify: the watchdog's heartbeat at half of WATCHDOG_USEC (longest gap $gaps ms), STATUS= refreshed every 5 s"

kill -STOP "$PID_n"
sleep 1
b1=$(beats)
sleep 1
(( $(beats) == b1 )) || fail "heartbeats while the process is stopped"
kill -CONT "$PID_n"
wait_for 10 bash -c "(( \$(grep -c ' WATCHDOG=1' '$WORK/notify.txt') > $b1 ))" || fail "no heartbeat after SIGCONT"
pass "notify: a stopped (hung) glbd sends no heartbeat, so systemd's watchdog would restart it"

# A reload: RELOADING=1 (with MONOTONIC_USEC=) then READY=1; a bad file too (glbd keeps the old config).
reloads() { grep -c 'RELOADING=1;MONOTONIC_USEC=[0-9]' "$WORK/notify.txt" || true; }
readies() { grep -c 'READY=1' "$WORK/notify.txt" || true; }
kill -HUP "$PID_n"
wait_for 10 bash -c "(( \$(grep -c 'RELOADING=1;MONOTONIC_USEC=[0-9]' '$WORK/notify.txt') == 1 ))" || fail "no RELOADING=1"
wait_for 10 bash -c "(( \$(grep -c 'READY=1' '$WORK/notify.txt') == 2 ))" || fail "no READY=1 after the reload"
echo "bogus: [" >> "$WORK/glbd.yaml"
kill -HUP "$PID_n"
wait_for 10 bash -c "(( \$(grep -c 'READY=1' '$WORK/notify.txt') == 3 ))" || fail "no READY=1 after a failed reload"
(( $(reloads) == 2 )) || fail "$(reloads) RELOADING=1 for two reloads"
q $A $P shop.notify.test A | contains 'status: NOERROR' || fail "not answering after the failed reload"
pass "notify: RELOADING=1 then READY=1 around a good and a bad reload"

stop_glbd n
wait_for 5 grep -q 'STOPPING=1' "$WORK/notify.txt" || fail "no STOPPING=1"
pass "notify: STOPPING=1"

