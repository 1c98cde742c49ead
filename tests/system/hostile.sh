#!/usr/bin/env bash
# Hostile traffic: rate limiting (a flood from one prefix is limited with the configured slip, another
# client is unaffected), 1,000 idle TCP connections (cap enforced, idle ones closed on time, UDP unaffected),
# and 100,000 hostile packets (still up, still correct, memory flat).
source "$(dirname "$0")/lib.sh"
ulimit -n 8192
# Under AddressSanitizer freed memory waits in a quarantine (256 MB by default), which would make RSS
# grow with every freed TCP buffer: without it RSS measures what glbd keeps, as in a normal build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
A=127.0.0.140 P=5440
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: h}
listen:
  dns: ["$A:$P"]
  tcpMaxConnections: 600
  tcpIdleTimeout: 2s
threads: 1
rateLimit: {responsesPerSecond: 20, slip: 2}
zones:
  - origin: example.test
    nameservers: [{name: ns1.example.test, addresses: [$A]}]
    records: |
      www IN A 192.0.2.10
hosts:
  - {name: shop.example.test, endpoints: [192.0.2.20]}
YAML
start_glbd h "$WORK/glbd.yaml"
wait_for 10 q $A $P www.example.test A || fail "server did not come up"

# RRL: 300 queries at once from 127.0.3.10: about 20 answered in full (40 if the burst straddles a
# second), the rest limited, half of those slipped (TC=1) and half dropped.
read -r full tc none secs < <("$DNSCLIENT" burst $A $P 127.0.3.10 300 www.example.test | sed 's/[a-z_]*=//g')
(( full >= 10 && full <= 20 * (secs + 1) + 5 )) || fail "flood over $secs second(s): $full full answers, want about 20 a second"
(( tc >= 100 && none >= 100 )) || fail "flood: truncated $tc, dropped $none: want about half each of the limited"
(( tc - none <= 40 && none - tc <= 40 )) || fail "flood: slip 2 should truncate half of the limited: $tc vs $none"
read -r full2 tc2 none2 _ < <("$DNSCLIENT" burst $A $P 127.0.4.10 15 www.example.test | sed 's/[a-z_]*=//g')
(( full2 == 15 )) || fail "another prefix limited too: full $full2 truncated $tc2 none $none2"
pass "RRL: flood from one /24: $full full, $tc truncated (slip), $none dropped; another /24: 15 of 15"

# 1,000 idle TCP connections against a cap of 600 and an idle timeout of 2 s, UDP answered meanwhile.
# "At once" is sooner than 1 s after all were connected (half the idle timeout).
"$DNSCLIENT" idle $A $P 1000 "$WORK/idle.ready" 1000 > "$WORK/idle.out" &
idler=$!
wait_for 30 test -e "$WORK/idle.ready" || fail "1,000 TCP connections were not opened"
open_now=$(ss -Htn state established "( dport = :$P )" dst $A | wc -l)
(( open_now >= 600 )) || fail "only $open_now of the 1,000 connections are established, want at least the cap of 600"
for i in $(seq 1 20); do
    [[ $(dig @$A -p $P +short +time=1 +tries=1 shop.example.test A -b 127.0.5.$i) == 192.0.2.20 ]] || fail "UDP answer $i wrong while 1,000 TCP connections are open"
done
wait $idler
read -r opened at_once still last < <(sed 's/[a-z_]*=//g' "$WORK/idle.out")
(( at_once >= 390 && at_once <= 410 )) || fail "cap of 600: $at_once of 1000 closed at once, want 400"
(( still == 0 )) || fail "$still idle connections never closed"
(( last >= 1500 )) || fail "idle connections closed after $last ms, before the 2 s idle timeout"
pass "1,000 idle TCP: $at_once refused over the cap of 600, the rest closed after ${last} ms; 20 UDP answers meanwhile"

# 100,000 hostile packets over UDP and TCP: alive, correct, memory flat.
rss() { awk '/VmRSS/ {print $2}' /proc/$PID_h/status; }
"$DNSCLIENT" garbage $A $P 20000 7 >/dev/null || fail "not answering after the warm-up"
before=$(rss)
"$DNSCLIENT" garbage $A $P 100000 8 > "$WORK/garbage.out" || fail "$(cat "$WORK/garbage.out")"
after=$(rss)
kill -0 "$PID_h" || fail "crashed on hostile packets"
[[ $(dig @$A -p $P +short www.example.test A -b 127.0.6.1) == 192.0.2.10 ]] || fail "wrong answer after hostile packets"
(( after - before < 4096 )) || fail "memory grew from $before kB to $after kB over 100,000 hostile packets"
pass "100,000 hostile packets: up, correct, RSS $before kB -> $after kB"
