#!/usr/bin/env bash
# The system tests run in parallel (ctest -j): no two of them may use the same loopback address, or one
# could answer in the other's place. Lists each 127.0.0.x that more than one test file names.
source "$(dirname "$0")/lib.sh"
dir=$(dirname "$0")
shared=$(for f in "$dir"/*.sh; do
    [[ $(basename "$f") == lib.sh ]] && continue
    grep -ho '127\.0\.0\.[0-9]\{1,3\}\b' "$f" | grep -vx '127.0.0.1' | sort -u | sed "s|$| $(basename "$f")|"
done | sort | awk '{n[$1]++; files[$1] = files[$1] " " $2} END {for (a in n) if (n[a] > 1) print a ":" files[a]}')
[[ -z $shared ]] || fail "addresses used by more than one system test: $shared"
pass "every system test has its own 127.0.0.x addresses"
