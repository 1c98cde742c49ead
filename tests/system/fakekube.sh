#!/usr/bin/env bash
# The fake API server the Kubernetes tests use (tools/fakekube.py) is driven here with the real kubectl, over
# TLS with a bearer token, to show it behaves as an API server does for what glbd relies on: discovery,
# apply (create, then a merge patch), get, label, a status merge patch that leaves spec alone, watch (also
# from a list's resourceVersion, across deletes and relabels made before it opened), delete, lists in pages
# (limit/continue: kubectl --chunk-size), status not taken on create, Secrets (kubectl create secret), a
# rotated token refused in its old form, finalizers (a delete marks, the last finalizer's removal deletes) and a
# stale resourceVersion refused. kubectl validates on the server, as with a real one (OpenAPI v3 says writes take
# fieldValidation): a record the CRD's schema refuses is refused with the API server's words.
source "$(dirname "$0")/lib.sh"
# kubectl is not a Debian package: where it is missing the test is reported skipped (ctest exit code 77).
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
K=127.0.0.190 KP=6490
start_fakekube k $K $KP
export KUBECONFIG=$WORK/k/kubeconfig
cat > "$WORK/rec.yaml" <<'YAML'
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata:
  name: shop
  namespace: gw
  labels: {kuadrant.io/coredns-zone-name: glb.example.com}
spec:
  rootHost: shop.glb.example.com
  endpoints:
    - {dnsName: shop.glb.example.com, recordType: A, recordTTL: 60, targets: [192.0.2.10]}
YAML
kubectl get dnsrecords -A --watch -o jsonpath='{.metadata.name} {.spec.endpoints[0].targets[0]}{"\n"}' > "$WORK/watch.out" 2>&1 &
watcher=$!
PIDS+=($watcher)
kubectl apply -f "$WORK/rec.yaml" | grep -q "shop created" || fail "kubectl apply (validated on the server) did not create"
[[ $(kubectl get dnsrecords -A --no-headers | awk '{print $1, $2}') == "gw shop" ]] || fail "kubectl get -A: $(kubectl get dnsrecords -A)"
kubectl label dnsrecord shop -n gw team=web >/dev/null || fail "kubectl label"
[[ $(kubectl get dnsrecords -n gw -l team=web -o name) == dnsrecord.kuadrant.io/shop ]] || fail "label selector"
[[ -z $(kubectl get dnsrecords -n gw -l team=db -o name) ]] || fail "label selector matched another label"
sed -i 's/192.0.2.10/192.0.2.11/' "$WORK/rec.yaml"
kubectl apply -f "$WORK/rec.yaml" | grep -q "shop configured" || fail "kubectl apply did not patch"
[[ $(kubectl get dnsrecord shop -n gw -o jsonpath='{.spec.endpoints[0].targets[0]} {.metadata.generation} {.metadata.labels.team}') == "192.0.2.11 2 web" ]] ||
    fail "after apply: $(kubectl get dnsrecord shop -n gw -o json)"
kubectl patch dnsrecord shop -n gw --subresource=status --type=merge \
    -p '{"status":{"observedGeneration":2,"conditions":[{"type":"Ready","status":"True","reason":"ProviderSuccess"}]}}' >/dev/null ||
    fail "status patch"
[[ $(kubectl get dnsrecord shop -n gw -o jsonpath='{.status.conditions[0].reason} {.metadata.generation} {.spec.endpoints[0].targets[0]}') == "ProviderSuccess 2 192.0.2.11" ]] ||
    fail "status: $(kubectl get dnsrecord shop -n gw -o json)"
kubectl delete dnsrecord shop -n gw | grep -q deleted || fail "kubectl delete"
[[ -z $(kubectl get dnsrecords -A -o name) ]] || fail "still listed after delete"
wait_for 10 bash -c "(( \$(wc -l < '$WORK/watch.out') >= 5 ))" || fail "kubectl get --watch saw: $(cat "$WORK/watch.out")"
[[ $(head -2 "$WORK/watch.out" | tr '\n' ' ') == "shop 192.0.2.10 shop 192.0.2.10 " ]] || fail "watch: $(cat "$WORK/watch.out")"
grep -q "shop 192.0.2.11" "$WORK/watch.out" || fail "watch missed the change: $(cat "$WORK/watch.out")"
kill $watcher 2>/dev/null || true

# A watch from a list's resourceVersion gets every change made after that list, judged by the object before
# and after each change (as the API server's watch cache does), also for objects gone or relabelled by the
# time the watch opens: a client that lists, then watches, must not miss a delete made between the two.
rec() {  # NAME LABEL
    printf 'apiVersion: kuadrant.io/v1alpha1\nkind: DNSRecord\nmetadata: {name: %s, namespace: gw, labels: {zone: %s}}\n' "$1" "$2"
    printf 'spec: {rootHost: %s.glb.example.com, endpoints: [{dnsName: %s.glb.example.com, recordType: A, targets: [192.0.2.1]}]}\n---\n' "$1" "$1"
}
{ rec gone z; rec moved z; rec joined other; rec stays z; } | kubectl apply --validate=false -f - >/dev/null || fail "apply for the watch"
api=/apis/kuadrant.io/v1alpha1/dnsrecords
listed=$(kubectl get --raw "$api?labelSelector=zone%3Dz")
rv=$(python3 -c 'import json,sys; l=json.load(sys.stdin); print(l["metadata"]["resourceVersion"], *sorted(o["metadata"]["name"] for o in l["items"]))' <<<"$listed")
[[ ${rv#* } == "gone moved stays" ]] || fail "list with a selector: $rv"
rv=${rv%% *}
kubectl delete dnsrecord gone -n gw >/dev/null || fail "delete"
kubectl label dnsrecord moved -n gw zone=other --overwrite >/dev/null || fail "relabel out"
kubectl label dnsrecord joined -n gw zone=z --overwrite >/dev/null || fail "relabel in"
events=$(kubectl get --raw "$api?watch=1&resourceVersion=$rv&labelSelector=zone%3Dz&timeoutSeconds=1" |
    python3 -c 'import json,sys; print(" ".join(e["type"] + ":" + e["object"]["metadata"]["name"] for e in map(json.loads, sys.stdin) if e["type"] != "BOOKMARK"))')
[[ $events == "DELETED:gone DELETED:moved ADDED:joined" ]] || fail "watch from the list's resourceVersion $rv: $events"
# Pages: kubectl asks for chunks with limit and follows continue; a continue token older than the history
# (after a compaction) is 410 Gone, as the API server's.
{ for i in 1 2 3 4 5; do rec page$i z; done; } | kubectl apply --validate=false -f - >/dev/null || fail "apply for pages"
[[ $(kubectl get dnsrecords -n gw --chunk-size=2 -o name | grep -c page) == 5 ]] || fail "kubectl --chunk-size=2"
grep -q "GET $api?continue=.*&limit=2" <(curl -sk "https://$K:$KP/fake/requests" | sed 's|/namespaces/gw||') ||
    fail "kubectl did not page: $(curl -sk "https://$K:$KP/fake/requests" | grep limit | tail -3)"
page=$(kubectl get --raw "$api?limit=2")
cont=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["continue"])' <<<"$page")
kubectl label dnsrecord page1 -n gw later=1 >/dev/null  # history moves on past the token's version...
curl -sk -X POST "https://$K:$KP/fake/compact" >/dev/null  # ...and is compacted
{ kubectl get --raw "$api?limit=2&continue=$cont" 2>&1 || true; } | grep -q -i "expired" || fail "an expired continue token was taken"
# Status goes in through /status only.
printf 'apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: withstatus, namespace: gw}
spec: {rootHost: s.glb.example.com}
status: {group: forged}
' |
    kubectl create --validate=false -f - >/dev/null || fail "create with a status"
[[ -z $(kubectl get dnsrecord withstatus -n gw -o jsonpath='{.status.group}') ]] || fail "status taken on create"
# Secrets, as additionalHeadersRef names them (from a manifest: kubectl's "create secret" speaks protobuf,
# which the fake does not).
printf 'apiVersion: v1\nkind: Secret\nmetadata: {name: probe-headers, namespace: gw}\nstringData: {X-Probe-Token: s3cret}\n' |
    kubectl create --validate=false -f - >/dev/null || fail "create secret"
[[ $(kubectl get secret probe-headers -n gw -o jsonpath='{.data.X-Probe-Token}' | base64 -d) == s3cret ]] ||
    fail "secret: $(kubectl get secret probe-headers -n gw -o json)"
echo "token-k-2" > "$WORK/k/token.new"
cp "$WORK/k/token" "$WORK/k/token.old"
mv "$WORK/k/token.new" "$WORK/k/token"   # the server now wants the new token; kubectl reads its tokenFile anew
kubectl get dnsrecords -A >/dev/null 2>&1 || fail "the rotated token (re-read from tokenFile) was refused"
curl -sk -H "Authorization: Bearer $(cat "$WORK/k/token.old")" "https://$K:$KP/apis/kuadrant.io/v1alpha1/dnsrecords" |
    grep -q '"code": 401' || fail "the old token was accepted"
# Finalizers, as dns-operator puts one on every DNSRecord: a delete only marks the object (deletionTimestamp),
# no finalizer may be added meanwhile, and removing the last one lets it go; a patch whose resourceVersion is
# stale is a conflict.
printf 'apiVersion: kuadrant.io/v1alpha1\nkind: DNSRecord\nmetadata: {name: held, namespace: gw, finalizers: [kuadrant.io/dns-record]}\nspec: {rootHost: h.glb.example.com}\n' |
    kubectl apply --validate=false -f - >/dev/null || fail "apply with a finalizer"
stale=$(kubectl get dnsrecord held -n gw -o jsonpath='{.metadata.resourceVersion}')
kubectl label dnsrecord held -n gw moved=1 >/dev/null
out=$(kubectl patch dnsrecord held -n gw --type=merge -p "{\"metadata\":{\"resourceVersion\":\"$stale\",\"labels\":{\"x\":\"1\"}}}" 2>&1) &&
    fail "a patch with a stale resourceVersion was taken: $out"
[[ $out == *"the object has been modified"* ]] || fail "stale resourceVersion: $out"
kubectl delete dnsrecord held -n gw --wait=false | grep -q deleted || fail "kubectl delete --wait=false"
[[ -n $(kubectl get dnsrecord held -n gw -o jsonpath='{.metadata.deletionTimestamp}') ]] ||
    fail "a record with a finalizer went at once, or has no deletionTimestamp: $(kubectl get dnsrecord held -n gw -o json 2>&1)"
out=$(kubectl patch dnsrecord held -n gw --type=merge -p '{"metadata":{"finalizers":["kuadrant.io/dns-record","x.example/other"]}}' 2>&1) &&
    fail "a finalizer was added to a record being deleted: $out"
[[ $out == *"no new finalizers"* ]] || fail "adding a finalizer while deleting: $out"
kubectl patch dnsrecord held -n gw --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null || fail "remove the finalizer"
out=$(kubectl get dnsrecord held -n gw 2>&1) && fail "still there after its last finalizer went: $out"
[[ $out == *NotFound* || $out == *"not found"* ]] || fail "get after the finalizer went: $out"
pass "kubectl against fakekube: discovery, apply (create, patch), get, label selectors, status patch, watch (also from a list's resourceVersion), delete, pages, secrets, token rotation, finalizers, stale resourceVersion"

# Validation on the server against docker/k8s/crd/dnsrecords.yaml's schema, as kubectl asks for it by default.
sed -e 's/^  rootHost: .*$//' -e 's/name: shop$/name: norootHost/' "$WORK/rec.yaml" > "$WORK/bad.yaml"
out=$(kubectl apply -f "$WORK/bad.yaml" 2>&1) && fail "a record without rootHost was taken"
[[ $out == *'The DNSRecord "norootHost" is invalid: spec.rootHost: Required value'* ]] || fail "no rootHost: $out"
sed -e 's/name: shop$/name: badtype/' -e 's/  endpoints:/  endpoints: 7\n  x:/' "$WORK/rec.yaml" > "$WORK/bad.yaml"
out=$(kubectl apply -f "$WORK/bad.yaml" 2>&1) && fail "a record whose endpoints are a number was taken"
[[ $out == *'spec.endpoints: Invalid value: "number": spec.endpoints in body must be of type array: "number"'* ]] || fail "endpoints: $out"
grep -q "fieldValidation=Strict" <(curl -sk "https://$K:$KP/fake/requests") || fail "kubectl did not ask for validation on the server"
pass "kubectl validates on the server: a record without rootHost, or with endpoints not a list, refused as the API server words it"
