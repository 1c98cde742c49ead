#!/usr/bin/env bash
# Convergence of peer sync: N glbd servers on 127.0.2.1..N, each its own cluster with the same H hosts
# (simple hosts, one endpoint per cluster), all listing each other as members (syncInterval 1s).
# Reports, per N: the time from start until every server answers every cluster's endpoint for the last
# host, the time for one change (a reload on server 1 changing one host's endpoint) to reach all, and the
# time for a new cluster (server N+1, listed as a member by all from the start, as a peers name that now
# resolves to one more address would be) to be answered by all N.
#   bash bench/sync-converge.sh [--servers "5 10 20"] [--hosts 1000] [--glbd build/glbd]
set -euo pipefail
cd "$(dirname "$0")/.."
SERVERS="5 10 20" HOSTS=1000 GLBD=build/glbd PORT=5500
while (($#)); do
  case $1 in
    --servers) SERVERS=$2; shift ;;
    --hosts) HOSTS=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
[[ -n ${KEEP:-} ]] && trap "for p in \"\${PIDS[@]}\"; do kill \$p 2>/dev/null; done; echo kept \$WORK" EXIT
SECRET=$(head -c 32 /dev/urandom | base64)
ms() { echo $(( $(date +%s%N) / 1000000 )); }

config() {  # N I CHANGED(0/1)
  local n=$1 i=$2 changed=$3 h m
  echo "cluster: {id: c$i, instance: c$i-0}"
  echo "listen: {dns: [\"127.0.2.$i:$PORT\"]}"
  echo "threads: 1"
  echo "log: {level: warn}"
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

all_have() {  # N NAME COUNT|ADDRESS: every server answers NAME with COUNT addresses / with ADDRESS
  local n=$1 name=$2 want=$3 i out
  for ((i = 1; i <= n; i++)); do
    out=$(dig @127.0.2.$i -p $PORT +short +time=1 +tries=1 "$name" A)
    if [[ $want == *.* ]]; then grep -qx "$want" <<<"$out" || return 1
    else [[ $(grep -c . <<<"$out") == "$want" ]] || return 1; fi
  done
}

echo "| servers | hosts each | full convergence from start | one change reaches all (incl. reload) | a new cluster seen by all |"
echo "|---:|---:|---:|---:|---:|"
for n in $SERVERS; do
  for ((i = 1; i <= n; i++)); do config "$n" "$i" 0 > "$WORK/c$i.yaml"; done
  t0=$(ms)
  for ((i = 1; i <= n; i++)); do "$GLBD" serve -c "$WORK/c$i.yaml" 2>"$WORK/c$i.log" & PIDS+=($!); done
  until all_have "$n" "h$((HOSTS - 1)).bench.test" "$n"; do
    sleep 0.05
    (( $(ms) - t0 < 120000 )) || { echo "no convergence for $n servers" >&2; exit 1; }
  done
  converge=$(( $(ms) - t0 ))
  config "$n" 1 1 > "$WORK/c1.yaml"
  t0=$(ms)
  kill -HUP "${PIDS[0]}"
  until all_have "$n" "h$((HOSTS / 2)).bench.test" "100.127.1.1"; do
    sleep 0.02
    (( $(ms) - t0 < 60000 )) || { echo "change did not spread for $n servers" >&2; exit 1; }
  done
  spread=$(( $(ms) - t0 ))
  config "$n" $((n + 1)) 0 > "$WORK/c$((n + 1)).yaml"
  t0=$(ms)
  "$GLBD" serve -c "$WORK/c$((n + 1)).yaml" 2>"$WORK/c$((n + 1)).log" & PIDS+=($!)
  until all_have "$n" "h$((HOSTS - 1)).bench.test" $((n + 1)); do
    sleep 0.02
    (( $(ms) - t0 < 60000 )) || { echo "the new cluster did not reach all $n servers" >&2; exit 1; }
  done
  join=$(( $(ms) - t0 ))
  printf '| %d | %d | %d ms | %d ms | %d ms |\n' "$n" "$HOSTS" "$converge" "$spread" "$join"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
done
