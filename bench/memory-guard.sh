#!/usr/bin/env bash
# Memory guard (CI): the resident memory glbd holds for a view of 1,000 hosts x 20 clusters (its own hosts from
# the config, 19 clusters from stateDir, as bench/scale.sh's view, tests/tools/scale-view.py, with the hosts of
# each report in the config's order rather than by name, as an older glbd may send them), against the bound
# recorded in bench/memory-bound. It fails when either figure grows more than 25 % over its bound:
#   view   the RSS of that view less the RSS of a 10 x 3 view (what the view costs: the fixed part, binary,
#          libraries and thread stacks, would hide a view that doubled),
#   peak   VmHWM of the large view (start-up's transient copies included).
# Each is the median of 3 starts (alternating small and large), once start-up work is over (CPU idle 0.5 s).
# Measured without malloc's huge pages (GLIBC_TUNABLES empty): their rounding depends on the machine.
#   bash bench/memory-guard.sh [--glbd PATH] [--bound FILE] [--record] [--hosts 1000]
# --record writes the figures measured as the new bound (a change that raises it on purpose says why in its
# commit). Needs python3 and dig; listens on 127.0.3.17.
set -euo pipefail
cd "$(dirname "$0")/.."
GLBD=build-release/glbd BOUND=bench/memory-bound RECORD=0 HOSTS=1000
while (($#)); do
  case $1 in
    --glbd) GLBD=$2; shift ;;
    --bound) BOUND=$2; shift ;;
    --record) RECORD=1 ;;
    --hosts) HOSTS=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
export GLIBC_TUNABLES=
source bench/lib.sh
GLBD=$(release_glbd "$GLBD")
work_dir
ADDR=127.0.3.17 PORT=5330 ADMIN=127.0.3.17:9170
tree_ticks() { read -r -a f <<<"$(cut -d')' -f2- "/proc/$1/stat")"; echo $((f[11] + f[12])); }

# start_once DIR: "RSS_KB HWM_KB" of a glbd serving DIR's view, once its start-up work is over.
start_once() {
  local last prev=-1 cur i
  last=$(tail -1 "$1/queries.txt" | cut -d' ' -f1)
  cp "$1/state.json.made" "$1/state/state.json"  # as made (glbd rewrites it in its own format)
  "$GLBD" serve --config "$1/glbd.yaml" 2>>"$WORK/glbd.log" &
  PID=$!
  for ((i = 0; i < 3000; i++)); do  # up to 30 s
    dig +time=1 +tries=1 +short @"$ADDR" -p "$PORT" "$last" A 2>/dev/null | grep -q '^10\.' && break
    sleep 0.01
  done
  ((i < 3000)) || { echo "memory-guard: no answer from glbd in 30 s: $(tail -5 "$WORK/glbd.log")" >&2; exit 1; }
  for ((i = 0; i < 60; i++)); do  # up to 30 s
    cur=$(tree_ticks "$PID")
    ((cur == prev)) && break
    prev=$cur
    sleep 0.5
  done
  echo "$(awk '/VmRSS/{print $2}' "/proc/$PID/status") $(awk '/VmHWM/{print $2}' "/proc/$PID/status")"
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  PID=
}

for v in small:10:3 large:$HOSTS:20; do
  IFS=: read -r name hosts clusters <<<"$v"
  mkdir -p "$WORK/$name/state"
  python3 tests/tools/scale-view.py "$WORK/$name" "$hosts" "$clusters" "$ADDR" "$PORT" "$ADMIN" \
    "$PWD/tests/fixtures/test.mmdb" --config-order
  cp "$WORK/$name/state/state.json" "$WORK/$name/state.json.made"
done
views=() peaks=()
for rep in 1 2 3; do
  read -r small_rss _ <<<"$(start_once "$WORK/small")"
  read -r large_rss large_hwm <<<"$(start_once "$WORK/large")"
  views+=($((large_rss - small_rss))) peaks+=("$large_hwm")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
view=$(median "${views[@]}") peak=$(median "${peaks[@]}")
echo "memory-guard: $GLBD at $HOSTS hosts x 20 clusters: view ${view} KB (${views[*]}), peak ${peak} KB (${peaks[*]})"
if ((RECORD)); then
  printf '# bench/memory-guard.sh: KB at %s hosts x 20 clusters (median of 3), recorded %s from %s\nview_kb %s\npeak_kb %s\n' \
    "$HOSTS" "$(date -u +%Y-%m-%d)" "$GLBD" "$view" "$peak" > "$BOUND"
  echo "memory-guard: recorded in $BOUND"
  exit 0
fi
bound_view=$(awk '$1 == "view_kb" {print $2}' "$BOUND") bound_peak=$(awk '$1 == "peak_kb" {print $2}' "$BOUND")
[[ -n $bound_view && -n $bound_peak ]] || { echo "memory-guard: $BOUND has no view_kb and peak_kb" >&2; exit 1; }
status=0
for f in view:"$view":"$bound_view" peak:"$peak":"$bound_peak"; do
  IFS=: read -r what got bound <<<"$f"
  ratio=$(awk -v a="$got" -v b="$bound" 'BEGIN {printf "%.2f", a / b}')
  if ((got * 100 > bound * 125)); then
    echo "memory-guard: FAIL: $what $got KB is ${ratio}x the bound $bound KB in $BOUND (at most 1.25x)"
    status=1
  else
    echo "memory-guard: $what $got KB is ${ratio}x the bound $bound KB (at most 1.25x)"
  fi
done
exit "$status"
