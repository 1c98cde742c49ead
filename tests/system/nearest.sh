#!/usr/bin/env bash
# geoip.fallback: nearest on two servers sharing state: a cluster's cluster.location travels to its peer,
# the client's database coordinates decide, and both servers give the same answer and ECS scope for every
# client, also after the nearest cluster is drained (the next nearest answers).
#   ie on 127.0.0.241: geo IE, the default geo, no location (its country's point, Dublin)
#   us on 127.0.0.242: geo US, cluster.location Anchorage (61.22N 149.90W), its admin on :18242
# Clients (tests/fixtures/test.mmdb): 10.12/16 Vladivostok (Ireland 8,571 km, the US's country point 9,225,
# Anchorage 5,322), 10.13/16 Kaliningrad, 10.14/16 Russia without coordinates (its point: Ireland 5,564 km,
# Anchorage 6,209), 10.5/16 Japan, 10.9/16 unknown.
source "$(dirname "$0")/lib.sh"
P=5390 AP=18242
declare -A ADDR=([ie]=127.0.0.241 [us]=127.0.0.242)

config() {  # CLUSTER EXTRA -> $WORK/CLUSTER.yaml
    local c=$1 lb ep loc="" admin=""
    case $c in
        ie) ep=192.0.2.10 lb="{weight: 100, geo: IE, defaultGeo: true}" ;;
        us) ep=198.51.100.10 lb="{weight: 100, geo: US}" loc=", location: {lat: 61.2181, lon: -149.9003}"
            admin="admin: {listen: \"${ADDR[us]}:$AP\"}" ;;
    esac
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0$loc}
listen: {dns: ["${ADDR[$c]}:$P"]}
$admin
geoip: {database: $FIXTURES/test.mmdb, fallback: nearest}
zones:
  - origin: near.test
    nameservers:
      - {name: ns-ie.near.test, addresses: [${ADDR[ie]}]}
      - {name: ns-us.near.test, addresses: [${ADDR[us]}]}
hosts:
  - {name: shop.near.test, ttl: 60, endpoints: [$ep], loadBalancing: $lb}
$(peers_yaml --interval 500ms --dead 3s "${ADDR[ie]}:$P" "${ADDR[us]}:$P")
YAML
}
config ie
config us

ecs() {  # SERVER SUBNET -> "answer | scope"
    local out
    out=$(dig @"$1" -p $P shop.near.test A +subnet="$2" +norec +time=2 +tries=1)
    echo "$(awk '/^shop.near.test.*IN\tA/ {print $5}' <<<"$out" | sort | tr '\n' ' ')| $(sed -n 's/.*CLIENT-SUBNET: [^/]*\/[0-9]*\/\([0-9]*\).*/\1/p' <<<"$out")"
}
# Both servers answer SUBNET with WANT ("answer | scope").
both() {
    local s
    for s in "${ADDR[@]}"; do [[ $(ecs $s "$1") == "$2" ]] || return 1; done
}

start_glbd ie "$WORK/ie.yaml"
start_glbd us "$WORK/us.yaml"
# Converged: both know both clusters, and ie has learnt us's location (Vladivostok goes to Anchorage).
wait_for 30 both 10.12.0.0/16 "198.51.100.10 | 16" ||
    fail "Vladivostok: ie $(ecs ${ADDR[ie]} 10.12.0.0/16), us $(ecs ${ADDR[us]} 10.12.0.0/16); want the US (Anchorage) from both"
pass "cluster.location reached the peer: Vladivostok answered from Anchorage by both servers"

for want in "10.13.0.0/16=192.0.2.10 | 16" "10.14.0.0/16=192.0.2.10 | 16" "10.5.0.0/16=198.51.100.10 | 16" \
            "10.1.0.0/16=192.0.2.10 | 16" "10.3.0.0/16=198.51.100.10 | 16"; do
    both "${want%%=*}" "${want#*=}" || fail "${want%%=*}: ie $(ecs ${ADDR[ie]} ${want%%=*}), us $(ecs ${ADDR[us]} ${want%%=*}); want ${want#*=}"
done
unknown=$(ecs ${ADDR[ie]} 10.9.0.0/16)
[[ ${unknown%|*} == "192.0.2.10 " && $(ecs ${ADDR[us]} 10.9.0.0/16) == "$unknown" ]] || fail "unknown client: $unknown"
pass "Kaliningrad and coordinate-less Russia to Ireland, Japan to the US, unknown to the default geo, on both"

# The explanation names the client's point (the database's) and the nearest group's distance.
ex=$(curl -sf "http://${ADDR[us]}:$AP/v1/explain?name=shop.near.test&subnet=10.12.0.0/16")
python3 - "$ex" <<'PY' || fail "explain: $ex"
import json, sys
e = json.loads(sys.argv[1])
p = e["location"]["point"]
assert (round(p["lat"], 2), round(p["lon"], 2), p["from"]) == (43.12, 131.89, "MaxMind database"), p
near = [s for s in e["steps"] if s["group"] == "nearest"]
assert near and near[0]["geo"] == "US" and near[0]["result"] == "chosen" and 5200 < near[0]["km"] < 5450, e["steps"]
PY
pass "explain: the client at its database point, the US group 5,322 km away"

# Many clients: the same answer and ECS scope from both servers.
compare() {
    local i n subnet a b
    for ((i = 0; i < 60; i++)); do
        n=$((RANDOM % 16))
        case $((i % 3)) in
            0) subnet="10.$n.$((RANDOM % 256)).0/24" ;;
            1) subnet="10.$n.0.0/16" ;;
            2) subnet="2001:db8:$((RANDOM % 5)):$(printf %x $((RANDOM % 65536)))::/64" ;;
        esac
        a=$(ecs ${ADDR[ie]} "$subnet") b=$(ecs ${ADDR[us]} "$subnet")
        [[ $a == "$b" && -n ${a%|*} && $a != " | "* ]] || fail "$subnet: ie '$a', us '$b'"
    done
}
compare
pass "60 random clients: identical answers and scopes from both servers"

# The nearest cluster drained: both servers move Vladivostok and Japan to the next nearest (Ireland).
curl -sf -X PUT -d '{"target":"us","state":"down"}' http://${ADDR[us]}:$AP/v1/overrides >/dev/null || fail "override refused"
wait_for 20 both 10.12.0.0/16 "192.0.2.10 | 16" || fail "drained: ie $(ecs ${ADDR[ie]} 10.12.0.0/16), us $(ecs ${ADDR[us]} 10.12.0.0/16)"
both 10.5.0.0/16 "192.0.2.10 | 16" || fail "drained: Japan not moved to Ireland"
compare
pass "us drained: the next nearest (Ireland) answers on both; 60 more clients agree"
