#!/usr/bin/env bash
# Kuadrant's DNSRecords as Kuadrant ships them (tests/fixtures/kuadrant, written by a port of upstream's
# generation code), applied with kubectl to the fake API server that cluster eu-1's glbd (A, coredns mode)
# watches; cluster us-1's glbd (B) has no Kubernetes and learns everything over sync. Both answer every
# shape the same way, for clients in IE, US, AU and elsewhere (EDNS Client Subnet, tests/fixtures/test.mmdb):
# a primary's merge of three clusters (with the 120:40 weights within 5% over 2,000 queries), two gateways
# of one cluster, a wildcard listener, simple records, geo-code on plain records, NS with glue and TXT, the
# zone set-up record (matching, then not), the active-groups TXT, a second zone, one name from two
# namespaces (the older keeps it), a 0.14 record and 0.16/0.17 status fields. Skipped without kubectl.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
A=127.0.20.1 B=127.0.20.2 P=5420 K=127.0.20.3 KP=6420 ADMIN=127.0.20.1:9420
Z=glb.example.com FIX=$FIXTURES/kuadrant
start_fakekube k $K $KP
export KUBECONFIG=$WORK/k/kubeconfig
config() {  # NAME CLUSTER ADDRESS PEER [kubernetes]
    cat <<YAML
cluster: {id: $2, instance: $1}
listen: {dns: ["$3:$P"]}
geoip: {database: $FIXTURES/test.mmdb}
rateLimit: {responsesPerSecond: 0}   # 2,000 queries from one client in a row
zones:
  - origin: $Z
    nameservers: [{name: ns1.$Z, addresses: [127.0.0.1]}, {name: ns2.$Z, addresses: [127.0.0.2]}]
  - origin: example.net
    nameservers: [{name: ns1.example.net, addresses: [127.0.0.1]}]
$(peers_yaml --interval 300ms "$4:$P")
YAML
    [[ ${5:-} ]] && printf 'admin: {listen: "%s"}\nkubernetes: {kubeconfig: %s, groupsFrom: [kuadrant-coredns]}\n' "$ADMIN" "$WORK/k/kubeconfig"
    return 0
}
config a eu-1 $A $B kubernetes > "$WORK/a.yaml"
config b us-1 $B $A > "$WORK/b.yaml"
start_glbd a "$WORK/a.yaml"
start_glbd b "$WORK/b.yaml"
IE=10.1.0.0/24 US=10.3.0.0/24 AU=10.2.0.0/24 ELSEWHERE=10.99.0.0/24
# on SERVER NAME TYPE SUBNET: the answer's data, one per line, sorted
on() { answers "$1" $P "$2" "$3" +subnet="$4" | sort; }
# same NAME TYPE SUBNET WANT: both servers give WANT (lines joined by spaces), within a deadline for B
gives() { [[ "$(on "$1" "$2" "$3" "$4" | tr '\n' ' ')" == "$5 " ]]; }
same() {
    local s
    for s in $A $B; do
        wait_for 15 gives $s "$@" || fail "$s: $1 $2 from $3: got \"$(on $s "$1" "$2" "$3" | tr '\n' ' ')\", want \"$4\""
    done
}
apply() { kubectl apply --validate=false -f "$FIX/$1.json" >/dev/null || fail "kubectl apply $1"; }

# 1. A Kuadrant primary's authoritative record holding three clusters' gateways (and the delegating records
#    themselves, unlabelled: not served twice).
t0=$(now_ms)
apply primary-three-clusters
same api.$Z A $IE "172.18.200.1"
first_ms=$(( $(now_ms) - t0 ))
same api.$Z AAAA $IE "2001:db8:e0::1"
same api.$Z A $AU "172.18.200.1"          # no OC entry: the default geo (GEO-EU)
same api.$Z A $ELSEWHERE "172.18.200.1"
shares=""
for s in $A $B; do
    for i in $(seq 2000); do echo "api.$Z A +subnet=$US"; done > "$WORK/batch"
    dig @$s -p $P +norec +short +time=2 +tries=1 -f "$WORK/batch" > "$WORK/us.$s"
    ip=$(grep -c '^172.18.201.1$' "$WORK/us.$s") elb=$(grep -c '^a1b2c3-us-2.elb.us-east-1.amazonaws.com.$' "$WORK/us.$s")
    (( ip + elb == 2000 )) || fail "$s: US answers: $(sort "$WORK/us.$s" | uniq -c)"
    # 120:40 is 75% : 25%; within 5 points
    (( ip * 100 >= 70 * 2000 && ip * 100 <= 80 * 2000 )) || fail "$s: US weights 120:40 gave $ip:$elb"
    shares="$shares $s:$ip:$elb"
done
[[ $(q $A $P api.$Z A +subnet=$IE | grep -c CNAME) == 0 ]] || fail "the klb chain leaked into an answer"
pass "primary's merge of 3 clusters: IE and AU and elsewhere -> GEO-EU (default), US 120:40 over 2,000 queries ($shares) on both servers; first answer $first_ms ms after kubectl apply"

# 2. Two gateways of one cluster sharing a host: IE's IP, US's ELB name.
apply two-gateways
same shop.$Z A $IE "172.18.210.1"
same shop.$Z A $US "shop-us.elb.us-east-1.amazonaws.com."
same shop.$Z A $AU "172.18.210.1"
# 3. A wildcard listener and its parent name, one chain: no loop.
apply wildcard
same x.apps.$Z A $IE "172.18.200.1"
same apps.$Z AAAA $US "2001:db8:e0::1"
[[ $(q $A $P y.apps.$Z A +subnet=$IE | grep -c 'klb') == 0 ]] || fail "wildcard: the chain in the answer"
# 4. Simple policies; 5. geo-code on plain A records.
apply simple
same www.$Z A $AU "172.18.220.1 172.18.220.2"
same docs.$Z A $IE "docs-lb.example.org."
apply geo-plain
same plain.$Z A $IE "192.0.2.11"
same plain.$Z A $US "192.0.2.22"
pass "two gateways of one cluster (IE IP, US ELB), wildcard without a loop, simple records, geo-code on plain A records: the same from both servers"

# 6. NS with glue and TXT: static records on every server.
apply ns-txt
for s in $A $B; do
    wait_for 15 bash -c "dig @$s -p $P +norec www.sub.team.$Z A | grep -q 'sub.team.$Z.*NS.*ns1.sub.team.$Z'" ||
        fail "$s: no referral: $(q $s $P www.sub.team.$Z A)"
    q $s $P www.sub.team.$Z A | grep -q "^ns1.sub.team.$Z.*A.*192.0.2.53" || fail "$s: no glue: $(q $s $P www.sub.team.$Z A)"
done
same _acme-challenge.team.$Z TXT $IE '"token-1234"'
same team.$Z TXT $IE '"v=spf1 -all"'
# 7. The zone set-up record: matching changes nothing, the *.<zone> listener beside it is served; then a
#    different NS set is refused with the reason, the listener still served.
apply zone-setup-matching
same foo.$Z A $IE "172.18.230.1"
same $Z NS $IE "ns1.$Z. ns2.$Z."
apply zone-setup-other
wait_for 10 grep -q "glb.example.com refused: its NS set differs from zones\[\].nameservers" "$WORK/a.log" ||
    fail "the other zone set-up not refused in the log"
same $Z NS $IE "ns1.$Z. ns2.$Z."
same ns1.$Z A $IE "127.0.0.1"
same foo.$Z A $IE "172.18.230.1"
# 8. The active-groups TXT; 9. a second zone.
apply active-groups
same kuadrant-active-groups.$Z TXT $IE '"version=1;groups=primary-eu&&primary-us"'
apply second-zone
same api.example.net A $US "172.18.201.1"
pass "NS with glue (a referral from both servers), TXT, zone set-up (matching; other refused, its *.$Z listener served), active-groups TXT, a second zone"

# 10. One name from two namespaces: the older record keeps it (creationTimestamp has seconds).
kubectl apply --validate=false -f <(python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); l["items"]=l["items"][:1]; print(json.dumps(l))' "$FIX/two-namespaces.json") >/dev/null
same pay.$Z A $IE "172.18.240.1"
sleep 1.1
apply two-namespaces
wait_for 10 grep -q "DNSRecord intruder/authoritative-record-.*: pay.$Z refused: the older DNSRecord payments/authoritative-record-.* publishes it" "$WORK/a.log" ||
    fail "the contested name was not refused: $(grep -i intruder "$WORK/a.log")"
same pay.$Z A $IE "172.18.240.1"
# 11. dns-operator 0.14's labelled listener record; 12. 0.16/0.17 status fields written through /status.
apply v014-labelled
same legacy.$Z A $US "172.18.201.1"
apply status-016
status=$(python3 -c 'import json,sys; print(json.dumps({"status": json.load(open(sys.argv[1]))["items"][0]["status"]}))' "$FIX/status-016.json")
name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["items"][0]["metadata"]["name"])' "$FIX/status-016.json")
kubectl patch dnsrecord "$name" -n grp --subresource=status --type=merge -p "$status" >/dev/null || fail "status patch"
[[ $(kubectl get dnsrecord "$name" -n grp -o jsonpath='{.status.group}') == primary-eu ]] || fail "status not written"
same grp.$Z A $IE "172.18.200.1"
pass "one name from two namespaces (the older keeps it, the other refused in the log), a 0.14 record, 0.16/0.17 status fields"

echo "names refused now: $(metric glbd_kubernetes_names_refused); records mapped: $(metric glbd_kubernetes_records_mapped_total); events: $(metric glbd_kubernetes_events_total)"
kubectl get dnsrecords -A
for name in api.$Z shop.$Z x.apps.$Z www.$Z plain.$Z pay.$Z; do
    for c in IE:$IE US:$US AU:$AU; do
        printf '%-22s %-3s A: %s\n' "$name" "${c%%:*}" "$(on $B "$name" A "${c#*:}" | tr '\n' ' ')"
    done
done
stop_glbd a
stop_glbd b
