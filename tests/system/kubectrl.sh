#!/usr/bin/env bash
# Controller mode: glbd is the only DNSRecord controller. It reads every record whose rootHost lies in its
# zones (no label needed) and writes their status with a merge patch to
# /status: Ready (ProviderSuccess, or False with the mapping error), Healthy from its probes of the record's
# healthCheck as dns-operator writes it (AllChecksPassed, SomeChecksPassed, HealthChecksFailed), observedGeneration;
# a record of another zone gets Ready=False DNSProviderError unless another controller wrote its Ready;
# `kubectl get dnsrecord` shows them. Skipped where kubectl is missing.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
A=127.0.0.195 P=5495 K=127.0.0.196 KP=6496 T=127.0.0.197 TP=8097 DOWN=127.0.0.194
start_fakekube k $K $KP
export KUBECONFIG=$WORK/k/kubeconfig
start_target t $T:$TP
Z=ctrl.example.com
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: eu-1}
listen: {dns: ["$A:$P"]}
zones: [{origin: $Z, nameservers: [{name: ns1.$Z, addresses: [$A]}]}]
kubernetes:
  kubeconfig: $WORK/k/kubeconfig
  mode: controller
  owners: {web: [app.$Z, partial.$Z, slow.$Z, broken.$Z, grab.$Z], apex: [$Z]}
YAML
start_glbd g "$WORK/glbd.yaml"
cat > "$WORK/records.yaml" <<YAML
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: app, namespace: web}
spec:
  rootHost: app.$Z
  endpoints: [{dnsName: app.$Z, recordType: A, recordTTL: 60, targets: [$T]}]
  healthCheck: {port: $TP, path: /healthz, protocol: HTTP, interval: 1s, failureThreshold: 1}
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: partial, namespace: web}
spec:
  rootHost: partial.$Z
  endpoints: [{dnsName: partial.$Z, recordType: A, recordTTL: 60, targets: [$T, $DOWN]}]
  healthCheck: {port: $TP, path: /healthz, protocol: HTTP, interval: 1s, failureThreshold: 1}
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: slow, namespace: web}
spec:
  rootHost: slow.$Z
  endpoints: [{dnsName: slow.$Z, recordType: A, recordTTL: 60, targets: [$T]}]
  healthCheck: {port: $TP, path: /hang, protocol: HTTP, interval: 1s, failureThreshold: 1}
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: broken, namespace: web}
spec:
  rootHost: broken.$Z
  endpoints: [{dnsName: broken.$Z, recordType: A, targets: [not-an-address]}]
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: grabber, namespace: web}
spec:
  rootHost: grab.$Z
  endpoints: [{dnsName: grab.$Z, recordType: A, targets: [192.0.2.7]}, {dnsName: $Z, recordType: A, targets: [192.0.2.8]}]
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: site, namespace: apex}
spec:
  rootHost: $Z
  endpoints: [{dnsName: $Z, recordType: A, recordTTL: 60, targets: [192.0.2.50]}, {dnsName: $Z, recordType: AAAA, targets: ["2001:db8::50"]}]
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: apex-cname, namespace: apex}
spec:
  rootHost: $Z
  endpoints: [{dnsName: $Z, recordType: CNAME, targets: [lb.example.net]}]
---
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: foreign, namespace: web}
spec:
  rootHost: www.other.example.net
  endpoints: [{dnsName: www.other.example.net, recordType: A, targets: [192.0.2.1]}]
YAML
# Every Healthy condition of namespace web as a watch shows it (the watch opened before the records exist, so no
# state glbd writes is missed however long a busy machine takes between two polls).
H='{.status.conditions[?(@.type=="Healthy")]'
kubectl get dnsrecord -n web --watch -o jsonpath="{.metadata.name} $H.status}/$H.reason}/$H.message}{\"\\n\"}" \
    >"$WORK/healthy.txt" 2>"$WORK/healthy.err" &
PIDS+=($!)
wait_for 10 bash -c "curl -sk https://$K:$KP/fake/requests | grep -q '^GET /apis/kuadrant.io/v1alpha1/namespaces/web/dnsrecords?.*watch=true'" ||
    fail "kubectl get --watch did not open its watch: $(cat "$WORK/healthy.err")"
kubectl apply --validate=false -f "$WORK/records.yaml" >/dev/null || fail "kubectl apply"
cond() {  # NAME TYPE FIELD: a condition's field as kubectl shows it
    kubectl get dnsrecord "$1" -n web -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"
}
# A record whose first probe is still out (the target accepts and never answers; Kuadrant's probe timeout is
# 3 s) reads as dns-operator writes it before its probes report: Healthy=False HealthChecksFailed.
first_healthy() { grep -m1 "^$1 [^/]" "$WORK/healthy.txt"; }
wait_for 10 first_healthy slow || fail "slow: no Healthy condition written: $(cat "$WORK/healthy.txt")"
[[ $(first_healthy slow) == "slow False/HealthChecksFailed/Probes are creating" ]] ||
    fail "slow: the first Healthy written is '$(first_healthy slow)', before its first probe ended"
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short app.$Z A) == $T ]]" || fail "app not served"
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord app -n web -o jsonpath='{.status.conditions[?(@.type==\"Healthy\")].reason}') == AllChecksPassed ]]" ||
    fail "app: Healthy is '$(cond app Healthy reason)'"
[[ $(cond app Ready status)/$(cond app Ready reason) == True/ProviderSuccess ]] || fail "app Ready: $(cond app Ready status)/$(cond app Ready reason)"
[[ $(kubectl get dnsrecord app -n web -o jsonpath='{.status.observedGeneration}') == 1 ]] || fail "observedGeneration"
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord broken -n web -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}') == False ]]" ||
    fail "broken: Ready is '$(cond broken Ready status)'"
[[ $(cond broken Ready message) == *"not-an-address is not an IP address"* ]] || fail "broken: message '$(cond broken Ready message)'"
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord grabber -n web -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}') == ValidationError ]]" ||
    fail "grabber: Ready is '$(cond grabber Ready status)/$(cond grabber Ready reason)'"
[[ $(cond grabber Ready message) == "served but for: $Z: the zone apex is this glbd's unless kubernetes.owners gives it to namespace web" ]] ||
    fail "grabber: message '$(cond grabber Ready message)'"
[[ $(dig @$A -p $P +short grab.$Z A) == 192.0.2.7 ]] || fail "grabber: its own name not served"
# One endpoint of two fails: kuadrant-operator's DNSPolicy reads Healthy=False, as dns-operator writes it.
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord partial -n web -o jsonpath='{.status.conditions[?(@.type==\"Healthy\")].reason}') == SomeChecksPassed ]]" ||
    fail "partial: Healthy is '$(cond partial Healthy status)/$(cond partial Healthy reason)'"
[[ $(cond partial Healthy status) == False && $(cond partial Healthy message) == "Not healthy addresses: [$DOWN]" ]] ||
    fail "partial: $(cond partial Healthy status) '$(cond partial Healthy message)'"
# A record of a zone glbd does not serve says so where its author looks, and in the log.
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord foreign -n web -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}') == DNSProviderError ]]" ||
    fail "foreign: Ready is '$(cond foreign Ready status)/$(cond foreign Ready reason)'"
[[ $(cond foreign Ready status) == False && $(cond foreign Ready message) == *"rootHost www.other.example.net lies in no zone this glbd serves (its zones: $Z)"* ]] ||
    fail "foreign: '$(cond foreign Ready message)'"
grep -q "DNSRecord web/foreign is not served: its rootHost www.other.example.net lies in no zone" "$WORK/g.log" || fail "foreign not logged"
# The zone apex, which kubernetes.owners gives namespace apex: its addresses served beside glbd's own SOA and NS;
# a CNAME there refused with the RFC's reason.
wait_for 10 bash -c "[[ \$(dig @$A -p $P +short $Z A) == 192.0.2.50 ]]" || fail "the apex A is not served: $(dig @$A -p $P $Z A)"
[[ $(dig @$A -p $P +short $Z AAAA) == 2001:db8::50 ]] || fail "apex AAAA: $(dig @$A -p $P +short $Z AAAA)"
[[ $(dig @$A -p $P +short $Z NS) == ns1.$Z. && $(dig @$A -p $P +short $Z SOA) == "ns1.$Z. hostmaster.$Z. "* ]] ||
    fail "the apex's NS or SOA is not glbd's: $(dig @$A -p $P +short $Z NS) / $(dig @$A -p $P +short $Z SOA)"
capex() { kubectl get dnsrecord "$1" -n apex -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"; }
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord apex-cname -n apex -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}') == ValidationError ]]" ||
    fail "apex-cname: Ready is '$(capex apex-cname Ready reason)'"
[[ $(capex apex-cname Ready message) == *"$Z: a CNAME at the zone apex (RFC 1034 section 3.6.2"* ]] || fail "apex-cname: '$(capex apex-cname Ready message)'"
[[ $(capex site Ready reason) == ProviderSuccess ]] || fail "site: $(capex site Ready reason) '$(capex site Ready message)'"
pass "the zone apex given to namespace apex by kubernetes.owners: A and AAAA served beside glbd's SOA and NS; a CNAME there refused (RFC 1034 3.6.2)"
pass "controller mode: Ready/ProviderSuccess, Healthy/AllChecksPassed, observedGeneration 1; before the first probe Healthy=False/HealthChecksFailed 'Probes are creating'; one endpoint of two down Healthy=False/SomeChecksPassed; broken record Ready=False with its reason; a record naming the apex Ready=False/ValidationError, its own name served; another zone's record Ready=False/DNSProviderError, logged"
# Another zone's record whose Ready another controller wrote (a dns-operator serving that zone) is left alone.
printf 'apiVersion: kuadrant.io/v1alpha1\nkind: DNSRecord\nmetadata: {name: theirs, namespace: web}\nspec: {rootHost: www.other.example.net, endpoints: [{dnsName: www.other.example.net, recordType: A, targets: [192.0.2.1]}]}\n' |
    kubectl apply --validate=false -f - >/dev/null || fail "apply theirs"
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord theirs -n web -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}') == DNSProviderError ]]" ||
    fail "theirs: glbd's status never came"
kubectl patch dnsrecord theirs -n web --subresource=status --type=merge \
    -p '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"ProviderSuccess","message":"Provider ensured the dns record"}]}}' >/dev/null ||
    fail "status patch of theirs"
sleep 1
[[ $(cond theirs Ready reason) == ProviderSuccess ]] || fail "theirs: glbd overwrote another controller's status: $(cond theirs Ready reason) '$(cond theirs Ready message)'"
pass "another zone's record whose Ready another controller wrote afterwards is left to it"

kill "$PID_t"; wait "$PID_t" 2>/dev/null || true
wait_for 20 bash -c "[[ \$(kubectl get dnsrecord app -n web -o jsonpath='{.status.conditions[?(@.type==\"Healthy\")].reason}') == HealthChecksFailed ]]" ||
    fail "app after its target stopped: Healthy is '$(cond app Healthy reason)'"
# partial's probe of the stopped target is its own, up to an interval later: its status written before any is counted.
wait_for 20 bash -c "[[ \$(kubectl get dnsrecord partial -n web -o jsonpath='{.status.conditions[?(@.type==\"Healthy\")].reason}') == HealthChecksFailed ]]" ||
    fail "partial after its target stopped: Healthy is '$(cond partial Healthy reason)'"
# A spec change: the status follows the new generation.
sed -i "0,/recordTTL: 60/s//recordTTL: 90/" "$WORK/records.yaml"
kubectl apply --validate=false -f "$WORK/records.yaml" >/dev/null
wait_for 10 bash -c "[[ \$(kubectl get dnsrecord app -n web -o jsonpath='{.status.observedGeneration}') == 2 ]]" || fail "observedGeneration did not follow"
# Statuses are written only when they change: no write loop.
n1=$(curl -sk "https://$K:$KP/fake/requests" | grep -c "PATCH .*/status")
sleep 2
n2=$(curl -sk "https://$K:$KP/fake/requests" | grep -c "PATCH .*/status")
(( n2 == n1 )) || fail "status written again and again: $n1 then $n2 PATCHes"
kubectl get dnsrecords -n web -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,HEALTHY:.status.conditions[?(@.type=="Healthy")].reason,GEN:.status.observedGeneration'
pass "target stopped: Healthy=False/HealthChecksFailed; a spec change: observedGeneration 2; $n2 status writes in all, none repeated"
stop_glbd g
