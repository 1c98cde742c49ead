#!/usr/bin/env bash
# The admin endpoint: token, routes, readiness after the first health round, Prometheus metrics that
# move with queries, JSON logs; and garbage, huge and slow admin clients leave DNS answering alone.
source "$(dirname "$0")/lib.sh"
A=127.0.0.111 P=5411 AP=9411 TOKEN=s3cret-token
TOOLS="$(dirname "$0")/../tools"
start_target hang 127.0.0.112:18112
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: adm-1, instance: a}
listen: {dns: ["$A:$P"]}
admin: {listen: "$A:$AP", token: "$TOKEN"}
log: {level: info, format: json}
metrics: {perHost: true}
zones: [{origin: adm.test, nameservers: [{name: ns.adm.test, addresses: [$A]}]}]
hosts:
  - {name: shop.adm.test, endpoints: [192.0.2.1, 192.0.2.2], loadBalancing: {weight: 10, geo: IE}}
  - name: slow.adm.test
    endpoints: [127.0.0.112]
    healthCheck: {protocol: HTTP, port: 18112, path: /hang, interval: 1h, timeout: 8s}
YAML
start_glbd adm "$WORK/glbd.yaml"
h() { curl -s -H "Authorization: Bearer $TOKEN" "$@"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
wait_for 10 bash -c "[[ \$(curl -s -H 'Authorization: Bearer $TOKEN' http://$A:$AP/healthz) == ok ]]" || fail "no /healthz"

# Not ready until the first health round is done (the probe hangs for its 8 s timeout; one probe an hour,
# so the probe counter below is exactly 1).
[[ $(code -H "Authorization: Bearer $TOKEN" http://$A:$AP/readyz) == 503 ]] || fail "ready before the first health round"
wait_for 30 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $TOKEN' http://$A:$AP/readyz) == 200 ]]" || fail "never ready"
pass "/readyz: 503 until the first health round, then 200"

[[ $(code http://$A:$AP/metrics) == 401 ]] || fail "no token: want 401"
[[ $(code -H "Authorization: Bearer wrong" http://$A:$AP/metrics) == 401 ]] || fail "wrong token: want 401"
[[ $(code -H "Authorization: Bearer $TOKEN" http://$A:$AP/nope) == 404 ]] || fail "unknown path: want 404"
[[ $(code -H "Authorization: Bearer $TOKEN" -X POST http://$A:$AP/metrics) == 405 ]] || fail "POST /metrics: want 405"
# Only the static page is served without the token: GET or HEAD of / exactly.
[[ $(code http://$A:$AP/) == 200 && $(code -I http://$A:$AP/) == 200 ]] || fail "GET/HEAD / without a token: want 200"
[[ $(code -X POST http://$A:$AP/) == 401 && $(code http://$A:$AP/index.html) == 401 && $(code "http://$A:$AP/v1/state?/") == 401 ]] ||
    fail "a path beside the page was served without the token"
[[ $(curl -sI http://$A:$AP/ | tr -d '\r' | sed -n 's/^Content-Length: //p') == $(curl -s http://$A:$AP/ | wc -c) ]] || fail "HEAD / length"
pass "token required; 404 and 405"

# Metrics parse and move with queries.
h http://$A:$AP/metrics > "$WORK/m1"
python3 "$TOOLS/promcheck.py" "$WORK/m1" >/dev/null || fail "metrics: $(python3 "$TOOLS/promcheck.py" "$WORK/m1")"
before=$(awk -F' ' '/^glbd_queries_total\{transport="udp",rcode="NOERROR"\}/ {print $2}' "$WORK/m1")
for i in $(seq 1 20); do dig @$A -p $P +short shop.adm.test A >/dev/null; done
dig @$A -p $P +short nope.adm.test A >/dev/null
dig @$A -p $P +short shop.adm.test A +tcp >/dev/null
h http://$A:$AP/metrics > "$WORK/m2"
python3 "$TOOLS/promcheck.py" "$WORK/m2" \
    "glbd_queries_total{transport=\"udp\",rcode=\"NOERROR\"}=$((before + 20))" \
    'glbd_queries_total{transport="udp",rcode="NXDOMAIN"}=1' \
    'glbd_queries_total{transport="tcp",rcode="NOERROR"}=1' \
    'glbd_answers_total{cluster="adm-1"}=21' \
    'glbd_host_answers_total{host="shop.adm.test",cluster="adm-1"}=21' \
    'glbd_queries_by_type_total{transport="udp",qtype="A"}=21' \
    'glbd_answer_duration_seconds_count=21' \
    'glbd_health_probes_total{host="slow.adm.test",endpoint="127.0.0.112"}=1' \
    || fail "metrics did not move as expected"
pass "metrics: valid Prometheus text; counters moved with 22 queries ($(python3 "$TOOLS/promcheck.py" "$WORK/m2"))"
# By default (metrics.perHost false, here after a reload) answers are counted by cluster alone: no series
# per host.
sed -i 's/^metrics: {perHost: true}$/metrics: {perHost: false}/' "$WORK/glbd.yaml"
kill -HUP "$PID_adm"
wait_for 20 bash -c "! curl -s -H 'Authorization: Bearer $TOKEN' http://$A:$AP/metrics | grep -q '^glbd_host_answers_total'" ||
    fail "per-host answer series without metrics.perHost"
h http://$A:$AP/metrics > "$WORK/m3"
grep -q '^glbd_answers_total{cluster="adm-1"} 21$' "$WORK/m3" || fail "the answers by cluster went with perHost"
grep -q '^glbd_health_probes_total{' "$WORK/m3" && fail "health series per endpoint without metrics.perHost"
grep -q '^glbd_health_probes_total [1-9]' "$WORK/m3" || fail "no probes in all"
grep -q '^glbd_endpoints{health="healthy"} ' "$WORK/m3" && grep -q '^glbd_endpoints{health="unhealthy"} ' "$WORK/m3" ||
    fail "no glbd_endpoints by health"
python3 "$TOOLS/promcheck.py" "$WORK/m3" >/dev/null || fail "metrics without perHost: $(python3 "$TOOLS/promcheck.py" "$WORK/m3")"
pass "metrics: answers by cluster and probes in all unless metrics.perHost (switched off by a reload)"
# Snapshots built since start (the first and the reload's at least), and the CPU they took.
builds=$(awk '/^glbd_snapshot_builds_total / {print $2}' "$WORK/m3")
build_cpu=$(awk '/^glbd_snapshot_build_cpu_seconds_total / {print $2}' "$WORK/m3")
[[ -n $builds && ${builds%.*} -ge 2 ]] || fail "glbd_snapshot_builds_total: '$builds', want 2 or more"
python3 -c "import sys; sys.exit(0 if 0 < float('$build_cpu') < 60 else 1)" || fail "glbd_snapshot_build_cpu_seconds_total: '$build_cpu'"
# A build waits only for a pull under way: this server has no peers, so none of its builds waited.
held=$(awk '/^glbd_snapshot_builds_held_total / {print $2}' "$WORK/m3")
[[ $held == 0 ]] || fail "glbd_snapshot_builds_held_total: '$held' without peers, want 0"
# Each thread is named for its role (top -H, perf): the control thread keeps the process's name.
threads=$(cat /proc/"$PID_adm"/task/*/comm | sort -u | paste -sd' ')
for t in glbd glbd-udp glbd-tcp glbd-admin glbd-health; do
    [[ " $threads " == *" $t "* ]] || fail "no thread named $t among: $threads"
done
pass "snapshots: $builds built, ${build_cpu} s of CPU; threads: $threads"

# The view in parts: a summary with counts and no host; hosts in pages, with filters.
h http://$A:$AP/v1/summary > "$WORK/summary.json"
python3 - "$WORK/summary.json" <<'PY' || fail "/v1/summary: $(cat "$WORK/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert "hosts" not in s, s.keys()
assert s["cluster"] == "adm-1" and s["ready"] is True and s["serial"] > 0, s
assert s["counts"] == {"hosts": 2, "entries": 2, "endpoints": 3, "unhealthyEndpoints": 1, "overrides": 0}, s["counts"]
assert [c["id"] for c in s["clusters"]] == ["adm-1"], s["clusters"]
PY
page() { h "http://$A:$AP/v1/hosts?$1" | python3 -c 'import json, sys; p = json.load(sys.stdin); print(" ".join(h["name"] for h in p["hosts"]), p["next"])'; }
[[ $(page "limit=1") == "shop.adm.test shop.adm.test" ]] || fail "/v1/hosts first page: $(page limit=1)"
[[ $(page "limit=1&cursor=shop.adm.test") == "slow.adm.test None" ]] || fail "/v1/hosts second page: $(page 'limit=1&cursor=shop.adm.test')"
[[ $(page "") == "shop.adm.test slow.adm.test None" ]] || fail "/v1/hosts: $(page '')"
[[ $(page "unhealthy=1") == "slow.adm.test None" ]] || fail "/v1/hosts?unhealthy=1: $(page unhealthy=1)"
[[ $(page "prefix=sl") == "slow.adm.test None" ]] || fail "/v1/hosts?prefix=sl: $(page prefix=sl)"
[[ $(page "cluster=elsewhere") == " None" ]] || fail "/v1/hosts?cluster=elsewhere: $(page cluster=elsewhere)"
[[ $(page "source=file&cluster=adm-1") == "shop.adm.test slow.adm.test None" ]] || fail "/v1/hosts?source=file"
[[ $(page "overridden=1") == " None" ]] || fail "/v1/hosts?overridden=1 before any override"
[[ $(code -H "Authorization: Bearer $TOKEN" "http://$A:$AP/v1/hosts?limit=0") == 400 ]] || fail "limit=0: want 400"
h "http://$A:$AP/v1/hosts?prefix=shop" | python3 -c '
import json, sys
h = json.load(sys.stdin)["hosts"][0]
assert h["entries"][0]["source"] == "file" and h["entries"][0]["weight"] == 10, h' || fail "/v1/hosts: a host not as /v1/state shows it"
# /v1/state is streamed (chunked, never built whole): every host, one a line, and the same host as /v1/hosts.
h -D "$WORK/state.headers" -o "$WORK/state.json" http://$A:$AP/v1/state
contains "Transfer-Encoding: chunked" < "$WORK/state.headers" || fail "/v1/state is not streamed: $(cat "$WORK/state.headers")"
python3 - "$WORK/state.json" <<'PY' || fail "/v1/state: not one host a line, or not as /v1/hosts shows it"
import json, sys
text = open(sys.argv[1]).read()
s = json.loads(text)
assert [h["name"] for h in s["hosts"]] == ["shop.adm.test", "slow.adm.test"], s["hosts"]
lines = text.splitlines()
assert [json.loads(l.rstrip(","))["name"] for l in lines[1:-1]] == ["shop.adm.test", "slow.adm.test"], lines
assert s["cluster"] == "adm-1" and s["peers"] == [] and s["overrides"] == {}, s
PY
[[ $(h -X HEAD -o /dev/null -w '%{http_code}' http://$A:$AP/v1/state) == 405 ]] || fail "HEAD /v1/state: want 405"
pass "/v1/summary: counts, no hosts; /v1/hosts: pages by name with prefix, unhealthy, overridden, cluster and source filters"

# Overrides through the API. The same question before and after each change: the answer cache must not
# outlive an override.
for i in 1 2 3; do [[ $(dig @$A -p $P +short shop.adm.test A | wc -l) == 2 ]] || fail "before the override"; done
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d '{"target":"adm-1/192.0.2.1","state":"down"}' http://$A:$AP/v1/overrides) == 200 ]] || fail "override refused"
for i in 1 2 3; do [[ $(dig @$A -p $P +short shop.adm.test A) == 192.0.2.2 ]] || fail "drained endpoint still answered"; done
h http://$A:$AP/v1/state | python3 -c 'import json,sys; s=json.load(sys.stdin); eps={e["target"]: e for e in s["hosts"][0]["entries"][0]["endpoints"]}; assert eps["192.0.2.1"]["override"]=="down" and not eps["192.0.2.1"]["healthy"], eps' || fail "state disagrees"
[[ $(page "overridden=1") == "shop.adm.test None" ]] || fail "/v1/hosts?overridden=1 with an override of shop's endpoint: $(page overridden=1)"
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d '{"target":"adm-1/192.0.2.1","state":"auto"}' http://$A:$AP/v1/overrides) == 200 ]] || fail "auto refused"
[[ $(dig @$A -p $P +short shop.adm.test A | wc -l) == 2 ]] || fail "auto did not restore the endpoint"
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d 'not json' http://$A:$AP/v1/overrides) == 400 ]] || fail "malformed body: want 400"
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d '{"target":"BAD_ID","state":"down"}' http://$A:$AP/v1/overrides) == 400 ]] || fail "bad target: want 400"
# An override that names nothing is refused with the reason (a typo), unless the request insists ("force": a
# cluster that has yet to join): then it is kept and warned of, in the reply and the log. "auto" always clears.
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d '{"target":"adm-l/192.0.2.1","state":"down"}' http://$A:$AP/v1/overrides) == 409 ]] || fail "an override of an unknown cluster: want 409"
out=$(h -X PUT -d '{"target":"adm-l/192.0.2.1","state":"down"}' http://$A:$AP/v1/overrides)
[[ $out == 'refused: no cluster "adm-l" is in the view; send "force": true to keep it for one that has yet to join' ]] || fail "no reason for an unknown cluster: $out"
out=$(h -X PUT -d '{"target":"adm-1/192.0.2.9","state":"up"}' http://$A:$AP/v1/overrides)
[[ $out == 'refused: cluster "adm-1" has no endpoint "192.0.2.9";'* ]] || fail "no reason for an unknown endpoint: $out"
h http://$A:$AP/v1/summary | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["counts"]["overrides"] == 0, s' || fail "a refused override was kept"
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d '{"target":"adm-1","state":"down","force":"yes"}' http://$A:$AP/v1/overrides) == 400 ]] || fail "force not a boolean: want 400"
out=$(h -X PUT -d '{"target":"adm-l/192.0.2.1","state":"down","force":true}' http://$A:$AP/v1/overrides)
[[ $out == *'"warning":"no cluster \"adm-l\" is in the view: the override waits for one"'* ]] || fail "no warning for a forced unknown cluster: $out"
out=$(h -X PUT -d '{"target":"adm-1/192.0.2.9","state":"down","force":true}' http://$A:$AP/v1/overrides)
[[ $out == *'"warning":"cluster \"adm-1\" has no endpoint \"192.0.2.9\": the override waits for one"'* ]] || fail "no warning for a forced unknown endpoint: $out"
grep -qF 'override: cluster \"adm-1\" has no endpoint \"192.0.2.9\"' "$WORK/adm.log" || fail "the warning is not logged"
[[ $(h -X PUT -d '{"target":"adm-1/192.0.2.2","state":"auto"}' http://$A:$AP/v1/overrides) != *warning* ]] || fail "a warning for an endpoint that exists"
for t in adm-l/192.0.2.1 adm-1/192.0.2.9; do
    [[ $(code -H "Authorization: Bearer $TOKEN" -X PUT -d "{\"target\":\"$t\",\"state\":\"auto\"}" http://$A:$AP/v1/overrides) == 200 ]] || fail "auto of $t refused"
done
pass "overrides: drain, state, auto, 400s; one naming no cluster or no endpoint refused (409), kept with force and warned of"

# The command line's clients say what to do about a missing or wrong token.
out=$(GLBD_ADMIN_TOKEN= "$GLBD" status --admin $A:$AP 2>&1) && fail "glbd status without a token succeeded"
[[ $out == *"HTTP 401: a bearer token is required (set GLBD_ADMIN_TOKEN to the server's admin.token)"* ]] || fail "401 without a hint: $out"
out=$(GLBD_ADMIN_TOKEN=wrong "$GLBD" groups --admin $A:$AP 2>&1) && fail "glbd groups with a wrong token succeeded"
[[ $out == *"(GLBD_ADMIN_TOKEN is not the server's admin.token)"* ]] || fail "401 with a wrong token: $out"
pass "a 401 tells the CLI's user to set GLBD_ADMIN_TOKEN, or that it is wrong"

# Hostile clients: oversized body, huge headers, garbage, slow. DNS stays correct and quick throughout.
head -c 100000 /dev/zero | tr '\0' x > "$WORK/big"
[[ $(code -H "Authorization: Bearer $TOKEN" -X PUT --data-binary @"$WORK/big" http://$A:$AP/v1/overrides) == 413 ]] || fail "oversized body: want 413"
[[ $(code -H "Authorization: Bearer $TOKEN" -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' y)" http://$A:$AP/healthz) == 431 ]] || fail "huge headers: want 431"
resp=$(printf 'GARBAGE \x01\x02\r\n\r\n' | timeout 5 bash -c "exec 3<>/dev/tcp/$A/$AP; cat >&3; cat <&3")
[[ $resp == "HTTP/1.1 400"* ]] || fail "garbage: want 400, got '${resp:0:40}'"
for i in $(seq 1 10); do (exec 3<>/dev/tcp/$A/$AP; printf 'GET /metrics HTTP/1.1\r\n' >&3; sleep 12) 2>/dev/null & done
slow=$!
start=$(now_ms)
for i in $(seq 1 50); do
    [[ $(dig @$A -p $P +short +time=2 +tries=1 shop.adm.test A | wc -l) == 2 ]] || fail "DNS answer wrong or lost while admin clients are slow"
done
ms=$(( $(now_ms) - start ))
[[ $(code -H "Authorization: Bearer $TOKEN" http://$A:$AP/healthz) == 200 ]] || fail "admin unusable beside slow clients"
pass "413, 431, 400 for garbage; 10 slow admin clients: 50 DNS answers correct in $ms ms"
kill $slow 2>/dev/null || true

# JSON logs: every line is one JSON object, also when the message carries a quote, a backslash and a control
# byte (here from a reload of a file with such a cluster id, written with YAML's escapes, which is rejected). A
# byte that is not UTF-8 cannot come that way: the YAML parser refuses the file first, and says where (the JSON
# formatter's own handling of such bytes is a unit test, Logging.JsonLinesStayJsonWhateverTheMessageCarries).
cp "$WORK/glbd.yaml" "$WORK/good.yaml"
printf 'cluster: {id: "x\\"y\\\\z\\x01", instance: a}\n' > "$WORK/glbd.yaml"
grep -v '^cluster:' "$WORK/good.yaml" >> "$WORK/glbd.yaml"
kill -HUP "$PID_adm"
wait_for 20 grep -q 'reload rejected' "$WORK/adm.log" || fail "the bad reload was not logged"
printf 'cluster: {id: adm\377, instance: a}\n' > "$WORK/glbd.yaml"
grep -v '^cluster:' "$WORK/good.yaml" >> "$WORK/glbd.yaml"
kill -HUP "$PID_adm"
wait_for 20 grep -q 'glbd.yaml:1:[0-9]*: YAML: invalid' "$WORK/adm.log" || fail "a file not UTF-8 was not refused by place"
python3 - "$WORK/adm.log" <<'PY' || fail "log lines are not JSON: $(tail -3 "$WORK/adm.log")"
import json, sys
n, hostile = 0, None
for line in open(sys.argv[1], "rb"):
    obj = json.loads(line.decode("utf-8"))  # strict: every line is valid UTF-8 and one JSON object
    assert {"time", "level", "msg"} <= obj.keys(), obj
    if "reload rejected" in obj["msg"] and hostile is None:
        hostile = obj["msg"]
    n += 1
assert hostile and 'x"y\\z\x01' in hostile, hostile
print(n)
PY
[[ $(dig @$A -p $P +short shop.adm.test A | wc -l) == 2 ]] || fail "the bad reloads changed the answers"
pass "JSON log lines parse, with a quote, backslash and control byte in a message; a file not UTF-8 is refused"
