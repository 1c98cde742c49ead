#!/usr/bin/env bash
# Convergence of peer sync: N glbd servers on 127.0.2.1..N, each its own cluster with the same H hosts
# (simple hosts, one endpoint per cluster), all listing each other as members (syncInterval 1s).
# Reports, per N: the time from start until every server answers every cluster's endpoint for the last
# host, the time for one change (a reload on server 1 changing one host's endpoint) to reach all, and the
# time for a new cluster (server N+1, listed as a member by all from the start, as a peers name that now
# resolves to one more address would be) to be answered by all N; and the CPU all N servers spent until the
# full convergence (the figure behind its time on a machine they saturate, which other load moves less).
# With PROFILE=1, each server also gets an admin endpoint and logs at info, and after the full convergence
# a profile says where its time went: when each server began serving (the start-up on shared cores), the
# CPU all of them spent against the cores' wall time, the transfers served, and the exchanges that failed.
# LOGLEVEL=debug (with PROFILE=1) logs every build, and the profile adds the builds' wall time against their CPU.
# PERF=1 records call graphs of the whole machine (perf record -g) during the full convergence and prints the
# share of glbd's CPU in each part of the work (bench/perf-shares.py; glbd built with frame pointers, see there).
# --baseline PATH: the same fleets of the binary at PATH (an earlier build) too, in turn with glbd's, --repeat
# times each (default 3 then; 1 without): the median of each figure per binary, and the ratio new / baseline.
#   bash bench/sync-converge.sh [--servers "5 10 20"] [--hosts 1000] [--glbd build/glbd] [--baseline PATH]
#                               [--repeat N]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SERVERS="5 10 20" HOSTS=1000 GLBD=build/glbd PORT=5500 BASELINE="" REPEAT=""
while (($#)); do
  case $1 in
    --servers) SERVERS=$2; shift ;;
    --hosts) HOSTS=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    --baseline) BASELINE=$(realpath "$2"); shift ;;
    --repeat) REPEAT=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
WORK=$(mktemp -d)
PIDS=()
PERF_PID=""
cleanup() {  # KEEP=1 keeps the configs and logs
  for p in "${PIDS[@]}" $PERF_PID; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -n ${KEEP:-} ]]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
SECRET=$(head -c 32 /dev/urandom | base64)
ms() { echo $(( $(date +%s%N) / 1000000 )); }

config() {  # N I CHANGED(0/1)
  local n=$1 i=$2 changed=$3 h m
  echo "cluster: {id: c$i, instance: c$i-0}"
  echo "listen: {dns: [\"127.0.2.$i:$PORT\"]}"
  echo "threads: 1"
  echo "log: {level: $([[ -n ${PROFILE:-} ]] && echo "${LOGLEVEL:-info}" || echo warn)}"
  [[ -n ${PROFILE:-} ]] && echo "admin: {listen: \"127.0.3.$i:$PORT\"}"
  echo "zones: [{origin: bench.test, nameservers: [{name: ns.bench.test, addresses: [127.0.2.1]}]}]"
  echo "hosts:"
  for ((h = 0; h < HOSTS; h++)); do
    local ep="100.64.$i.$((h % 250 + 1))"
    if ((changed && h == HOSTS / 2)); then ep="100.127.$i.1"; fi
    echo "  - {name: h$h.bench.test, endpoints: [$ep]}"
  done
  echo "peers:"
  echo "  key: {name: bench, secret: \"$SECRET\"}"
  echo "  members:"
  for ((m = 1; m <= n + 1; m++)); do echo "    - address: \"127.0.2.$m:$PORT\""; done
  echo "  syncInterval: 1s"
  echo "  deadAfter: 10s"
}

# Each figure: every server answers NAME with COUNT addresses / with ADDRESS (start_wait in bench/lib.sh: one
# process asks them all every 5 ms, since one dig per server per round would take longer than the propagation
# measured).

# profile N T0 MS: the start-up and work behind a convergence of MS ms (PROFILE=1).
profile() {
  local n=$1 t0=$2 total=$3 i line at last=0 first=999999 cpu=0 faults=0 build_ms=0 ticks
  local -A by_thread=() sum=()
  # What each server's /metrics adds up to, summed over the servers: the samples whose line starts so.
  local -A counted=(
    [served]='glbd_sync_served_total ' [failed]='glbd_sync_failures_total' [second]='glbd_sync_second_connects_total'
    [reports]='glbd_sync_reports_received_total ' [skipped]='glbd_sync_reports_skipped_total '
    [builds]='glbd_snapshot_builds_total ' [held]='glbd_snapshot_builds_held_total ' [pulls]='glbd_sync_pulls_total'
    [beats]='glbd_sync_beats_total{result="sent"}' [resent]='glbd_sync_beats_total{result="resent"}'
    [beats_in]='glbd_sync_peer_beats_received_total'
    [handed]='glbd_sync_udp_notifies_total{result="handed"}' [dropped]='glbd_sync_udp_notifies_total{result="dropped"}'
  )
  ticks=$(getconf CLK_TCK)
  for ((i = 1; i <= n; i++)); do
    line=$(grep -m1 "glbd serving" "$WORK/c$i.log") || { echo "server $i never served" >&2; continue; }
    at=$(( $(date -d "${line%% *}" +%s%3N) - t0 ))
    (( at > last )) && last=$at
    (( at < first )) && first=$at
    read -r -a st < <(sed 's/.*) //' "/proc/${PIDS[$((i - 1))]}/stat")
    cpu=$(( cpu + (st[11] + st[12]) * 1000 / ticks ))
    faults=$(( faults + st[7] ))
    local task name
    for task in /proc/"${PIDS[$((i - 1))]}"/task/*; do  # threads are named glbd-<role>; the control thread glbd
      name=$(cat "$task/comm" 2>/dev/null) || continue
      read -r -a st < <(sed 's/.*) //' "$task/stat")
      by_thread[$name]=$(( ${by_thread[$name]:-0} + (st[11] + st[12]) * 1000 / ticks ))
    done
    local m key
    m=$(curl -s "http://127.0.3.$i:$PORT/metrics")
    for key in "${!counted[@]}"; do
      sum[$key]=$(( ${sum[$key]:-0} + $(awk -v p="${counted[$key]}" 'index($0, p) == 1 {s += $NF} END {print int(s)}' <<<"$m") ))
    done
    build_ms=$(( build_ms + $(awk '/^glbd_snapshot_build_cpu_seconds_total / {print int($2 * 1000)}' <<<"$m") ))
  done
  echo "profile of the full convergence of $n servers ($total ms from the first launch):"
  echo "- began serving (config read, first build, sockets bound): the first after $first ms, the last after $last ms"
  echo "- from the last one serving to every server answering every cluster: $(( total - last )) ms"
  echo "- CPU of all servers until then: $cpu ms, against $(( total * $(nproc) )) ms of $(nproc) cores' wall time; minor page faults: $faults;"
  echo "  by thread: $(for name in "${!by_thread[@]}"; do echo "$name ${by_thread[$name]} ms"; done | sort -k2 -nr | paste -sd, | sed 's/,/, /g')"
  [[ -s $WORK/progress ]] && echo "- addresses answered, all servers together (of $(( n * n ))), every 500 ms: $(awk '{print $2}' "$WORK/progress" | paste -sd' ')"
  echo "- snapshots built: ${sum[builds]} ($(( sum[builds] / n )) per server; ${sum[held]} of them waited for pulls under way), their CPU (the control thread's) $build_ms ms in all"
  { cat "$WORK"/c*.log | grep -o "snapshot rebuilt: .* in [0-9.]* ms ([0-9.]* ms CPU)" || true; } | tr -d "(" | awk '{w += $(NF-4); c += $(NF-2); n++}
    END {if (n) printf "  (LOGLEVEL=debug: %d builds logged, %.0f ms of wall time each on average for %.1f ms of CPU)\n", n, w / n, c / n}'
  echo "- heartbeats sent: ${sum[beats]} ($(( sum[beats] / n )) per server; ${sum[resent]} of them a change's again), handed to the sync threads: ${sum[handed]}, dropped there: ${sum[dropped]},"
  echo "  received (read and verified): ${sum[beats_in]}; pulls: ${sum[pulls]}"
  echo "- transfers served: ${sum[served]} ($(( sum[served] / n )) per server); exchanges failed: ${sum[failed]} (peers not yet listening);"
  echo "  connections tried a second time (the first slow to open): ${sum[second]}"
  echo "- reports with data received: ${sum[reports]}, against $(( n * (n - 1) )) if each server learnt each other origin once;"
  echo "  of them ${sum[skipped]} held already at their version when they came (not decoded)"
}

# cpu_ms PID...: the CPU time (user and system) the processes have used so far, all together, in ms.
cpu_ms() {
  local files=() p
  for p in "$@"; do files+=("/proc/$p/stat"); done
  awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); s += $12 + $13} END {print int(s * 1000 / hz)}' "${files[@]}"
}

# fleet N: starts N servers of glbd ($GLBD), measures, stops them; FLEET is "CONVERGE SPREAD JOIN CPU" (ms; CPU:
# all servers' from their start until the full convergence, read as soon as it is seen: on a machine the fleet
# saturates, the figure behind the convergence's time that other load moves less).
fleet() {
  local n=$1 i converge spread join cpu
  for ((i = 1; i <= n; i++)); do config "$n" "$i" 0 > "$WORK/c$i.yaml"; done
  # Asked every 20 ms, not 5: 50 servers asked every 5 ms answered 10,000 queries a second beside the work timed.
  start_wait "$n" "h$((HOSTS - 1)).bench.test" "$n" 120000 --every 20 ${PROFILE:+--progress "$WORK/progress"}
  if [[ -n ${PERF:-} ]]; then
    perf record -a -g -F 999 -o "$WORK/perf.data" -- sleep 600 > /dev/null 2>&1 & PERF_PID=$!
    sleep 1  # recording before the clock starts
  fi
  t0=$(ms)
  for ((i = 1; i <= n; i++)); do "$GLBD" serve -c "$WORK/c$i.yaml" 2>"$WORK/c$i.log" & PIDS+=($!); done
  go "$t0"
  end_wait || { echo "no convergence for $n servers" >&2; exit 1; }
  converge=$RESULT
  cpu=$(cpu_ms "${PIDS[@]}")
  if [[ -n $PERF_PID ]]; then
    kill -INT "$PERF_PID"; wait "$PERF_PID" || true; PERF_PID=""
    perf script -i "$WORK/perf.data" -F comm,ip,sym 2> /dev/null | python3 bench/perf-shares.py >&2 || true
  fi
  [[ -n ${PROFILE:-} ]] && profile "$n" "$t0" "$converge" >&2
  sleep 2  # settled: the next figure is one change alone
  config "$n" 1 1 > "$WORK/c1.yaml"
  start_wait "$n" "h$((HOSTS / 2)).bench.test" "100.127.1.1" 60000
  t0=$(ms)
  kill -HUP "${PIDS[0]}"
  go "$t0"
  end_wait || { echo "change did not spread for $n servers" >&2; exit 1; }
  spread=$RESULT
  config "$n" $((n + 1)) 0 > "$WORK/c$((n + 1)).yaml"
  start_wait "$n" "h$((HOSTS - 1)).bench.test" $((n + 1)) 60000
  t0=$(ms)
  "$GLBD" serve -c "$WORK/c$((n + 1)).yaml" 2>"$WORK/c$((n + 1)).log" & PIDS+=($!)
  go "$t0"
  end_wait || { echo "the new cluster did not reach all $n servers" >&2; exit 1; }
  join=$RESULT
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
  FLEET="$converge $spread $join $cpu"
}

median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
if [[ -z $BASELINE ]]; then
  echo "| servers | hosts each | full convergence from start | one change reaches all (incl. reload) | a new cluster seen by all | CPU of all until converged |"
  echo "|---:|---:|---:|---:|---:|---:|"
  for n in $SERVERS; do
    declare -a c=() s=() j=() u=()
    for ((rep = 1; rep <= ${REPEAT:-1}; rep++)); do
      fleet "$n"
      read -r a b d e <<<"$FLEET"; c+=("$a") s+=("$b") j+=("$d") u+=("$e")
    done
    printf '| %d | %d | %d ms | %d ms | %d ms | %d ms |\n' "$n" "$HOSTS" "$(median "${c[@]}")" "$(median "${s[@]}")" \
      "$(median "${j[@]}")" "$(median "${u[@]}")"
  done
  exit 0
fi
NEW=$(realpath "$GLBD")
echo "new: $NEW; baseline: $BASELINE; median of ${REPEAT:-3} runs each, in turn"
echo
echo "| servers | hosts each | figure | baseline | new | new / baseline |"
echo "|---:|---:|---|---:|---:|---:|"
for n in $SERVERS; do
  declare -A got=()
  runs=""
  for ((rep = 1; rep <= ${REPEAT:-3}; rep++)); do
    order="new baseline"
    ((rep % 2)) || order="baseline new"  # each goes first as often: a fleet's start may feel the last one's end
    for which in $order; do
      if [[ $which == new ]]; then GLBD=$NEW; else GLBD=$BASELINE; fi
      fleet "$n"
      read -r a b d e <<<"$FLEET"
      got[$which.converge]+=" $a" got[$which.spread]+=" $b" got[$which.join]+=" $d" got[$which.cpu]+=" $e"
      runs+="${runs:+, }$which $a/$b/$d/$e ms"
    done
  done
  echo "$n servers, each run in turn (full convergence / one change / a new cluster / CPU until converged): $runs" >&2
  for f in "converge:full convergence from start" "spread:one change reaches all" "join:a new cluster seen by all" \
           "cpu:CPU of all servers until converged"; do
    key=${f%%:*}
    # shellcheck disable=SC2086
    b=$(median ${got[baseline.$key]}) w=$(median ${got[new.$key]})
    printf '| %d | %d | %s | %d ms | %d ms | %s |\n' "$n" "$HOSTS" "${f#*:}" "$b" "$w" "$(awk -v a="$w" -v b="$b" 'BEGIN {printf "%.2f", b ? a / b : 0}')"
  done
done
