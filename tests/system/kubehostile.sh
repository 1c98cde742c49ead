#!/usr/bin/env bash
# A DNSRecord's author is not trusted (docs/security.md, the DNSRecord author row; docs/kuadrant.md): records applied with
# kubectl to the fake API server that cluster eu-1's glbd (A) watches, cluster us-1's glbd (B) learning
# everything over sync. Each hostile record is refused for its names alone, both servers keep answering the
# rest, and nothing of it reaches a log line, another host or port, or memory beyond the limits:
#   - a name another namespace published first, the apex, a nameserver name, a name outside the rootHost;
#   - a probe path naming another host and port, with and without a leading "/"; an address in denyNetworks;
#   - a Secret's probe header (additionalHeadersRef) sent to the target and never logged;
#   - a newline in a name (no forged log line);
#   - one record of 10,001 targets (the peer still takes the cluster's report), one of 70,000 (/healthz up
#     throughout, no "CNAME ." answer);
#   - 100 records of 512 KiB each: resident memory grows by less than 30 MB and stays under 100 MB.
# Skipped without kubectl.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
A=127.0.20.11 B=127.0.20.12 P=5421 K=127.0.20.13 KP=6421 T=127.0.20.14 ADMIN=127.0.20.11:9421
Z=glb.example.com
start_fakekube k $K $KP
export KUBECONFIG=$WORK/k/kubeconfig
python3 "$(dirname "$0")/../tools/targets.py" --http $T:8421 --http $T:8422 --log "$WORK/probes.log" \
    --ready "$WORK/targets.ready" > "$WORK/targets.out" 2>&1 &
PIDS+=($!)
wait_for 10 test -e "$WORK/targets.ready" || fail "targets did not start"
config() {  # NAME CLUSTER ADDRESS PEER [kubernetes]
    cat <<YAML
cluster: {id: $2, instance: $1}
listen: {dns: ["$3:$P"]}
zones:
  - origin: $Z
    nameservers: [{name: ns1.$Z, addresses: [127.0.0.1]}]
$(peers_yaml --interval 300ms "$4:$P")
YAML
    [[ ${5:-} ]] && cat <<YAML
admin: {listen: "$ADMIN"}
kubernetes: {kubeconfig: $WORK/k/kubeconfig, denyNetworks: [169.254.0.0/16]}
YAML
    return 0
}
config a eu-1 $A $B kubernetes > "$WORK/a.yaml"
config b us-1 $B $A > "$WORK/b.yaml"
start_glbd a "$WORK/a.yaml"
start_glbd b "$WORK/b.yaml"
on() { answers "$1" $P "$2" "$3" | sort | tr '\n' ' '; }
gives() { [[ "$(on "$1" "$2" "$3")" == "${4:+$4 }" ]]; }
same() {  # NAME TYPE WANT (space-separated; "" for none): both servers, within a deadline
    local s
    for s in $A $B; do
        wait_for 20 gives $s "$@" || fail "$s: $1 $2: got \"$(on $s "$1" "$2")\", want \"$3\""
    done
}
record() {  # NAMESPACE NAME ROOT ENDPOINTS-YAML [HEALTHCHECK-YAML]
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: $2, namespace: $1, labels: {kuadrant.io/coredns-zone-name: $Z}}
spec:
  rootHost: "$3"
  endpoints: $4
${5:+  healthCheck: $5}
---
REC
}
create() { kubectl create --validate=false -f "$1" >/dev/null || fail "kubectl create $1"; }

# 1. Names: team-a publishes shop first, with a probe whose path tries to name port 8422 and a header from
#    a Secret; team-b then claims shop, the apex, ns1, a name outside its rootHost, and a linklocal address.
cat > "$WORK/secret.yaml" <<SEC
apiVersion: v1
kind: Secret
metadata: {name: probe-headers, namespace: team-a}
data: {X-Probe-Token: $(printf 's3cret-value' | base64)}
SEC
create "$WORK/secret.yaml"
record team-a shop shop.$Z "[{dnsName: shop.$Z, recordType: A, recordTTL: 60, targets: [$T]}]" \
    "{port: 8421, protocol: HTTP, interval: 1s, path: \"/@$T:8422/x\", additionalHeadersRef: {name: probe-headers}}" \
    > "$WORK/shop.rec"
create "$WORK/shop.rec"
same shop.$Z A "$T"
sleep 1  # a later creationTimestamp (whole seconds) for team-b's records
{
    record team-b shop-too shop.$Z "[{dnsName: shop.$Z, recordType: A, targets: [192.0.2.66]}]"
    record team-b grab grab.$Z "[{dnsName: grab.$Z, recordType: A, targets: [192.0.2.20]},
      {dnsName: $Z, recordType: A, targets: [192.0.2.21]}, {dnsName: ns1.$Z, recordType: A, targets: [192.0.2.22]},
      {dnsName: other.$Z, recordType: A, targets: [192.0.2.23]}]"
    record team-b scan scan.$Z "[{dnsName: scan.$Z, recordType: A, targets: [$T]}]" \
        "{port: 8421, protocol: HTTP, path: \"@$T:8422/\"}"
} > "$WORK/b.rec"
create "$WORK/b.rec"
sleep 1.2  # refusals are logged 5 a second: the next ones in a second of their own
{
    record team-b metadata metadata.$Z "[{dnsName: metadata.$Z, recordType: A, targets: [169.254.169.254]}]"
    record team-b evil evil.$Z "[{dnsName: \"evil.$Z\\nglbd FORGED LINE\", recordType: A, targets: [192.0.2.24]},
      {dnsName: evil.$Z, recordType: A, targets: [192.0.2.25]}]"
} > "$WORK/b2.rec"
create "$WORK/b2.rec"
same grab.$Z A "192.0.2.20"
same evil.$Z A "192.0.2.25"
same shop.$Z A "$T"                      # the older record keeps it
same $Z A ""                             # nothing at the apex
same ns1.$Z A "127.0.0.1"                # the config's
for n in other scan metadata; do
    [[ $(status_of $A $P $n.$Z A) == NXDOMAIN && $(status_of $B $P $n.$Z A) == NXDOMAIN ]] || fail "$n.$Z was served"
done
refused=$(metric glbd_kubernetes_names_refused)
(( refused >= 6 )) || fail "names refused: $refused, want 6 or more"
log=$WORK/a.log
for why in "shop.$Z refused: the older DNSRecord team-a/shop" "grab: $Z refused: the zone apex" "grab: ns1.$Z refused: " \
           "other.$Z refused" "spec.healthCheck.path must start with / or ?" "metadata.$Z refused: every address is in kubernetes.denyNetworks"; do
    wait_for 5 grep -q "$why" "$log" || fail "no refusal logged matching: $why"
done
grep -qi '^glbd FORGED LINE' "$log" && fail "a newline in a name forged a log line"
grep -qiF "evil.$Z\\x0aglbd forged line refused" "$log" || fail "the bad name's refusal was not logged, escaped"
pass "contested name kept by the older record, apex, nameserver name, outside name, probe path, linklocal and a newline refused per name ($refused names); both servers answer the rest"

# 2. The probes: to port 8421 with the Secret's header and the path as a path; never to 8422.
wait_for 15 grep -q '"port": 8421' "$WORK/probes.log" || fail "no probe reached the target"
python3 - "$WORK/probes.log" "$T" <<'PY' || fail "probes: $(cat "$WORK/probes.log")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(l["port"] == 8421 for l in lines), "a probe reached another port"
assert all(l["headers"].get("X-Probe-Token") == "s3cret-value" for l in lines), "the Secret's header is missing"
assert all(l["path"] == f"/@{sys.argv[2]}:8422/x" for l in lines), "the path changed"
PY
grep -q 's3cret-value' "$log" && fail "the probe header's value reached the log"
pass "$(wc -l < "$WORK/probes.log") probes: all to :8421 with the Secret's header, none to :8422; the header never logged"

# 3. 10,001 targets in one record: that record is refused, the cluster's report still taken by the peer.
# wide_record NAME COUNT: a record whose one endpoint has COUNT targets, into $WORK/NAME.json
wide_record() {
    python3 - "$WORK/$1.json" "$1" "$2" $Z <<'PY'
import json, sys
path, name, count, z = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
targets = [f"10.{i // 65536}.{i // 256 % 256}.{i % 256}" for i in range(count)]
json.dump({"apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
           "metadata": {"name": name, "namespace": "team-c", "labels": {"kuadrant.io/coredns-zone-name": z}},
           "spec": {"rootHost": f"{name}.{z}", "endpoints": [
               {"dnsName": f"{name}.{z}", "recordType": "A", "targets": targets}]}}, open(path, "w"))
PY
}
wide_record wide 10001
create "$WORK/wide.json"
record team-c after after.$Z "[{dnsName: after.$Z, recordType: A, targets: [192.0.2.30]}]" > "$WORK/after.rec"
create "$WORK/after.rec"
same after.$Z A "192.0.2.30"
same shop.$Z A "$T"
[[ $(status_of $B $P wide.$Z A) == NXDOMAIN ]] || fail "the 10,001-target record was served"
wait_for 5 grep -q "team-c/wide: refused: .*10001 targets" "$log" || fail "the 10,001-target record's refusal not logged"
pass "10,001 targets: that record refused (logged), the peer still takes eu-1's report (a later record served by both)"

# 4. 70,000 targets (about 1 MB): read for its name alone; /healthz answers throughout.
wide_record giant 70000
( end=$(( $(date +%s) + 8 )) ok=0 bad=0
  while (( $(date +%s) < end )); do
      if curl -sf -m 1 "http://$ADMIN/healthz" >/dev/null; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
      sleep 0.1
  done
  echo "$ok $bad" > "$WORK/healthz" ) &
poller=$!
create "$WORK/giant.json"
wait_for 20 grep -q "team-c/giant: refused" "$log" || fail "the 70,000-target record's refusal not logged"
wait "$poller"
read -r ok bad < "$WORK/healthz"
(( bad == 0 && ok > 20 )) || fail "/healthz while a 70,000-target record was read: $ok ok, $bad failed"
for t in A AAAA; do
    q $A $P giant.$Z $t | grep -q 'CNAME' && fail "giant.$Z $t: $(q $A $P giant.$Z $t)"
done
[[ $(status_of $A $P giant.$Z AAAA) == NXDOMAIN ]] || fail "giant.$Z AAAA: $(status_of $A $P giant.$Z AAAA)"
pass "70,000 targets: refused, /healthz $ok of $ok during it, NXDOMAIN (no CNAME) for A and AAAA"

# 5. 100 records of 512 KiB: each read for its name alone; memory bounded.
rss() { awk '/VmRSS/ {print $2}' "/proc/$PID_a/status"; }
python3 - "$WORK/big" $Z <<'PY'
import json, sys
for i in range(100):
    o = {"apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
         "metadata": {"name": f"big{i}", "namespace": "team-d",
                      "labels": {"kuadrant.io/coredns-zone-name": sys.argv[2]}, "annotations": {"pad": "x" * (512 << 10)}},
         "spec": {"rootHost": f"big{i}.{sys.argv[2]}", "endpoints": [
             {"dnsName": f"big{i}.{sys.argv[2]}", "recordType": "A", "targets": ["192.0.2.1"]}]}}
    json.dump(o, open(f"{sys.argv[1]}.{i}.json", "w"))
PY
before=$(rss) over0=$(metric glbd_kubernetes_objects_over_limit_total)
for i in $(seq 0 99); do
    curl -s --cacert "$WORK/k/ca.pem" -H "Authorization: Bearer $(cat "$WORK/k/token")" -H "Content-Type: application/json" \
        --data-binary @"$WORK/big.$i.json" "https://$K:$KP/apis/kuadrant.io/v1alpha1/namespaces/team-d/dnsrecords" \
        -o /dev/null -w '%{http_code}\n' >> "$WORK/posts" || fail "POST big$i"
done
over_all() { (( $(metric glbd_kubernetes_objects_over_limit_total) >= over0 + 100 )); }
[[ $(sort -u "$WORK/posts") == 201 ]] || fail "POSTs: $(sort "$WORK/posts" | uniq -c)"
wait_for 60 over_all || fail "objects over the limit: $(metric glbd_kubernetes_objects_over_limit_total), want $((over0 + 100))"
sleep 1
after=$(rss)
[[ $(status_of $A $P big7.$Z A) == NXDOMAIN ]] || fail "a 512 KiB record was served"
same shop.$Z A "$T"
# (grep -c reads all of nm's output: with -q, nm would die of SIGPIPE and pipefail hide the match)
if (( $(nm "$GLBD" 2>/dev/null | grep -c '__[at]san_init' || true) > 0 )); then
    echo "RSS $before -> $after kB (a sanitizer's build: its quarantine keeps freed memory, not bounded here)"
else
    (( after - before < 30 * 1024 && after < 100 * 1024 )) || fail "RSS $before -> $after kB over 100 x 512 KiB records"
fi
pass "100 x 512 KiB records: each refused for its size, RSS $((before / 1024)) -> $((after / 1024)) MB"
