#!/usr/bin/env bash
# Signed answers by how they are signed: glbd serving a signed zone of H load-balanced hosts (a CSK, ECDSA
# P-256; tests/tools/scale-view.py's view, one cluster), asked by dnsperf without DO and with DO for (a) the
# hosts, whose answers carry signatures made when the snapshot was built, (b) 1,000 names that do not
# exist, asked in turn (a signed denial is made while answering, then the UDP thread's answer cache holds
# it), (c) names that do not exist, each asked once (every signed denial made while answering: the cost of
# a cache miss). Per workload: q/s and glbd's CPU per query, from /proc; the estimated hit rate of (b)
# from the three costs.
#   bash bench/denials.sh [--hosts 1000] [--duration 5] [--glbd PATH]
# Needs dnsperf and python3; glbd on CPU 1, dnsperf on CPU 0, everything on 127.0.3.2.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=1000 DURATION=5 GLBD=build-release/glbd
while (($#)); do
  case $1 in
    --hosts) HOSTS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
source bench/lib.sh
GLBD=$(release_glbd "$GLBD")
work_dir
ADDR=127.0.3.2 PORT=5321 ADMIN=127.0.3.2:9161
HZ=$(getconf CLK_TCK)

mkdir -p "$WORK/state"
python3 tests/tools/scale-view.py "$WORK" "$HOSTS" 1 "$ADDR" "$PORT" "$ADMIN" "$PWD/tests/fixtures/test.mmdb"
sign_view "$WORK" "$GLBD"
python3 - "$WORK" "$HOSTS" <<'EOF'
import random, sys
work, hosts = sys.argv[1], int(sys.argv[2])
random.seed(1)
with open(f"{work}/hosts.txt", "w") as f:
    for i in range(100000): f.write(f"h{i % hosts}.glb.example.test A\n")
with open(f"{work}/repeated.txt", "w") as f:
    for i in range(100000): f.write(f"nx{i % 1000}.glb.example.test A\n")
with open(f"{work}/unique.txt", "w") as f:  # more than any run asks: each name once
    for i in range(1000000): f.write(f"nx{random.getrandbits(48):x}.glb.example.test A\n")
EOF

taskset -c 1 "$GLBD" serve --config "$WORK/glbd.yaml" 2>"$WORK/glbd.log" &
PID=$!
# Until every host's sets are signed: the start's first build leaves them to sign, the next signs them all.
for ((i = 0; i < 600; i++)); do
  made=$(curl -s "http://$ADMIN/metrics" | awk '/^glbd_snapshot_signed_sets\{result="made"\}/ {print $2}' || true)
  [[ -n $made && $made != 0 ]] && break
  sleep 0.1
done
[[ -n $made && $made != 0 ]] || { echo "denials: the hosts were never signed" >&2; exit 1; }

cpu() { cut -d')' -f2- "/proc/$PID/stat" | awk '{print $12 + $13}'; }
echo "## Signed answers by how they are signed (glbd, $HOSTS hosts, ECDSA P-256, $(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "| workload | DO | q/s | server us/q |"
echo "|---|---|---:|---:|"
declare -A cost
for w in hosts repeated unique; do
  for flag in "" -D; do
    c0=$(cpu)
    out=$(taskset -c 0 dnsperf -s "$ADDR" -p "$PORT" -d "$WORK/$w.txt" -l "$DURATION" -c 8 -q 100 $flag 2>&1)
    c1=$(cpu)
    q=$(awk '/Queries completed/ {print $3}' <<<"$out")
    qps=$(awk '/Queries per second/ {printf "%.0f", $4}' <<<"$out")
    us=$(awk -v t=$((c1 - c0)) -v hz="$HZ" -v q="$q" 'BEGIN {printf "%.2f", t / hz * 1e6 / q}')
    cost[$w${flag:+-do}]=$us
    echo "| $w | ${flag:+yes} | $qps | $us |"
  done
done
echo
# (b)'s cost is hit * (a cached answer) + (1 - hit) * (a miss); a cached answer costs about a stored one.
awk -v hit="${cost[hosts-do]}" -v miss="${cost[unique-do]}" -v mixed="${cost[repeated-do]}" 'BEGIN {
  printf "a denial signed while answering costs %.1f us more than a stored answer; ", miss - hit
  printf "1,000 names in turn: about %.0f %% answered from the cache\n", 100 * (miss - mixed) / (miss - hit) }'
