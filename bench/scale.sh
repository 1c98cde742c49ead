#!/usr/bin/env bash
# Scale: a global view of H hosts x C clusters. This cluster's entries come from its config; the other
# C-1 clusters' from a stateDir state file, as a restarted glbd loads its last-known view. Reports the
# time from start to the first answer, the snapshot build time (glbd_snapshot_build_seconds), resident
# memory (and how much of it is on transparent huge pages), and dnsperf over load-balanced hosts spread
# across the whole view (with ECS: a weighted draw between two IE clusters, never from the answer cache;
# without: the source address, the default group's one cluster), beside a 10-host x 3-cluster view with
# the same groups for those queries, measured in the same run (glbd-only workloads).
# Then the two-node sync: a node started empty learns the large view from it (SYNC_ONLY=1: only that).
# With PROBES=1 (root: it needs a network namespace), last, the cost of probing 10,000 endpoints (HTTP
# every 5 s) and its effect on DNS latency, from bench/health-load.sh.
#   bash bench/scale.sh [--hosts 10000] [--clusters 20] [--duration 10] [--repeat 3] [--glbd PATH] [--dnssec]
#                       [--baseline PATH]
# --baseline PATH: glbd and the binary at PATH (an earlier build) side by side instead, started in turn --repeat
# times each on the large view: first answer, snapshot build, RSS, peak RSS, and the two-node sync (each binary
# as both nodes); the median of each with the ratio new / baseline. Nothing else is measured then.
# --dnssec: one more view, "signed", the large one with its zone signed (a CSK, ECDSA P-256): every host's
# answer sets are signed when a snapshot is built, so its start, build, memory and flips show what that costs;
# every dnsperf query then sets DO (the unsigned views answer them unsigned).
# Needs dnsperf, dig and python3; everything listens on 127.0.3.1. glbd starts on both CPUs, as a restart on a
# 2-core machine has them (START_CPUS=1: on one), and once it answers all its threads are pinned to CPU 1,
# dnsperf to CPU 0 (GLBD_CPUS=0,1 lets the measured glbd keep both: its full builds then share hosts among two
# threads).
# glbd runs with the environment the systemd unit and the image give it (malloc's heap on transparent huge
# pages); GLIBC_TUNABLES= bash bench/scale.sh measures without.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=10000 CLUSTERS=20 DURATION=10 REPEAT=3 GLBD=build-release/glbd DNSSEC=0 BASELINE=
while (($#)); do
  case $1 in
    --hosts) HOSTS=$2; shift ;;
    --clusters) CLUSTERS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --glbd) GLBD=$2; shift ;;
    --dnssec) DNSSEC=1 ;;
    --baseline) BASELINE=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
export GLIBC_TUNABLES=${GLIBC_TUNABLES-glibc.malloc.hugetlb=1}
source bench/lib.sh
GLBD=$(release_glbd "$GLBD")
[[ -z $BASELINE ]] || BASELINE=$(realpath "$BASELINE")
work_dir
[[ -n ${KEEP:-} ]] && trap "[[ -n \$PID ]] && kill \$PID; echo kept $WORK" EXIT
ADDR=127.0.3.1 PORT=5320 ADMIN=127.0.3.1:9160
HZ=$(getconf CLK_TCK)
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# make_view DIR HOSTS CLUSTERS: glbd.yaml (cluster c00, geo US, the default) and state/state.json.
make_view() {
  mkdir -p "$1/state"
  python3 tests/tools/scale-view.py "$1" "$2" "$3" "$ADDR" "$PORT" "$ADMIN" "$PWD/tests/fixtures/test.mmdb"
}

tree_ticks() { read -r -a f <<<"$(cut -d')' -f2- "/proc/$1/stat")"; echo "${f[11]} ${f[12]}"; }

# start_view NAME DIR: start glbd (PID), wait for the first answer and for start-up work to finish (CPU idle for
# a second); appends "NAME start_ms MS build_ms MS rss_kb KB hwm_kb KB thp_kb KB" to $WORK/starts.
start_view() {
  local name=$1 d=$2 t0 t1 last u0 s0
  last=$(tail -1 "$d/queries.txt" | cut -d' ' -f1)
  # One process asks every 5 ms from before the start (bench/fleet-wait.py; ADDR is its server 1): a dig every
  # 10 ms took 13 ms of CPU each, a third of a core that the start it timed waited for.
  start_wait 1 "$last" any 60000 --prefix "${ADDR%.*}."
  t0=$(ms)
  go "$t0"
  taskset -c "${START_CPUS:-0,1}" "$GLBD" serve --config "$d/glbd.yaml" 2>>"$WORK/$name.log" &
  PID=$!
  end_wait || { echo "$name: no answer within 60 s" >&2; return 1; }
  t1=$((t0 + RESULT))
  taskset -a -p -c "${GLBD_CPUS:-1}" "$PID" > /dev/null  # every thread, before anything else is measured
  # Let start-up work finish (the first stateDir write runs on the sync thread): CPU idle for a second.
  local prev=-1 cur
  for ((i = 0; i < 120; i++)); do
    read -r u0 s0 <<<"$(tree_ticks "$PID")"; cur=$((u0 + s0))
    ((cur == prev)) && break
    prev=$cur; sleep 1
  done
  echo "$name start_ms $((t1 - t0)) build_ms $(curl -s "http://$ADMIN/metrics" | awk '/^glbd_snapshot_build_seconds /{printf "%.0f", $2 * 1000}') rss_kb $(awk '/VmRSS/{print $2}' "/proc/$PID/status") hwm_kb $(awk '/VmHWM/{print $2}' "/proc/$PID/status") thp_kb $(awk '/AnonHugePages/{print $2}' "/proc/$PID/smaps_rollup")" >> "$WORK/starts"
}

# measure NAME DIR: start glbd, time to the first answer, memory, then dnsperf runs.
measure() {
  local name=$1 d=$2 t0 t1 last w rep u0 s0 u1 s1 out
  last=$(tail -1 "$d/queries.txt" | cut -d' ' -f1)
  start_view "$name" "$d"
  local start build rss hwm thp
  read -r _ _ start _ build _ rss _ hwm _ thp <<<"$(tail -1 "$WORK/starts")"
  # One scrape of /metrics as Prometheus would make it: its size, series and time (curl's, from connect to
  # the last byte: the server's part, not the client's start-up).
  local scrape_bytes scrape_series scrape_ms summary_ms page_ms summary_bytes mid
  took() { curl -s -o "$1" -w '%{time_total}' "$2" | awk '{printf "%.1f", $1 * 1000}'; }
  scrape_ms=$(took "$WORK/$name.metrics" "http://$ADMIN/metrics")
  scrape_bytes=$(wc -c < "$WORK/$name.metrics")
  scrape_series=$(grep -vc '^#' "$WORK/$name.metrics" || true)
  # The operator view in parts: the summary, and a page of 100 hosts from the middle of the names.
  summary_ms=$(took "$WORK/$name.summary" "http://$ADMIN/v1/summary")
  summary_bytes=$(wc -c < "$WORK/$name.summary")
  mid=$(sed -n "$(( $(wc -l < "$d/queries.txt") / 2 ))p" "$d/queries.txt" | cut -d' ' -f1)
  page_ms=$(took "$WORK/$name.page" "http://$ADMIN/v1/hosts?limit=100&cursor=${mid%.}")
  grep -q '"next"' "$WORK/$name.page" || echo "scale: no host page from /v1/hosts" >&2
  # The whole view, streamed: its size and time, and a summary's latency while it streams.
  local state_ms state_bytes during_ms
  curl -s -o "$WORK/$name.state" -w '%{time_total}\n' "http://$ADMIN/v1/state" > "$WORK/$name.state_ms" &
  sleep 0.05
  during_ms=$(took /dev/null "http://$ADMIN/v1/summary")
  wait $!
  state_ms=$(awk '{printf "%.0f", $1 * 1000}' "$WORK/$name.state_ms")
  state_bytes=$(wc -c < "$WORK/$name.state")
  echo "$name start_ms $start build_ms ${build:-?} rss_kb $rss hwm_kb $hwm thp_kb $thp scrape_bytes $scrape_bytes scrape_series $scrape_series scrape_ms $scrape_ms summary_bytes $summary_bytes summary_ms $summary_ms page_ms $page_ms state_bytes $state_bytes state_ms $state_ms during_ms $during_ms" >> "$WORK/facts"
  for ((rep = 1; rep <= REPEAT; rep++)); do
    for w in ecs src; do
      local opts=()
      [[ $w == ecs ]] && opts=(-E 8:000110000a01)  # 10.1.0.0/16, geo IE in the test MMDB
      ((DNSSEC)) && opts+=(-D)
      out="$WORK/dnsperf-$name-$w-$rep.txt"
      read -r u0 s0 <<<"$(tree_ticks "$PID")"
      taskset -c 0 dnsperf -s "$ADDR" -p "$PORT" -d "$d/queries.txt" -l "$DURATION" -c 8 -q 100 "${opts[@]}" > "$out" 2>&1 || true
      read -r u1 s1 <<<"$(tree_ticks "$PID")"
      awk -v n="$name" -v w="$w" -v hz="$HZ" -v du=$((u1 - u0)) -v ds=$((s1 - s0)) '
        /Queries completed:/ {done = $3} /Queries lost:/ {lost = $3} /Queries per second:/ {qps = $4}
        /Response codes:/ {rc = $0; sub(/^.*Response codes:[ \t]*/, "", rc)}
        END {printf "%s %s %.0f %s %.3f %.3f %s\n", n, w, qps, lost, 1e6 * du / hz / done, 1e6 * (du + ds) / hz / done, rc}' \
        "$out" >> "$WORK/runs"
    done
  done
  # Flips: the default cluster (c00, the only entry of the default group that answers a client without ECS)
  # drained by an override, then handed back (every host changes: a full rebuild); then one endpoint of
  # the measured host's c00 entry (one host changes). Each: the time from the request until the server's
  # answer moves (dig polling, about 10 ms of resolution), and the override request's own latency (it
  # returns once the new snapshot is published). An override rebuilds at once; a probe's flip waits for
  # the rebuild timer too (none when the last rebuild is more than 250 ms ago).
  # The endpoint flip drains both of the host's c00 endpoints (a usable entry with no IPv4 endpoint up would
  # still answer A from its group, fail-open): the IPv6 one first, untimed, then the timed IPv4 one.
  local h=${last#h}; h=${h%%.*}
  local v4="c00/10.0.$((h / 250)).$((h % 250 + 1))" v6
  v6="c00/2001:db8:0::$(printf %x $((h + 1)))"
  for target in c00 "$v4"; do
    local flips="" puts="" sets=""
    for state in down auto; do
      [[ $target == "$v4" && $state == down ]] && curl -s -o /dev/null -X PUT -d "{\"target\":\"$v6\",\"state\":\"down\"}" "http://$ADMIN/v1/overrides"
      t0=$(ms)
      # (A request whose rebuild outlasts the admin API's 10 s ends without a reply: its time is still shown.)
      puts+=" $(curl -s -o /dev/null -w '%{time_total}' -X PUT -d "{\"target\":\"$target\",\"state\":\"$state\"}" "http://$ADMIN/v1/overrides" || true)"
      for ((i = 0; i < 3000; i++)); do
        local a
        a=$(dig +time=1 +tries=1 +short @"$ADDR" -p "$PORT" "$last" A 2>/dev/null | sed -n 1p)
        if [[ $state == down && -n $a && $a != 10.0.* ]] || [[ $state == auto && $a == 10.0.* ]]; then break; fi
        sleep 0.002
      done
      flips+=" $(( $(ms) - t0 ))"
      # The rebuild's RRsets in the signed zone: signed anew / kept with their signatures (0/0 unsigned).
      sets+=" $(curl -s "http://$ADMIN/metrics" | awk '/^glbd_snapshot_signed_sets\{result="made"\}/ {m = $2}
        /^glbd_snapshot_signed_sets\{result="kept"\}/ {k = $2} END {printf "%d/%d", m, k}')"
      [[ $target == "$v4" && $state == auto ]] && curl -s -o /dev/null -X PUT -d "{\"target\":\"$v6\",\"state\":\"auto\"}" "http://$ADMIN/v1/overrides"
    done
    echo "$name ${target%%/*}$([[ $target == */* ]] && echo /endpoint) $flips $puts $sets" >> "$WORK/flips"
  done
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
}

# sync_measure DIR: the large view's server (a) and a node started empty beside it (b: its own cluster, a as
# its only peer). The time from b's start until b has every origin and answers the last host; b's memory
# (its peak holds the transfer being read); a's memory before and its peak after serving; the CPU each used.
sync_measure() {
  local d=$1 name=${2:-sync} t0 t1 last b_pid origins
  last=$(tail -1 "$d/queries.txt" | cut -d' ' -f1)
  taskset -c 1 "$GLBD" serve --config "$d/glbd.yaml" 2>>"$WORK/sync-a.log" &
  PID=$!
  for ((i = 0; i < 6000; i++)); do
    dig +time=1 +tries=1 +short @"$ADDR" -p "$PORT" "$last" A 2>/dev/null | grep -q '^10\.' && break
    sleep 0.01
  done
  local prev=-1 cur u0 s0
  for ((i = 0; i < 120; i++)); do
    read -r u0 s0 <<<"$(tree_ticks "$PID")"; cur=$((u0 + s0))
    ((cur == prev)) && break
    prev=$cur; sleep 1
  done
  local a_rss a_hwm0 a_hwm a_ticks0 a_ticks1 b_ticks
  a_rss=$(awk '/VmRSS/{print $2}' "/proc/$PID/status")
  a_hwm0=$(awk '/VmHWM/{print $2}' "/proc/$PID/status")
  a_ticks0=$cur
  sed -e 's/^cluster: .*/cluster: {id: fresh, instance: bench}/' -e "s/$ADDR/127.0.3.2/g" \
      -e "s|  members: \[\]|  members: [{address: \"$ADDR:$PORT\"}]\n  syncInterval: 1s|" -e '/^stateDir:/d' \
      -e '/^hosts:/,$d' "$d/glbd.yaml" > "$WORK/fresh.yaml"
  echo "hosts: [{name: fresh.glb.example.test, endpoints: [192.0.2.1]}]" >> "$WORK/fresh.yaml"
  # Until b answers the last host and its metrics list every origin: one poller from before b's start, every
  # 10 ms (a curl and a dig every 10 ms took a core's third from the start they timed).
  start_wait 1 "$last" any 120000 --prefix 127.0.3. --first 2 --every 10 \
    --heard "http://127.0.3.2:9160/metrics" $((CLUSTERS + 1))
  t0=$(ms)
  go "$t0"
  taskset -c 0 "$GLBD" serve --config "$WORK/fresh.yaml" 2>>"$WORK/sync-b.log" &
  b_pid=$!
  if end_wait; then t1=$((t0 + RESULT)); else echo "b: the view not learnt within 120 s" >&2; t1=$(ms); fi
  origins=$(curl -s "http://127.0.3.2:9160/metrics" | grep -c '^glbd_sync_last_heard_seconds{' || true)
  sleep 1
  read -r u0 s0 <<<"$(tree_ticks "$PID")"; a_ticks1=$((u0 + s0))
  read -r u0 s0 <<<"$(tree_ticks "$b_pid")"; b_ticks=$((u0 + s0))
  a_hwm=$(awk '/VmHWM/{print $2}' "/proc/$PID/status")
  echo "$name learnt_ms $((t1 - t0)) origins $origins b_rss_kb $(awk '/VmRSS/{print $2}' "/proc/$b_pid/status") b_hwm_kb $(awk '/VmHWM/{print $2}' "/proc/$b_pid/status") a_rss_kb $a_rss a_hwm_before_kb $a_hwm0 a_hwm_after_kb $a_hwm a_cpu_ms $(( (a_ticks1 - a_ticks0) * 1000 / HZ )) b_cpu_ms $(( b_ticks * 1000 / HZ ))" >> "$WORK/syncfacts"
  grep -E "cut off|oversized" "$WORK/sync-b.log" >&2 || true
  kill "$b_pid" "$PID"; wait "$b_pid" "$PID" 2>/dev/null || true; PID=
}

make_view "$WORK/small" 10 3
make_view "$WORK/large" "$HOSTS" "$CLUSTERS"
echo "state file: $(du -h "$WORK/large/state/state.json" | cut -f1), config: $(du -h "$WORK/large/glbd.yaml" | cut -f1)" >&2
if ((DNSSEC)); then
  make_view "$WORK/signed" "$HOSTS" "$CLUSTERS"
  sign_view "$WORK/signed" "$GLBD"
fi
if [[ -n $BASELINE ]]; then
  NEW=$GLBD
  # Each start reads the view as scale-view.py wrote it (format 2, which both read), not as the last glbd
  # rewrote it (a newer format than an earlier build reads).
  cp "$WORK/large/state/state.json" "$WORK/large.state.json"
  for ((rep = 1; rep <= REPEAT; rep++)); do
    for which in new baseline; do
      if [[ $which == new ]]; then GLBD=$NEW; else GLBD=$BASELINE; fi
      cp "$WORK/large.state.json" "$WORK/large/state/state.json"
      start_view "$which" "$WORK/large"
      kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
      cp "$WORK/large.state.json" "$WORK/large/state/state.json"
      sync_measure "$WORK/large" "$which"
    done
  done
  echo "## glbd beside a baseline ($(date -u +%Y-%m-%dT%H:%MZ)): $HOSTS hosts x $CLUSTERS clusters, median of $REPEAT starts each, in turn"
  echo
  echo "new: $NEW; baseline: $BASELINE"
  echo
  echo "First answer of each start, in turn: $(awk '{printf "%s%s %s ms", (NR > 1 ? ", " : ""), $1, $3}' "$WORK/starts")"
  echo
  echo "| figure | baseline | new | new / baseline |"
  echo "|---|---:|---:|---:|"
  # Each figure's median per binary (the middle of REPEAT, by value).
  cat "$WORK/starts" "$WORK/syncfacts" | awk -v r="$REPEAT" '
    { for (i = 2; i < NF; i += 2) v[$1, $i, ++n[$1, $i]] = $(i + 1) }
    function median(b, f,   k, m, a, j, t) { m = n[b, f]; for (k = 1; k <= m; k++) a[k] = v[b, f, k] + 0
      for (k = 2; k <= m; k++) { t = a[k]; for (j = k - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return a[int((m + 1) / 2)] }
    END {
      split("start_ms:first_answer:ms build_ms:snapshot_build:ms rss_kb:RSS_after_start:MB hwm_kb:peak_RSS:MB learnt_ms:b_learns_the_view:ms b_hwm_kb:b_peak_RSS:MB a_hwm_after_kb:a_peak_after_serving_b:MB", fs, " ")
      for (i = 1; i in fs; i++) {
        split(fs[i], p, ":"); gsub(/_/, " ", p[2])
        if (!n["new", p[1]] || !n["baseline", p[1]]) continue
        b = median("baseline", p[1]); w = median("new", p[1])
        if (p[3] == "MB") printf "| %s | %.1f MB | %.1f MB | %.2f |\n", p[2], b / 1024, w / 1024, b ? w / b : 0
        else printf "| %s | %d ms | %d ms | %.2f |\n", p[2], b, w, b ? w / b : 0
      }
    }'
  exit 0
fi
if [[ -z ${SYNC_ONLY:-} ]]; then
  measure small "$WORK/small"
  measure large "$WORK/large"
  ((DNSSEC)) && measure signed "$WORK/signed"
fi
sync_measure "$WORK/large"

echo "## glbd at scale ($(date -u +%Y-%m-%dT%H:%MZ)): $HOSTS hosts x $CLUSTERS clusters vs 10 x 3"
echo
echo "Two-node sync: a node started empty (b) learns the large view from its one peer (a)."
echo
echo "| b has every origin and answers | origins | b RSS | b peak RSS | a RSS before | a peak before | a peak after | a CPU serving | b CPU |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '{printf "| %d ms | %d | %.1f MB | %.1f MB | %.1f MB | %.1f MB | %.1f MB | %d ms | %d ms |\n", $3, $5, $7 / 1024, $9 / 1024, $11 / 1024, $13 / 1024, $15 / 1024, $17, $19}' "$WORK/syncfacts"
echo
[[ -n ${SYNC_ONLY:-} ]] && exit 0
echo "| view | first answer after start | snapshot build | RSS | peak RSS | on huge pages | /metrics scrape | /v1/summary | 100 hosts | /v1/state (streamed) | a summary meanwhile |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '{printf "| %s | %d ms | %s ms | %.1f MB | %.1f MB | %.1f MB | %.1f KB, %d series, %s ms | %.1f KB, %s ms | %s ms | %.1f MB, %s ms | %s ms |\n", $1, $3, $5, $7 / 1024, $9 / 1024, $11 / 1024, $13 / 1024, $15, $17, $19 / 1024, $21, $23, $25 / 1048576, $27, $29}' "$WORK/facts"
echo
echo "Flips by override: the default cluster drained and handed back (every host changes), then one endpoint"
echo "of the measured host (one host changes): request to changed answer (dig polling), and the request's latency."
echo
echo "Signed sets: the rebuild's RRsets signed anew / kept with the signatures they had (glbd_snapshot_signed_sets)."
echo
echo "| view | drained | answer moved after | request took | signed sets | back: answer moved after | request took | signed sets |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
awk '{printf "| %s | %s | %d ms | %.1f ms | %s | %d ms | %.1f ms | %s |\n", $1, $2, $3, $5 * 1000, $7, $4, $6 * 1000, $8}' "$WORK/flips"
echo
echo "dnsperf -c 8 -q 100 -l $DURATION over 1000 load-balanced names, median of $REPEAT by q/s; ecs = client subnet"
echo "10.1.0.0/16 (IE), src = no ECS (the source address, no geo: the default group)."
echo
echo "| view | workload | q/s | lost | usr us/q | srv us/q | rcodes |"
echo "|---|---|---:|---:|---:|---:|---|"
# The median run (by q/s) of each view and workload.
sort -k1,1 -k2,2 -k3,3n "$WORK/runs" | awk -v r="$REPEAT" '
  { key = $1 " " $2; if (++n[key] == int((r + 1) / 2)) print }' > "$WORK/median"
awk '{ rc = $7; for (i = 8; i <= NF; i++) rc = rc " " $i; printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, rc }' "$WORK/median"
echo
awk '{ usr[$1, $2] = $5; srv[$1, $2] = $6 }
  END { n = split("ecs src", ws, " ")
    for (i = 1; i <= n; i++) if (usr["small", ws[i]] > 0 && srv["small", ws[i]] > 0)
      printf "large / small, %s: usr us/q %.2f, srv us/q %.2f\n", ws[i], usr["large", ws[i]] / usr["small", ws[i]], srv["large", ws[i]] / srv["small", ws[i]]
    for (i = 1; i <= n; i++) if (srv["large", ws[i]] > 0 && srv["signed", ws[i]] > 0)
      printf "signed / large, %s: usr us/q %.2f, srv us/q %.2f\n", ws[i], usr["signed", ws[i]] / usr["large", ws[i]], srv["signed", ws[i]] / srv["large", ws[i]] }' "$WORK/median"
if [[ -n ${PROBES:-} ]]; then
  echo
  echo "Probing 10,000 endpoints (bench/health-load.sh):"
  echo
  bash bench/health-load.sh --endpoints 10000 --interval 5s --duration "$DURATION" --glbd "$GLBD"
fi
