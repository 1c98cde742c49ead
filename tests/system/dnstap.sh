#!/usr/bin/env bash
# dnstap with real readers: to a file read by BIND's dnstap-read (every query and response of UDP, TCP, ECS,
# NXDOMAIN and REFUSED exchanges, with the client's and server's addresses and the messages' ids and sizes)
# and by `glbd explain --dnstap` (the reason of a load-balanced answer); to a Unix socket read by
# fstrm_capture, which is killed mid-run (glbd keeps answering, counts what it drops, reconnects when a
# reader is back); and to a socket whose reader answers the handshake with garbage (refused, counted).
source "$(dirname "$0")/lib.sh"
A=127.0.23.10 P=5230 ADMIN=127.0.23.10:9523 C=127.0.23.11
command -v fstrm_capture >/dev/null || fail "fstrm_capture (fstrm-bin) is not installed"
command -v dnstap-read >/dev/null || fail "dnstap-read (bind9-dnsutils) is not installed"
write_config() {  # $1 = the sink
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: dt-1}
listen: {dns: ["$A:$P"]}
admin: {listen: "$ADMIN"}
geoip:
  networks: {10.1.0.0/16: IE, 10.2.0.0/16: US}
zones:
  - origin: tap.test
    nameservers: [{name: ns1.tap.test, addresses: [$A]}]
hosts:
  - name: shop.tap.test
    endpoints: [192.0.2.20]
    loadBalancing: {geo: IE, weight: 100}
  - name: api.tap.test
    endpoints: [192.0.2.30]
dnstap: {sink: "$1", identity: ns-test}
YAML
}
ask() { dig @$A -p $P -b $C +norec +time=2 +tries=1 "$@"; }

# 1. A file, read by dnstap-read and glbd explain --dnstap.
write_config "$WORK/tap.fstrm"
start_glbd dt "$WORK/glbd.yaml"
wait_for 10 curl -sf "http://$ADMIN/readyz" || fail "glbd did not come up"
: > "$WORK/digs"
ask shop.tap.test A +subnet=10.1.0.0/16 >> "$WORK/digs"   # ECS, load-balanced: IE
ask shop.tap.test A +tcp >> "$WORK/digs"                  # TCP
ask api.tap.test A >> "$WORK/digs"                        # a simple host
ask nope.tap.test A >> "$WORK/digs"                       # NXDOMAIN
ask www.example.org A >> "$WORK/digs"                     # REFUSED: not our zone
N=5
[[ $(grep -c 'status: NOERROR' "$WORK/digs") == 3 && $(grep -c 'status: NXDOMAIN' "$WORK/digs") == 1 &&
   $(grep -c 'status: REFUSED' "$WORK/digs") == 1 ]] || fail "the queries did not get the expected rcodes"
stop_glbd dt
dnstap-read -y "$WORK/tap.fstrm" > "$WORK/tap.yaml" || fail "dnstap-read cannot read glbd's file"
count() { grep -c -- "$1" "$WORK/tap.yaml" || true; }
[[ $(count 'type: AUTH_QUERY') == "$N" && $(count 'type: AUTH_RESPONSE') == "$N" ]] ||
    fail "want $N AUTH_QUERY and $N AUTH_RESPONSE, got $(count 'type: AUTH_QUERY') and $(count 'type: AUTH_RESPONSE')"
[[ $(count "query_address: \"$C\"") == $((2 * N)) && $(count "response_address: \"$A\"") == $((2 * N)) ]] ||
    fail "client or server addresses wrong"
[[ $(count "response_port: $P") == $((2 * N)) && $(count 'socket_protocol: TCP') == 2 ]] || fail "ports or protocol wrong"
[[ $(count 'identity: ns-test') == $((2 * N)) && $(count 'version: glbd ') == $((2 * N)) ]] || fail "identity or version"
[[ $(count 'CLIENT-SUBNET: 10.1.0.0/16') -ge 2 ]] || fail "the ECS option is not in the logged messages"
# Each exchange's id twice (query and response), and each response's size as dig received it.
for id in $(sed -n 's/.*status: [A-Z]*, id: \([0-9]*\)$/\1/p' "$WORK/digs"); do
    [[ $(count "id: $id\$") == 2 ]] || fail "id $id is not logged once as a query and once as a response"
done
sizes_dig=$(sed -n 's/^;; MSG SIZE  rcvd: \([0-9]*\)$/\1/p' "$WORK/digs" | sort -n | tr '\n' ' ')
sizes_tap=$(awk '/type: AUTH_RESPONSE/ {r = 1} /type: AUTH_QUERY/ {r = 0} r && /message_size:/ {sub("b", "", $2); print $2}' \
    "$WORK/tap.yaml" | sort -n | tr '\n' ' ')
[[ $sizes_dig == "$sizes_tap" ]] || fail "response sizes: dig received '$sizes_dig', dnstap logged '$sizes_tap'"
pass "dnstap file: $N queries and $N responses (UDP, TCP, ECS, NXDOMAIN, REFUSED) with addresses, ids and sizes, as dnstap-read reads them"

"$GLBD" explain --dnstap "$WORK/tap.fstrm" > "$WORK/explained" 2> "$WORK/explained.err" || fail "glbd explain --dnstap failed: $(cat "$WORK/explained.err")"
grep "shop.tap.test. A NOERROR: A 192.0.2.20 | host=shop.tap.test cluster=dt-1 entry=- geo=IE group=country client=IE/networks/16(ecs) fallback=no fail-open=no serial=" "$WORK/explained" |
    grep -c "UDP $C#" | grep -qx 1 || { cat "$WORK/explained"; fail "explain --dnstap: the ECS client's reason"; }
grep -q "TCP $C#[0-9]* shop.tap.test. A NOERROR: A 192.0.2.20 | .*group=all client=-/-/[0-9]*(source)" "$WORK/explained" ||
    { cat "$WORK/explained"; fail "explain --dnstap: the TCP client's reason (no geo group for it: all)"; }
grep -q "www.example.org. A REFUSED$" "$WORK/explained" || fail "explain --dnstap: the REFUSED answer"
grep -q '^5 frame(s)\|^10 frame(s), 5 response(s), 0 not understood' "$WORK/explained.err" || fail "explain --dnstap: $(cat "$WORK/explained.err")"
pass "dnstap: glbd explain --dnstap prints each answer with the reason it was chosen"

# The file holds every client's address and question: created 0640 whatever the umask, an existing one's
# "other" bits taken away; a FIFO is refused (said in the log) and cannot hold the stop.
[[ $(stat -c %a "$WORK/tap.fstrm") == 640 ]] || fail "the dnstap file was created $(stat -c %a "$WORK/tap.fstrm"), not 640"
: > "$WORK/open.fstrm"
chmod 0666 "$WORK/open.fstrm"
write_config "$WORK/open.fstrm"
start_glbd dtm "$WORK/glbd.yaml"
wait_for 10 curl -sf "http://$ADMIN/readyz" || fail "glbd did not come up (existing file)"
wait_for 10 bash -c "[[ \$(stat -c %a '$WORK/open.fstrm') == 660 ]]" || fail "an existing file kept mode $(stat -c %a "$WORK/open.fstrm")"
stop_glbd dtm
mkfifo "$WORK/tap.fifo"
write_config "$WORK/tap.fifo"
start_glbd dtf "$WORK/glbd.yaml"
wait_for 10 curl -sf "http://$ADMIN/readyz" || fail "glbd did not come up (FIFO)"
wait_for 10 grep -q "dnstap: cannot open $WORK/tap.fifo (not a regular file" "$WORK/dtf.log" || fail "the FIFO is not refused in the log"
ask shop.tap.test A | grep -q "status: NOERROR" || fail "no answer beside a FIFO sink"
t0=$(now_ms)
stop_glbd dtf
(( $(now_ms) - t0 < 5000 )) || fail "the stop with a FIFO sink took $(( $(now_ms) - t0 )) ms"
pass "dnstap file: created 0640, an existing one's other bits taken away; a FIFO refused and the stop not held"

# 2. A Unix socket read by fstrm_capture; the reader killed and restarted mid-run.
capture() {  # capture FILE: fstrm_capture on the socket, writing FILE; sets CAP
    fstrm_capture -t protobuf:dnstap.Dnstap -u "$WORK/tap.sock" -w "$1" >"$WORK/capture.log" 2>&1 &
    CAP=$!
    PIDS+=("$CAP")
    wait_for 10 test -S "$WORK/tap.sock" || fail "fstrm_capture did not make its socket"
}
frames_in() { dnstap-read "$1" 2>/dev/null | wc -l; }
capture "$WORK/cap1.fstrm"
write_config "unix:$WORK/tap.sock"
start_glbd dt2 "$WORK/glbd.yaml"
wait_for 20 bash -c "[[ \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_connected\" {print \$2}') == 1 ]]" ||
    fail "glbd did not connect to fstrm_capture"
for i in $(seq 1 10); do ask shop.tap.test A +short >/dev/null; done
wait_for 10 bash -c "[[ \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_frames_total\" {print \$2}') == 20 ]]" ||
    fail "20 frames not written (frames_total $(metric glbd_dnstap_frames_total))"
kill -INT "$CAP"; wait "$CAP" 2>/dev/null || true
rm -f "$WORK/tap.sock"
(( $(frames_in "$WORK/cap1.fstrm") == 20 )) || fail "fstrm_capture wrote $(frames_in "$WORK/cap1.fstrm") messages, want 20"
# No reader: every query is still answered; the frames are dropped and counted.
for i in $(seq 1 20); do
    [[ $(ask shop.tap.test A +short) == 192.0.2.20 ]] || fail "no answer while the dnstap reader is gone"
done
wait_for 10 bash -c "(( \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_dropped_total\" {print \$2}') + \
    \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_frames_total\" {print \$2}') == 60 ))" ||
    fail "frames written $(metric glbd_dnstap_frames_total) + dropped $(metric glbd_dnstap_dropped_total) != 60"
dropped=$(metric glbd_dnstap_dropped_total)
(( dropped >= 38 )) || fail "only $dropped frames dropped while no reader was there"
[[ $(metric glbd_dnstap_connected) == 0 ]] || fail "glbd_dnstap_connected is not 0 without a reader"
# A reader again: glbd reconnects (backoff at most 5 s) and writes.
capture "$WORK/cap2.fstrm"
wait_for 20 bash -c "[[ \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_connected\" {print \$2}') == 1 ]]" ||
    fail "glbd did not reconnect to the new reader"
written=$(metric glbd_dnstap_frames_total)
for i in $(seq 1 5); do ask api.tap.test A +short >/dev/null; done
wait_for 10 bash -c "(( \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_frames_total\" {print \$2}') == $written + 10 ))" ||
    fail "the 10 new frames were not written after reconnecting"
stop_glbd dt2
kill -INT "$CAP"; wait "$CAP" 2>/dev/null || true
(( $(frames_in "$WORK/cap2.fstrm") == 10 )) || fail "the second reader got $(frames_in "$WORK/cap2.fstrm") messages, want 10"
pass "dnstap socket: fstrm_capture reads every frame; killed, glbd answers on and counts $dropped drops; restarted, glbd reconnects"

# 3. A reader that answers the handshake with garbage: refused, glbd answers on, drops counted.
rm -f "$WORK/tap.sock"
python3 - "$WORK/tap.sock" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8)
end = time.monotonic() + 60
s.settimeout(1)
while time.monotonic() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.settimeout(1)
    try:
        c.recv(4096)                                        # READY
        c.sendall(b"\x00\x00\x00\x00\x00\x00\x00\x08\xde\xad\xbe\xef\x01\x02\x03\x04")  # not an ACCEPT
    except OSError:
        pass
    c.close()
PY
PIDS+=($!)
wait_for 10 test -S "$WORK/tap.sock" || fail "the bad reader did not start"
start_glbd dt3 "$WORK/glbd.yaml"
wait_for 10 curl -sf "http://$ADMIN/readyz" || fail "glbd did not come up beside a bad reader"
for i in $(seq 1 5); do [[ $(ask api.tap.test A +short) == 192.0.2.30 ]] || fail "no answer beside a bad reader"; done
wait_for 10 bash -c "(( \$(curl -s http://$ADMIN/metrics | awk '\$1 == \"glbd_dnstap_dropped_total\" {print \$2}') == 10 ))" ||
    fail "the 10 frames were not counted as dropped ($(metric glbd_dnstap_dropped_total))"
[[ $(metric glbd_dnstap_connected) == 0 && $(metric glbd_dnstap_frames_total) == 0 ]] || fail "connected to a bad reader"
grep -q "dnstap: cannot open unix:$WORK/tap.sock (no reader, or its handshake failed)" "$WORK/dt3.log" ||
    fail "the refused handshake is not logged"
stop_glbd dt3
pass "dnstap: a reader with a malformed handshake is refused; glbd answers on and counts the drops"
