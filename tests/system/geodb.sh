#!/usr/bin/env bash
# geoip.database with Debian's location database (libloc-database): glbd check loads it as serve does and
# names it; serve places real networks with the scope of the block that decided; a garbage file is refused
# by check as by serve; with verify, a tampered copy is refused at start and at reload (the running config
# stays).
source "$(dirname "$0")/lib.sh"
A=127.0.0.180 P=5482
DB=/var/lib/location/database.db
[[ -e $DB ]] || fail "$DB is missing: apt-get install libloc-database location"
# A second cluster (us, GEO-NA) comes from a state file, so that the answer depends on the client.
now=$(now_ms)
mkdir -p "$WORK/state"
cat > "$WORK/state/state.json" <<JSON
{"saved":$now,"origins":[{"cluster":"us","instance":"us-0","version":$now,"heartbeat":$now,"overrides":{},
 "hosts":[{"host":"eu.geo.test","ttl":60,"loadBalancing":{"weight":1,"geo":"GEO-NA","defaultGeo":false},
 "endpoints":[{"target":"198.51.100.1","healthy":true}]}]}]}
JSON
config() {  # DATABASE [VERIFY] -> $WORK/glbd.yaml
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: g, instance: g-0}
listen: {dns: ["$A:$P"]}
geoip: {database: $1, verify: ${2:-true}}
zones: [{origin: geo.test, nameservers: [{name: ns.geo.test, addresses: [$A]}]}]
hosts:
  - {name: eu.geo.test, endpoints: [192.0.2.1], loadBalancing: {weight: 1, geo: GEO-EU}}
$(peers_yaml --dead 1h)
stateDir: $WORK/state
YAML
}
config "$DB"
out=$("$GLBD" check --config "$WORK/glbd.yaml") || fail "check refused Debian's database: $out"
grep -q "location (libloc) database $DB from IPFire.*networks in .* ranges .*signature verified" <<<"$out" || fail "check does not name the database: $out"
pass "glbd check: ${out#*geo: }"

head -c 4096 /dev/urandom > "$WORK/garbage.db"
config "$WORK/garbage.db" false
rc=0; "$GLBD" check --config "$WORK/glbd.yaml" > "$WORK/check.out" 2>&1 || rc=$?
(( rc == 1 )) || fail "check accepted a garbage database (exit $rc): $(cat "$WORK/check.out")"
grep -q "garbage.db" "$WORK/check.out" || fail "check did not name the garbage file: $(cat "$WORK/check.out")"
pass "a garbage database fails glbd check: $(head -1 "$WORK/check.out")"

# A copy with one byte changed in the middle: its signature no longer verifies.
cp "$DB" "$WORK/tampered.db"
size=$(stat -c %s "$WORK/tampered.db")
printf '\x5a' | dd of="$WORK/tampered.db" bs=1 seek=$((size / 2)) conv=notrunc status=none
config "$WORK/tampered.db"
rc=0; "$GLBD" serve --config "$WORK/glbd.yaml" > "$WORK/tampered.log" 2>&1 || rc=$?
(( rc == 1 )) || fail "serve started with a tampered database (exit $rc)"
grep -q "signature does not verify" "$WORK/tampered.log" || fail "no clear error: $(tail -2 "$WORK/tampered.log")"
pass "serve refuses a tampered database: $(grep -o 'signature does not verify.*' "$WORK/tampered.log" | head -1)"

config "$DB"
start_glbd g "$WORK/glbd.yaml"
wait_for 60 q $A $P geo.test SOA || fail "server did not come up"
ecs() {  # SUBNET -> "answer | scope"
    local out
    out=$(dig @$A -p $P eu.geo.test A +subnet="$1" +norec +time=2 +tries=1)
    echo "$(awk '/^eu.geo.test.*IN\tA/ {print $5}' <<<"$out")|$(sed -n 's/.*CLIENT-SUBNET: [^/]*\/[0-9]*\/\([0-9]*\).*/\1/p' <<<"$out")"
}
nl=$(ecs 193.0.0.0/21) v6=$(ecs 2001:67c:2e8::/48) us=$(ecs 198.41.0.0/24)
[[ ${nl%|*} == 192.0.2.1 ]] && (( ${nl#*|} >= 1 && ${nl#*|} <= 21 )) || fail "RIPE NCC 193.0.0.0/21: '$nl'"
[[ ${v6%|*} == 192.0.2.1 ]] && (( ${v6#*|} >= 1 && ${v6#*|} <= 48 )) || fail "RIPE NCC 2001:67c:2e8::/48: '$v6'"
[[ ${us%|*} == 198.51.100.1 ]] && (( ${us#*|} >= 1 && ${us#*|} <= 24 )) || fail "a.root-servers.net 198.41.0.0/24: '$us'"
pass "real networks located: NL 193.0.0.0/21 -> eu (scope ${nl#*|}), NL 2001:67c:2e8::/48 -> eu (scope ${v6#*|}), US 198.41.0.0/24 -> us (scope ${us#*|})"
rss=$(awk '/VmRSS/ {print $2}' /proc/$PID_g/status)
echo "RSS with the location database loaded: $rss kB"

# A reload to the tampered copy is refused; the running config stays.
config "$WORK/tampered.db"
kill -HUP "$PID_g"
wait_for 60 grep -q "reload failed: .*signature does not verify" "$WORK/g.log" || fail "the tampered reload was not refused"
[[ $(ecs 193.0.0.0/21) == "$nl" ]] || fail "the refused reload changed the answers"
pass "a reload to a tampered database is refused and the running one stays"
