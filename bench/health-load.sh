#!/usr/bin/env bash
# Does probing 200 endpoints every second change DNS answer latency? Runs glbd twice on loopback with
# the same zone and load (dnsperf), once without health checks and once with HTTP checks of 200
# endpoints (127.0.1.1-200, served by tests/tools/targets.py), and prints both latency figures.
#   bash bench/health-load.sh [--duration S] [--glbd PATH]
# Needs dnsperf (apt-get install dnsperf). Traffic stays on 127.0.0.0/8.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=10 GLBD=build/glbd
while (($#)); do
  case $1 in
    --duration) DURATION=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
command -v dnsperf >/dev/null || { echo "dnsperf missing: apt-get install dnsperf" >&2; exit 1; }
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT
A=127.0.0.60 P=5360 N=200

args=()
for i in $(seq 1 $N); do args+=(--http "127.0.1.$i:18060"); done
python3 tests/tools/targets.py "${args[@]}" --ready "$WORK/ready" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [[ -e $WORK/ready ]] && break; sleep 0.1; done

config() {  # $1 = 1 for health checks
  echo "cluster: {id: bench}"
  echo "listen: {dns: [\"$A:$P\"]}"
  echo "threads: 1"
  echo "log: {level: warn}"
  echo "rateLimit: {responsesPerSecond: 0}"
  echo "zones: [{origin: bench.test, nameservers: [{name: ns.bench.test, addresses: [$A]}]}]"
  echo "hosts:"
  for h in $(seq 1 20); do
    eps=""
    for i in $(seq $(( (h - 1) * 10 + 1 )) $(( h * 10 ))); do eps+="127.0.1.$i, "; done
    echo "  - name: app$h.bench.test"
    echo "    endpoints: [${eps%, }]"
    echo "    loadBalancing: {weight: 100, geo: IE, defaultGeo: true}"
    if [[ $1 == 1 ]]; then
      echo "    healthCheck: {protocol: HTTP, port: 18060, path: /healthz, interval: 1s, timeout: 500ms}"
    fi
  done
}
for h in $(seq 1 20); do echo "app$h.bench.test A"; done > "$WORK/queries"

run() {  # $1 = label, $2 = health flag
  config "$2" > "$WORK/glbd.yaml"
  taskset -c 1 "$GLBD" serve -c "$WORK/glbd.yaml" 2>"$WORK/$1.log" &
  local pid=$!
  sleep 2
  taskset -c 0 dnsperf -s $A -p $P -d "$WORK/queries" -l "$DURATION" -c 4 -Q 20000 >"$WORK/$1.perf" 2>&1
  kill $pid; wait $pid 2>/dev/null || true
  local qps lat sd lost
  qps=$(awk '/Queries per second/ {print $4}' "$WORK/$1.perf")
  lat=$(awk '/Average Latency/ {print $4}' "$WORK/$1.perf")
  sd=$(awk '/Latency StdDev/ {print $4}' "$WORK/$1.perf")
  lost=$(awk '/Queries lost/ {print $3}' "$WORK/$1.perf")
  printf '| %-26s | %9s | %12s | %12s | %6s |\n' "$1" "$qps" "$lat" "$sd" "$lost"
}
echo "| run (20 hosts x 10 endpoints) | queries/s | avg latency s | latency sd s | lost |"
echo "|---|---:|---:|---:|---:|"
run "no health checks" 0
run "200 endpoints every 1s" 1
grep -c 'health' "$WORK/200 endpoints every 1s.log" >/dev/null 2>&1 || true
