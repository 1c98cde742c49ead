#!/usr/bin/env bash
# The admin endpoint's slots against slow clients: 20 client addresses each keep 4 connections open that send
# half a request line and nothing more (80 for 64 slots), reopening each one the moment it is closed, for
# 8 s. /healthz (the kubelet's probe) must answer every time meanwhile: headers are due within 2 s, a
# full table closes its oldest connection still sending headers, and one address holds at most 4. (On the old
# code, 16 per address and 10 s each: /healthz failed while the slots were held.)
source "$(dirname "$0")/lib.sh"
A=127.0.22.1 P=5432 AP=9432 PROBE=127.0.22.2
cat > "$WORK/a.yaml" <<YAML
cluster: {id: a, instance: a-0}
listen: {dns: ["$A:$P"]}
admin: {listen: "$A:$AP"}
zones: [{origin: slots.test, nameservers: [{name: ns.slots.test, addresses: [$A]}]}]
YAML
start_glbd a "$WORK/a.yaml"
wait_for 10 curl -sf "http://$A:$AP/healthz" -o /dev/null || fail "admin did not come up"
python3 - "$A" "$AP" 8 "$WORK/slow.out" <<'PY' &
import socket, sys, time, selectors
host, port, seconds, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
sel = selectors.DefaultSelector()
opened = 0
def open_one(src):
    global opened
    s = socket.socket()
    s.bind((src, 0))
    s.setblocking(False)
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [src, False])
    opened += 1
sources = [f"127.0.22.{10 + i}" for i in range(20)]
for src in sources:
    for _ in range(4):
        open_one(src)
end = time.time() + seconds
while time.time() < end:
    for key, ev in sel.select(timeout=0.05):
        s, (src, sent) = key.fileobj, key.data
        if ev & selectors.EVENT_WRITE and not sent:
            try:
                s.send(b"GET /metr")  # half a request line, then nothing
            except OSError:
                pass
            sel.modify(s, selectors.EVENT_READ, [src, True])
            continue
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:  # closed by glbd: take the slot again
            sel.unregister(s)
            s.close()
            time.sleep(0.001)  # a crowd, not a busy loop: the test shares two cores
            open_one(src)
open(out, "w").write(f"{opened}\n")
PY
slow=$!
PIDS+=($slow)
sleep 1
ok=0 failed=0
for i in $(seq 1 24); do
    if [[ $(curl -s -m 2 --interface $PROBE -o /dev/null -w '%{http_code}' "http://$A:$AP/healthz") == 200 ]]; then
        ok=$((ok + 1))
    else
        failed=$((failed + 1))
    fi
    sleep 0.25
done
wait $slow || fail "the slow clients failed"
opened=$(cat "$WORK/slow.out")
(( failed == 0 )) || fail "/healthz failed $failed of $((ok + failed)) times while slow clients held the slots ($opened connections opened)"
held=$(ss -Htn state established "( sport = :$AP )" src $A | wc -l)
pass "/healthz $ok of $ok while 20 addresses x 4 slow clients reopened $opened connections in 8 s"
