#!/usr/bin/env bash
# A change of DNSSEC keys across a restart is checked as one at a reload is (RFC 7583): glbd keeps since when
# each key is published in stateDir, and refuses to start (exit 1, the reason logged) with keys that would
# break validation: a new CSK in place of the old one at once, or the old one removed before the new one has
# been published for the hold time (here 3 s: TTLs of 2 s, no peers). Once that time has passed, the same
# start is taken. A history file that cannot be read is ignored with a warning, not fatal.
source "$(dirname "$0")/lib.sh"
ZONE=glb.example.com ADDR=127.0.23.146 PORT=5646
k1=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec (1)"
k2=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec (2)"
config() {  # KEYS...
    cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: a, instance: a-0}
listen: {dns: ["$ADDR:$PORT"]}
stateDir: $WORK/state
zones:
  - origin: $ZONE
    ttl: 2
    soa: {minimum: 2}
    nameservers: [{name: ns.$ZONE, addresses: [$ADDR]}]
    dnssec: {keys: [$(IFS=,; echo "$*")]}
hosts:
  - {name: shop.$ZONE, ttl: 2, endpoints: [192.0.2.10]}
YAML
}
published() { dnskey_tags "$ADDR" "$PORT" "$ZONE"; }
runs() {  # KEYS...: starts glbd with these keys; true once it serves them, and it keeps running
    config "$@"
    start_glbd a "$WORK/glbd.yaml"
    local want
    want=$(for k in "$@"; do key_tag "$k"; done | sort -n | xargs)
    serves() { [[ $(published) == "$want" ]]; }
    wait_for 20 serves || fail "glbd does not publish $want within 20 s: $(tail -n 5 "$WORK/a.log")"
}
refused() {  # KEYS...: glbd must exit 1 at start, saying why
    config "$@"
    local rc=0
    timeout 20 "$GLBD" serve --config "$WORK/glbd.yaml" > "$WORK/refused.log" 2>&1 || rc=$?
    ((rc == 1)) || fail "glbd with keys $(for k in "$@"; do key_tag "$k"; done | xargs) exited $rc, not 1: $(tail -n 5 "$WORK/refused.log")"
    grep "refusing to start: zone $ZONE: " "$WORK/refused.log" || fail "no reason given: $(cat "$WORK/refused.log")"
}

runs "$k1"
[[ $(grep -c " " "$WORK/state/dnssec-keys") == 2 ]] || fail "stateDir's history: $(cat "$WORK/state/dnssec-keys")"
stop_glbd a
refused "$k2" > "$WORK/why"
grep -q "key tag $(key_tag "$k2") would sign the answers alone" "$WORK/why" || fail "another reason: $(cat "$WORK/why")"
pass "a restart with a new CSK in place of the old one is refused: $(cut -c1-150 "$WORK/why")..."

runs "$k1" "$k2"
started=$(date +%s%N)
stop_glbd a
refused "$k2" > "$WORK/why"
grep -q "removing key tag $(key_tag "$k1") now would break validation: key tag $(key_tag "$k2") was published" "$WORK/why" ||
    fail "another reason: $(cat "$WORK/why")"
pass "removing the old CSK at the next restart, before the hold time, is refused"

# The hold time (3 s) after the new key's first publication, the same start is taken.
runs "$k1" "$k2"
while (( $(date +%s%N) < started + 3500000000 )); do sleep 0.1; done
stop_glbd a
runs "$k2"
[[ $(published) == "$(key_tag "$k2")" ]] || fail "publishes $(published), not $(key_tag "$k2")"
stop_glbd a
pass "after the hold time the old key's removal at a restart is taken"

echo "not a history" > "$WORK/state/dnssec-keys"
runs "$k1"
grep -q "warning .*dnssec-keys: line 1: not \"glbd-dnssec-keys 2\": ignored" "$WORK/a.log" ||
    fail "no warning for a bad history: $(cat "$WORK/a.log")"
pass "a history that cannot be read is ignored with a warning"
