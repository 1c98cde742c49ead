#!/usr/bin/env bash
# The whole Kuadrant flow on one machine, one command: three clusters (ie, us as the default geo, oc), each
# with its own API server (tools/fakekube.py) and its own glbd reading DNSRecords there, synced over DNS with
# TSIG. DNSRecords in the shapes kuadrant-operator and dns-operator (>= 0.15, CoreDNS provider) write are
# applied with kubectl; then kubectl's listing, glbd status and dig answers for clients in Ireland, the US
# and Australia are printed, and a change is applied in one cluster and timed until another cluster's glbd
# answers it.
# --delegate: Kuadrant's multi-cluster delegation without a primary (docs/kuadrant.md): each cluster holds only
# its delegated record (a DNSPolicy with delegate: true), each glbd runs in kubernetes.mode delegate and writes
# its status on it; ie and us are failover group "primary", oc "backup" (as dns-operator --group), and the
# active set is switched with `glbd groups`; a record deleted in us with dns-operator's finalizer on it goes once
# glbd says its endpoints are removed (as the secondary waits for); then a fourth cluster, nz, joins by naming
# one member (ie).
#   bash tests/tools/kube-demo.sh [--delegate] [--wait]   (GLBD=path/to/glbd, default build/glbd; needs kubectl)
# --wait keeps everything running until Ctrl-C (KUBECONFIG files and addresses are printed).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export GLBD=${GLBD:-$ROOT/build/glbd}
source "$ROOT/tests/system/lib.sh"
command -v kubectl >/dev/null || fail "kubectl is needed"
DELEGATE=0 WAIT=0
for arg in "$@"; do
    case $arg in
        --delegate) DELEGATE=1 ;;
        --wait) WAIT=1 ;;
        *) fail "unknown argument $arg" ;;
    esac
done
P=5520 Z=shop.example
declare -A DNS=([ie]=127.0.0.221 [us]=127.0.0.222 [oc]=127.0.0.223 [nz]=127.0.0.227)
declare -A API=([ie]=127.0.0.224 [us]=127.0.0.225 [oc]=127.0.0.226 [nz]=127.0.0.228)
declare -A GEO=([ie]=IE [us]=US [oc]=GEO-OC [nz]=GEO-OC) GW=([ie]=172.18.1.10 [us]=172.18.2.10 [oc]=172.18.3.10 [nz]=172.18.4.10)
declare -A GROUP=([ie]=primary [us]=primary [oc]=backup [nz]="")
members=""
for c in ie us oc; do members+="{address: \"${DNS[$c]}:$P\"}, "; done
kube_yaml() {  # CLUSTER: the config's kubernetes: line
    if (( DELEGATE )); then
        echo "kubernetes: {mode: delegate, kubeconfig: $WORK/$1/kubeconfig, group: \"${GROUP[$1]}\"}"
    else
        echo "kubernetes: {kubeconfig: $WORK/$1/kubeconfig}"
    fi
}
cluster() {  # CLUSTER MEMBERS: its API server, config and glbd
    local c=$1 members=$2
    start_fakekube $c "${API[$c]}" 6520
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["${DNS[$c]}:$P"]}
admin: {listen: "${DNS[$c]}:9520"}
geoip: {database: $FIXTURES/test.mmdb}
zones:
  - origin: $Z
    nameservers: [{name: ns-ie.$Z, addresses: [${DNS[ie]}]}, {name: ns-us.$Z, addresses: [${DNS[us]}]}, {name: ns-oc.$Z, addresses: [${DNS[oc]}]}]
$(kube_yaml $c)
peers:
  key: {name: glb-sync, secret: "$TSIG_SECRET"}
  members: [${members%, }]
  syncInterval: 1s
  deadAfter: 5s
YAML
    start_glbd $c "$WORK/$c.yaml"
}
for c in ie us oc; do cluster $c "$members"; done
record() {  # CLUSTER ADDRESS: what Kuadrant writes in that cluster for www.shop.example (a DNSPolicy with
    # loadBalancing, the CoreDNS provider): kuadrant-operator's listener record and the authoritative record
    # dns-operator >= 0.15 merges it into, labelled for the zone (tools/kuadrant_records.py, upstream's code)
    # With --delegate: the listener's record alone, with spec.delegate: true (a DNSPolicy with delegate: true).
    python3 - "$1" "$2" "${GEO[$1]}" "$Z" "$ROOT/tests/tools" "$DELEGATE" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[5])
import kuadrant_records as k
cluster, address, geo, zone = sys.argv[1:5]
delegate = sys.argv[6] == "1"
listener = k.listener_record("shop-gw", "www", f"www.{zone}", [("IPAddress", address)], "shop", cluster,
                             {"weight": 120, "geo": geo, "default": cluster == "us"}, delegate=delegate)
items = [listener] if delegate else [listener, k.authoritative_record([listener], zone)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}
kc() { local c=$1; shift; KUBECONFIG=$WORK/$c/kubeconfig kubectl "$@"; }
apply() { record "$1" "$2" | kc "$1" apply --validate=false -f - >/dev/null || fail "kubectl apply in $1"; }
for c in ie us oc; do apply $c "${GW[$c]}"; done
ask() { dig @"${DNS[$1]}" -p $P +short www.$Z A +subnet="$2"; }
all_three() { [[ $(ask oc 10.1.0.0/16) == "${GW[ie]}" && $(ask ie 10.3.0.0/16) == "${GW[us]}" && $(ask us 10.2.0.0/16) == "${GW[oc]}" ]]; }
wait_for 30 all_three || fail "the three clusters did not converge"
if (( DELEGATE )); then
    ready() { [[ $(kc "$1" -n shop get dnsrecord shop-gw-www -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[0].status}') == True ]]; }
    for c in ie us oc; do wait_for 20 ready $c || fail "no Ready from glbd on $c's record"; done
    echo "== kubectl get dnsrecords -A (each cluster has only its delegated record; glbd's status on it, as a primary writes it)"
    for c in ie us oc; do
        echo "-- $c"
        kc $c get dnsrecords -A -o custom-columns='NAMESPACE:.metadata.namespace,NAME:.metadata.name,DELEGATE:.spec.delegate,GLBD-READY:.status.remoteRecordStatuses.glbd.conditions[0].status,REASON:.status.remoteRecordStatuses.glbd.conditions[0].reason'
    done
else
    echo "== kubectl get dnsrecords -A (each cluster has only its own records: the listener's, and the authoritative one glbd serves)"
    for c in ie us oc; do echo "-- $c"; kc $c get dnsrecords -A; done
fi
echo "== glbd status (us)"
"$GLBD" status --admin "${DNS[us]}:9520"
answers() {  # SERVER...
    local c
    for c in "$@"; do
        printf '  asked at %s: Ireland -> %s, US -> %s, Australia -> %s, elsewhere -> %s\n' "$c" \
            "$(ask $c 10.1.0.0/16)" "$(ask $c 10.3.0.0/16)" "$(ask $c 10.2.0.0/16)" "$(ask $c 10.9.0.0/16)"
    done
}
echo "== answers: any server, by client location (ECS); each is one weighted draw from the same choices, so two servers may pick different clusters of one group (docs/answers.md)"
answers ie us oc
t0=$(now_ms)
apply ie 172.18.1.99
wait_for 20 bash -c "[[ \$(dig @${DNS[oc]} -p $P +short www.$Z A +subnet=10.1.0.0/16) == 172.18.1.99 ]]" || fail "the change did not reach oc"
echo "== kubectl apply in ie (gateway 172.18.1.99) -> oc's glbd answers Irish clients with it after $(( $(now_ms) - t0 )) ms"
if (( DELEGATE )); then
    # Failover groups: no set yet (no groups record, no glbd groups set): every group active, all answer.
    everywhere() {  # CLIENT ANSWER: every server gives that client that answer
        local c
        for c in ie us oc; do [[ $(ask $c "$1") == "$2" ]] || return 1; done
    }
    everywhere_name() {  # NAME ANSWER: every server answers NAME's A with ANSWER ("" for none)
        local c
        for c in ie us oc; do [[ $(dig @"${DNS[$c]}" -p $P +short "$1" A) == "$2" ]] || return 1; done
    }
    switch() {  # GROUPS... : glbd groups set on us, timed until every server gives an Irish client WANT (last arg)
        local want=${*: -1} t
        t=$(now_ms)
        "$GLBD" groups set "${@:1:$#-1}" --admin "${DNS[us]}:9520" >/dev/null || fail "glbd groups set ${*:1:$#-1}"
        wait_for 20 everywhere 10.1.0.0/16 "$want" || fail "groups ${*:1:$#-1}: Irish clients got $(ask oc 10.1.0.0/16)"
        echo "== glbd groups set ${*:1:$#-1} (on us) -> every server answers from it after $(( $(now_ms) - t )) ms;" \
            "ie's TXT: $(dig @"${DNS[ie]}" -p $P +short kuadrant-active-groups.$Z TXT)"
    }
    switch backup "${GW[oc]}"
    answers ie us oc
    switch primary 172.18.1.99
    wait_for 20 everywhere 10.2.0.0/16 "${GW[us]}" || fail "primary: Australian clients got $(ask oc 10.2.0.0/16)"
    answers ie us oc
    switch primary backup 172.18.1.99
    # A delegated record's deletion, as dns-operator's secondary lives it: its finalizer stays until glbd's
    # entry of status.remoteRecordStatuses says ProviderEndpointsRemoved; here the script removes it then.
    cat <<REC | kc us apply --validate=false -f - >/dev/null || fail "apply promo"
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: promo, namespace: shop, finalizers: [kuadrant.io/dns-record]}
spec:
  rootHost: promo.$Z
  delegate: true
  endpoints: [{dnsName: promo.$Z, recordType: A, targets: [172.18.2.77]}]
REC
    wait_for 20 everywhere_name promo.$Z 172.18.2.77 || fail "promo.$Z is not answered everywhere"
    t0=$(now_ms)
    kc us -n shop delete dnsrecord promo --wait=false >/dev/null || fail "delete promo"
    removed() {
        [[ $(kc us -n shop get dnsrecord promo -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[?(@.type=="Ready")].reason}') == ProviderEndpointsRemoved ]]
    }
    wait_for 30 removed || fail "glbd never said promo's endpoints were removed"
    removed_ms=$(( $(now_ms) - t0 ))
    kc us -n shop patch dnsrecord promo --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null || fail "remove the finalizer"
    wait_for 20 everywhere_name promo.$Z "" || fail "promo.$Z is still answered"
    echo "== kubectl delete in us of a record with dns-operator's finalizer: glbd wrote ProviderEndpointsRemoved" \
        "after $removed_ms ms; finalizer removed, object gone ($(kc us -n shop get dnsrecord promo 2>&1 | grep -c NotFound) NotFound)," \
        "every server answers nothing for promo.$Z after $(( $(now_ms) - t0 )) ms"
    # A fourth cluster joins naming one member, ie; the others learn it, and it learns them.
    cluster nz "{address: \"${DNS[ie]}:$P\"}"  # its API server, then its glbd
    t0=$(now_ms)
    apply nz "${GW[nz]}"
    knows_nz() {  # every server holds nz's entry for www
        local c
        for c in ie us oc nz; do
            curl -s "http://${DNS[$c]}:9520/v1/hosts?prefix=www.$Z" | python3 -c '
import json, sys
sys.exit("nz" not in [e["cluster"] for h in json.load(sys.stdin)["hosts"] for e in h["entries"]])' || return 1
        done
    }
    shared() {  # every server shares Australian clients between oc and nz
        local c
        for c in ie us oc nz; do
            [[ $(for i in $(seq 20); do ask $c 10.2.0.0/16; done | sort -u | tr '\n' ' ') == "${GW[oc]} ${GW[nz]} " ]] || return 1
        done
    }
    wait_for 30 knows_nz || fail "nz did not join: $(answers ie us oc nz)"
    echo "== nz's glbd started naming ie only; kubectl apply in nz -> every server holds its entry after $(( $(now_ms) - t0 )) ms"
    wait_for 10 shared || fail "Australian clients: $(answers ie us oc nz)"
    answers ie us oc nz
    for c in ie us oc nz; do
        echo "  $c's peers: $(curl -s "http://${DNS[$c]}:9520/v1/summary" | python3 -c '
import json, sys
print(", ".join(p["id"] + (" (learnt)" if p.get("learnt") else "") for p in json.load(sys.stdin)["peers"]))')"
    done
fi
if (( WAIT )); then
    echo "== running: dig @${DNS[ie]} -p $P www.$Z +subnet=10.1.0.0/16; KUBECONFIG=$WORK/ie/kubeconfig kubectl get dnsrecords -A"
    echo "   Ctrl-C stops everything"
    sleep infinity &
    wait $! || true
fi
for c in "${!GLBD_PIDS[@]}"; do stop_glbd $c; done
