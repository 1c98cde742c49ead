#!/usr/bin/env bash
# The whole Kuadrant flow on one machine, one command: three clusters (ie, us as the default geo, oc), each
# with its own API server (tools/fakekube.py) and its own glbd reading DNSRecords there, synced over DNS with
# TSIG. DNSRecords in the shapes kuadrant-operator and dns-operator (>= 0.15, CoreDNS provider) write are
# applied with kubectl; then kubectl's listing, glbd status and dig answers for clients in Ireland, the US
# and Australia are printed, and a change is applied in one cluster and timed until another cluster's glbd
# answers it.
#   bash tests/tools/kube-demo.sh [--wait]      (GLBD=path/to/glbd, default build/glbd; needs kubectl)
# --wait keeps everything running until Ctrl-C (KUBECONFIG files and addresses are printed).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export GLBD=${GLBD:-$ROOT/build/glbd}
source "$ROOT/tests/system/lib.sh"
command -v kubectl >/dev/null || fail "kubectl is needed"
P=5520 Z=shop.example
declare -A DNS=([ie]=127.0.0.221 [us]=127.0.0.222 [oc]=127.0.0.223) API=([ie]=127.0.0.224 [us]=127.0.0.225 [oc]=127.0.0.226)
declare -A GEO=([ie]=IE [us]=US [oc]=GEO-OC) GW=([ie]=172.18.1.10 [us]=172.18.2.10 [oc]=172.18.3.10)
members=""
for c in ie us oc; do members+="{address: \"${DNS[$c]}:$P\"}, "; done
for c in ie us oc; do
    start_fakekube $c "${API[$c]}" 6520
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["${DNS[$c]}:$P"]}
admin: {listen: "${DNS[$c]}:9520"}
geoip: {database: $FIXTURES/test.mmdb}
zones:
  - origin: $Z
    nameservers: [{name: ns-ie.$Z, addresses: [${DNS[ie]}]}, {name: ns-us.$Z, addresses: [${DNS[us]}]}, {name: ns-oc.$Z, addresses: [${DNS[oc]}]}]
kubernetes: {kubeconfig: $WORK/$c/kubeconfig}
peers:
  key: {name: glb-sync, secret: "$TSIG_SECRET"}
  members: [${members%, }]
  syncInterval: 1s
  deadAfter: 5s
YAML
    start_glbd $c "$WORK/$c.yaml"
done
record() {  # CLUSTER ADDRESS: what Kuadrant writes in that cluster for www.shop.example (a DNSPolicy with
    # loadBalancing, the CoreDNS provider): kuadrant-operator's listener record and the authoritative record
    # dns-operator >= 0.15 merges it into, labelled for the zone (tools/kuadrant_records.py, upstream's code)
    python3 - "$1" "$2" "${GEO[$1]}" "$Z" "$ROOT/tests/tools" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[5])
import kuadrant_records as k
cluster, address, geo, zone = sys.argv[1:5]
listener = k.listener_record("shop-gw", "www", f"www.{zone}", [("IPAddress", address)], "shop", cluster,
                             {"weight": 120, "geo": geo, "default": cluster == "us"})
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [listener, k.authoritative_record([listener], zone)]}))
PY
}
for c in ie us oc; do
    record $c "${GW[$c]}" | KUBECONFIG=$WORK/$c/kubeconfig kubectl apply --validate=false -f - >/dev/null || fail "kubectl apply in $c"
done
ask() { dig @"${DNS[$1]}" -p $P +short www.$Z A +subnet="$2"; }
all_three() { [[ $(ask oc 10.1.0.0/16) == "${GW[ie]}" && $(ask ie 10.3.0.0/16) == "${GW[us]}" && $(ask us 10.2.0.0/16) == "${GW[oc]}" ]]; }
wait_for 30 all_three || fail "the three clusters did not converge"
echo "== kubectl get dnsrecords -A (each cluster has only its own records: the listener's, and the authoritative one glbd serves)"
for c in ie us oc; do echo "-- $c"; KUBECONFIG=$WORK/$c/kubeconfig kubectl get dnsrecords -A; done
echo "== glbd status (us)"
"$GLBD" status --admin "${DNS[us]}:9520"
echo "== answers: any server, by client location (ECS)"
for c in ie us oc; do
    printf '  asked at %s: Ireland -> %s, US -> %s, Australia -> %s, elsewhere -> %s\n' "$c" \
        "$(ask $c 10.1.0.0/16)" "$(ask $c 10.3.0.0/16)" "$(ask $c 10.2.0.0/16)" "$(ask $c 10.9.0.0/16)"
done
t0=$(now_ms)
record ie 172.18.1.99 | KUBECONFIG=$WORK/ie/kubeconfig kubectl apply --validate=false -f - >/dev/null
wait_for 20 bash -c "[[ \$(dig @${DNS[oc]} -p $P +short www.$Z A +subnet=10.1.0.0/16) == 172.18.1.99 ]]" || fail "the change did not reach oc"
echo "== kubectl apply in ie (gateway 172.18.1.99) -> oc's glbd answers Irish clients with it after $(( $(now_ms) - t0 )) ms"
if [[ ${1:-} == --wait ]]; then
    echo "== running: dig @${DNS[ie]} -p $P www.$Z +subnet=10.1.0.0/16; KUBECONFIG=$WORK/ie/kubeconfig kubectl get dnsrecords -A"
    echo "   Ctrl-C stops everything"
    sleep infinity &
    wait $! || true
fi
for c in ie us oc; do stop_glbd $c; done
