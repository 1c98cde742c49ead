#!/usr/bin/env bash
# Style checks over every C++ file in git: `format` fails when clang-format (the root's .clang-format) would
# change one or one is over 600 lines; `tidy BUILD` runs clang-tidy (the root's .clang-tidy) on every project source in BUILD's
# compile_commands.json and fails on any finding. Both use Debian 12's clang 14 tools.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-format}
case "$what" in
  format)
    mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
    if ! out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
      printf '%s\n' "$out" | grep -E '^[^ ].*: (error|warning):' | sed 's/: error: code should be clang-formatted.*//' | sort -u | head -40
      echo "style: files above are not formatted: run clang-format -i on them" >&2
      exit 1
    fi
    echo "style: ${#files[@]} files formatted"
    # No file over 600 lines (a reader holds one idea at a time).
    long=$(wc -l "${files[@]}" | awk '$2 != "total" && $1 > 600 {print $2 " (" $1 " lines)"}')
    if [[ -n "$long" ]]; then
      printf '%s\n' "$long"
      echo "style: the files above are over 600 lines: split them by idea" >&2
      exit 1
    fi
    ;;
  tidy)
    build=${2:?usage: $0 tidy BUILD}
    # The product's sources (not tests): every file of BUILD's compile_commands.json under these folders.
    out=$(run-clang-tidy -p "$build" -j "$(nproc)" -quiet -extra-arg=-Wno-unknown-warning-option \
      "$(pwd)/(conf|geo|resolver|server|sync)/" 2>&1 | sed 's/\x1b\[[0-9;]*m//g') || true
    findings=$(printf '%s\n' "$out" | grep -E ': (warning|error): ' | sort -u || true)
    if [[ -n "$findings" ]]; then
      printf '%s\n' "$findings"
      echo "style: clang-tidy: $(printf '%s\n' "$findings" | wc -l) finding(s) (.clang-tidy)" >&2
      exit 1
    fi
    echo "style: clang-tidy: no findings"
    ;;
  *)
    echo "usage: $0 format | tidy BUILD" >&2
    exit 2
    ;;
esac
