# Shared helpers for system tests: start the real glbd on a loopback address, query it with dig/kdig,
# wait for events with a deadline. Each test script uses its own addresses and ports.
set -euo pipefail

: "${GLBD:?GLBD must point to the glbd binary}"
: "${DNSCLIENT:=}"
: "${FIXTURES:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures" && pwd)}"
WORK=$(mktemp -d -t glbd-sys.XXXXXX)
declare -a PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$WORK"/*.log; do [[ -e $f ]] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }; done
    exit 1
}
pass() { echo "ok: $*"; }

# start_glbd NAME CONFIG -> sets PID_<NAME>; logs to $WORK/NAME.log
start_glbd() {
    local name=$1 config=$2
    "$GLBD" serve --config "$config" >"$WORK/$name.log" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    printf -v "PID_$name" '%s' "$pid"
}

# wait_for DEADLINE_SECONDS COMMAND...: polls every 50 ms until COMMAND succeeds.
wait_for() {
    local deadline=$1; shift
    local end=$(( $(date +%s%N) + deadline * 1000000000 ))
    while (( $(date +%s%N) < end )); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    return 1
}

# q ADDR PORT ARGS... : dig with short timeouts, no retries, no recursion wanted
q() {
    local addr=$1 port=$2; shift 2
    dig @"$addr" -p "$port" +norec +time=2 +tries=1 "$@"
}
# answers ADDR PORT NAME TYPE [dig args]: the rdata of the answer, one per line, sorted
answers() {
    local addr=$1 port=$2 name=$3 type=$4; shift 4
    q "$addr" "$port" "$name" "$type" +short "$@" | sort
}
status_of() {  # the rcode word of a response
    q "$@" | sed -n 's/.*status: \([A-Z]*\).*/\1/p'
}
# CMD | contains PATTERN: reads all of its input (grep -q would leave the writer to die of SIGPIPE
# under pipefail) and succeeds when a line matches.
contains() {
    local all
    all=$(cat)
    grep -q -- "$1" <<<"$all"
}

# now_ms: wall clock in milliseconds
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start_target NAME ADDR:PORT: an HTTP health target (tests/tools/targets.py); sets PID_<NAME>
start_target() {
    python3 "$(dirname "${BASH_SOURCE[0]}")/../tools/targets.py" --http "$2" --ready "$WORK/$1.ready" >"$WORK/$1.target" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    printf -v "PID_$1" '%s' "$pid"
    wait_for 10 test -e "$WORK/$1.ready" || fail "target $1 did not start"
    rm -f "$WORK/$1.ready"
}

# A TSIG key for this test run
TSIG_SECRET=$(head -c 32 /dev/urandom | base64)
