#!/usr/bin/env bash
# The UDP answer cache with the real binary: the same question asked again and again still follows the
# weights (two clusters, one geo: both answers appear), and a reload is answered from the new data at
# once, never from an answer remembered before it.
source "$(dirname "$0")/lib.sh"
A=127.0.0.61 P=5361
now=$(now_ms)
mkdir -p "$WORK/state"
cat > "$WORK/state/state.json" <<JSON
{"saved":$now,"origins":[{"cluster":"b","instance":"b-0","version":$now,"heartbeat":$now,"overrides":{},
 "hosts":[{"host":"lb.cache.test","ttl":60,"loadBalancing":{"weight":100,"geo":"IE","defaultGeo":true},
 "endpoints":[{"target":"192.0.2.20","healthy":true}]}]}]}
JSON
write_config() {  # $1 = the address of www
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: a, instance: a-0}
listen: {dns: ["$A:$P"]}
zones:
  - origin: cache.test
    nameservers: [{name: ns1.cache.test, addresses: [$A]}]
    records: |
      www IN A $1
hosts:
  - name: lb.cache.test
    endpoints: [192.0.2.10]
    loadBalancing: {weight: 100, geo: IE, defaultGeo: true}
$(peers_yaml --key cache --secret "Y2FjaGVjYWNoZWNhY2hlY2FjaGVjYWNoZWNhY2hlY2E=" --dead 1h)
stateDir: $WORK/state
YAML
}
write_config 192.0.2.1
start_glbd cache "$WORK/glbd.yaml"
wait_for 10 bash -c "dig @$A -p $P +short www.cache.test A | grep -q 192.0.2.1" || fail "not answering"

# 1. Weighted answers to one repeated question: both clusters (50/50; missing one in 60 draws: 2^-59).
declare -A seen=()
for i in $(seq 1 60); do
    a=$(answers $A $P lb.cache.test A +subnet=10.1.0.0/16 +nocookie)  # no cookie: the same bytes each time
    seen[$a]=1
done
[[ -n ${seen[192.0.2.10]:-} && -n ${seen[192.0.2.20]:-} ]] || fail "one question always got the same cluster: ${!seen[*]}"
pass "60 identical questions: answers from both clusters (${!seen[*]})"

# 2. A fixed answer, asked repeatedly, then changed by a reload: the new one at once, the old one never.
for i in 1 2 3; do [[ $(answers $A $P www.cache.test A +nocookie) == 192.0.2.1 ]] || fail "static answer"; done
write_config 192.0.2.2
kill -HUP "$PID_cache"
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short www.cache.test A) == 192.0.2.2 ]]" || fail "reload not answered"
for i in $(seq 1 20); do
    got=$(answers $A $P www.cache.test A +nocookie)
    [[ $got == 192.0.2.2 ]] || fail "answer after the reload was $got"
done
pass "after the reload: 20 of 20 answers from the new data"
