#!/usr/bin/env bash
# A flood of unsigned sync requests (`_glbd.` SOA over TCP, never reading an answer) for 10 s: every answer
# counts against the connection's back-pressure, a rejected request closes its connection, the rejections
# are counted and logged only a few times a second. RSS stays within 64 MB of where it started, the log under
# 5 MB, and the server answers and syncs meanwhile and after.
source "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
A=127.0.0.210 B=127.0.0.211 P=5510 ADMIN=127.0.0.210:9510
pair_configs flood.test $A $B $P "" "admin: {listen: \"$ADMIN\"}"
start_glbd a "$WORK/a.yaml"
start_glbd b "$WORK/b.yaml"
a_sees_b() { [[ $(answers $A $P app-b.flood.test A) == "$1" ]]; }
wait_for 20 a_sees_b 192.0.2.2 || fail "a never learned b's host"

rss() { awk '/VmRSS/ {print $2}' /proc/$PID_a/status; }
before=$(rss) log_before=$(stat -c %s "$WORK/a.log")
"$DNSCLIENT" syncflood $A $P 10 > "$WORK/flood.out" &
flooder=$!
# Meanwhile a keeps answering and syncing: a host b adds now reaches a during the flood.
sed -i 's/endpoints: \[192.0.2.2\]/endpoints: [192.0.2.22]/' "$WORK/b.yaml"
kill -HUP "$PID_b"
wait_for 8 a_sees_b 192.0.2.22 || fail "a did not learn b's change during the flood"
peak=$before
while kill -0 $flooder 2>/dev/null; do
    r=$(rss); (( r > peak )) && peak=$r
    sleep 0.2
done
wait $flooder || fail "flood client failed: $(cat "$WORK/flood.out")"
after=$(rss) log_after=$(stat -c %s "$WORK/a.log")
read -r conns bytes < <(sed 's/[a-z_]*=//g' "$WORK/flood.out")
kill -0 "$PID_a" || fail "a died under the flood"
[[ $(answers $A $P app-a.flood.test A) == 192.0.2.1 ]] || fail "a answers wrongly after the flood"
(( peak - before < 65536 )) || fail "RSS grew from $before kB to $peak kB under the flood (want under 64 MB)"
(( log_after - log_before < 5 * 1024 * 1024 )) || fail "the flood wrote $(( log_after - log_before )) bytes of log"
rejected=$(curl -s "http://$ADMIN/metrics" | awk '/^glbd_sync_rejected_total\{reason="unsigned"\}/ {print $2}')
lines=$(grep -c "sync: rejected" "$WORK/a.log" || true)
(( ${rejected%.*} >= conns )) || fail "only ${rejected:-0} rejections counted for $conns connections"
(( lines <= 40 )) || fail "$lines log lines for rejected requests in 10 s (want a few a second)"
grep -q "more not logged" "$WORK/a.log" || fail "the rejections left out of the log are not reported"
pass "10 s flood of unsigned sync requests ($conns connections, $bytes bytes): RSS $before -> peak $peak kB," \
     "log +$(( log_after - log_before )) bytes ($lines lines), $rejected rejections counted, sync went on"
stop_glbd a
stop_glbd b
