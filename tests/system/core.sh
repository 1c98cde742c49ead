#!/usr/bin/env bash
# The authoritative core with the real binary: UDP and TCP on IPv4 and IPv6, pipelining, truncation and
# TCP retry, reload with a good and a bad file, 10,000 malformed packets, glbd check.
source "$(dirname "$0")/lib.sh"
A=127.0.0.21 P=5321

big=""
for i in $(seq 1 12); do big+="      big IN TXT \"$i-$(printf 'x%.0s' $(seq 1 200))\""$'\n'; done
write_config() {  # $1 = extra records
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: core-1}
listen:
  dns: ["$A:$P", "[::1]:$P"]
  tcpIdleTimeout: 2s
zones:
  - origin: example.test
    ttl: 300
    nameservers: [{name: ns1.example.test, addresses: [$A]}]
    records: |
      www   IN A    192.0.2.10
      www   IN AAAA 2001:db8::10
      alias IN CNAME www
$big$1
hosts:
  - name: shop.example.test
    endpoints: [192.0.2.20, 192.0.2.21]
YAML
}
write_config ""

"$GLBD" check --config "$WORK/glbd.yaml" >/dev/null || fail "glbd check rejects a good config"
start_glbd core "$WORK/glbd.yaml"
wait_for 10 q $A $P www.example.test A || fail "server did not come up"

# UDP, TCP, IPv4, IPv6, authoritative
[[ $(answers $A $P www.example.test A) == 192.0.2.10 ]] || fail "UDP A"
[[ $(answers $A $P www.example.test A +tcp) == 192.0.2.10 ]] || fail "TCP A"
[[ $(answers ::1 $P www.example.test AAAA) == 2001:db8::10 ]] || fail "IPv6 UDP AAAA"
[[ $(answers ::1 $P www.example.test AAAA +tcp) == 2001:db8::10 ]] || fail "IPv6 TCP"
q $A $P www.example.test A | contains 'flags: qr aa;' || fail "AA flag not set"
[[ $(status_of $A $P nope.example.test A) == NXDOMAIN ]] || fail "NXDOMAIN"
[[ $(status_of $A $P example.org A) == REFUSED ]] || fail "REFUSED outside zones"
[[ $(status_of $A $P example.test AXFR +tcp) == REFUSED ]] || q $A $P example.test AXFR +tcp | contains 'Transfer failed' || fail "AXFR not refused"
kdig @$A -p $P +tcp shop.example.test A | contains 'status: NOERROR' || fail "kdig over TCP"
pass "UDP/TCP on IPv4 and IPv6, kdig and dig"

# No HTTP check, no Kubernetes, no service manager: libcurl and libsystemd (34 libraries with theirs) are
# never loaded (resolver/base/shared_library.hpp); health.sh sees libcurl come with the first HTTP target.
! grep -qE 'libcurl|libsystemd' /proc/"$PID_core"/maps || fail "libcurl or libsystemd loaded without a use for them"
pass "libcurl and libsystemd not loaded"

# Each UDP thread (one per core per address) asks for a 100 us scheduler slice (server/net/README.md);
# Linux 6.12+ grants it, and shows it where the kernel has scheduler debugging (/proc/PID/task/TID/sched).
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
if (( kmaj > 6 || (kmaj == 6 && kmin >= 12) )) && grep -qs '^se.slice' /proc/"$PID_core"/task/*/sched; then
    short=$(grep -h '^se.slice' /proc/"$PID_core"/task/*/sched | awk '$3 == 100000' | wc -l)
    cpus=$(getconf _NPROCESSORS_ONLN)  # threads: 0 is one UDP thread per online CPU and address
    (( short == 2 * cpus )) || fail "$short thread(s) with a 100 us slice, want $(( 2 * cpus )) (UDP threads)"
    pass "the $short UDP threads run with a 100 us scheduler slice"
fi

# Pipelining: 50 queries written at once on one TCP connection.
"$DNSCLIENT" pipeline $A $P 50 www.example.test || fail "pipelining"
pass "50 pipelined queries"

# TCP back-pressure: 500 queries for a 2.5 KB answer written at once on one connection whose reader waits
# 2 s, then reads slowly: every answer comes, in order and whole; other clients are answered meanwhile, and
# the server's memory stays bounded.
rss() { awk '/VmRSS/ {print $2}' /proc/$PID_core/status; }
rss0=$(rss)
"$DNSCLIENT" slowread $A $P 500 big.example.test 16 2000 > "$WORK/slow.out" 2>&1 &
slow=$!
sleep 0.5
for i in 1 2 3 4 5; do [[ $(answers $A $P www.example.test A +tcp) == 192.0.2.10 ]] || fail "TCP answer while a reader is slow"; done
rss1=$(rss)
wait $slow || fail "slow reader: $(cat "$WORK/slow.out")"
(( rss1 - rss0 < 32768 )) || fail "RSS grew from $rss0 kB to $rss1 kB for one slow reader"
pass "back-pressure: $(cat "$WORK/slow.out"); RSS $rss0 -> $rss1 kB while it waited"

# Truncation: no EDNS -> 512 bytes -> TC=1; dig then retries over TCP and gets all 12 records.
q $A $P big.example.test TXT +noedns +ignore | contains 'flags: qr aa tc' || fail "no TC over UDP"
out=$(q $A $P big.example.test TXT +noedns)
grep -q 'Truncated, retrying in TCP mode' <<<"$out" || fail "dig did not retry over TCP"
grep -q 'ANSWER: 12,' <<<"$out" || fail "TCP retry did not carry every record"
pass "truncation then TCP retry"

# Reload: a good file adds a record; a bad file keeps the running config.
serial1=$(answers $A $P example.test SOA | awk '{print $3}')
write_config "      new IN A 192.0.2.99"
kill -HUP "$PID_core"
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short new.example.test A) == 192.0.2.99 ]]" || fail "reload did not add the record"
serial2=$(answers $A $P example.test SOA | awk '{print $3}')
(( serial2 > serial1 )) || fail "serial did not increase on reload ($serial1 -> $serial2)"
cp "$WORK/glbd.yaml" "$WORK/good.yaml"
echo "bogus: [" >> "$WORK/glbd.yaml"
kill -HUP "$PID_core"
wait_for 10 grep -q 'reload rejected' "$WORK/core.log" || fail "bad reload not logged"
[[ $(answers $A $P new.example.test A) == 192.0.2.99 ]] || fail "bad reload lost the running config"
kill -0 "$PID_core" || fail "server died on a bad reload"
"$GLBD" check --config "$WORK/glbd.yaml" 2>"$WORK/check.err" && fail "glbd check accepted a bad file"
grep -q "glbd.yaml:.*YAML" "$WORK/check.err" || fail "glbd check did not locate the error"
pass "reload good ($serial1 -> $serial2) and bad (kept)"

# 10,000 malformed packets over UDP and TCP: still up, still correct.
"$DNSCLIENT" garbage $A $P 10000 42 || fail "answers after malformed packets"
kill -0 "$PID_core" || fail "server crashed on malformed packets"
answers $A $P alias.example.test A | contains "^192.0.2.10$" || fail "wrong answer after malformed packets"
pass "10,000 malformed packets"

# Idle TCP connections are closed after tcpIdleTimeout (2 s here): cat sees EOF when the server closes.
start=$(date +%s%N)
exec 3<>/dev/tcp/$A/$P
timeout 10 cat <&3 >/dev/null || fail "idle TCP connection not closed within 10 s"
exec 3<&-
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
(( elapsed_ms >= 1500 )) || fail "idle connection closed after ${elapsed_ms} ms, before the 2 s idle timeout"
pass "idle TCP connection closed after ${elapsed_ms} ms"

# SIGTERM stops cleanly with exit 0 (and no sanitizer report).
stop_glbd core
pass "SIGTERM exit 0"
