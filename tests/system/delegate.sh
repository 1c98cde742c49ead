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
for c in eu us; do stop_glbd $c; done
