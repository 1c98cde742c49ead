#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS (default 60) from its
# committed corpus plus what earlier runs on this machine found (BUILD/corpus/TARGET). A crash is written to
# tests/fuzz/crashes/TARGET/ (commit it: the replay tests run it from then on) and fails this script. BUILD
# is GLBD_FUZZ_BUILD (default build-fuzz); tests/run-all.sh points it at its ASan+UBSan tree.
#   bash tests/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-60}; shift || true
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then  # every target: tests/fuzz/fuzz_NAME.cpp, as tests/CMakeLists.txt builds them
  for f in tests/fuzz/fuzz_*.cpp; do t=${f#tests/fuzz/fuzz_}; TARGETS+=("${t%.cpp}"); done
fi
BUILD=${GLBD_FUZZ_BUILD:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGLBD_FUZZ=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${TARGETS[@]}") >/dev/null
# One target per core at a time (each is one process on one core); their reports in the targets' order.
fuzz_one() {
  local t=$1 log=$2
  # Inputs the fuzzer finds are kept in BUILD/corpus/TARGET between runs on this machine, beside the
  # committed corpus; tests/fuzz/merge.sh merges those that add coverage into the committed one.
  local grown="$BUILD/corpus/$t"
  mkdir -p "$grown" "tests/fuzz/crashes/$t"
  if ASAN_OPTIONS=detect_leaks=0 "$BUILD/tests/fuzz_$t" "$grown" "tests/fuzz/corpus/$t" -max_total_time="$SECONDS_EACH" \
       -artifact_prefix="tests/fuzz/crashes/$t/" -print_final_stats=1 >"$log" 2>&1; then
    echo ok >>"$log.status"
  else
    echo finding >>"$log.status"
  fi
}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
running=0
for t in "${TARGETS[@]}"; do
  if ((running >= $(nproc))); then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$t" "$logs/$t" &
  running=$((running + 1))
done
wait
status=0
for t in "${TARGETS[@]}"; do
  log="$logs/$t"
  if [[ $(cat "$log.status" 2>/dev/null) == ok ]]; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "$(date +%F) $t ${execs:-0}" >> "$BUILD/executions.log"
    total=$(awk -v t="$t" '$2 == t {n += $3} END {print n + 0}' "$BUILD/executions.log")
    echo "fuzz_$t: ${execs:-?} executions in ${SECONDS_EACH}s, no finding ($total on this machine in all)"
  else
    echo "fuzz_$t: FINDING (see tests/fuzz/crashes/$t/)"; tail -n 40 "$log"; status=1
  fi
done
exit $status
