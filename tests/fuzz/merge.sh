#!/usr/bin/env bash
# Merges into the committed corpus (tests/fuzz/corpus/TARGET) the inputs that fuzzing on this machine has
# found (BUILD/corpus/TARGET, BUILD as for run.sh) and that add coverage; libFuzzer's -merge=1 picks them.
# Commit the result.
#   bash tests/fuzz/merge.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${GLBD_FUZZ_BUILD:-build-fuzz}
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(resolver config sync admin statedir kube dnstap)
for t in "${TARGETS[@]}"; do
  [[ -x $BUILD/tests/fuzz_$t ]] || { echo "$BUILD/tests/fuzz_$t: run tests/fuzz/run.sh first"; exit 1; }
  [[ -d $BUILD/corpus/$t ]] || continue
  before=$(ls "tests/fuzz/corpus/$t" | wc -l)
  ASAN_OPTIONS=detect_leaks=0 "$BUILD/tests/fuzz_$t" -merge=1 "tests/fuzz/corpus/$t" "$BUILD/corpus/$t" >/dev/null 2>&1
  echo "fuzz_$t: corpus $before -> $(ls "tests/fuzz/corpus/$t" | wc -l) inputs"
done
