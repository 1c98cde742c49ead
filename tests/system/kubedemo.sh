#!/usr/bin/env bash
# The one-command Kuadrant demo (tools/kube-demo.sh, three clusters on 127.0.0.221-228) runs to its end and
# prints what it promises, in both modes. CoreDNS mode: three kubectl listings (a listener's record and its
# authoritative record each), glbd status with the records as sources, the right cluster for each client
# location, and the time a change took to cross clusters. --delegate: each cluster's delegated record with
# glbd's Ready on it, the same answers, a group switch both ways on every server, a record deleted with
# dns-operator's finalizer gone everywhere, and a fourth cluster that named one member known to every server,
# which lists it as learnt.
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

bash "$(dirname "$0")/../tools/kube-demo.sh" --delegate > "$WORK/delegate.out" 2>&1 ||
    fail "the demo --delegate failed: $(tail -20 "$WORK/delegate.out")"
out=$(grep -v '^20[0-9][0-9]-' "$WORK/delegate.out")  # without glbd's log lines
(( $(grep -cE "^shop +shop-gw-www +true +True +ProviderSuccess" <<<"$out") == 3 )) || fail "kubectl listings: $out"
grep -q "asked at oc: Ireland -> 172.18.1.10, US -> 172.18.2.10, Australia -> 172.18.3.10, elsewhere -> 172.18.2.10" <<<"$out" ||
    fail "answers: $(grep 'asked at' <<<"$out")"
grep -q 'groups set backup (on us) -> every server answers from it after [0-9]* ms; ie.s TXT: "version=1;groups=backup"' <<<"$out" ||
    fail "no switch to backup: $out"
(( $(grep -c "Ireland -> 172.18.3.10, US -> 172.18.3.10, Australia -> 172.18.3.10, elsewhere -> 172.18.3.10" <<<"$out") == 3 )) ||
    fail "backup active: every client of every server should get oc: $(grep 'asked at' <<<"$out")"
(( $(grep -c "Ireland -> 172.18.1.99, US -> 172.18.2.10, Australia -> 172.18.2.10, elsewhere -> 172.18.2.10" <<<"$out") == 3 )) ||
    fail "primary active: Australian clients should get us (oc stands by): $(grep 'asked at' <<<"$out")"
grep -q "kubectl delete in us of a record with dns-operator's finalizer: glbd wrote ProviderEndpointsRemoved after [0-9]* ms; finalizer removed, object gone (1 NotFound), every server answers nothing for promo.shop.example after [0-9]* ms" <<<"$out" ||
    fail "the deleted record: $(grep -A2 'kubectl delete' <<<"$out")"
grep -q "kubectl apply in nz -> every server holds its entry after [0-9]* ms" <<<"$out" || fail "nz: $out"
for c in ie us oc; do grep -q "^  $c's peers: .*nz/nz-0 (learnt)" <<<"$out" || fail "$c does not list nz as learnt: $out"; done
grep -q "^  nz's peers: ie/ie-0, .*(learnt).*(learnt)" <<<"$out" || fail "nz's peers: $out"
pass "kube-demo --delegate: statuses, answers, groups switched both ways, nz joined by one member (its entry everywhere $(grep -o "its entry after [0-9]* ms" <<<"$out" | grep -o "[0-9]* ms") after kubectl apply)"
