#!/usr/bin/env bash
# One command: build glbd (Release) and measure it beside NSD, Knot and gdnsd (plain and geo) with
# ../shared/bench/peers.sh, then print glbd / best peer ratios per workload (median of --repeat runs).
#   bash bench/run.sh [--repeat 3] [--duration 10] [--servers LIST] [--install]
# Needs the peers (peers.sh --install does it) and dnsperf; traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PEERS=${PEERS_SH:-$ROOT/../shared/bench/peers.sh}
REPEAT=3 DURATION=10 SERVERS=nsd,knot,gdnsd,knot-geoip,gdnsd-geoip INSTALL=()
while (($#)); do
  case $1 in
    --repeat) REPEAT=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --servers) SERVERS=$2; shift ;;
    --install) INSTALL=(--install) ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
[[ -f $PEERS ]] || { echo "peers.sh not found at $PEERS (set PEERS_SH)" >&2; exit 1; }
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" --target glbd resolver_bench >/dev/null
OUT=$(mktemp)
GLBD_BIN=$ROOT/build-release/glbd bash "$PEERS" "${INSTALL[@]}" --servers "$SERVERS" --repeat "$REPEAT" \
  --duration "$DURATION" --extra "glbd|5310|1|GLBD_BIN=$ROOT/build-release/glbd exec bash $ROOT/bench/glbd-peer.sh" \
  --out "$OUT" >/dev/null
cat "$OUT"
echo
echo "### glbd / best peer (lower is better for us/q; higher for q/s)"
echo
echo "| workload | best peer (usr) | usr us/q glbd / best | srv us/q glbd / best | q/s glbd / best | glbd check |"
echo "|---|---|---:|---:|---:|---|"
awk -F'|' 'NR > 2 && $2 ~ /[a-z]/ {
    gsub(/ /, "", $2); gsub(/ /, "", $4); s = $2; w = $4
    qps[s, w] = $5 + 0; srv[s, w] = $9 + 0; usr[s, w] = $10 + 0; chk[s] = $12; ws[w] = 1; ss[s] = 1
  }
  END {
    for (w in ws) {
      if (!((("glbd", w) in usr))) continue
      best = ""; bu = 1e9; bs = 1e9; bq = 0
      for (s in ss) {
        if (s == "glbd" || !((s, w) in usr) || usr[s, w] <= 0) continue
        if (w == "ecs" && s !~ /geoip/) continue  # only geo-routing peers answer ECS queries by location
        if (usr[s, w] < bu) { bu = usr[s, w]; best = s }
        if (srv[s, w] < bs) bs = srv[s, w]
        if (qps[s, w] > bq) bq = qps[s, w]
      }
      if (best == "") continue
      printf "| %s | %s (%.2f) | %.2f | %.2f | %.2f |%s|\n", w, best, bu, usr["glbd", w] / bu, srv["glbd", w] / bs, qps["glbd", w] / bq, chk["glbd"]
    }
  }' "$OUT" | sort
rm -f "$OUT"
