#!/usr/bin/env bash
# The one-command Kuadrant demo (tools/kube-demo.sh, three clusters on 127.0.0.221-226) runs to its end and
# prints what it promises: three kubectl listings (a listener's record and its authoritative record each), glbd status with the records as sources, the right
# cluster for each client location, and the time a change took to cross clusters.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
bash "$(dirname "$0")/../tools/kube-demo.sh" > "$WORK/demo.out" 2>&1 || fail "the demo failed: $(tail -20 "$WORK/demo.out")"
# each cluster: kuadrant-operator's listener record and dns-operator's authoritative record (the one served)
(( $(grep -c "^shop  *shop-gw-www " "$WORK/demo.out") == 3 && $(grep -c "^shop  *authoritative-record-" "$WORK/demo.out") == 3 )) ||
    fail "kubectl listings: $(cat "$WORK/demo.out")"
grep -q "dnsrecord:shop/authoritative-record-" "$WORK/demo.out" || fail "glbd status does not show the record"
grep -q "asked at oc: Ireland -> 172.18.1.10, US -> 172.18.2.10, Australia -> 172.18.3.10, elsewhere -> 172.18.2.10" "$WORK/demo.out" ||
    fail "answers: $(grep 'asked at' "$WORK/demo.out")"
grep -q "oc's glbd answers Irish clients with it after [0-9]* ms" "$WORK/demo.out" || fail "no timing"
pass "kube-demo: $(grep -o "after [0-9]* ms" "$WORK/demo.out" | tail -1) from kubectl apply in ie to oc's answer"
