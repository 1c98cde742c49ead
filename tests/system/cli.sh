#!/usr/bin/env bash
# The command line as people expect it: `glbd check FILE` (and --config FILE), a usage error in one line with
# exit 1, a misspelt key answered with the key meant, and a bad geoip.signingKey blamed on the key at its line.
# No server: glbd check only.
source "$(dirname "$0")/lib.sh"
cat > "$WORK/glbd.yaml" <<'YAML'
cluster: {id: eu}
listen: {dns: ["127.0.0.1:5399"]}
zones:
  - origin: glb.cli.test
    nameservers: [{name: ns1.glb.cli.test, addresses: [192.0.2.53]}]
hosts:
  - name: shop.glb.cli.test
    endpoints: [192.0.2.1]
YAML
out=$("$GLBD" check "$WORK/glbd.yaml") || fail "glbd check FILE: $out"
[[ $out == "$WORK/glbd.yaml: ok (1 zone(s), 1 host(s); geo: no database"* ]] || fail "glbd check FILE: $out"
[[ $("$GLBD" check --config "$WORK/glbd.yaml") == "$out" && $("$GLBD" check --config="$WORK/glbd.yaml") == "$out" ]] ||
    fail "check --config FILE and check FILE differ"
pass "glbd check FILE, --config FILE and --config=FILE: $out"
printf 'stateDir: %s\n' "$WORK/missing/state" >> "$WORK/glbd.yaml"
out=$("$GLBD" check "$WORK/glbd.yaml") || fail "a stateDir whose parent is missing failed glbd check: $out"
[[ $out == *"warning: stateDir $WORK/missing/state: neither it nor $WORK/missing exists; glbd makes both at start"* ]] ||
    fail "no warning for a stateDir whose parent is missing: $out"
sed -i '$d' "$WORK/glbd.yaml"
[[ $("$GLBD" check "$WORK/glbd.yaml") != *warning* ]] || fail "a warning without stateDir"
pass "glbd check warns of a stateDir whose parent does not exist (it still passes: glbd makes both)"

usage() {  # EXPECTED ARGS...: a usage error is one line on stderr, nothing on stdout, exit 1
    local expected=$1 rc=0
    shift
    "$GLBD" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
    (( rc == 1 )) || fail "glbd $*: exit $rc, want 1"
    [[ ! -s $WORK/out && $(wc -l <"$WORK/err") == 1 ]] || fail "glbd $*: not one line: $(cat "$WORK/out" "$WORK/err")"
    [[ $(cat "$WORK/err") == "$expected" ]] || fail "glbd $*: $(cat "$WORK/err"), want $expected"
}
usage 'glbd: check needs a config FILE: glbd check FILE (glbd --help for usage)' check
usage 'glbd: unknown command "chek" (glbd --help for usage)' chek "$WORK/glbd.yaml"
usage 'glbd: check: unknown argument "--verbose" (glbd --help for usage)' check "$WORK/glbd.yaml" --verbose
usage 'glbd: status: unknown argument "--hots" (glbd --help for usage)' status --hots x
usage 'glbd: ds needs a ZONE and a config FILE: glbd ds ZONE FILE (glbd --help for usage)' ds glb.cli.test
out=$("$GLBD" ds glb.cli.test "$WORK/glbd.yaml" 2>&1) && fail "ds of an unsigned zone succeeded"
[[ $out == "glbd: zone glb.cli.test is not signed (no dnssec.keys in $WORK/glbd.yaml)" ]] || fail "glbd ds ZONE FILE: $out"
"$GLBD" --help | grep -q '^  glbd check \[--config\] FILE' || fail "--help does not show check FILE"
pass "usage errors are one line with exit 1; glbd ds ZONE FILE reads FILE"

sed 's/    endpoints:/    loadBalancng: {weight: 1}\n    endpoints:/' "$WORK/glbd.yaml" > "$WORK/typo.yaml"
out=$("$GLBD" check "$WORK/typo.yaml" 2>&1) && fail "a misspelt key passed"
[[ $out == *"typo.yaml:8:5: hosts[0].loadBalancng: unknown key (did you mean \"loadBalancing\"?)"* ]] || fail "typo: $out"
pass "a misspelt key: $(head -1 <<<"$out")"

echo "not a key" > "$WORK/key.pem"
printf 'geoip:\n  verify: false\n  signingKey: %s\n' "$WORK/key.pem" >> "$WORK/glbd.yaml"
out=$("$GLBD" check "$WORK/glbd.yaml" 2>&1) && fail "a bad signingKey passed"
[[ $out == *"glbd.yaml:11:15: geoip.signingKey: \"$WORK/key.pem\" holds no public key in PEM"* ]] || fail "signingKey: $out"
pass "a bad geoip.signingKey is blamed on the key: $(head -1 <<<"$out")"
