#!/usr/bin/env bash
# The status page at the size glbd is built for, in a real browser (Debian's chromium, headless): one glbd
# whose view holds 10,000 hosts x 20 clusters (its own from the config file, 19 others from stateDir, as
# after a restart; tests/tools/scale-view.py, as bench/scale.sh makes it). The page must show the count of
# hosts from the summary and one page of 100 hosts with their 20 entries each, and refresh every 2 s.
# Chromium runs the page on virtual time (--virtual-time-budget: its clock jumps while the page is idle, so
# the page cannot time itself), so the real cost is measured from outside: a run of 2 s of page time (the
# first render and a refresh) and one of 12 s (six refreshes more); their difference is the six refreshes'
# real cost (fetch, parse, render), the first run's wall time bounds the first render (with Chromium's own
# start). Bounds: the first run within 15 s, a refresh within 1 s (measured on a 2-core machine in the release
# build: 1.7 s and 0.37 s; the bounds leave room for a busy CI, and hold for the release build only: under the
# sanitizers, GLBD_UNTIMED, the times are reported). glbd's CPU
# time while the page is open is reported.
source "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || { echo "skip: chromium is not installed (Debian: apt-get install chromium)"; exit 77; }
ADDR=127.0.23.40 PORT=5234 ADMIN=127.0.23.40:9524
mkdir -p "$WORK/state"
python3 "$FIXTURES/../tools/scale-view.py" "$WORK" 10000 20 "$ADDR" "$PORT" "$ADMIN" "$FIXTURES/test.mmdb"
start_glbd p "$WORK/glbd.yaml"
last=$(tail -1 "$WORK/queries.txt" | cut -d' ' -f1)
every_cluster() {  # the summary counts the whole view
    curl -sf "http://$ADMIN/v1/summary" | python3 -c '
import json, sys
s = json.load(sys.stdin)
sys.exit(0 if s["counts"]["hosts"] == 10000 and s["counts"]["entries"] == 200000 and len(s["clusters"]) == 20 else 1)'
}
wait_for 120 every_cluster || fail "the 10k x 20 view is not loaded"
[[ $(q "$ADDR" "$PORT" "$last" A +short | head -1) == 10.* ]] || fail "$last not answered"

ticks() { read -r -a f <<<"$(cut -d')' -f2- "/proc/$PID_p/stat")"; echo $(( f[11] + f[12] )); }
# open_page BUDGET_MS: the page for that much page time; sets WALL_MS (real time) and CPU_MS (glbd's), the DOM in
# $WORK/dom-BUDGET.html.
open_page() {
    local t0 c0
    t0=$(now_ms) c0=$(ticks)
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chromium" \
        --virtual-time-budget="$1" --window-size=1280,900 --dump-dom "http://$ADMIN/" >"$WORK/dom-$1.html" \
        2>>"$WORK/chromium.log"
    WALL_MS=$(( $(now_ms) - t0 )) CPU_MS=$(( ($(ticks) - c0) * 1000 / $(getconf CLK_TCK) ))
}
check() {  # DOM-FILE MIN-REFRESHES: prints the refreshes done
    python3 - "$1" "$2" <<'PY'
import re, sys
dom, least = open(sys.argv[1]).read(), int(sys.argv[2])
body = re.search(r'<body[^>]*data-refreshes="(\d+)"', dom)
assert body and int(body.group(1)) >= least, ("refreshes", body and body.group(1), least)
count = re.search(r'<span id="hosts-count"[^>]*>([^<]*)</span>', dom).group(1)
assert count.startswith("10000 hosts, 0 unhealthy endpoints"), count
rows = re.findall(r'<tr data-host="([^"]+)" data-cluster="([^"]+)"', dom)
assert len(rows) == 2000 and len({h for h, _ in rows}) == 100 and len({c for _, c in rows}) == 20, len(rows)
assert rows[0][0] == "h0.glb.example.test", rows[0]
assert len(re.findall(r'<g class="cluster" data-cluster=', dom)) == 20
print(body.group(1))
PY
}
open_page 2000
short_wall=$WALL_MS
short_refreshes=$(check "$WORK/dom-2000.html" 1) || fail "the page after 2 s of page time"
open_page 12000
long_wall=$WALL_MS long_cpu=$CPU_MS
long_refreshes=$(check "$WORK/dom-12000.html" 5) || fail "the page after 12 s of page time"
per_refresh=$(( (long_wall - short_wall) / (long_refreshes - short_refreshes) ))
echo "first run ${short_wall} ms ($short_refreshes refreshes); ${long_wall} ms ($long_refreshes); per refresh ${per_refresh} ms; glbd CPU ${long_cpu} ms in the second"
if [[ -n ${GLBD_UNTIMED:-} ]]; then
    echo "a sanitizer build: the times above are reported, not held to the bounds (those are the release build's)"
else
    (( short_wall <= 15000 )) || fail "the first render and a refresh took ${short_wall} ms"
    (( per_refresh <= 1000 )) || fail "a refresh took ${per_refresh} ms"
fi
pass "10,000 hosts x 20 clusters: the page shows the count and a page of 100 hosts; first render and a refresh in ${short_wall} ms (with Chromium's start), then ${per_refresh} ms a refresh; glbd's CPU ${long_cpu} ms in ${long_wall} ms with it open"
