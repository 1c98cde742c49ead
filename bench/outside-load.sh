#!/usr/bin/env bash
# Outside probes at scale (docs/answers.md, "Health seen from the other clusters"): a fleet of C glbds, each
# cluster with H hosts of one endpoint each, every endpoint TCP-checked every INTERVAL, so each glbd probes its
# own H endpoints from inside and, as a vantage, its share of the others' (health.outside.vantages: 3) from
# outside, at most health.outside.maxProbesPerSecond (MAX) a second: past it every outside interval stretches.
# For each glbd: its outside targets, the stretch, and the outside and inside probes it ran per second over
# DURATION s once the fleet has converged. Then DNS latency at glbd 1 (dnsperf at a fixed rate), with outside
# probing on and, in a second fleet of the same shape, off (health.outside.enabled: false); with --baseline,
# a third fleet of that binary (its defaults).
#   bash bench/outside-load.sh [--clusters 5] [--hosts 1000] [--interval 10s] [--max 100] [--duration 20]
#                              [--qps 5000] [--settle S] [--glbd build/glbd] [--baseline PATH]
# Everything runs in a network namespace of its own (unshare -n, so root): glbd N at 127.0.70.N, cluster N's
# endpoints at 127.(100+N).x.y, and one TCP acceptor (Python, CPU 0, lowest priority) answers them all on
# 0.0.0.0:18070. dnsperf runs on CPU 0 too; the glbds share both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
C=5 H=1000 INTERVAL=10s MAX=100 DURATION=20 QPS=5000 GLBD=build/glbd BASELINE="" SETTLE=""
args=("$@")
while (($#)); do
  case $1 in
    --clusters) C=$2; shift ;;
    --hosts) H=$2; shift ;;
    --interval) INTERVAL=$2; shift ;;
    --max) MAX=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --qps) QPS=$2; shift ;;
    --settle) SETTLE=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    --baseline) BASELINE=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
command -v dnsperf >/dev/null || { echo "dnsperf missing: apt-get install dnsperf" >&2; exit 1; }
if [[ -z ${GLBD_BENCH_NETNS:-} ]]; then
  exec unshare -n env GLBD_BENCH_NETNS=1 bash "$0" "${args[@]}"
fi
ip link set lo up
sysctl -qw net.core.somaxconn=65535  # (this namespace's) the target's accept queue takes a first round's burst
GLBD=$(realpath "$GLBD")
[[ -z $BASELINE ]] || BASELINE=$(realpath "$BASELINE")
WORK=$(mktemp -d)
PIDS=()
FLEET=()
stop_fleet() {
  for p in "${FLEET[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${FLEET[@]}"; do wait "$p" 2>/dev/null || true; done
  FLEET=()
}
trap 'stop_fleet; for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"' EXIT
P=5370 AP=9370
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# The target: a TCP accept for any address (a TCP check is a connect), then a close.
taskset -c 0 nice -n 19 python3 - "$WORK/ready" "$WORK/accepted" <<'PY' &
import os, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 18070))
s.listen(65535)
open(sys.argv[1], "w").close()
accepted, last = 0, time.monotonic()
while True:  # accept and close at once: nothing held, however many come
    c, _ = s.accept()
    c.close()
    accepted += 1
    if time.monotonic() - last >= 1:
        last = time.monotonic()
        with open(sys.argv[2] + ".tmp", "w") as f:
            f.write(str(accepted))
        os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
PIDS+=($!)
for _ in $(seq 100); do [[ -e $WORK/ready ]] && break; sleep 0.1; done
[[ -e $WORK/ready ]] || { echo "the target did not start" >&2; exit 1; }

# Each cluster's config (Python: 10,000 hosts a file in a moment): $1 = the outside key's value, "" for none.
configs() {
  python3 - "$WORK" "$C" "$H" "$INTERVAL" "$P" "$AP" "$1" <<'PY'
import sys
work, c, h, interval, port, admin, outside = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
members = ", ".join('{address: "127.0.70.%d:%s"}' % (i, port) for i in range(1, c + 1))
for i in range(1, c + 1):
    with open("%s/c%d.yaml" % (work, i), "w") as f:
        f.write("cluster: {id: c%d, instance: c%d-0}\n" % (i, i))
        f.write('listen: {dns: ["127.0.70.%d:%s"]}\n' % (i, port))
        f.write('admin: {listen: "127.0.70.%d:%s"}\n' % (i, admin))
        f.write("threads: 1\nlog: {level: warn}\nrateLimit: {responsesPerSecond: 0}\n")
        if outside:
            f.write("health: {outside: %s}\n" % outside)
        f.write("zones: [{origin: out.bench, nameservers: [{name: ns.out.bench, addresses: [127.0.70.1]}]}]\n")
        f.write("peers:\n  key: {name: glb-sync, secret: \"c2VjcmV0LWZvci1vdXRzaWRlLWxvYWQtYmVuY2gtb25seQ==\"}\n")
        f.write("  members: [%s]\n  syncInterval: 1s\n  deadAfter: 10s\n" % members)
        f.write("hosts:\n")
        for n in range(h):
            f.write("  - name: app%d.out.bench\n    endpoints: [127.%d.%d.%d]\n" % (n, 100 + i, n // 250, n % 250 + 1))
            f.write("    healthCheck: {protocol: TCP, port: 18070, interval: %s, timeout: 2s}\n" % interval)
PY
}
metric() {  # GLBD-NUMBER NAME: the sum of the series of that name
  curl -s "http://127.0.70.$1:$AP/metrics" | awk -v n="$2" '$1 == n || index($1, n "{") == 1 {s += $2} END {printf "%.2f\n", s}'
}
# The fleet has converged: glbd 1 answers app0 with one endpoint of each cluster (simple host: every cluster's).
converged() { [[ $(dig +time=1 +tries=1 +short @127.0.70.1 -p $P app0.out.bench A | grep -c '^127\.') == "$C" ]]; }

start_fleet() {  # BINARY OUTSIDE-VALUE
  configs "$2"
  for ((i = 1; i <= C; i++)); do
    "$1" serve -c "$WORK/c$i.yaml" 2>"$WORK/c$i.log" &
    FLEET+=($!)
  done
  local t0 limit
  t0=$(now_ms) limit=$(( 60000 + C * H / 10 ))
  until converged; do
    (( $(now_ms) - t0 < limit )) || { echo "the fleet did not converge in $limit ms" >&2; tail -5 "$WORK/c1.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "converged in $(( $(now_ms) - t0 )) ms" >&2
}

# Each glbd's outside targets, stretch and probes a second (outside, inside) over DURATION s, in the steady
# state: an outside checker spreads its first round over each target's (stretched) interval and goes on at the
# same rate; an inside checker probes everything within seconds and then each target at its own point of the
# interval, so the window begins two intervals after the start (past the first round's burst, and the
# failures it may bring on a busy target), or --settle S after it (the outside rate is steady from the start;
# the inside one, before its second round, is not). The counters belong to a checker that a change of targets
# replaces: a window in which the targets changed says so.
probe_rates() {
  local i settle=${SETTLE:-$(( ${INTERVAL%s} * 2 + 3 ))}
  echo "(waiting ${settle} s)" >&2
  sleep "$settle"
  # Each glbd's window is timed on its own (a scrape of a large glbd on a busy machine takes a while).
  declare -A o0 i0 t0 w0
  for ((i = 1; i <= C; i++)); do
    t0[$i]=$(metric $i glbd_outside_targets)
    w0[$i]=$(now_ms) o0[$i]=$(metric $i glbd_outside_probes_total) i0[$i]=$(metric $i glbd_health_probes_total)
  done
  local a0 start
  a0=$(cat "$WORK/accepted") start=$(now_ms)
  sleep "$DURATION"
  local a1 all_ms=$(( $(now_ms) - start ))
  a1=$(cat "$WORK/accepted")
  echo "| glbd | outside targets | stretch | outside probes/s | inside probes/s | within the cap ($MAX/s) |"
  echo "|---|---:|---:|---:|---:|---|"
  for ((i = 1; i <= C; i++)); do
    local o1 i1 t1 s rate inside ok ms
    o1=$(metric $i glbd_outside_probes_total) i1=$(metric $i glbd_health_probes_total) ms=$(( $(now_ms) - w0[$i] ))
    t1=$(metric $i glbd_outside_targets) s=$(metric $i glbd_outside_interval_stretch)
    rate=$(awk -v a="${o0[$i]}" -v b="$o1" -v ms=$ms 'BEGIN {printf "%.1f", (b - a) * 1000 / ms}')
    inside=$(awk -v a="${i0[$i]}" -v b="$i1" -v ms=$ms 'BEGIN {printf "%.1f", (b - a) * 1000 / ms}')
    ok=$(awk -v r="$rate" -v m="$MAX" 'BEGIN {print (r <= m * 1.05) ? "yes" : "NO"}')
    [[ ${t0[$i]} == "$t1" ]] || ok="($ok: targets changed in the window)"
    echo "| $i | ${t1%.00} | $s | $rate | $inside | $ok |"
  done
  echo
  echo "accepted by the target: $(( (a1 - a0) * 1000 / all_ms ))/s"
}

latency() {  # LABEL: dnsperf at QPS against glbd 1 for DURATION s
  local h
  for ((h = 0; h < H; h++)); do echo "app$h.out.bench A"; done > "$WORK/queries"
  taskset -c 0 dnsperf -s 127.0.70.1 -p $P -d "$WORK/queries" -l "$DURATION" -c 4 -Q "$QPS" -v >"$WORK/perf" 2>&1
  local qps lat lost pcts
  qps=$(awk '/Queries per second/ {print $4}' "$WORK/perf")
  lat=$(awk '/Average Latency/ {printf "%.0f", $4 * 1e6}' "$WORK/perf")
  lost=$(awk '/Queries lost/ {print $3}' "$WORK/perf")
  pcts=$(awk '/^> / {print $NF * 1e6}' "$WORK/perf" | sort -n | awk '{v[NR] = $1} END {
    if (!NR) {print "- | - | -"; exit}
    printf "%.0f us | %.0f us | %.0f us", v[int(NR * 0.5) + 1], v[int(NR * 0.9) + 1], v[int(NR * 0.99) + 1]}')
  echo "| $1 | $qps | $lat us | $pcts | $lost |" >> "$WORK/latency"
}

echo "## $C clusters x $H hosts (one endpoint each, TCP every $INTERVAL), maxProbesPerSecond $MAX"
echo
start_fleet "$GLBD" "{maxProbesPerSecond: $MAX}"
probe_rates
latency "outside probes on ($(basename "$GLBD"))"
stop_fleet
# The other fleets are measured as long after their start as the first was (past the first rounds' burst).
QUIET=$(( ${SETTLE:-$(( ${INTERVAL%s} * 2 + 3 ))} + DURATION + 5 ))
start_fleet "$GLBD" "{enabled: false}"
sleep "$QUIET"
latency "outside probes off ($(basename "$GLBD"))"
stop_fleet
if [[ -n $BASELINE ]]; then
  start_fleet "$BASELINE" ""
  sleep "$QUIET"
  latency "baseline $(basename "$BASELINE") (its defaults)"
  stop_fleet
fi
echo
echo "DNS at glbd 1 (dnsperf, $QPS queries/s for $DURATION s, CPU 0):"
echo
echo "| fleet | queries/s | avg latency | p50 | p90 | p99 | lost |"
echo "|---|---:|---:|---:|---:|---:|---:|"
cat "$WORK/latency"
