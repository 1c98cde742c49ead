#!/usr/bin/env bash
# glbd demo: three clusters come up, answer dig authoritatively with geo answers, and stop on Ctrl-C.
source "$(dirname "$0")/lib.sh"
"$GLBD" demo >"$WORK/demo.log" 2>&1 &
DEMO=$!
PIDS+=("$DEMO")
wait_for 75 grep -q "Stop with Ctrl-C" "$WORK/demo.log" || fail "the demo did not print its banner"
grep -q "did not converge" "$WORK/demo.log" && fail "the demo reports no convergence"
for s in 127.0.0.11 127.0.0.12 127.0.0.13; do
    q $s 5300 shop.glb.example.test A +subnet=10.1.0.0/16 | contains 'flags: qr aa;' || fail "$s: not authoritative"
    got=$(answers $s 5300 shop.glb.example.test A +subnet=10.1.0.0/16 | tr '\n' ' ')
    [[ $got == "127.0.1.11 127.0.1.12 " ]] || fail "$s: IE client got '$got'"
    [[ $(answers $s 5300 shop.glb.example.test A +subnet=10.2.0.0/16) == 127.0.1.31 ]] || fail "$s: OC client"
    [[ $(answers $s 5300 shop.glb.example.test A +subnet=10.9.0.0/16) == 127.0.1.21 ]] || fail "$s: default geo"
    [[ $(answers $s 5300 api.glb.example.test A | tr '\n' ' ') == "127.0.1.11 127.0.1.21 127.0.1.31 " ]] || fail "$s: simple host union"
done
# With Debian's location database installed (CI installs libloc-database), real networks are placed too.
if grep -q "placed by Debian's location database" "$WORK/demo.log"; then
    for s in 127.0.0.11 127.0.0.12 127.0.0.13; do
        [[ $(answers $s 5300 shop.glb.example.test A +subnet=1.1.1.0/24) == 127.0.1.31 ]] || fail "$s: 1.1.1.0/24 (AU) should go to oc"
        [[ $(answers $s 5300 shop.glb.example.test A +subnet=193.0.0.0/21) == 127.0.1.21 ]] || fail "$s: 193.0.0.0/21 (NL) should go to us"
    done
    pass "demo: real networks placed by the location database (AU -> oc, NL -> us)"
elif [[ -e /var/lib/location/database.db ]]; then
    fail "the location database is installed but the demo does not use it"
fi
key=$(sed -n 's/.*-y \(hmac-sha256:glb-demo:[^ ]*\).*/\1/p' "$WORK/demo.log")
dig -y "$key" @127.0.0.11 -p 5300 _glbd. AXFR | contains '"origin=oc/oc-demo"' || fail "the printed AXFR command does not work"
dir=$(sed -n 's/^Configs and logs: \(.*\)\.$/\1/p' "$WORK/demo.log")
[[ -d $dir && $(stat -c %a "$dir") == 700 ]] || fail "the demo's directory '$dir' (it holds the TSIG secret) is not private"
grep -q "^They go when the demo stops: copy a config from there to keep it" "$WORK/demo.log" ||
    fail "the demo does not say its configs go when it stops"
pass "demo: three servers answer every geo; the printed commands work; its files are in a private directory"

# A second demo while one runs: one line saying so, exit 1, and no directory of its own left behind.
tmp=$(dirname "$dir")
before=$(ls -d "$tmp"/glbd-demo-* | sort)
out=$(timeout 20 "$GLBD" demo 2>&1) && fail "a second demo started"
[[ $out == "glbd demo: another demo is running (127.0.1.11:"*" is taken); stop it with Ctrl-C where it runs" ]] ||
    fail "a second demo said: $out"
[[ $(ls -d "$tmp"/glbd-demo-* | sort) == "$before" ]] || fail "a second demo left a directory behind"
pass "a second demo says one is running, and leaves nothing"
kill -INT "$DEMO"
wait "$DEMO" && rc=0 || rc=$?
(( rc == 0 )) || fail "demo exit code $rc"
wait_for 5 bash -c '! pgrep -f "serve --config .*glbd-dem[o]-" >/dev/null' || fail "the demo left its servers running"
pass "demo stops cleanly with its servers"
