#!/usr/bin/env bash
# The DNSKEY sets in sync (issue 38, part 6): two peered clusters, ie and us, sign glb.example.com. Each
# report carries the sets its sender publishes; while both publish the same, /v1/summary shows the zone's
# set (its tag and the digest, computed here independently) and no mismatch, and `glbd check` says the peer
# publishes the same set. When us is reloaded with one more key (a second CSK, from BIND's dnssec-keygen), ie shows
# us as a mismatch in /v1/summary, /v1/state, `glbd status`, the metric glbd_dnssec_key_mismatch and its
# log, and `glbd check` of ie's config warns; back on the same keys, all of it clears. (TTLs of 1 s keep the
# hold time before a key may be removed again short: RFC 7583, docs/dnssec.md.)
source "$(dirname "$0")/lib.sh"
command -v dnssec-keygen > /dev/null || fail "dnssec-keygen is not installed (bind9-utils: .ci/deps)"
ZONE=glb.example.com
IE=127.0.23.116 US=127.0.23.117 PORT=5616 ADMIN_PORT=5617
key=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec"
second=$(cd "$WORK" && dnssec-keygen -q -a ECDSAP256SHA256 -f KSK "$ZONE") || fail "dnssec-keygen"
second=$WORK/$second

config() {  # CLUSTER ADDRESS KEYS...
    local c=$1 addr=$2
    shift 2
    cat <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["$addr:$PORT"]}
admin: {listen: "$addr:$ADMIN_PORT"}
zones:
  - origin: $ZONE
    ttl: 1
    soa: {minimum: 1}
    nameservers: [{name: ns-ie.$ZONE, addresses: [$IE]}, {name: ns-us.$ZONE, addresses: [$US]}]
    dnssec: {keys: [$(IFS=,; echo "$*")]}
hosts:
  - name: shop.$ZONE
    ttl: 1
    endpoints: [192.0.2.10]
$(peers_yaml --interval 300ms --dead 5s "$IE:$PORT" "$US:$PORT")
YAML
}
config ie "$IE" "$key" > "$WORK/ie.yaml"
config us "$US" "$key" > "$WORK/us.yaml"
start_glbd ie "$WORK/ie.yaml"
start_glbd us "$WORK/us.yaml"

summary() { curl -sf "http://$IE:$ADMIN_PORT/v1/summary"; }
# The id glbd shows for a set of .key files: the tags ascending, and the first 8 bytes of a SHA-256 over the
# DNSKEY RDATAs (each with its 2-byte length) in ascending byte order: computed here from the files alone.
id_of() {
    python3 - "$@" <<'PY'
import base64, hashlib, re, struct, sys
rdatas = []
for f in sys.argv[1:]:
    line = [l for l in open(f + ".key") if not l.startswith(";")][0].split()
    i = line.index("DNSKEY")
    rdatas.append(struct.pack(">HBB", int(line[i + 1]), int(line[i + 2]), int(line[i + 3])) +
                  base64.b64decode("".join(line[i + 4:])))
def tag(r):  # RFC 4034 appendix B
    ac = sum(b << 8 if i % 2 == 0 else b for i, b in enumerate(r))
    return (ac + (ac >> 16)) & 0xFFFF
rdatas.sort()
tags = sorted(tag(r) for r in rdatas)
print(",".join(map(str, tags)), hashlib.sha256(b"".join(struct.pack(">H", len(r)) + r for r in rdatas)).hexdigest()[:16])
PY
}
one=$(id_of "$key") || fail "computing the key's id"
two=$(id_of "$key" "$second") || fail "computing the two keys' id"
[[ $one =~ ^[0-9]+\ [0-9a-f]{16}$ && $two =~ ^[0-9]+,[0-9]+\ [0-9a-f]{16}$ ]] || fail "ids: '$one', '$two'"

sees_us() { summary | jq -e '.peers[] | select(.id == "us/us-0" and .alive)' > /dev/null; }
wait_for 30 sees_us || fail "ie did not hear from us within 30 s: $(summary)"
out=$(summary | jq -c .dnssec)
[[ $out == "{\"keyMismatches\":[],\"zones\":{\"$ZONE\":\"$one\"}}" ]] || fail "/v1/summary's dnssec, same keys: $out (want $one)"
out=$("$GLBD" check --config "$WORK/ie.yaml") || fail "glbd check: $out"
grep -qF "zone $ZONE: peer $US:$PORT publishes the same DNSKEY set ($one)" <<< "$out" || fail "glbd check: $out"
grep -q "warning" <<< "$out" && fail "glbd check warns with the same keys: $out"
pass "same keys: /v1/summary shows the set ($one) and no mismatch; glbd check says the peer publishes the same"

# us publishes one more key.
config us "$US" "$key" "$second" > "$WORK/us.yaml"
kill -HUP "$PID_us"
mismatch() { summary | jq -e --arg z "$ZONE" '.dnssec.keyMismatches[] | select(.instance == "us/us-0" and .zone == $z)'; }
wait_for 30 mismatch > /dev/null || fail "ie shows no mismatch within 30 s of us's reload: $(summary | jq -c .dnssec)"
out=$(mismatch | jq -c .)
[[ $out == "{\"alive\":true,\"instance\":\"us/us-0\",\"ours\":\"$one\",\"theirs\":\"$two\",\"zone\":\"$ZONE\"}" ]] ||
    fail "the mismatch: $out (want ours $one, theirs $two)"
curl -sf "http://$IE:$ADMIN_PORT/v1/state" | jq -e --arg t "$two" '.dnssec.keyMismatches[0].theirs == $t' > /dev/null ||
    fail "/v1/state does not show it"
out=$(curl -sf "http://$IE:$ADMIN_PORT/metrics" | grep '^glbd_dnssec_key_mismatch')
[[ $out == "glbd_dnssec_key_mismatch{zone=\"$ZONE\"} 1" ]] || fail "the metric: $out"
out=$("$GLBD" status --admin "$IE:$ADMIN_PORT") || fail "glbd status"
grep -qF "MISMATCH: us/us-0 publishes this, we $one" <<< "$out" || fail "glbd status: $out"
# Logged after the next snapshot build, which may follow the store's change by a moment.
wait_for 10 grep -qF "dnssec: zone $ZONE: us/us-0 publishes DNSKEY $two, this server $one" "$WORK/ie.log" ||
    fail "ie's log: $(cat "$WORK/ie.log")"
out=$("$GLBD" check --config "$WORK/ie.yaml") || fail "glbd check exits non-zero on a warning: $out"
grep -qF "warning: zone $ZONE: peer $US:$PORT publishes DNSKEY $two, this config $one" <<< "$out" || fail "glbd check: $out"
pass "us with one more key: ie shows the mismatch ($two vs $one) in /v1/summary, /v1/state, glbd status, the metric and its log; glbd check warns"

# Back on the same keys (once the first key has been published for the hold time, 2.6 s): cleared.
config us "$US" "$key" > "$WORK/us.yaml"
agree() {
    kill -HUP "$PID_us"  # again until taken: a removal too early is refused
    sleep 0.5
    summary | jq -e '.dnssec.keyMismatches == []' > /dev/null
}
wait_for 30 agree || fail "the mismatch did not clear within 30 s: $(summary | jq -c .dnssec)"
out=$(curl -sf "http://$IE:$ADMIN_PORT/metrics" | grep '^glbd_dnssec_key_mismatch')
[[ $out == "glbd_dnssec_key_mismatch{zone=\"$ZONE\"} 0" ]] || fail "the metric after: $out"
wait_for 10 grep -qF "dnssec: no longer: zone $ZONE: us/us-0" "$WORK/ie.log" || fail "ie's log: no note that it cleared"
pass "back on the same keys: the mismatch clears (summary, metric, log)"
stop_glbd ie
stop_glbd us
