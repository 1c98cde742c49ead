#!/usr/bin/env bash
# glbd serves Kuadrant's DNSRecords from its cluster's API server (coredns mode): records in the shapes
# kuadrant-operator writes, applied with kubectl to the fake API server (tools/fakekube.py, TLS and a bearer
# token), are answered; a change and a delete follow; the API server going away withdraws nothing; a restart
# of it that forgets the event history (410 Gone) makes glbd list again without losing a change made
# meanwhile; a rotated token is used. Skipped where kubectl is missing.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
A=127.0.0.192 P=5492 ADMIN=127.0.0.192:9492 K=127.0.0.193 KP=6493
start_fakekube k $K $KP
export KUBECONFIG=$WORK/k/kubeconfig
Z=glb.example.com
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: eu-1, instance: eu-1-a}
listen: {dns: ["$A:$P"]}
admin: {listen: "$ADMIN"}
zones: [{origin: $Z, nameservers: [{name: ns1.$Z, addresses: [$A]}]}]
hosts:
  - {name: file.$Z, endpoints: [192.0.2.1]}
kubernetes: {kubeconfig: $WORK/k/kubeconfig}
stateDir: $WORK/state
YAML
mkdir -p "$WORK/state"
start_glbd g "$WORK/glbd.yaml"
wait_for 10 q $A $P file.$Z A || fail "glbd did not come up"

# lb NAME ROOT GEO WEIGHT TARGET_ADDRESSES...: a load-balanced DNSRecord as kuadrant-operator writes it for one
# cluster (klb chain, hash-named target, geo-code=* default pointing at its own geo).
lb() {
    local name=$1 root=$2 geo=$3 weight=$4; shift 4
    local bare=${root#\*.} g
    g=$(tr 'A-Z' 'a-z' <<<"${geo#GEO-}")
    local klb=klb.$bare t=2w705o-1ol0jo.klb.$bare targets
    targets=$(printf '"%s",' "$@"); targets="[${targets%,}]"
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: $name, namespace: gateways, labels: {kuadrant.io/coredns-zone-name: $Z}}
spec:
  rootHost: "$root"
  endpoints:
    - {dnsName: "$root", recordType: CNAME, recordTTL: 300, targets: [$klb]}
    - {dnsName: $klb, recordType: CNAME, recordTTL: 300, setIdentifier: $geo, targets: [$g.$klb], providerSpecific: [{name: geo-code, value: $geo}]}
    - {dnsName: $klb, recordType: CNAME, recordTTL: 300, setIdentifier: default, targets: [$g.$klb], providerSpecific: [{name: geo-code, value: "*"}]}
    - {dnsName: $g.$klb, recordType: CNAME, recordTTL: 60, setIdentifier: $t, targets: [$t], providerSpecific: [{name: weight, value: "$weight"}]}
    - {dnsName: $t, recordType: A, recordTTL: 30, targets: $targets}
    - {dnsName: kuadrant-a-$bare, recordType: TXT, targets: ["\"heritage=external-dns,external-dns/owner=abc\""]}
---
REC
}
simple() {  # NAME ROOT ADDRESS [ZONE_LABEL]
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: $1, namespace: web, labels: {kuadrant.io/coredns-zone-name: ${4:-$Z}}}
spec:
  rootHost: $2
  endpoints: [{dnsName: $2, recordType: A, recordTTL: 120, targets: [$3]}]
---
REC
}
{
    lb shop shop.$Z GEO-EU 120 172.18.200.1 2001:db8::1
    lb apps "*.apps.$Z" IE 50 172.18.200.2
    simple www www.$Z 192.0.2.80
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: api, namespace: gateways, labels: {kuadrant.io/coredns-zone-name: $Z}}
spec:
  rootHost: api.$Z
  endpoints:
    - {dnsName: api.$Z, recordType: CNAME, targets: [klb.api.$Z]}
    - {dnsName: klb.api.$Z, recordType: CNAME, setIdentifier: IE, targets: [ie.klb.api.$Z], providerSpecific: [{name: geo-code, value: IE}]}
    - {dnsName: ie.klb.api.$Z, recordType: CNAME, recordTTL: 60, setIdentifier: elb, targets: [abc123.elb.eu-west-1.amazonaws.com], providerSpecific: [{name: weight, value: "100"}]}
---
REC
    simple elsewhere www.other.example.net 192.0.2.81 other.example.net   # another zone's label: not served, said
    simple stray www.other.example.net 192.0.2.82                           # our label, another zone
    simple shadow file.$Z 192.0.2.99                                        # the file has this host
    lb badgeo bad.$Z GEO-XX 1 192.0.2.83
} > "$WORK/records.yaml"
t0=$(now_ms)
kubectl apply --validate=false -f "$WORK/records.yaml" >/dev/null || fail "kubectl apply"
shop() { answers $A $P shop.$Z "$@"; }
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short shop.$Z A) == 172.18.200.1 ]]" || fail "shop not served: $(shop A)"
added_ms=$(( $(now_ms) - t0 ))
[[ $(shop AAAA) == 2001:db8::1 ]] || fail "shop AAAA (an IPv6 address in an A-typed endpoint): $(shop AAAA)"
[[ $(answers $A $P x.apps.$Z A) == 172.18.200.2 ]] || fail "wildcard: $(answers $A $P x.apps.$Z A)"
wait_for 5 bash -c "[[ \$(dig @$A -p $P +short www.$Z A) == 192.0.2.80 ]]" || fail "simple record: $(answers $A $P www.$Z A)"
[[ $(q $A $P www.$Z A | awk '$4 == "A" {print $2}') == 120 ]] || fail "simple record TTL"
[[ $(answers $A $P file.$Z A) == 192.0.2.1 ]] || fail "the file's host lost to a record: $(answers $A $P file.$Z A)"
[[ $(q $A $P api.$Z A | awk '$4 == "CNAME" {print $5}') == abc123.elb.eu-west-1.amazonaws.com. ]] ||
    fail "an external (ELB) target is not answered as a CNAME: $(q $A $P api.$Z A)"
[[ -z $(answers $A $P bad.$Z A) ]] || fail "an invalid record is served"
# glbd answers the name directly (never the klb chain): one query, final addresses.
[[ $(q $A $P shop.$Z A | grep -c CNAME) == 0 ]] || fail "the klb chain leaked into the answer"
grep -q "DNSRecord gateways/badgeo: bad.$Z refused: unknown geo code" "$WORK/g.log" || fail "invalid record not logged"
grep -q "DNSRecord web/stray: www.other.example.net refused: not in a zone of this glbd" "$WORK/g.log" ||
    fail "a name outside the zones not logged"
grep -q "file.$Z (DNSRecord web/shadow) is also in" "$WORK/g.log" || fail "shadowed host not logged"
metrics() { curl -s "http://$ADMIN/metrics"; }
wait_for 5 bash -c "curl -s http://$ADMIN/metrics | grep -q '^glbd_kubernetes_names_refused 2$'" ||
    fail "refused names metric: $(metrics | grep glbd_kubernetes_names_refused)"
[[ $(metric 'glbd_kubernetes_records{state="valid"}') == 7 && $(metric glbd_kubernetes_refusals_total) == 2 ]] ||
    fail "records: $(metrics | grep -E 'glbd_kubernetes_(records|refusals)')"
# A record labelled for a zone this glbd does not serve (a user's own zone, not the one glbd was set up with) is
# not silent: logged with both zones, counted, and shown by glbd status.
[[ -z $(answers $A $P www.other.example.net A) ]] || fail "another zone's record is served"
grep -q "DNSRecord web/elsewhere is not served: it is labelled for zone other.example.net, which this glbd does not serve (its zones: $Z)" "$WORK/g.log" ||
    fail "a record labelled for another zone not logged: $(grep elsewhere "$WORK/g.log")"
[[ $(metric 'glbd_kubernetes_records{state="other_zone"}') == 1 ]] || fail "other zone: $(metrics | grep glbd_kubernetes_records)"
"$GLBD" status --admin "$ADMIN" | grep -q "1 for a zone this glbd does not serve" || fail "glbd status: $("$GLBD" status --admin "$ADMIN" | grep -A1 KUBERNETES)"
pass "kubectl apply -> answers in $added_ms ms: klb shape (IPv4+IPv6), an ELB target, wildcard, simple; file wins; a bad geo code and a foreign name refused per name; a record labelled for another zone logged and counted"

# MODIFIED and DELETED.
sed -i 's/172.18.200.1", "2001:db8::1/172.18.200.9", "2001:db8::1/; s/\["172.18.200.1","2001:db8::1"\]/["172.18.200.9","2001:db8::1"]/' "$WORK/records.yaml"
grep -q 172.18.200.9 "$WORK/records.yaml" || fail "test edit"
t0=$(now_ms)
kubectl apply --validate=false -f "$WORK/records.yaml" >/dev/null
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short shop.$Z A) == 172.18.200.9 ]]" || fail "shop change not served: $(shop A)"
modified_ms=$(( $(now_ms) - t0 ))
t0=$(now_ms)
kubectl delete dnsrecord www -n web >/dev/null
wait_for 10 bash -c "[[ \$(dig @$A -p $P www.$Z A | sed -n 's/.*status: \([A-Z]*\).*/\1/p') == NXDOMAIN ]]" || fail "deleted record still served"
deleted_ms=$(( $(now_ms) - t0 ))
pass "MODIFIED answered after $modified_ms ms, DELETED after $deleted_ms ms"

# The API server goes away: nothing is withdrawn. It comes back without its event history (a restart),
# after a change made meanwhile: glbd's watch gets 410, lists again, and serves the change.
kill "$FAKE_k"; wait "$FAKE_k" 2>/dev/null || true
down0=$(now_ms)
while (( $(now_ms) - down0 < 8000 )); do  # 8 s: three reconnections fail (after 1, 3 and 7 s of backoff)
    [[ $(shop A) == 172.18.200.9 && $(answers $A $P x.apps.$Z A) == 172.18.200.2 ]] || fail "withdrawn while the API server was down"
    sleep 1
done
python3 - "$WORK/k/state.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["rv"] += 1
for o in s["objects"]:
    if o["metadata"]["name"] == "apps":  # changed as the API server changes objects: a new resourceVersion
        o["spec"]["endpoints"][4]["targets"] = ["172.18.200.22"]
        o["metadata"]["resourceVersion"] = str(s["rv"])
json.dump(s, open(sys.argv[1], "w"))
PY
relists0=$(metric glbd_kubernetes_relists_total)
run_fakekube k
wait_for 60 bash -c "[[ \$(dig @$A -p $P +short x.apps.$Z A) == 172.18.200.22 ]]" || fail "the change made while down was lost"
(( $(metric glbd_kubernetes_relists_total) > relists0 )) || fail "no relist after the restart"
grep -q "expired (410): listing again" "$WORK/g.log" || fail "410 not seen"
pass "API server down 8 s: nothing withdrawn; back without history: 410, relisted after $(( $(now_ms) - down0 - 8000 )) ms, the change made meanwhile served"

# A rotated token: the fake now wants the new one; glbd re-reads its token file on 401.
echo "token-k-2" > "$WORK/k/token"
curl -sk -X POST "https://$K:$KP/fake/expire" >/dev/null
kubectl apply --validate=false -f - >/dev/null <<<"$(simple www2 www2.$Z 192.0.2.90)" || fail "kubectl with the new token"
wait_for 40 bash -c "[[ \$(dig @$A -p $P +short www2.$Z A) == 192.0.2.90 ]]" || fail "not served after the token rotated"
grep -q "401 Unauthorized" "$WORK/g.log" || fail "the old token was never refused (the test did not rotate it)"
pass "token rotated: refused once (401), re-read, watching again"
kubectl get dnsrecords -A > "$WORK/listing"
cat "$WORK/listing"

# A restart of glbd while the API server is down: the records' hosts come back from stateDir.
wait_for 10 grep -q "172.18.200.22" "$WORK/state/state.json" || fail "the records' hosts were not saved"
stop_glbd g
kill "$FAKE_k"; wait "$FAKE_k" 2>/dev/null || true
start_glbd g "$WORK/glbd.yaml"
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short shop.$Z A) == 172.18.200.9 ]]" || fail "restarted without the API server: shop not served"
[[ $(answers $A $P x.apps.$Z A) == 172.18.200.22 && $(answers $A $P www2.$Z A) == 192.0.2.90 ]] || fail "restarted without the API server: records lost"
run_fakekube k
kubectl delete dnsrecord www2 -n web >/dev/null
wait_for 40 bash -c "[[ -z \$(dig @$A -p $P +short www2.$Z A) ]]" || fail "after the API came back, a delete was not applied"
[[ $(shop A) == 172.18.200.9 ]] || fail "after the API came back: shop $(shop A)"
pass "glbd restarted while the API server was down: the records' hosts served from stateDir, then the API's word again"
stop_glbd g
