#!/usr/bin/env bash
# kubernetes.mode: delegate, Kuadrant's multi-cluster delegation without a primary. Two clusters, each with
# its own API server (fakekube) holding the delegated records kuadrant-operator writes (the fixture
# primary-three-clusters: eu-1's in cluster eu, us-1's and us-2's in cluster us), and eu also holding the
# authoritative record a Kuadrant primary would merge them into. Both glbd answer IE and US clients from all
# three clusters' entries, each entry once (the primary's merge is not served in this mode); each record's
# status gets glbd's entry in status.remoteRecordStatuses (Ready, or why not), read back with kubectl; a
# change and a deletion in one cluster reach the other's glbd. The records' health checks are left out:
# their addresses are not this machine's to probe. Skipped where kubectl is missing.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
P=5595 Z=glb.example.com FIX=$FIXTURES/kuadrant
declare -A ADDR=([eu]=127.0.23.95 [us]=127.0.23.96) API=([eu]=127.0.23.97 [us]=127.0.23.98)
for c in eu us; do
    start_fakekube $c "${API[$c]}" 6595
    kube_cluster_yaml $c $P 9595 $Z "mode: delegate" "rateLimit: {responsesPerSecond: 0}" eu us > "$WORK/$c.yaml"
done
kc() { local c=$1; shift; KUBECONFIG=$WORK/$c/kubeconfig kubectl "$@"; }
records() {  # NAME...: those records of the fixture, without their health checks, as a kubectl List
    python3 - "$FIX/primary-three-clusters.json" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["items"] = [i for i in d["items"] if i["metadata"]["name"] in sys.argv[2:]]
for i in d["items"]:
    i["spec"].pop("healthCheck", None)
print(json.dumps(d))
PY
}
kc eu create namespace toystore >/dev/null 2>&1 || true
records api-gw-api-eu-1 authoritative-record-913tw4ly | kc eu apply --validate=false -f - >/dev/null || fail "apply in eu"
records api-gw-api-us-1 api-gw-api-us-2 | kc us apply --validate=false -f - >/dev/null || fail "apply in us"
# A delegated record that publishes a name outside its rootHost: that name is refused, the rest served.
cat <<REC | kc eu apply --validate=false -f - >/dev/null || fail "apply the refused record"
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: outside, namespace: toystore}
spec:
  rootHost: web.$Z
  delegate: true
  endpoints:
    - {dnsName: web.$Z, recordType: A, targets: [172.18.200.9]}
    - {dnsName: api.$Z, recordType: A, targets: [172.18.200.66]}
REC
for c in eu us; do start_glbd $c "$WORK/$c.yaml"; done

ask() { dig @"${ADDR[$1]}" -p $P +short api.$Z A +subnet="$2" | head -1; }
entries() {  # SERVER: the entries of api.$Z, "cluster:entry" sorted
    curl -s "http://${ADDR[$1]}:9595/v1/hosts?prefix=api.$Z" | python3 -c '
import json, sys
h = [x for x in json.load(sys.stdin)["hosts"] if x["name"] == "api.glb.example.com"]
print(" ".join(sorted(e["cluster"] + ":" + (e.get("entry") or "") for x in h for e in x["entries"])))'
}
want="eu:2n8thi-qjxntp.klb.api.$Z us:27va7k-qjxntp.klb.api.$Z us:a1b2c3-us-2.elb.us-east-1.amazonaws.com"
for c in eu us; do
    wait_for 20 bash -c "[[ \"\$(curl -s http://${ADDR[$c]}:9595/v1/hosts?prefix=api.$Z)\" == *a1b2c3-us-2* && \"\$(curl -s http://${ADDR[$c]}:9595/v1/hosts?prefix=api.$Z)\" == *2n8thi* ]]" ||
        fail "$c never held every cluster's entry: $(entries $c)"
    [[ $(entries $c) == "$want" ]] || fail "$c: entries $(entries $c), want $want (the primary's merge must not add any)"
done
pass "delegate mode: both servers hold the three delegated entries once each (the authoritative record is not served)"
for c in eu us; do
    [[ $(ask $c 10.1.0.0/16) == 172.18.200.1 ]] || fail "$c: IE client got $(ask $c 10.1.0.0/16)"
    seen=$(for i in $(seq 60); do ask $c 10.3.0.0/16; done | sort -u | tr '\n' ' ')
    [[ $seen == "172.18.201.1 a1b2c3-us-2.elb.us-east-1.amazonaws.com. " ]] || fail "$c: US clients got $seen"
done
pass "IE clients get eu-1's gateway, US clients us-1's address and us-2's ELB (a CNAME), from both servers"
[[ $(dig @"${ADDR[us]}" -p $P +short web.$Z A) == 172.18.200.9 ]] || fail "web.$Z from us"

glbd_status() {  # CLUSTER RECORD FIELD: a field of the Ready condition glbd wrote in remoteRecordStatuses
    kc "$1" -n toystore get dnsrecord "$2" -o jsonpath="{.status.remoteRecordStatuses.glbd.conditions[?(@.type==\"Ready\")].$3}"
}
wait_for 20 bash -c "[[ \$(KUBECONFIG=$WORK/eu/kubeconfig kubectl -n toystore get dnsrecord api-gw-api-eu-1 -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[0].status}') == True ]]" ||
    fail "no Ready in api-gw-api-eu-1's remoteRecordStatuses.glbd: $(kc eu -n toystore get dnsrecord api-gw-api-eu-1 -o jsonpath='{.status}')"
[[ $(glbd_status eu api-gw-api-eu-1 reason) == ProviderSuccess ]] || fail "reason $(glbd_status eu api-gw-api-eu-1 reason)"
wait_for 20 bash -c "[[ \$(KUBECONFIG=$WORK/us/kubeconfig kubectl -n toystore get dnsrecord api-gw-api-us-2 -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[0].status}') == True ]]" ||
    fail "no Ready in api-gw-api-us-2's status"
wait_for 20 bash -c "[[ \$(KUBECONFIG=$WORK/eu/kubeconfig kubectl -n toystore get dnsrecord outside -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[0].status}') == False ]]" ||
    fail "the refused name is not in outside's status: $(kc eu -n toystore get dnsrecord outside -o jsonpath='{.status}')"
msg=$(glbd_status eu outside message)
[[ $msg == *"api.$Z"* && $(glbd_status eu outside reason) == ValidationError ]] || fail "outside: $msg"
[[ -z $(kc eu -n toystore get dnsrecord authoritative-record-913tw4ly -o jsonpath='{.status.remoteRecordStatuses}') ]] ||
    fail "glbd wrote a status on the authoritative record, which it does not serve in this mode"
echo "--- kubectl get dnsrecords -n toystore (eu), glbd's Ready in remoteRecordStatuses"
kc eu -n toystore get dnsrecords -o custom-columns='NAME:.metadata.name,DELEGATE:.spec.delegate,GLBD-READY:.status.remoteRecordStatuses.glbd.conditions[0].status,REASON:.status.remoteRecordStatuses.glbd.conditions[0].reason'
pass "status: Ready True (ProviderSuccess) in remoteRecordStatuses.glbd of every served record, False with the refused name ($msg)"

t0=$(now_ms)
records api-gw-api-eu-1 | sed 's/172\.18\.200\.1"/172.18.200.77"/' | kc eu apply --validate=false -f - >/dev/null || fail "change in eu"
wait_for 20 bash -c "[[ \$(dig @${ADDR[us]} -p $P +short api.$Z A +subnet=10.1.0.0/16) == 172.18.200.77 ]]" ||
    fail "the change in eu never reached us's glbd: $(ask us 10.1.0.0/16)"
pass "kubectl apply in eu -> us's glbd answers the new address after $(( $(now_ms) - t0 )) ms"
t0=$(now_ms)
kc us -n toystore delete dnsrecord api-gw-api-us-2 >/dev/null || fail "delete in us"
wait_for 20 bash -c "[[ \"\$(curl -s http://${ADDR[eu]}:9595/v1/hosts?prefix=api.$Z)\" != *a1b2c3-us-2* ]]" ||
    fail "the deletion in us never reached eu's glbd: $(entries eu)"
pass "kubectl delete in us -> eu's glbd drops the entry after $(( $(now_ms) - t0 )) ms"

# A delegated record's whole life, as dns-operator's secondary (on every cluster in delegate mode) lives it: it
# puts its finalizer on the record and removes it only once the record's Ready and every entry of
# status.remoteRecordStatuses say ProviderEndpointsRemoved (ProviderEndpointsRemoved() in dns-operator's
# api/v1alpha1). glbd must withdraw the record's entries, say ProviderEndpointsDeletion, then Removed once its
# peers hold its report without them; this test removes the finalizer exactly then, as the secondary would.
finalized() {  # NAME ADDRESS: a delegated record of eu with the secondary's finalizer
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: $1, namespace: toystore, finalizers: [kuadrant.io/dns-record]}
spec:
  rootHost: $1.$Z
  delegate: true
  endpoints: [{dnsName: $1.$Z, recordType: A, targets: [$2]}]
REC
}
reason() {  # NAME: the reason of glbd's Ready in the record's remoteRecordStatuses ("" if none, or gone)
    kc eu -n toystore get dnsrecord "$1" -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[?(@.type=="Ready")].reason}' 2>/dev/null
}
# As the secondary: waits for Removed, noting every reason seen on the way, then lets the object go.
secondary() {  # NAME DEADLINE_S: prints the reasons seen, in order
    local name=$1 end=$(( $(date +%s) + $2 )) seen="" r
    while (( $(date +%s) < end )); do
        r=$(reason "$name")
        [[ -n $r && $seen != *"$r"* ]] && seen+="$r "
        if [[ $r == ProviderEndpointsRemoved ]]; then
            kc eu -n toystore patch dnsrecord "$name" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
            break
        fi
        sleep 0.1
    done
    echo "$seen"
}
finalized doomed 172.18.200.51 | kc eu apply --validate=false -f - >/dev/null || fail "apply doomed"
for c in eu us; do
    wait_for 20 bash -c "[[ \$(dig @${ADDR[$c]} -p $P +short doomed.$Z A) == 172.18.200.51 ]]" || fail "$c never served doomed.$Z"
done
wait_for 20 bash -c "[[ \$(KUBECONFIG=$WORK/eu/kubeconfig kubectl -n toystore get dnsrecord doomed -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[0].reason}') == ProviderSuccess ]]" ||
    fail "doomed: no ProviderSuccess from glbd: $(reason doomed)"
t0=$(now_ms)
kc eu -n toystore delete dnsrecord doomed --wait=false >/dev/null || fail "delete doomed"
[[ -n $(kc eu -n toystore get dnsrecord doomed -o jsonpath='{.metadata.deletionTimestamp}') ]] || fail "doomed went without its finalizer"
seen=$(secondary doomed 20)
[[ $seen == *ProviderEndpointsRemoved* ]] || fail "glbd never said the endpoints were removed (reasons seen: $seen)"
removed_ms=$(( $(now_ms) - t0 ))
out=$(kc eu -n toystore get dnsrecord doomed 2>&1) && fail "doomed still exists after its finalizer went: $out"
for c in eu us; do
    wait_for 10 bash -c "[[ -z \$(dig @${ADDR[$c]} -p $P +short doomed.$Z A) ]]" || fail "$c still answers doomed.$Z"
    [[ $(dig @"${ADDR[$c]}" -p $P doomed.$Z A | grep -c NXDOMAIN) == 1 ]] || fail "$c: doomed.$Z is not NXDOMAIN"
done
grep -q "DNSRecord toystore/doomed: every live peer holds this cluster's report without it" "$WORK/eu.log" ||
    fail "eu did not wait for its peer's confirmation: $(grep doomed "$WORK/eu.log")"
pass "delegated record deleted with the secondary's finalizer: reasons $seen; Removed after $removed_ms ms (us confirmed holding eu's report without it); object gone and doomed.$Z NXDOMAIN on both servers after $(( $(now_ms) - t0 )) ms"

# A peer that never confirms (frozen: alive until deadAfter) cannot keep a record Terminating: Removed comes
# after a bounded wait (deadAfter, 5 s here), logged.
finalized stuck 172.18.200.52 | kc eu apply --validate=false -f - >/dev/null || fail "apply stuck"
wait_for 20 bash -c "[[ \$(dig @${ADDR[us]} -p $P +short stuck.$Z A) == 172.18.200.52 ]]" || fail "us never served stuck.$Z"
kill -STOP "${GLBD_PIDS[us]}"
t0=$(now_ms)
kc eu -n toystore delete dnsrecord stuck --wait=false >/dev/null || fail "delete stuck"
seen=$(secondary stuck 30)
kill -CONT "${GLBD_PIDS[us]}"
[[ $seen == *ProviderEndpointsRemoved* ]] || fail "a frozen peer kept stuck Terminating (reasons seen: $seen)"
out=$(kc eu -n toystore get dnsrecord stuck 2>&1) && fail "stuck still exists: $out"
wait_for 20 bash -c "[[ -z \$(dig @${ADDR[us]} -p $P +short stuck.$Z A) ]]" || fail "us still answers stuck.$Z after it woke"
pass "with us frozen: Removed after $(( $(now_ms) - t0 )) ms all the same ($(grep -o 'DNSRecord toystore/stuck: [^(]*' "$WORK/eu.log" | tail -1)); us withdraws stuck.$Z once it wakes"
for c in eu us; do stop_glbd $c; done
