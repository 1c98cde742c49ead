#!/usr/bin/env bash
# A KSK roll's last step waits for the parent (zones[].dnssec.parent): NSD serves the parent zone with the
# DS that BIND's dnssec-dsfromkey makes of glbd's first CSK. With a second CSK published for the hold time,
# removing the first is refused while the parent's DS set points at it alone, and while a server of the
# parent does not answer; once NSD serves the second key's DS too, it is refused until the DS set's TTL (3 s)
# has passed since glbd first saw it, at a reload and across a restart (kept in stateDir), then taken.
source "$(dirname "$0")/lib.sh"
for tool in nsd dnssec-dsfromkey; do
    command -v "$tool" > /dev/null || fail "$tool is not installed (nsd, bind9-utils: .ci/deps)"
done
ZONE=glb.example.com PARENT=example.com GLBD_ADDR=127.0.23.147 NSD=127.0.23.148 SILENT=127.0.23.149 PORT=5647
k1=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec (1)"
k2=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec (2)"
t1=$(key_tag "$k1") t2=$(key_tag "$k2")

mkdir -p "$WORK/parent"
parent_zone() {  # SERIAL KEYS...: the parent zone, delegating to glbd with the keys' DS (TTL 3 s)
    local serial=$1 k
    shift
    {
        echo "\$ORIGIN $PARENT."
        echo "\$TTL 3"
        echo "@ IN SOA ns.$PARENT. hostmaster.$PARENT. $serial 3600 600 86400 3"
        echo "@ IN NS ns.$PARENT."
        echo "ns IN A $NSD"
        echo "glb IN NS ns.glb.$PARENT."
        echo "ns.glb IN A $GLBD_ADDR"
        for k in "$@"; do dnssec-dsfromkey -2 "$k.key" | sed -E 's/ IN DS / 3 IN DS /'; done
    } > "$WORK/parent/zone.tmp" && mv "$WORK/parent/zone.tmp" "$WORK/parent/zone"
}
parent_zone 1 "$k1" || fail "dnssec-dsfromkey"
start_nsd nsd "$PORT" "$PARENT" "$WORK/parent/zone" "$NSD"
ds_tags() { dig +norec +short @"$NSD" -p "$PORT" "$ZONE" DS | awk '{print $1}' | sort -n | xargs; }
[[ $(ds_tags) == "$t1" ]] || fail "NSD serves DS $(ds_tags), not $t1"

config() {  # PARENT-SERVERS (comma-separated) KEYS...
    local parent p
    parent=$(for p in ${1//,/ }; do printf '"%s:%s", ' "$p" "$PORT"; done)
    parent=${parent%, }
    shift
    cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: a, instance: a-0}
listen: {dns: ["$GLBD_ADDR:$PORT"]}
admin: {listen: "$GLBD_ADDR:9647"}
stateDir: $WORK/state
zones:
  - origin: $ZONE
    ttl: 1
    soa: {minimum: 1}
    nameservers: [{name: ns.$ZONE, addresses: [$GLBD_ADDR]}]
    dnssec: {keys: [$(IFS=,; echo "$*")], parent: [$parent]}
hosts:
  - {name: shop.$ZONE, ttl: 1, endpoints: [192.0.2.10]}
YAML
}
published() { dnskey_tags "$GLBD_ADDR" "$PORT" "$ZONE"; }
serves() {  # TAGS: glbd publishes exactly these, within 20 s
    local want=$1
    publishes_wanted() { [[ $(published) == "$want" ]]; }
    wait_for 20 publishes_wanted
}
verdict() { reload_verdict a; }
expect() {  # WHAT LINE PATTERN
    grep -qE "$3" <<< "$2" || fail "$1: $2"
}

config "$NSD" "$k1"
start_glbd a "$WORK/glbd.yaml"
serves "$t1" || fail "glbd does not publish $t1: $(tail -n 5 "$WORK/a.log")"
config "$NSD" "$k1" "$k2"
expect "adding the second CSK" "$(verdict)" "reloaded "
serves "$(echo -e "$t1\n$t2" | sort -n | xargs)" || fail "glbd does not publish both keys"
sleep 3  # the hold time of the DNSKEY set: TTLs of 1 s, no peers

config "$NSD" "$k2"
line=$(verdict)
expect "the parent points at the old key alone" "$line" \
    "reload refused: zone $ZONE: removing KSK tag $t1 would break the chain of trust: the parent's DS set at $NSD:$PORT points at key tag $t1 and at no KSK that stays \(tag $t2\)"
pass "removing the old CSK while the parent's DS points at it alone is refused: ${line#*reload refused: }"

config "$SILENT" "$k2"
line=$(verdict)
expect "a parent that does not answer" "$line" "reload refused: .*its server $SILENT:$PORT gave no DS set"
pass "a parent server that does not answer holds the removal: ${line#*reload refused: }"

# Eight parent servers that take the connection and never answer (a tarpit): asked at once over TCP within one
# budget (3 s; it was 2 s each, one after the other, on the control thread), while the admin endpoint answers.
TARPITS=$(for i in 150 151 152 153 154 155 156 157; do printf '127.0.23.%s,' "$i"; done)
python3 - "$PORT" ${TARPITS//,/ } > "$WORK/tarpit.log" 2>&1 <<'PY' &
import socket, sys, time
port, listeners, held = int(sys.argv[1]), [], []
for addr in sys.argv[2:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(16)
    s.setblocking(False)
    listeners.append(s)
print("ready", flush=True)
for _ in range(600):  # at most a minute
    for s in listeners:
        try:
            held.append(s.accept()[0])  # taken, never answered
        except BlockingIOError:
            pass
    time.sleep(0.1)
PY
PIDS+=($!)
wait_for 10 grep -q ready "$WORK/tarpit.log" || fail "the tarpits did not start"
config "${TARPITS%,}" "$k2"
before=$(grep -cE "reloaded |reload (refused|failed)" "$WORK/a.log")
t0=$(now_ms)
kill -HUP "${GLBD_PIDS[a]}"
slowest=0
while (( $(grep -cE "reloaded |reload (refused|failed)" "$WORK/a.log") == before && $(now_ms) - t0 < 20000 )); do
    s0=$(now_ms)
    curl -sf --max-time 5 "http://$GLBD_ADDR:9647/metrics" > /dev/null || fail "/metrics failed while the parents were asked"
    (( $(now_ms) - s0 > slowest )) && slowest=$(( $(now_ms) - s0 ))
    sleep 0.1
done
took=$(( $(now_ms) - t0 ))
line=$(grep -E "reloaded |reload (refused|failed)" "$WORK/a.log" | sed -n "$((before + 1))p")
expect "eight silent parent servers" "$line" "reload refused: .*its server 127.0.23.15[0-7]:$PORT gave no DS set \(no answer over TCP in 3000 ms\)"
(( took < 6000 )) || fail "the reload took $took ms with eight silent parents (want one budget of 3 s)"
(( slowest < 1000 )) || fail "/metrics took $slowest ms while the parents were asked"
grep -q "reload: a KSK goes; asking the parent's servers (at most 3 s)" "$WORK/a.log" || fail "the wait is not logged"
pass "eight silent parent servers: refused after $took ms, /metrics answered within $slowest ms meanwhile"

config "$GLBD_ADDR" "$k2"  # glbd itself, as the parent by mistake: its NODATA for DS proves nothing
line=$(verdict)
expect "the zone's own server as the parent" "$line" "reload refused: .*its server $GLBD_ADDR:$PORT gave no DS set \(no DS and no SOA of a zone above $ZONE"
pass "the zone's own server, given as the parent, holds the removal: ${line#*reload refused: }"

# Two servers of the parent that disagree (one has the new DS, the other not yet): the KSK waits.
NSD2=127.0.23.158
mkdir -p "$WORK/parent2"
parent_zone 2 "$k1" "$k2" && mv "$WORK/parent/zone" "$WORK/parent2/zone"
parent_zone 1 "$k1"
NSD1_PID=$NSD_PID
start_nsd nsd2 "$PORT" "$PARENT" "$WORK/parent2/zone" "$NSD2"
NSD_PID=$NSD1_PID  # (SIGHUP below is for the first)
config "$NSD,$NSD2" "$k2"
line=$(verdict)
expect "two parent servers that disagree" "$line" "reload refused: zone $ZONE: the parent's servers disagree \($NSD:$PORT holds 1 DS, $NSD2:$PORT holds 2 DS\)"
pass "parent servers that disagree hold the removal: ${line#*reload refused: }"

parent_zone 2 "$k1" "$k2"
kill -HUP "$NSD_PID"
wait_for 20 bash -c "[[ \$(dig +norec +short @$NSD -p $PORT $ZONE DS | wc -l) == 2 ]]" || fail "NSD does not serve both DS: $(ds_tags)"
config "$NSD" "$k2"
line=$(verdict)
seen=$(date +%s%N)
expect "the parent's new DS just seen" "$line" \
    "removing KSK tag $t1 would break validation: the parent's DS set has pointed at key tag $t2 for 0 s .* for its TTL, 3 s: remove it in [23] s or later"
grep -qE "^$ZONE [0-9]+ [A-Za-z0-9+/=]+ ds=[0-9]+$" "$WORK/state/dnssec-keys" || fail "no ds= in stateDir: $(cat "$WORK/state/dnssec-keys")"
pass "the parent's DS of the new key, just published, holds the removal for its TTL: ${line#*reload refused: }"

# Across a restart: what glbd saw is in stateDir, so the same change is refused at once there too.
stop_glbd a
rc=0
timeout 20 "$GLBD" serve --config "$WORK/glbd.yaml" > "$WORK/refused.log" 2>&1 || rc=$?
((rc == 1)) || fail "a restart removing the old key exited $rc, not 1: $(tail -n 5 "$WORK/refused.log")"
grep -qE "refusing to start: zone $ZONE: removing KSK tag $t1 would break validation: the parent's DS set has pointed at key tag $t2 for [0-9] s" "$WORK/refused.log" ||
    fail "another reason: $(cat "$WORK/refused.log")"
pass "a restart inside the DS's TTL is refused alike"

config "$NSD" "$k1" "$k2"
start_glbd a "$WORK/glbd.yaml"
serves "$(echo -e "$t1\n$t2" | sort -n | xargs)" || fail "glbd does not publish both keys after the restart"
while (( $(date +%s%N) < seen + 3500000000 )); do sleep 0.1; done
config "$NSD" "$k2"
expect "the DS's TTL passed" "$(verdict)" "reloaded "
serves "$t2" || fail "glbd publishes $(published), not $t2"
grep -q "the parent's server $NSD:$PORT holds 2 DS record(s) (TTL 3 s): the KSK may go" "$WORK/a.log" || fail "no log line for the parent's DS"
pass "once the DS set's TTL has passed, the old CSK goes: glbd publishes $(published)"
