#!/usr/bin/env bash
# /v1/explain and `glbd explain` against the real answers: one glbd whose view holds four clusters (its own,
# the others from stateDir as after a restart) in IE (two, weighted), US (the default geo) and GEO-OC, with
# the MaxMind test database. For 60 random clients dig asks with ECS and the explanation is fetched for the
# same subnet: every address dig gets is one of the explained group's healthy endpoints and the ECS scopes
# agree. Then the CLI's text, bad requests (400) and a static name.
source "$(dirname "$0")/lib.sh"
ADDR=127.0.0.232 PORT=5332 ADMIN=127.0.0.232:9332
mkdir -p "$WORK/state"
now=$(now_ms)
origin() { state_origin shop.glb.explain.test "$1" "$2" "$3" false "${@:4}"; }  # CLUSTER GEO WEIGHT ADDRESSES...
echo "{\"saved\":$now,\"origins\":[$(origin ie-b IE 70 192.0.2.21 192.0.2.22),$(origin oc GEO-OC 100 203.0.113.10),$(origin us US 100 198.51.100.10)]}" \
    > "$WORK/state/state.json"
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: ie-a, instance: i}
listen: {dns: ["$ADDR:$PORT"]}
admin: {listen: "$ADMIN"}
rateLimit: {responsesPerSecond: 0}
geoip: {database: $FIXTURES/test.mmdb}
zones:
  - origin: glb.explain.test
    nameservers: [{name: ns1.glb.explain.test, addresses: [192.0.2.53]}]
    records: |
      static IN A 192.0.2.99
      www IN CNAME shop
hosts:
  - name: shop.glb.explain.test
    endpoints: [192.0.2.11]
    loadBalancing: {weight: 30, geo: IE}
$(peers_yaml --key explain --secret "$(head -c 32 /dev/urandom | base64)" --dead 1h)
stateDir: $WORK/state
YAML
start_glbd e "$WORK/glbd.yaml"
oc_served() { [[ $(answers "$ADDR" "$PORT" shop.glb.explain.test A +subnet=10.2.0.0/16) == 203.0.113.10 ]]; }
wait_for 10 oc_served || fail "the view from stateDir is not served"

explained() {  # SUBNET: the explanation's JSON
    curl -sf "http://$ADMIN/v1/explain?name=shop.glb.explain.test&type=A&subnet=$1"
}
checked=0
for i in $(seq 1 60); do
    second=$(( RANDOM % 8 )); third=$(( RANDOM % 256 )); len=$(( 16 + RANDOM % 9 ))
    subnet="10.$second.$third.0/$len"; ((len < 24)) && subnet="10.$second.0.0/16"
    got=$(q "$ADDR" "$PORT" shop.glb.explain.test A +subnet="$subnet")
    json=$(explained "$subnet") || fail "no explanation for $subnet"
    python3 - "$subnet" "$json" "$got" <<'PY' || fail "explanation and answer disagree for $subnet"
import json, re, sys
subnet, e, dig = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
answer = re.findall(r"^shop\.glb\.explain\.test\.\s+\d+\s+IN\s+A\s+(\S+)$", dig, re.M)
scope = re.search(r"CLIENT-SUBNET: \S+/\d+/(\d+)", dig)
allowed = {ep["target"] for c in e["candidates"] for ep in c["endpoints"] if ep["healthy"] or e["failOpen"]}
assert answer, dig
assert set(answer) <= allowed, (subnet, answer, allowed, e["steps"])
assert scope and int(scope.group(1)) == e["answer"]["ecsScope"], (scope and scope.group(1), e["answer"])
assert {r.split()[1] for r in e["answer"]["records"]} <= allowed, e["answer"]
assert any(s["result"].startswith("chosen") for s in e["steps"]), e["steps"]
PY
    checked=$((checked + 1))
done
pass "60 random clients: every dig answer is within the explained group, ECS scopes agree"

out=$(GLBD_ADMIN_TOKEN= "$GLBD" explain shop.glb.explain.test --subnet 10.2.0.0/16 --admin "$ADMIN")
echo "$out"
echo "$out" | contains "located in AU, continent OC by MaxMind database (network /16)" || fail "explain: location"
echo "$out" | contains "^  continent  *GEO-OC  *chosen" || fail "explain: the chosen group"
echo "$out" | contains "answer now: NOERROR: A 203.0.113.10, TTL 60, ECS scope /16" || fail "explain: the answer"
json=$(explained 10.1.0.0/16)
python3 -c 'import json,sys; e=json.loads(sys.argv[1]); c={x["cluster"]: x["weight"] for x in e["candidates"]}; assert c == {"ie-a": 30, "ie-b": 70}, c' "$json" \
    || fail "the IE group's candidates and weights"
pass "glbd explain prints the location, the groups and the answer; weights shown"

code() { curl -s -o /dev/null -w '%{http_code}' "http://$ADMIN/v1/explain?$1"; }
[[ $(code "type=A&client=10.1.2.3") == 400 ]] || fail "no name: not 400"
[[ $(code "name=shop.glb.explain.test") == 400 ]] || fail "no client: not 400"
[[ $(code "name=shop.glb.explain.test&client=not-an-ip") == 400 ]] || fail "bad client: not 400"
[[ $(code "name=shop.glb.explain.test&subnet=10.1.0.0/99") == 400 ]] || fail "bad subnet: not 400"
[[ $(code "name=shop.glb.explain.test&client=10.1.2.3&type=MX") == 400 ]] || fail "bad type: not 400"
[[ $(code "name=%zz&client=10.1.2.3") == 400 ]] || fail "bad escape: not 400"
curl -sf "http://$ADMIN/v1/explain?name=static.glb.explain.test&client=10.1.2.3" | contains '"error": "static.glb.explain.test is a static name' \
    || fail "a static name is not explained as one"
pass "bad requests are 400 with a reason; a static name says so"

# A name that is a CNAME to a host is followed: the explanation is the host's, the answer the name's.
out=$(GLBD_ADMIN_TOKEN= "$GLBD" explain www.glb.explain.test --subnet 10.2.0.0/16 --admin "$ADMIN")
echo "$out"
echo "$out" | contains "^  via www.glb.explain.test CNAME shop.glb.explain.test$" || fail "explain: the CNAME followed"
echo "$out" | contains "^  host shop.glb.explain.test in zone glb.explain.test, load-balanced$" || fail "explain: the host reached"
echo "$out" | contains "answer now: NOERROR: CNAME shop.glb.explain.test, A 203.0.113.10, TTL 60, ECS scope /16" \
    || fail "explain: the answer to www"
[[ $(answers "$ADDR" "$PORT" www.glb.explain.test A +subnet=10.2.0.0/16) == *203.0.113.10* ]] || fail "dig: www's answer"
pass "glbd explain follows a CNAME in the zone to the host it reaches"
stop_glbd e
