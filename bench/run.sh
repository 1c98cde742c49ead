#!/usr/bin/env bash
# One command: build glbd (Release) and measure it beside NSD, Knot and gdnsd (plain and geo) with
# ../shared/bench/peers.sh, then print glbd / best peer ratios per workload (median of --repeat runs).
#   bash bench/run.sh [--repeat 3] [--duration 10] [--servers LIST] [--install] [--dnssec]
# --dnssec: every query sets DO; Knot signs (peers.sh), and glbd signs online with a key of its own
# (bench/glbd-peer.sh).
# Needs the peers (peers.sh --install does it) and dnsperf; traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PEERS=${PEERS_SH:-$ROOT/../shared/bench/peers.sh}
REPEAT=3 DURATION=10 SERVERS=nsd,knot,gdnsd,knot-geoip,gdnsd-geoip INSTALL=() DNSSEC=()
while (($#)); do
  case $1 in
    --repeat) REPEAT=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --servers) SERVERS=$2; shift ;;
    --install) INSTALL=(--install) ;;
    --dnssec) DNSSEC=(--dnssec) ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
[[ -f $PEERS ]] || { echo "peers.sh not found at $PEERS (set PEERS_SH)" >&2; exit 1; }
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" --target glbd resolver_bench >/dev/null
OUT=$(mktemp)
EXTRA=(--extra "glbd|5310|1|GLBD_BIN=$ROOT/build-release/glbd exec bash $ROOT/bench/glbd-peer.sh")
# With --dnssec, glbd also unsigned, asked the same DO queries: what signing costs it.
((${#DNSSEC[@]})) && EXTRA+=(--extra "glbd-unsigned|5311|1|PEER_DNSSEC=0 GLBD_BIN=$ROOT/build-release/glbd exec bash $ROOT/bench/glbd-peer.sh")
GLBD_BIN=$ROOT/build-release/glbd bash "$PEERS" "${INSTALL[@]}" "${DNSSEC[@]}" --servers "$SERVERS" --repeat "$REPEAT" \
  --duration "$DURATION" "${EXTRA[@]}" --out "$OUT" >/dev/null
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
        if (s ~ /^glbd/ || !((s, w) in usr) || usr[s, w] <= 0) continue
        if (w == "ecs" && s !~ /geoip/) continue  # only geo-routing peers answer ECS queries by location
        if (usr[s, w] < bu) { bu = usr[s, w]; best = s }
        if (srv[s, w] < bs) bs = srv[s, w]
        if (qps[s, w] > bq) bq = qps[s, w]
      }
      if (best == "") continue
      printf "| %s | %s (%.2f) | %.2f | %.2f | %.2f |%s|\n", w, best, bu, usr["glbd", w] / bu, srv["glbd", w] / bs, qps["glbd", w] / bq, chk["glbd"]
    }
  }' "$OUT" | sort
if ((${#DNSSEC[@]})); then
  echo
  echo "### glbd signed / glbd unsigned, the same DO queries (server CPU per answered query)"
  echo
  echo "| workload | srv us/q signed | srv us/q unsigned | signed / unsigned |"
  echo "|---|---:|---:|---:|"
  awk -F'|' 'NR > 2 && $2 ~ /glbd/ { gsub(/ /, "", $2); gsub(/ /, "", $4); srv[$2, $4] = $9 + 0; ws[$4] = 1 }
    END { for (w in ws) if (srv["glbd-unsigned", w] > 0)
            printf "| %s | %.2f | %.2f | %.2f |\n", w, srv["glbd", w], srv["glbd-unsigned", w], srv["glbd", w] / srv["glbd-unsigned", w] }' "$OUT" | sort
fi
rm -f "$OUT"
