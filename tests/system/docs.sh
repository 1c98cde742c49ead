#!/usr/bin/env bash
# The docs test: every command block of README.md and docs/ is either run here (against a fresh `glbd demo`
# or in a scratch directory) with the output it shows compared, or says in the doc why it is not run
# (tests/tools/docs-test.py has the marks and the masks). Then the same runner is shown to fail on a doc that
# is wrong in each way it checks. Then the facts stated in prose (tests/tools/docs-facts.py).
source "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
RUNNER=$SRC/tests/tools/docs-test.py

python3 "$RUNNER" "$GLBD" "$SRC" "$WORK/docs" >"$WORK/docs.out" 2>&1 && rc=0 || rc=$?
cat "$WORK/docs.out"
(( rc == 0 )) || fail "a command block of the docs does not do what the doc shows"
runs=$(grep -c ": demo, ok in \|: scratch, ok in \|: kube, ok in " "$WORK/docs.out" || true)
(( runs >= 8 )) || fail "only $runs command blocks ran"
pass "docs: $runs command blocks of README.md and docs/ run as shown; the rest say why not"

# The facts the docs state in prose (a format, a limit, a default), each compared with what glbd does.
python3 "$SRC/tests/tools/docs-facts.py" "$GLBD" "$SRC" "$WORK/facts" >"$WORK/facts.out" 2>&1 && rc=0 || rc=$?
cat "$WORK/facts.out"
(( rc == 0 )) || fail "a fact the docs state is not what glbd does"
facts=$(grep -c "^fact holds: " "$WORK/facts.out" || true)
(( facts == 5 )) || fail "$facts facts checked, want 5"
pass "docs: $facts stated facts hold (state format, admin connections per source, SOA serial, probe path, first probe)"

# wrong_doc NAME EXPECTED: the doc on stdin must fail with EXPECTED in the runner's report.
wrong_doc() {
    local name=$1 expected=$2 out
    mkdir -p "$WORK/$name/docs"
    cat >"$WORK/$name/README.md"
    out=$(python3 "$RUNNER" "$GLBD" "$WORK/$name" "$WORK/$name.run" README.md 2>&1) && fail "$name: not found"
    [[ $out == *"$expected"* ]] || { echo "$out"; fail "$name: the report does not say '$expected'"; }
}
wrong_doc ttl '-answer now: NOERROR: A 127.0.1.31, TTL 61, ECS scope /16' <<'DOC'
<!-- docs-test: demo -->
```console
$ build/glbd explain shop.glb.example.test --subnet 10.2.0.0/16 --admin 127.0.0.11:9153 | tail -1
  answer now: NOERROR: A 127.0.1.31, TTL 61, ECS scope /16
```
DOC
wrong_doc unmarked 'README.md:2: a command block without a docs-test mark' <<'DOC'
Try:
```sh
glbd --version
```
DOC
wrong_doc badkey 'Transfer failed' <<'DOC'
<!-- docs-test: demo -->
```sh
dig -y hmac-sha256:glb-demo:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= @127.0.0.11 -p 5300 _glbd. AXFR
```
DOC
pass "docs: a wrong TTL, an unmarked block and a wrong key are each reported"
