#!/usr/bin/env bash
# Health as users see it (the fleet's verdict), in a network namespace of the test's own with iptables between
# per-cluster source addresses: four clusters, each a glbd whose probes leave from its own address
# (health.sourceAddress) and one endpoint of app.out.test (an HTTP target, checked every 500 ms, down after 2
# failures). Each endpoint is probed from inside by its own cluster and from outside by the three others
# (vantages 3, quorum: a majority of those that count).
# - every cluster's endpoint is probed by all four clusters (the targets see each source address);
# - c1's endpoint cut from every other cluster (reachable from its own only) is withdrawn by every server
#   within interval x (threshold + 1) + 2 s, and answered again as fast once reachable;
# - an endpoint one vantage cannot reach stays;
# - a vantage cut off from every other cluster's endpoint withdraws nothing, and its verdicts do not count;
# - c2's glbd killed while its endpoint serves: the others keep answering it (TTL at most 10) once c2 is dead,
#   withdraw it within the bound above when its vantages cannot reach it, answer it again when they can, and
#   drop it when keepDead (12 s) is up;
# - c3's glbd cut from its peers, its endpoint reachable: every server, c3 included, keeps answering it;
# - all servers give the same answer at each step.
source "$(dirname "$0")/netns.sh"
P=5342
addr() { echo "127.0.42.$1"; }  # glbd of cluster N (its DNS, admin and probes' source address)
ep() { echo "127.0.42.$((10 + $1))"; }  # cluster N's endpoint
TP=18042
TARGETS="$(dirname "$0")/../tools/targets.py"
python3 "$TARGETS" --http "$(ep 1):$TP" --http "$(ep 2):$TP" --http "$(ep 3):$TP" --http "$(ep 4):$TP" \
    --log "$WORK/targets.log" --ready "$WORK/targets.ready" >"$WORK/targets.out" 2>&1 &
PIDS+=("$!")
wait_for 10 test -e "$WORK/targets.ready" || fail "the targets did not start"

for i in 1 2 3 4; do
    cat > "$WORK/c$i.yaml" <<YAML
cluster: {id: c$i, instance: c$i-0}
listen: {dns: ["$(addr $i):$P"]}
admin: {listen: "$(addr $i):9342"}
health: {sourceAddress: "$(addr $i)", outside: {keepDead: 12s}}
zones: [{origin: out.test, nameservers: [{name: ns.out.test, addresses: [$(addr 1)]}]}]
hosts:
  - name: app.out.test
    endpoints: [$(ep $i)]
    healthCheck: {protocol: HTTP, port: $TP, path: /healthz, interval: 500ms, timeout: 400ms, failureThreshold: 2}
$(peers_yaml --interval 500ms --dead 5s "$(addr 1):$P" "$(addr 2):$P" "$(addr 3):$P" "$(addr 4):$P")
YAML
    start_glbd c$i "$WORK/c$i.yaml"
done
answer_of() { dig -b 127.0.0.1 @"$(addr "$1")" -p $P +time=1 +tries=1 +short app.out.test A | sort | tr '\n' ' '; }
# fleet_sees ADDRESS...: every server answers exactly these.
fleet_sees() {
    local want i
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    for i in 1 2 3 4; do [[ $(answer_of $i) == "$want" ]] || return 1; done
}
# fleet_holds SECONDS ADDRESS...: every server answers exactly these, throughout.
fleet_holds() {
    local end=$(( $(now_ms) + $1 * 1000 )); shift
    while (( $(now_ms) < end )); do fleet_sees "$@" || return 1; sleep 0.1; done
}
ALL=("$(ep 1)" "$(ep 2)" "$(ep 3)" "$(ep 4)")
wait_for 30 fleet_sees "${ALL[@]}" || fail "the fleet did not converge: $(answer_of 1) / $(answer_of 2)"

# Each endpoint probed from its own cluster and the three others.
sources_of() {  # N: the source addresses that probed cluster N's endpoint, sorted
    python3 -c '
import json, sys
print(" ".join(sorted({r["source"] for r in map(json.loads, open(sys.argv[1])) if r.get("listener") == sys.argv[2]})))' \
        "$WORK/targets.log" "$(ep "$1")"
}
all_probe() {
    local n
    for n in 1 2 3 4; do [[ $(sources_of $n) == "$(addr 1) $(addr 2) $(addr 3) $(addr 4)" ]] || return 1; done
}
wait_for 20 all_probe || fail "not every endpoint is probed by all four clusters: c1's by '$(sources_of 1)'"
pass "every cluster's endpoint is probed from inside and by the three other clusters (their source addresses)"

BOUND=$(( 500 * (2 + 1) + 2000 ))
# c1's endpoint reachable from its own cluster only.
cut() { iptables -"$1" INPUT -s "$2" -d "$3" -p tcp --dport $TP -j REJECT --reject-with tcp-reset; }
t0=$(now_ms)
for v in 2 3 4; do cut A "$(addr $v)" "$(ep 1)"; done
wait_for 20 fleet_sees "$(ep 2)" "$(ep 3)" "$(ep 4)" || fail "c1's endpoint, reachable from c1 only, was not withdrawn"
took=$(( $(now_ms) - t0 ))
(( took <= BOUND )) || fail "c1's endpoint was withdrawn everywhere after $took ms, over the bound of $BOUND ms"
pass "an endpoint reachable from its own cluster only is withdrawn by every server in $took ms (bound $BOUND ms)"
# Explained and counted: c3's explain shows c1's endpoint failed by its three vantages, each counted.
explain_of() {  # SERVER ENDPOINT: the endpoint's "outside" in SERVER's /v1/explain, compact
    curl -s --interface 127.0.0.1 "http://$(addr "$1"):9342/v1/explain?name=app.out.test&client=127.0.0.1" |
        python3 -c '
import json, sys
e = json.load(sys.stdin)
for c in e["candidates"]:
    for ep in c["endpoints"]:
        if ep["target"] == sys.argv[1]:
            o = ep["outside"]
            print(o["fleet"] + ": " + " ".join(v["cluster"] + "=" + v["verdict"] + ("" if v["counts"] else "(not counted)")
                  + (" cut-off" if v.get("cutOff") else "") for v in o["vantages"]))' "$2"
}
# (a quorum, two of the three, fail it: the third's batch may still be on its way)
got=$(explain_of 3 "$(ep 1)")
fails=$(grep -o "c[234]=fails\b" <<<"$got" | grep -vc "(not counted)" || true)
[[ $got == "failed: "* && $(grep -o "c[234]=" <<<"$got" | sort -u | wc -l) == 3 ]] && (( fails >= 2 )) ||
    fail "c3 explains c1's endpoint as '$got'"
[[ $(metric 'glbd_fleet_endpoints{verdict="failed"}' "$(addr 2):9342") == 1 ]] ||
    fail "c2's glbd_fleet_endpoints{verdict=\"failed\"} is not 1"
cli=$("$GLBD" explain app.out.test --client 127.0.0.1 --admin "$(addr 2):9342")
grep -qE "^ *$(ep 1) +c1 +.*fails.* +failed$" <<<"$cli" || fail "glbd explain does not show the fleet's verdict: $cli"
# glbd status: the inside verdict (up), each vantage's, the fleet's (failed), and the counts.
status=$("$GLBD" status --admin "$(addr 2):9342")
grep -qE "^ *app\.out\.test +$(ep 1) +c1 +up +.*c[234] fails.* +failed$" <<<"$status" ||
    fail "glbd status does not show c1's endpoint failed by its vantages: $status"
grep -q "$(ep 1) up (FAILED by its vantages)" <<<"$status" || fail "glbd status's hosts do not mark it: $status"
grep -qE "the fleet's verdict: 1 failed, 0 kept, 1 failed by some vantage; vantages cut off: none" <<<"$status" ||
    fail "glbd status's outside health: $status"
if CHROMIUM=$(command -v chromium); then  # the status page marks it too
    dom=$(timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chromium" \
        --virtual-time-budget=4000 --dump-dom "http://$(addr 2):9342/" 2>>"$WORK/chromium.log")
    grep -qE "data-fleet=\"failed\"[^>]*>$(ep 1)<" <<<"$dom" || fail "the status page does not mark c1's endpoint failed"
    grep -q 'id="outside" class="muted" data-failed="1"' <<<"$dom" || fail "the status page's outside health: $dom"
fi
pass "explained: $got; glbd status and the status page show it"
t0=$(now_ms)
for v in 2 3 4; do cut D "$(addr $v)" "$(ep 1)"; done
wait_for 20 fleet_sees "${ALL[@]}" || fail "c1's endpoint did not come back"
took=$(( $(now_ms) - t0 ))
(( took <= BOUND )) || fail "c1's endpoint came back everywhere after $took ms, over the bound of $BOUND ms"
pass "reachable again, it is answered by every server in $took ms"

# One vantage alone withdraws nothing.
cut A "$(addr 3)" "$(ep 2)"
fleet_holds 4 "${ALL[@]}" || fail "c2's endpoint, failed by one vantage (c3) alone, left an answer: $(answer_of 1)"
cut D "$(addr 3)" "$(ep 2)"
pass "an endpoint one vantage cannot reach stays answered by every server"

# A vantage cut off from every other cluster (its own endpoint still reachable from it) does not count: with
# it, c3's failure of c2's endpoint would make two of three.
cut A "$(addr 3)" "$(ep 2)"
for n in 1 2 3; do cut A "$(addr 4)" "$(ep $n)"; done
fleet_holds 5 "${ALL[@]}" || fail "a cut-off vantage (c4) counted: $(answer_of 1)"
got=$(explain_of 1 "$(ep 2)")
[[ $got == *"c4=fails(not counted) cut-off"* ]] || fail "c1 explains c2's endpoint as '$got'"
[[ $(metric glbd_outside_vantages_cut_off "$(addr 1):9342") == 1 ]] || fail "c1 counts no vantage cut off"
cut D "$(addr 3)" "$(ep 2)"
for n in 1 2 3; do cut D "$(addr 4)" "$(ep $n)"; done
pass "a vantage cut off from every other cluster withdraws nothing, and its verdicts do not count"
# A dead glbd is not a dead application: c2's glbd killed, its endpoint still serving.
LIVE=(1 3 4)
live_sees() {  # ADDRESS...: servers 1, 3 and 4 answer exactly these
    local want i
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    for i in "${LIVE[@]}"; do [[ $(answer_of $i) == "$want" ]] || return 1; done
}
live_holds() {
    local end=$(( $(now_ms) + $1 * 1000 )); shift
    while (( $(now_ms) < end )); do live_sees "$@" || return 1; sleep 0.1; done
}
kill9_glbd c2
for i in "${LIVE[@]}"; do
    wait_for 20 grep -q "sync: c2/c2-0 is dead" "$WORK/c$i.log" || fail "c$i did not find c2 dead"
done
dead_at=$(now_ms)
live_holds 2 "${ALL[@]}" || fail "c2's endpoint, still serving, was dropped when its glbd died: $(answer_of 1)"
ttl=$(dig -b 127.0.0.1 @"$(addr 1)" -p $P +noall +answer app.out.test A | awk 'NR == 1 {print $2}')
(( ttl <= 10 )) || fail "a dead cluster's kept entry is answered with TTL $ttl, not the short one"
[[ $(explain_of 4 "$(ep 2)") == "kept: "* ]] || fail "c4 explains c2's endpoint as '$(explain_of 4 "$(ep 2)")'"
status=$("$GLBD" status --admin "$(addr 4):9342")
grep -qE "^ *app\.out\.test +$(ep 2) +c2 +up +.*reaches.* +kept$" <<<"$status" ||
    fail "glbd status does not show c2's endpoint kept: $status"
pass "c2's glbd dead, its endpoint still serving: every live server keeps it, with TTL $ttl (explained: kept)"
t0=$(now_ms)
for v in 1 3 4; do cut A "$(addr $v)" "$(ep 2)"; done
wait_for 20 live_sees "$(ep 1)" "$(ep 3)" "$(ep 4)" || fail "c2's endpoint, dead and unreachable, was kept"
took=$(( $(now_ms) - t0 ))
(( took <= BOUND )) || fail "c2's unreachable endpoint went after $took ms, over the bound of $BOUND ms"
for v in 1 3 4; do cut D "$(addr $v)" "$(ep 2)"; done
wait_for 20 live_sees "${ALL[@]}" || fail "c2's endpoint, reachable again within keepDead, did not come back"
pass "its vantages unable to reach it, it goes in $took ms; reachable again, it is back"
left=$(( 12000 - ($(now_ms) - dead_at) ))
(( left > 1000 )) || fail "the test took too long to see keepDead end ($left ms left)"
sleep $(( (left - 1000) / 1000 ))
live_sees "${ALL[@]}" || fail "c2's endpoint went before keepDead was up: $(answer_of 1)"
wait_for 20 live_sees "$(ep 1)" "$(ep 3)" "$(ep 4)" || fail "c2's endpoint stayed after keepDead"
after=$(( $(now_ms) - dead_at - 12000 ))
(( after <= 2000 )) || fail "c2's endpoint went $after ms after keepDead was up"
pass "keepDead up (12 s), c2's endpoint goes from every live server ($after ms after)"
# A cluster cut from its peers but reachable keeps serving: c3's glbd cut from c1's and c4's (their DNS port,
# both ways), its endpoint still reached by them; every server still answers every live endpoint.
for peer in 1 4; do
    for proto in udp tcp; do
        iptables -A INPUT -s "$(addr 3)" -d "$(addr $peer)" -p $proto --dport $P -j DROP
        iptables -A INPUT -s "$(addr $peer)" -d "$(addr 3)" -p $proto --dport $P -j DROP
    done
done
for i in 1 4; do wait_for 20 grep -q "sync: c3/c3-0 is dead" "$WORK/c$i.log" || fail "c$i did not find c3 dead"; done
live_holds 3 "$(ep 1)" "$(ep 3)" "$(ep 4)" || fail "c3, cut from its peers but reachable, lost an answer: $(answer_of 1) / $(answer_of 3)"
pass "a cluster cut from its peers but reachable keeps serving, on every server, itself included"
# Verdict changes travelled as themselves: the verdicts alone, to peers that held the rest.
parts=$(metric glbd_sync_outside_parts_total "$(addr 1):9342")
(( ${parts%.*} > 0 )) || fail "no report of outside verdicts alone reached c1"
pass "$parts report(s) of outside verdicts alone reached c1, each made whole with what it held"
for i in 1 3 4; do stop_glbd c$i; done
