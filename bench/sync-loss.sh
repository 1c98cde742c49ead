#!/usr/bin/env bash
# Peers over lossy links (issue "Peers over lossy links"): N glbd servers, each its own cluster with one
# endpoint for the shared simple host app.loss.test, all members of each other, in a network namespace of
# their own where iptables' statistic match drops a random share of the packets between any two of them
# (both directions, TCP and UDP); clients' queries (from 127.0.0.1) and the admin API (127.0.41.x) are
# untouched. Per loss rate, after a convergence without loss:
#   - false deaths: "is dead" lines any server logs about another while all are up, over DURATION seconds;
#   - changes: every 5 s one server drains its own endpoint by an override (then hands it back, 5 s later),
#     timed until every server answers accordingly (20 s at most, else "missed");
#   - a real death: the last server killed (SIGKILL), timed until every other server has dropped its endpoint
#     (deadAfter + 30 s at most).
# Root (it makes the namespace: unshare -n); everything else is loopback inside it.
#   bash bench/sync-loss.sh [--servers "4 20"] [--loss "0 5 10 25 40"] [--duration 40] [--interval 1s]
#                           [--dead 10s] [--glbd build-release/glbd]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${GLBD_LOSS_NETNS:-} ]]; then
  [[ $(id -u) == 0 ]] || { echo "sync-loss.sh needs root (a network namespace and iptables)" >&2; exit 1; }
  exec env GLBD_LOSS_NETNS=1 unshare -n bash "$0" "$@"
fi
SERVERS="4 20" LOSS="0 5 10 25 40" DURATION=40 INTERVAL=1s DEAD=10s GLBD=build-release/glbd PORT=5400
while (($#)); do
  case $1 in
    --servers) SERVERS=$2; shift ;;
    --loss) LOSS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --interval) INTERVAL=$2; shift ;;
    --dead) DEAD=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
source bench/lib.sh
GLBD=$(release_glbd "$GLBD")
ip link set lo up
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n ${KEEP:-} ]] && echo "kept $WORK" >&2 || rm -rf "$WORK"
}
trap cleanup EXIT
SECRET=$(head -c 32 /dev/urandom | base64)
ms() { echo $(( $(date +%s%N) / 1000000 )); }
seconds() { awk -v d="$1" 'BEGIN { n = d + 0; print (d ~ /ms$/) ? n / 1000 : n }'; }
DEAD_MS=$(awk -v s="$(seconds "$DEAD")" 'BEGIN { printf "%d", s * 1000 }')

config() {  # N I
  local n=$1 i=$2 m
  echo "cluster: {id: c$i, instance: c$i-0}"
  echo "listen: {dns: [\"127.0.40.$i:$PORT\"]}"
  echo "threads: 1"
  echo "log: {level: info}"
  echo "admin: {listen: \"127.0.41.$i:$PORT\"}"
  echo "zones: [{origin: loss.test, nameservers: [{name: ns.loss.test, addresses: [127.0.40.1]}]}]"
  echo "hosts: [{name: app.loss.test, endpoints: [100.64.$i.1]}]"
  echo "peers:"
  echo "  key: {name: loss, secret: \"$SECRET\"}"
  echo "  members:"
  for ((m = 1; m <= n; m++)); do echo "    - address: \"127.0.40.$m:$PORT\""; done
  echo "  syncInterval: $INTERVAL"
  echo "  deadAfter: $DEAD"
}

# app_wait N WANT LIMIT_MS [--absent]: start_wait (bench/lib.sh) for app.loss.test over the servers, asked from
# 127.0.0.1; the ms in RESULT after end_wait, or fails.
app_wait() { start_wait "$1" app.loss.test "$2" "$3" --prefix 127.0.40. --source 127.0.0.1 "${@:4}"; }
override() {  # SERVER TARGET STATE
  curl -sf -o /dev/null -X PUT -d "{\"target\":\"$2\",\"state\":\"$3\"}" "http://127.0.41.$1:$PORT/v1/overrides"
}
deaths() { cat "$WORK"/c*.log | grep -c " is dead" || true; }

loss_rule() {  # -A|-D PERCENT
  iptables "$1" OUTPUT -s 127.0.40.0/24 -d 127.0.40.0/24 -m statistic --mode random \
    --probability "$(awk -v p="$2" 'BEGIN { printf "%.2f", p / 100 }')" -j DROP
}

echo "## Peers over lossy links ($(date -u +%Y-%m-%dT%H:%MZ)): syncInterval $INTERVAL, deadAfter $DEAD, ${DURATION} s a run"
echo
echo "| servers | loss | false deaths | first after | changes reached all: median | max | missed | a real death dropped by all after |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SERVERS; do
  for loss in $LOSS; do
    PIDS=()
    rm -f "$WORK"/c*.log
    for ((i = 1; i <= n; i++)); do config "$n" "$i" > "$WORK/c$i.yaml"; done
    app_wait "$n" "$n" 60000
    t0=$(ms)
    for ((i = 1; i <= n; i++)); do "$GLBD" serve -c "$WORK/c$i.yaml" 2>"$WORK/c$i.log" & PIDS+=($!); done
    go "$t0"
    end_wait || { echo "no convergence of $n servers without loss" >&2; exit 1; }
    sleep 1
    ((loss > 0)) && loss_rule -A "$loss"
    start=$(ms) first_death= times=() missed=0 k=0
    while (( $(ms) - start < DURATION * 1000 )); do
      k=$(( k % n + 1 ))
      for state in down auto; do
        if [[ $state == down ]]; then app_wait "$n" "100.64.$k.1" 20000 --absent; else app_wait "$n" "100.64.$k.1" 20000; fi
        t0=$(ms)
        override "$k" "c$k/100.64.$k.1" "$state" || true
        go "$t0"
        if end_wait; then times+=("$RESULT"); else missed=$((missed + 1)); fi
        if [[ -z $first_death ]] && (( $(deaths) > 0 )); then first_death=$(( ($(ms) - start) / 1000 )); fi
        rest=$(( 5000 - ($(ms) - t0) ))
        ((rest > 0)) && sleep "$(awk -v r="$rest" 'BEGIN { print r / 1000 }')"
      done
    done
    false_deaths=$(deaths)
    # A real death: the last server killed; every other one must drop its endpoint.
    app_wait $((n - 1)) "100.64.$n.1" $((DEAD_MS + 30000)) --absent
    t0=$(ms)
    kill -9 "${PIDS[$((n - 1))]}"
    { wait "${PIDS[$((n - 1))]}"; } 2>/dev/null || true
    go "$t0"
    end_wait && death=$RESULT || death="not within deadAfter + 30 s"
    ((loss > 0)) && loss_rule -D "$loss"
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    med=$(printf '%s\n' "${times[@]:-}" | grep . | sort -n | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] " ms" : "-"}')
    max=$(printf '%s\n' "${times[@]:-}" | grep . | sort -n | tail -1)
    printf '| %d | %d %% | %d | %s | %s | %s | %d of %d | %s |\n' "$n" "$loss" "$false_deaths" \
      "${first_death:+${first_death} s}" "$med" "${max:+$max ms}" "$missed" $(( ${#times[@]} + missed )) \
      "$([[ $death =~ ^[0-9]+$ ]] && echo "$death ms" || echo "$death")"
    [[ -n ${KEEP:-} ]] && mkdir -p "$WORK/logs-$n-$loss" && cp "$WORK"/c*.log "$WORK/logs-$n-$loss/"
  done
done
