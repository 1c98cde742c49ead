#!/usr/bin/env bash
# Health checks end to end: HTTP probes keep their connection to a keep-alive target from round to round;
# a target stops -> its address leaves the answers; every target down ->
# fail-open with TTL <= 10; a target returns. The same question is asked again and again across each flip
# (no cookie: the same bytes), so a stale entry in the UDP answer cache would show. How fast a change is
# seen is printed (the deadlines are generous: a busy machine must not fail the test).
source "$(dirname "$0")/lib.sh"
A=127.0.0.50 P=5350 T1=127.0.0.51 T2=127.0.0.52 TP=18050 K=127.0.0.53 KP=18051 KEPT=40
TARGETS="$(dirname "$0")/../tools/targets.py"

start_target() {  # NAME ADDR
    python3 "$TARGETS" --http "$2:$TP" --ready "$WORK/$1.ready" >"$WORK/$1.targetlog" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    printf -v "PID_$1" '%s' "$pid"
    wait_for 10 test -e "$WORK/$1.ready" || fail "target $1 did not start"
    rm -f "$WORK/$1.ready"
}
start_target t1 $T1
start_target t2 $T2
python3 "$TARGETS" --http11 "$K:$KP" --log "$WORK/kept.log" --ready "$WORK/kept.ready" >"$WORK/kept.targetlog" 2>&1 &
PIDS+=("$!")
wait_for 10 test -e "$WORK/kept.ready" || fail "the keep-alive target did not start"
# KEPT hosts probe one keep-alive target, each with its own Host name (so its own probe and connection):
# more than one libcurl multi handle's share (Checker::kTargetsPerMulti).
kept_hosts() {
    local i
    for ((i = 0; i < KEPT; i++)); do
        echo "  - {name: k$i.hc.test, endpoints: [$K], healthCheck: {protocol: HTTP, port: $KP, path: /healthz, interval: 300ms, timeout: 1s}}"
    done
}

cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: hc-1}
listen: {dns: ["$A:$P"]}
zones:
  - origin: hc.test
    nameservers: [{name: ns.hc.test, addresses: [$A]}]
hosts:
  - name: shop.hc.test
    ttl: 60
    endpoints: [$T1, $T2]
    loadBalancing: {weight: 100, geo: IE, defaultGeo: true}
    healthCheck: {protocol: HTTP, port: $TP, path: /healthz, interval: 500ms, timeout: 400ms, failureThreshold: 2, successThreshold: 1}
$(kept_hosts)
YAML
start_glbd hc "$WORK/glbd.yaml"
wait_for 10 grep -q 'first round complete' "$WORK/hc.log" || fail "no first health round"
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short shop.hc.test A | sort | tr '\n' ' ') == '$T1 $T2 ' ]]" || fail "both targets not answered"
for i in 1 2 3; do [[ $(answers $A $P shop.hc.test A | tr '\n' ' ') == "$T1 $T2 " ]] || fail "repeated question"; done
grep -q libcurl /proc/"$PID_hc"/maps || fail "HTTP probes answered, yet libcurl is not loaded"
pass "both healthy targets answered"

# Keep-alive: every host's probes (four rounds or more) came over one connection, one for each host.
kept_ok() {
    python3 - "$WORK/kept.log" "$KEPT" <<'PY'
import collections, json, sys
peers = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    peers[r["host"].split(":")[0]].append(r["peer"])
want = int(sys.argv[2])
if len(peers) < want or min(len(p) for p in peers.values()) < 4:
    sys.exit(1)  # not yet four rounds of every host
multi = {h: sorted(set(p)) for h, p in peers.items() if len(set(p)) > 1}
if multi:
    print("hosts whose probes opened more than one connection:", dict(list(multi.items())[:5]))
    sys.exit(2)
distinct = len({p[0] for p in peers.values()})
if distinct != want:
    print(f"{want} hosts shared {distinct} connections")
    sys.exit(2)
PY
}
kept_decided() { kept_ok; (( $? != 1 )); }  # 1: not yet four rounds of every host
wait_for 20 kept_decided || fail "keep-alive target: not four probes of every host within 20 s"
out=$(kept_ok) || fail "keep-alive: $out"
pass "keep-alive: $KEPT hosts' probes, four rounds or more each, over $KEPT connections (one each)"

# Probes close with a reset: no probe connection is left in TIME_WAIT, on glbd's side or the target's (an
# orderly close left one per probe for a minute: some 120,000 at 10,000 endpoints every 5 s).
sleep 1.5  # three more rounds
tw=$(ss -Htan state time-wait "( sport = :$TP or dport = :$TP )" | wc -l)
(( tw == 0 )) || fail "$tw probe connection(s) in TIME_WAIT"
pass "probe connections end with a reset: none in TIME_WAIT"

# One target stops.
serial0=$(answers $A $P hc.test SOA | awk '{print $3}')
kill -TERM "$PID_t2"; wait "$PID_t2" 2>/dev/null || true
t0=$(date +%s%N)
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short shop.hc.test A) == $T1 ]]" || fail "$T2 still answered 10 s after it stopped"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q "health: shop.hc.test $T2 healthy -> unhealthy (connection refused)" "$WORK/hc.log" || fail "transition not logged"
serial1=$(answers $A $P hc.test SOA | awk '{print $3}')
(( serial1 > serial0 )) || fail "SOA serial did not rise with the health change ($serial0 -> $serial1)"
ttl=$(q $A $P shop.hc.test A +noall +answer | awk '{print $2}' | head -1)
[[ $ttl == 60 ]] || fail "TTL $ttl while one endpoint of the group is healthy, want 60"
pass "a stopped target left the answers after $ms ms"

# Every target down: fail open with a short TTL, never empty.
kill -TERM "$PID_t1"; wait "$PID_t1" 2>/dev/null || true
wait_for 10 bash -c "dig @$A -p $P shop.hc.test A +noall +answer | awk '{print \$2}' | grep -qx 10" || fail "no fail-open short TTL"
[[ $(answers $A $P shop.hc.test A | tr '\n' ' ') == "$T1 $T2 " ]] || fail "fail-open does not answer every endpoint"
pass "all down: fail-open with TTL 10"

# A target returns.
start_target t1 $T1
t0=$(date +%s%N)
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short shop.hc.test A) == $T1 ]] && dig @$A -p $P shop.hc.test A +noall +answer | awk '{print \$2}' | grep -qx 60" \
    || fail "returned target not answered with the host TTL"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -q "health: shop.hc.test $T1 unhealthy -> healthy (ok)" "$WORK/hc.log" || fail "recovery not logged"
pass "a returning target answered again after $ms ms"
