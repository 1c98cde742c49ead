#!/usr/bin/env bash
# What Kubernetes DNSRecords cost glbd (coredns mode, no peers), for one or more glbd binaries in the same
# run (say, a build of main beside an older one):
#   1. one watch event at N records (default 2,000, in Kuadrant's load-balanced shape): glbd's CPU time
#      (user + system, /proc/PID/stat) over E modifications of one record, each waited for in the answers,
#      divided by E;
#   2. 100 objects of 512 KiB added (padding in an annotation): resident memory after (VmRSS);
#   3. a restart with all of them there (one list of ~50 MiB): the peak (VmHWM) and the time to the first
#      answer.
#   bash bench/kube-load.sh [--records 2000] [--events 100] [--glbd PATH]...
# PERF=FILE records glbd's profile (perf record -g) over the events into FILE.
# Needs python3, dig, openssl; the fake API server (tests/tools/fakekube.py) on 127.0.4.2, glbd on
# 127.0.4.1; nothing leaves loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDS=2000 EVENTS=100 BINARIES=()
while (($#)); do
  case $1 in
    --records) RECORDS=$2; shift ;;
    --events) EVENTS=$2; shift ;;
    --glbd) BINARIES+=("$2"); shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
((${#BINARIES[@]})) || BINARIES=(build-release/glbd)
A=127.0.4.1 P=5440 K=127.0.4.2 KP=6440 Z=glb.example.com
WORK=$(mktemp -d /tmp/glbd-kube-load.XXXXXX)
PIDS=()
cleanup() { [[ -n ${KEEP:-} ]] && { tail -5 "$WORK/glbd.log" >&2; cp -r "$WORK" /tmp/kube-load-kept; }; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/key.pem" -out "$WORK/ca.pem" \
    -days 2 -subj /CN=fakekube -addext "subjectAltName=IP:$K" 2>/dev/null
cat "$WORK/ca.pem" "$WORK/key.pem" > "$WORK/tls.pem"
echo token > "$WORK/token"
cat > "$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: f, cluster: {server: "https://$K:$KP", certificate-authority: $WORK/ca.pem}}]
users: [{name: u, user: {tokenFile: $WORK/token}}]
contexts: [{name: c, context: {cluster: f, user: u}}]
current-context: c
KC
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: eu-1, instance: bench}
listen: {dns: ["$A:$P"]}
zones: [{origin: $Z, nameservers: [{name: ns1.$Z, addresses: [$A]}]}]
kubernetes: {kubeconfig: $WORK/kubeconfig}
YAML
# The records: one listener each, as kuadrant-operator and dns-operator 0.14 write and label them (every
# glbd version reads that shape).
python3 - "$WORK/state.json" "$RECORDS" <<'PY'
import json, sys
sys.path.insert(0, "tests/tools")
import kuadrant_records as k
objs = []
for i in range(int(sys.argv[2])):
    r = k.listener_record("gw", f"l{i}", f"h{i}.{k.ZONE}", [("IPAddress", f"172.18.{i // 250}.{i % 250 + 1}")],
                          "bench", "eu-1", {"weight": 100, "geo": "GEO-EU", "default": True},
                          labels={"kuadrant.io/coredns-zone-name": k.ZONE})
    r["metadata"].update({"uid": f"u{i}", "resourceVersion": "1000", "generation": 1,
                          "creationTimestamp": "2026-12-01T00:00:00Z"})
    objs.append(r)
json.dump({"rv": 1000, "objects": objs}, open(sys.argv[1], "w"))
PY
python3 tests/tools/fakekube.py $K $KP "$WORK/ready" --token-file "$WORK/token" --tls "$WORK/tls.pem" \
    --state "$WORK/state.json" > "$WORK/fake.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [[ -e $WORK/ready ]] && break; sleep 0.1; done
api() { curl -s --cacert "$WORK/ca.pem" -H "Authorization: Bearer token" "$@"; }
cpu_ms() { awk '{print ($14 + $15) * 10}' "/proc/$1/stat"; }  # clock ticks of 10 ms
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
answer() { dig @$A -p $P +short +time=1 +tries=1 "$1" A 2>/dev/null | head -1; }
wait_answer() {  # NAME WANT [SECONDS]
  local end=$(( $(date +%s) + ${3:-120} ))
  until [[ $(answer "$1") == "$2" ]]; do (( $(date +%s) < end )) || return 1; sleep 0.02; done
}
start() {  # BINARY: sets GPID, and FIRST to the ms to the first answer of the last record
  local t0=$(date +%s%N)
  "$1" serve --config "$WORK/glbd.yaml" > "$WORK/glbd.log" 2>&1 &
  GPID=$!
  PIDS+=($GPID)
  wait_answer "h$((RECORDS - 1)).$Z" "172.18.$(( (RECORDS - 1) / 250 )).$(( (RECORDS - 1) % 250 + 1 ))" 300 ||
      { echo "glbd did not serve the records" >&2; tail "$WORK/glbd.log" >&2; exit 1; }
  FIRST=$(( ($(date +%s%N) - t0) / 1000000 ))
}
patch_target() {  # RECORD-INDEX ADDRESS
  local i=$1
  api -X GET "https://$K:$KP/apis/kuadrant.io/v1alpha1/namespaces/bench/dnsrecords/gw-l$i" |
    python3 -c 'import json,sys; o=json.load(sys.stdin); [e.update(targets=[sys.argv[1]]) for e in o["spec"]["endpoints"] if e["recordType"]=="A"]; print(json.dumps({"spec": {"endpoints": o["spec"]["endpoints"]}}))' "$2" > "$WORK/patch.json"
  api -X PATCH -H "Content-Type: application/merge-patch+json" --data-binary @"$WORK/patch.json" \
    "https://$K:$KP/apis/kuadrant.io/v1alpha1/namespaces/bench/dnsrecords/gw-l$i" > /dev/null
}
big_records() {
  python3 - "$WORK/big" <<'PY'
import json, sys
for i in range(100):
    o = {"apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
         "metadata": {"name": f"big{i}", "namespace": "bench", "labels": {"kuadrant.io/coredns-zone-name": "glb.example.com"},
                      "annotations": {"pad": "x" * (512 << 10)}},
         "spec": {"rootHost": f"big{i}.glb.example.com", "endpoints": [
             {"dnsName": f"big{i}.glb.example.com", "recordType": "A", "targets": ["192.0.2.1"]}]}}
    json.dump(o, open(f"{sys.argv[1]}.{i}.json", "w"))
PY
  for i in $(seq 0 99); do
    api -X POST -H "Content-Type: application/json" --data-binary @"$WORK/big.$i.json" \
      "https://$K:$KP/apis/kuadrant.io/v1alpha1/namespaces/bench/dnsrecords" > /dev/null
  done
}
printf '%-40s %14s %12s %14s %14s %16s\n' glbd "first-answer-ms" "event-cpu-ms" "rss-before-MB" "rss-100x512K-MB" "list-peak-MB"
for bin in "${BINARIES[@]}"; do
  start "$bin"
  first=$FIRST
  sleep 1
  rss0=$(status_kb $GPID VmRSS)
  c0=$(cpu_ms $GPID)
  if [[ -n ${PERF:-} ]]; then perf record -g -p $GPID -o "$PERF" 2>/dev/null & PERF_PID=$!; fi
  for e in $(seq "$EVENTS"); do
    addr="10.9.$(( e / 250 )).$(( e % 250 + 1 ))"
    patch_target 7 "$addr"
    wait_answer "h7.$Z" "$addr" 30 || { echo "event $e not served" >&2; exit 1; }
  done
  c1=$(cpu_ms $GPID)
  if [[ -n ${PERF:-} ]]; then kill -INT $PERF_PID; wait $PERF_PID || true; fi
  # The patches' own cost (the fake server, curl) is not glbd's: only glbd's CPU is counted.
  event=$(awk -v a="$c0" -v b="$c1" -v n="$EVENTS" 'BEGIN {printf "%.2f", (b - a) / n}')
  big_records
  sleep 3
  rss1=$(status_kb $GPID VmRSS)
  kill $GPID; wait $GPID 2>/dev/null || true
  start "$bin"
  sleep 2
  peak=$(status_kb $GPID VmHWM)
  kill $GPID; wait $GPID 2>/dev/null || true
  printf '%-40s %14s %12s %14s %14s %16s\n' "$bin" "$first" "$event" "$((rss0 / 1024))" "$((rss1 / 1024))" "$((peak / 1024))"
  # The next binary starts from the same records.
  for i in $(seq 0 99); do
    api -X DELETE "https://$K:$KP/apis/kuadrant.io/v1alpha1/namespaces/bench/dnsrecords/big$i" > /dev/null
  done
done
