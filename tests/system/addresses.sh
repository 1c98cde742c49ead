#!/usr/bin/env bash
# The system tests run in parallel (ctest -j): no two of them may use the same loopback address, or one
# could answer in the other's place. Lists each 127.0.0.x that more than one test file names, unless those
# tests hold one RESOURCE_LOCK in tests/CMakeLists.txt (ctest never runs them together): demo and docs
# both run `glbd demo` on its fixed addresses.
source "$(dirname "$0")/lib.sh"
dir=$(dirname "$0")
shared=$(for f in "$dir"/*.sh; do
    [[ $(basename "$f") == lib.sh ]] && continue
    # A network ("127.0.0.0/8", a resolver's allowed clients) is no listener: an address before "/" is not one.
    grep -hoP '127\.0\.0\.\d{1,3}\b(?!/)' "$f" | grep -vx '127.0.0.1' | sort -u | sed "s|$| $(basename "$f")|"
done | sort | awk '{n[$1]++; files[$1] = files[$1] " " $2} END {for (a in n) if (n[a] > 1) print a ":" files[a]}')
# "demo.sh docs.sh" for each lock of system tests.
locked=$(sed -n 's/^set_tests_properties(\(system\.[^)]*\) PROPERTIES RESOURCE_LOCK .*/\1/p' "$dir/../CMakeLists.txt" |
    sed 's/system\.\([a-z0-9]*\)/\1.sh/g')
shared=$(while read -r line; do
    [[ -n $line ]] || continue
    files=${line#*: }
    ok=0
    while read -r group; do
        [[ -n $group ]] || continue
        all=1
        for f in $files; do [[ " $group " == *" $f "* ]] || all=0; done
        (( all )) && ok=1
    done <<<"$locked"
    (( ok )) || echo "$line"
done <<<"$shared")
[[ -z $shared ]] || fail "addresses used by more than one system test: $shared"
pass "every system test has its own 127.0.0.x addresses"
