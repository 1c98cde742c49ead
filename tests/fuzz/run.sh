#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS (default 60) from a
# copy of its committed corpus. A crash is written to tests/fuzz/crashes/TARGET/ (commit it: the replay
# tests run it from then on) and fails this script.
#   bash tests/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-60}; shift || true
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(resolver config sync admin)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGLBD_FUZZ=ON -DGLBD_WERROR=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target $(printf 'fuzz_%s ' "${TARGETS[@]}") >/dev/null
status=0
for t in "${TARGETS[@]}"; do
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpus/$t/." "$work/"
  mkdir -p "tests/fuzz/crashes/$t"
  log=$(mktemp)
  if ASAN_OPTIONS=detect_leaks=0 "build-fuzz/tests/fuzz_$t" "$work" -max_total_time="$SECONDS_EACH" \
       -artifact_prefix="tests/fuzz/crashes/$t/" -print_final_stats=1 >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$t: ${execs:-?} executions in ${SECONDS_EACH}s, no finding"
  else
    echo "fuzz_$t: FINDING (see tests/fuzz/crashes/$t/)"; tail -n 40 "$log"; status=1
  fi
  rm -rf "$work" "$log"
done
exit $status
