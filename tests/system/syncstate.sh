#!/usr/bin/env bash
# stateDir: a restarted server answers for remote clusters at once, before any peer answers.
source "$(dirname "$0")/lib.sh"
P=5395
declare -A ADDR=([a]=127.0.0.95 [b]=127.0.0.96)
declare -A GEO=([a]=IE [b]=US)
declare -A IP=([a]=192.0.2.95 [b]=192.0.2.96)
for n in a b; do
mkdir -p "$WORK/state-$n"
cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["${ADDR[$n]}:$P"]}
geoip: {database: $FIXTURES/test.mmdb}
zones: [{origin: state.test, nameservers: [{name: ns.state.test, addresses: [${ADDR[a]}]}]}]
hosts:
  - name: app.state.test
    endpoints: [${IP[$n]}]
    loadBalancing: {weight: 100, geo: ${GEO[$n]}}
$(peers_yaml --interval 500ms --dead 3s "${ADDR[a]}:$P" "${ADDR[b]}:$P")
stateDir: $WORK/state-$n
YAML
done
# A link planted where the temporary file goes must not be followed: the file it points to stays as it is.
echo "precious" > "$WORK/victim"
ln -s "$WORK/victim" "$WORK/state-a/state.json.tmp"
start_glbd a "$WORK/a.yaml"
start_glbd b "$WORK/b.yaml"
wait_for 10 bash -c "[[ \$(dig @${ADDR[a]} -p $P +short app.state.test A +subnet=10.3.0.0/16) == ${IP[b]} ]]" || fail "no convergence"
# Written by the sync thread at most once a second after a change.
wait_for 5 grep -q '"cluster":"b"' "$WORK/state-a/state.json" || fail "state.json lacks cluster b"
python3 -m json.tool "$WORK/state-a/state.json" >/dev/null || fail "state.json is not valid JSON"
[[ ! -e $WORK/state-a/state.json.tmp ]] || fail "temporary file left behind"
[[ $(cat "$WORK/victim") == precious ]] || fail "the state was written through a planted link"
[[ $(stat -c %a "$WORK/state-a/state.json") == 600 ]] || fail "state.json mode $(stat -c %a "$WORK/state-a/state.json"), want 600"
pass "state.json: written fresh (a planted link not followed), mode 600"

# Both stop; a restarts alone: b's entries are answered at once, from the saved state.
stop_glbd a
stop_glbd b
start_glbd a2 "$WORK/a.yaml"
wait_for 10 q ${ADDR[a]} $P app.state.test A || fail "a did not restart"
first=$(dig @${ADDR[a]} -p $P +short app.state.test A +subnet=10.3.0.0/16)
[[ $first == "${IP[b]}" ]] || fail "restarted a answered '$first' for b's client, want ${IP[b]} from stateDir"
grep -q "loaded 1 known instance(s)" "$WORK/a2.log" || fail "load not logged"
pass "restart with stateDir and no peer: remote cluster answered at once"
# Loaded clusters count as just heard: after deadAfter with no peer, b is dead, and a's own entry (the
# only usable one) answers b's client.
wait_for 20 bash -c "[[ \$(dig @${ADDR[a]} -p $P +short app.state.test A +subnet=10.3.0.0/16) == ${IP[a]} ]]" || fail "b never died"
pass "the loaded cluster died after deadAfter without its peer"

# A damaged file is ignored as a whole: every origin in it is complete, only the end is missing.
stop_glbd a2
python3 - "$WORK/state-a/state.json" <<'PY' || fail "cannot damage state.json"
import sys
path = sys.argv[1]
text = open(path).read().rstrip()
assert text.endswith("]}") and '"cluster":"b"' in text, text[-200:]
open(path, "w").write(text[:-2])
PY
start_glbd a3 "$WORK/a.yaml"
wait_for 10 q ${ADDR[a]} $P app.state.test A || fail "a did not start with a damaged state file"
grep -q "ignoring .*state.json" "$WORK/a3.log" || fail "damaged state file not reported"
! grep -q "loaded .* known instance" "$WORK/a3.log" || fail "part of a damaged state file was loaded"
got=$(dig @${ADDR[a]} -p $P +short app.state.test A +subnet=10.3.0.0/16)
[[ $got == "${IP[a]}" ]] || fail "a answered '$got' for b's client, want its own ${IP[a]}"
pass "a damaged state file is ignored whole"
