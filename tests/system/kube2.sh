#!/usr/bin/env bash
# Two clusters, each with its own API server (fakekube) and its own glbd reading DNSRecords there; the two
# glbd sync over DNS with TSIG. No kubeconfig crosses clusters. IE and US clients get their own cluster from
# both servers, and a change applied with kubectl in one cluster reaches the other cluster's glbd (timed).
# Skipped where kubectl is missing.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
P=5498 Z=multi.example.com
declare -A ADDR=([ie]=127.0.0.198 [us]=127.0.0.199) API=([ie]=127.0.0.200 [us]=127.0.0.201)
declare -A GEO=([ie]=IE [us]=US) GW=([ie]=172.18.1.10 [us]=172.18.2.10)
for c in ie us; do
    start_fakekube $c "${API[$c]}" 6498
    kube_cluster_yaml $c $P 9498 $Z "resync: 1s" "" ie us > "$WORK/$c.yaml"
done
record() { lb_record "$1" "${GEO[$1]}" "$2" "$Z" ie; }  # CLUSTER ADDRESS
for c in ie us; do
    start_glbd $c "$WORK/$c.yaml"
    record $c "${GW[$c]}" | KUBECONFIG=$WORK/$c/kubeconfig kubectl apply --validate=false -f - >/dev/null || fail "apply in $c"
done
from() { dig @"${ADDR[$1]}" -p $P +short shop.$Z A +subnet="$2"; }
agree() {  # IE_ANSWER US_ANSWER: both servers give IE clients (10.1/16) and US clients (10.3/16) these
    local s
    for s in ie us; do
        [[ $(from $s 10.1.0.0/16) == "$1" && $(from $s 10.3.0.0/16) == "$2" ]] || return 1
    done
}
wait_for 20 agree "${GW[ie]}" "${GW[us]}" || fail "IE/US answers: ie server $(from ie 10.1.0.0/16)/$(from ie 10.3.0.0/16), us server $(from us 10.1.0.0/16)/$(from us 10.3.0.0/16)"
pass "two clusters, each reading only its own API server: IE clients get ${GW[ie]}, US clients ${GW[us]}, from both servers"
t0=$(now_ms)
record ie 172.18.1.99 | KUBECONFIG=$WORK/ie/kubeconfig kubectl apply --validate=false -f - >/dev/null
wait_for 20 bash -c "[[ \$(dig @${ADDR[us]} -p $P +short shop.$Z A +subnet=10.1.0.0/16) == 172.18.1.99 ]]" || fail "the change in ie never reached us's glbd"
ms=$(( $(now_ms) - t0 ))
for c in ie us; do
    echo "--- kubectl get dnsrecords -A ($c)"; KUBECONFIG=$WORK/$c/kubeconfig kubectl get dnsrecords -A
    echo "--- glbd status ($c)"; "$GLBD" status --admin "${ADDR[$c]}:9498" | tee "$WORK/status.$c"
    grep -Eq "^ +(shop\.$Z +)?$c +.*dnsrecord:gateways/shop" "$WORK/status.$c" || fail "glbd status ($c) does not show the record as the source"
    grep -q "coredns mode (kuadrant.io/coredns-zone-name), synced; DNSRecords: 1 served" "$WORK/status.$c" || fail "glbd status ($c): no Kubernetes line"
done
pass "kubectl apply in ie -> us's glbd answers the new address after $ms ms (kubectl's own time included)"
relists() { curl -s "http://${ADDR[$1]}:9498/v1/state" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kubernetes"]["relists"])'; }
wait_for 10 bash -c "(( \$(curl -s http://${ADDR[us]}:9498/v1/state | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"kubernetes\"][\"relists\"])') >= 3 ))" ||
    fail "resync 1s: only $(relists us) lists"
pass "resync: 1s lists again every second ($(relists us) lists so far)"
for c in ie us; do stop_glbd $c; done
