#!/usr/bin/env bash
# Two replicas of cluster eu plus clusters us and oc. Every peer lists the replicas by one name,
# eu-replicas.glbd.test, which resolves to both (a hosts file bind-mounted over /etc/hosts in a private
# mount namespace that this test creates, so the machine's own file is untouched).
# Checks: the name reaches both replicas; answers stay stable for 12 s (24 sync intervals); kill -9 of one replica changes
# no answer.
if [[ -z ${GLBD_IN_MOUNT_NS:-} ]]; then
    exec unshare --mount env GLBD_IN_MOUNT_NS=1 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
P=5400 TP=18100
R1=127.0.0.101 R2=127.0.0.102 US=127.0.0.103 OC=127.0.0.104 E1=127.0.0.105 E2=127.0.0.106
{ cat /etc/hosts; echo "$R1 eu-replicas.glbd.test"; echo "$R2 eu-replicas.glbd.test"; } > "$WORK/hosts"
mount --bind "$WORK/hosts" /etc/hosts || fail "cannot bind-mount the test hosts file (needs root)"
[[ $(getent ahostsv4 eu-replicas.glbd.test | awk '$2 == "STREAM" {print $1}' | sort | tr '\n' ' ') == "$R1 $R2 " ]] \
    || fail "the test name does not resolve to both replicas"
start_target e1 $E1:$TP
start_target e2 $E2:$TP

config() {  # NAME CLUSTER ADDR HOSTS-YAML
cat > "$WORK/$1.yaml" <<YAML
cluster: {id: $2, instance: $1}
listen: {dns: ["$3:$P"]}
geoip: {database: $FIXTURES/test.mmdb}
zones: [{origin: rep.test, nameservers: [{name: ns.rep.test, addresses: [$R1]}]}]
hosts:
$4
$(peers_yaml --interval 500ms --dead 3s "eu-replicas.glbd.test:$P" "$US:$P" "$OC:$P")
YAML
}
EU_HOSTS="  - name: shop.rep.test
    endpoints: [$E1, $E2]
    loadBalancing: {weight: 100, geo: IE}
    healthCheck: {protocol: HTTP, port: $TP, path: /healthz, interval: 300ms, timeout: 250ms}"
config r1 eu $R1 "$EU_HOSTS"
config r2 eu $R2 "$EU_HOSTS"
config us us $US "  - {name: shop.rep.test, endpoints: [198.51.100.30], loadBalancing: {weight: 100, geo: US, defaultGeo: true}}"
config oc oc $OC "  - {name: shop.rep.test, endpoints: [203.0.113.30], loadBalancing: {weight: 100, geo: GEO-OC}}"
for n in r1 r2 us oc; do start_glbd $n "$WORK/$n.yaml"; done

answers_ok() {  # SERVERS...: every one gives the expected answer for IE, US and AU clients
    local s
    for s in "$@"; do
        [[ $(dig @$s -p $P +short shop.rep.test A +subnet=10.1.0.0/16 | sort | tr '\n' ' ') == "$E1 $E2 " ]] || return 1
        [[ $(dig @$s -p $P +short shop.rep.test A +subnet=10.3.0.0/16) == 198.51.100.30 ]] || return 1
        [[ $(dig @$s -p $P +short shop.rep.test A +subnet=10.2.0.0/16) == 203.0.113.30 ]] || return 1
    done
}
wait_for 15 answers_ok $R1 $R2 $US $OC || fail "no convergence"
for n in us oc; do
    for r in $R1 $R2; do
        wait_for 10 grep -q "sync: peer $r:$P up" "$WORK/$n.log" || fail "$n never reached replica $r through the name"
    done
done
grep -q "sync: peer $R1:$P up" "$WORK/r1.log" && fail "r1 pulled from itself"
pass "the member name reached both replicas from us and oc; replicas skip themselves"

# Stable over 12 s (24 sync intervals, 4 x deadAfter): the replicas' reports merge without flapping.
end=$(( $(now_ms) + 12000 )) checks=0
while (( $(now_ms) < end )); do
    answers_ok $R1 $R2 $US $OC || fail "answers changed after $checks checks"
    checks=$((checks + 1))
    sleep 0.25
done
pass "answers stable over 12 s ($checks rounds of 12 queries)"

# kill -9 of one replica changes no answer, for well over deadAfter.
kill9_glbd r1
end=$(( $(now_ms) + 7000 )) checks=0
while (( $(now_ms) < end )); do
    answers_ok $R2 $US $OC || fail "an answer changed $checks checks after one replica died"
    checks=$((checks + 1))
    sleep 0.25
done
pass "kill -9 of one replica changed no answer over 7 s ($checks rounds)"
