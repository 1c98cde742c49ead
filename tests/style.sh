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
    # The protocol's numbers live in the wire layer (resolver/wire/consts.hpp) and a message's header is read and
    # written through resolver/wire/query.hpp: outside it no header field by offset, no header flag mask, no
    # type number named again, no bare protocol number written into a message.
    mapfile -t product < <(git ls-files '*.cpp' '*.hpp' | grep -vE '^(resolver/wire/|tests/|bench/)')
    wire_rule='get16\(\w+(\.data\(\))? \+ (2|4|6|8|10)\)'         # a header field by its offset
    wire_rule+='|\b(msg|m|buf|header)\[([2-9]|1[01])\] *[|&]?=[^=]'  # a header byte written by hand
    wire_rule+='|0x(8000|0400|0200|0100|0080|7800)\b|& 0xf\b'         # header flag and rcode masks
    wire_rule+='|uint16_t k\w*(Type|Dnskey|Ds|Rrsig|Nsec|Opt|Tsig|Soa|Cname|Txt)\w* = [0-9]+'  # a type named again
    wire_rule+='|\.u(8|16)\(([2-9]|[1-9][0-9]+)\)'                     # a bare number written into a message
    if leaks=$(grep -nE "$wire_rule" "${product[@]}"); then
      printf '%s\n' "$leaks"
      echo "style: protocol numbers outside the wire layer: name them in resolver/wire/consts.hpp (headers: query.hpp)" >&2
      exit 1
    fi
    # Descriptors and libuv handles have owners (resolver/base/fd.hpp, uv_handle.hpp): nothing closes or frees
    # one by hand.
    if raw=$(grep -nE '(^|[^A-Za-z0-9_>])::close\(|new uv_[a-z]+_t\b|delete [a-z]+;' "${product[@]}" | grep -v '^resolver/base/fd.hpp:'); then
      printf '%s\n' "$raw"
      echo "style: a descriptor or handle closed or freed by hand: hold it in an Fd, a UvHandle or a unique_ptr" >&2
      exit 1
    fi
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
    # A gate that cannot pass by accident: no tool, no compile database or no file to check is a failure.
    for tool in run-clang-tidy clang-tidy; do
      command -v "$tool" >/dev/null || { echo "style: clang-tidy: $tool is not installed (.ci/deps installs it)" >&2; exit 1; }
    done
    [[ -s $build/compile_commands.json ]] || { echo "style: clang-tidy: no $build/compile_commands.json (build first)" >&2; exit 1; }
    # The product's sources (not tests): every file of BUILD's compile_commands.json under these folders.
    scope="$(pwd)/(conf|geo|resolver|server|sync)/"
    files=$(grep -cE "\"file\": \"$scope" "$build/compile_commands.json" || true)
    (( files > 0 )) || { echo "style: clang-tidy: no product source in $build/compile_commands.json" >&2; exit 1; }
    rc=0
    out=$(run-clang-tidy -p "$build" -j "$(nproc)" -quiet -extra-arg=-Wno-unknown-warning-option "$scope" 2>&1 |
      sed 's/\x1b\[[0-9;]*m//g') || rc=$?
    findings=$(printf '%s\n' "$out" | grep -E ': (warning|error): ' | sort -u || true)
    if [[ -n "$findings" ]]; then
      printf '%s\n' "$findings"
      echo "style: clang-tidy: $(printf '%s\n' "$findings" | wc -l) finding(s) (.clang-tidy)" >&2
      exit 1
    fi
    if (( rc != 0 )); then  # it failed without a finding to show: it did not run as it should
      printf '%s\n' "$out" | tail -20
      echo "style: clang-tidy: run-clang-tidy exited $rc" >&2
      exit 1
    fi
    echo "style: clang-tidy: no findings in $files files"
    ;;
  *)
    echo "usage: $0 format | tidy BUILD" >&2
    exit 2
    ;;
esac
