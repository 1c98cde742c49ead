#!/usr/bin/env bash
# Health probing at scale: what probing N endpoints costs glbd, and whether it changes DNS answer latency.
# Runs glbd twice with the same zone (N/10 load-balanced hosts of 10 endpoints each): without health checks,
# then with an HTTP (or TCP) check of every endpoint every INTERVAL. For each run: glbd's CPU while only
# probing (no DNS load), then dnsperf at a fixed rate (latency, and glbd's CPU under both).
#   bash bench/health-load.sh [--endpoints 200] [--interval 1s] [--protocol HTTP|TCP] [--duration 10] [--glbd PATH]
#                             [--target keepalive|close] [--server python|nginx]
# The HTTP target keeps connections open between requests (HTTP/1.1, as Envoy and most servers do), or with
# --target close answers HTTP/1.0 and closes after each one. It is a small Python server, or with --server
# nginx (apt-get install nginx-light) nginx, which answers 2,000 probes a second for a fraction of the CPU:
# the target shares CPU 0 with dnsperf, and the Python one kept that core 92% busy (40% without probes),
# so dnsperf's latency measured the rig as much as glbd.
# Everything runs in a network namespace of its own (unshare -n, so root): the endpoints are 127.1.x.y and
# one target server answers them all on 0.0.0.0:18060, which nothing outside the namespace can reach.
# Needs dnsperf and python3. glbd is pinned to CPU 1; dnsperf and the target server to CPU 0, the target server
# at the lowest priority so that it takes dnsperf's CPU as little as it can (on two cores it must share one).
set -euo pipefail
cd "$(dirname "$0")/.."
N=200 INTERVAL=1s PROTO=HTTP DURATION=10 GLBD=build/glbd TARGET=keepalive SERVER=python
args=("$@")
while (($#)); do
  case $1 in
    --endpoints) N=$2; shift ;;
    --interval) INTERVAL=$2; shift ;;
    --protocol) PROTO=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    --target) TARGET=$2; shift ;;
    --server) SERVER=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
command -v dnsperf >/dev/null || { echo "dnsperf missing: apt-get install dnsperf" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [[ $SERVER == nginx && ! -x $NGINX ]]; then echo "nginx missing: apt-get install nginx-light" >&2; exit 1; fi
if [[ -z ${GLBD_BENCH_NETNS:-} ]]; then
  exec unshare -n env GLBD_BENCH_NETNS=1 bash "$0" "${args[@]}"
fi
ip link set lo up
GLBD=$(realpath "$GLBD")
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT
A=127.0.0.60 P=5360 HZ=$(getconf CLK_TCK)
HOSTS=$(( (N + 9) / 10 ))
case $INTERVAL in *ms) SETTLE=$(( ${INTERVAL%ms} / 1000 + 1 )) ;; *s) SETTLE=${INTERVAL%s} ;; *) SETTLE=5 ;; esac
endpoint() { echo "127.1.$(( $1 / 250 )).$(( $1 % 250 + 1 ))"; }

# The targets: 200 to every HTTP request, or a TCP accept, for any address (the namespace's own loopback).
if [[ $SERVER == nginx ]]; then
  mkdir -p "$WORK/nginx"
  keepalive="keepalive_requests 10000000; keepalive_timeout 120s;"
  [[ $TARGET == close ]] && keepalive="keepalive_timeout 0;"
  cat > "$WORK/nginx/nginx.conf" <<EOF
user root;
worker_processes 1;
worker_rlimit_nofile 40000;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 30000; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body; proxy_temp_path $WORK/nginx/proxy; fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi; scgi_temp_path $WORK/nginx/scgi;
  $keepalive
  server {
    listen 0.0.0.0:18060 backlog=4096;
    location = /nginx-status { stub_status; }
    location / { return 200 "ok"; }
  }
}
EOF
  taskset -c 0 nice -n 19 "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g "daemon off;" &
  PIDS+=($!)
  # served and connections, as the Python target writes them, from nginx's counters once a second (each
  # status request is one of the requests: taken off).
  (
    n=0
    for ((i = 0; i < 3600; i++)); do
      sleep 1
      read -r acc _ req < <(curl -s http://127.0.0.1:18060/nginx-status | sed -n 3p) || continue
      n=$((n + 1))
      echo $((req - n)) > "$WORK/served.tmp" && mv "$WORK/served.tmp" "$WORK/served"
      echo "$acc" > "$WORK/connections.tmp" && mv "$WORK/connections.tmp" "$WORK/connections"
      touch "$WORK/ready"
    done
  ) &
  PIDS+=($!)
else
taskset -c 0 nice -n 19 python3 - "$WORK/ready" "$WORK/served" "$WORK/connections" "$TARGET" <<'PY' &
import asyncio, sys
served = connections = 0
keepalive = sys.argv[4] == "keepalive"
async def handle(reader, writer):
    global served, connections
    connections += 1
    try:
        while True:  # one request a turn (a probe's GET has no body)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
            served += 1
            if keepalive and b"HTTP/1.1" in head.split(b"\r\n", 1)[0]:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
                continue
            writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
            break
    except Exception:
        pass
    writer.close()
async def main():
    server = await asyncio.start_server(handle, "0.0.0.0", 18060, backlog=4096)
    open(sys.argv[1], "w").close()
    while True:
        await asyncio.sleep(1)
        with open(sys.argv[2], "w") as f:
            f.write(str(served))
        with open(sys.argv[3], "w") as f:
            f.write(str(connections))
asyncio.run(main())
PY
PIDS+=($!)
fi
for _ in $(seq 100); do [[ -e $WORK/ready ]] && break; sleep 0.1; done
[[ -e $WORK/ready ]] || { echo "the target server did not start" >&2; exit 1; }

config() {  # $1 = 1 for health checks
  echo "cluster: {id: bench}"
  echo "listen: {dns: [\"$A:$P\"]}"
  echo "threads: 1"
  echo "log: {level: warn}"
  echo "admin: {listen: \"$A:9360\"}"
  echo "rateLimit: {responsesPerSecond: 0}"
  echo "zones: [{origin: bench.test, nameservers: [{name: ns.bench.test, addresses: [$A]}]}]"
  echo "hosts:"
  for ((h = 0; h < HOSTS; h++)); do
    eps=""
    for ((i = h * 10; i < h * 10 + 10 && i < N; i++)); do eps+="$(endpoint $i), "; done
    echo "  - name: app$h.bench.test"
    echo "    endpoints: [${eps%, }]"
    echo "    loadBalancing: {weight: 100, geo: IE, defaultGeo: true}"
    if [[ $1 == 1 ]]; then
      if [[ $PROTO == TCP ]]; then
        echo "    healthCheck: {protocol: TCP, port: 18060, interval: $INTERVAL, timeout: 1s}"
      else
        echo "    healthCheck: {protocol: HTTP, port: 18060, path: /healthz, interval: $INTERVAL, timeout: 1s}"
      fi
    fi
  done
}
for ((h = 0; h < HOSTS; h++)); do echo "app$h.bench.test A"; done > "$WORK/queries"

probe_counts() { curl -s "http://$A:9360/metrics" | awk '/^glbd_health_probes_total/ {p += $2} /^glbd_health_probe_failures_total/ {f += $2} END {printf "%d %d\n", p, f}'; }
ticks() { read -r -a f <<<"$(cut -d')' -f2- "/proc/$1/stat")"; echo $(( f[11] + f[12] )); }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

run() {  # $1 = label, $2 = health flag
  config "$2" > "$WORK/glbd.yaml"
  taskset -c 1 "$GLBD" serve -c "$WORK/glbd.yaml" 2>"$WORK/run.log" &
  local pid=$! t0 c0 t1 c1 idle busy served0 served1 conn0 conn1
  for _ in $(seq 200); do
    dig +time=1 +tries=1 +short @$A -p $P app0.bench.test A 2>/dev/null | grep -q '^127\.' && break
    sleep 0.05
  done
  sleep $(( 2 * SETTLE ))  # past the second round: probes now come evenly
  local probes0 failures0 probes failures
  read -r probes0 failures0 < <(probe_counts)
  served0=$(cat "$WORK/served" 2>/dev/null || echo 0) conn0=$(cat "$WORK/connections" 2>/dev/null || echo 0)
  t0=$(now_ms); c0=$(ticks $pid)
  sleep "$DURATION"
  t1=$(now_ms); c1=$(ticks $pid)
  served1=$(cat "$WORK/served" 2>/dev/null || echo 0) conn1=$(cat "$WORK/connections" 2>/dev/null || echo 0)
  read -r probes failures < <(probe_counts)
  probes=$((probes - probes0)) failures=$((failures - failures0))
  idle=$(awk -v c=$((c1 - c0)) -v hz=$HZ -v ms=$((t1 - t0)) 'BEGIN {printf "%.1f", 100 * c / hz / (ms / 1000)}')
  local rate=$(( (served1 - served0) * 1000 / (t1 - t0) )) crate=$(( (conn1 - conn0) * 1000 / (t1 - t0) ))
  t0=$(now_ms); c0=$(ticks $pid)
  taskset -c 0 dnsperf -s $A -p $P -d "$WORK/queries" -l "$DURATION" -c 4 -Q 20000 -v >"$WORK/perf" 2>&1
  t1=$(now_ms); c1=$(ticks $pid)
  busy=$(awk -v c=$((c1 - c0)) -v hz=$HZ -v ms=$((t1 - t0)) 'BEGIN {printf "%.1f", 100 * c / hz / (ms / 1000)}')
  local qps lat sd lost rss pcts
  rss=$(awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' /proc/$pid/status)
  kill $pid; wait $pid 2>/dev/null || true
  qps=$(awk '/Queries per second/ {print $4}' "$WORK/perf")
  lat=$(awk '/Average Latency/ {printf "%.0f", $4 * 1e6}' "$WORK/perf")
  sd=$(awk '/Latency StdDev/ {printf "%.0f", $4 * 1e6}' "$WORK/perf")
  lost=$(awk '/Queries lost/ {print $3}' "$WORK/perf")
  # Percentiles of every answered query's latency (dnsperf -v: "> RCODE name type seconds"): the median
  # says what a query usually waits, the mean and p99 also what a busy moment of this machine adds.
  pcts=$(awk '/^> / {print $NF * 1e6}' "$WORK/perf" | sort -n | awk '{v[NR] = $1} END {
    if (!NR) {print "- | - | -"; exit}
    printf "%.0f us | %.0f us | %.0f us", v[int(NR * 0.5) + 1], v[int(NR * 0.9) + 1], v[int(NR * 0.99) + 1]}')
  printf '| %s | %s/s | %s/s | %s of %s | %s%% | %s | %s us | %s us | %s | %s | %s%% | %s MB |\n' "$1" "$rate" "$crate" "$failures" "$probes" "$idle" "$qps" "$lat" "$sd" "$pcts" "$lost" "$busy" "$rss"
}
echo "| run ($HOSTS hosts x 10 endpoints, target: $SERVER, $TARGET) | probes served | connections opened | probes failed (glbd, in the window) | glbd CPU, probing only | queries/s | avg latency | latency sd | p50 | p90 | p99 | lost | glbd CPU under load | glbd peak RSS |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
run "no health checks" 0
run "$N endpoints, $PROTO every $INTERVAL" 1
