#!/usr/bin/env bash
# The query log's cost: glbd without dnstap, glbd with dnstap to a Unix socket read by fstrm_capture, and
# Knot DNS with its dnstap module to the same kind of reader, beside plain Knot, in one run of
# ../shared/bench/peers.sh. The readers run detached on the client's CPU, so the servers' CPU per query
# (srv us/q) is the servers' own, writer threads included. Prints each server's figures and the ratios
# with dnstap on / off.
# At a fixed rate (--rate, default 150,000 q/s, below every server's ceiling here) the servers do the same
# work, so their CPU per query compares; dnsperf's lost queries say whether a server kept up.
#   bash bench/dnstap.sh [--repeat 3] [--duration 10] [--rate 150000]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PEERS=${PEERS_SH:-$ROOT/../shared/bench/peers.sh}
REPEAT=3 DURATION=10 RATE=150000
while (($#)); do
  case $1 in
    --repeat) REPEAT=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --rate) RATE=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
command -v fstrm_capture >/dev/null || { echo "fstrm_capture (fstrm-bin) is needed" >&2; exit 1; }
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" --target glbd >/dev/null
OUT=$(mktemp)
GLBD=$ROOT/build-release/glbd
# The readers start first, apart from the servers (not their children: their CPU is not the servers'), on
# the client's CPU; their files are discarded.
TAP=$(mktemp -d)
READERS=()
trap 'kill "${READERS[@]}" 2>/dev/null || true; rm -rf "$OUT" "$TAP"' EXIT
for who in glbd knot; do
  taskset -c "${DNSTAP_READER_CPUS:-0}" fstrm_capture -t protobuf:dnstap.Dnstap -u "$TAP/$who.sock" \
      -w "$TAP/$who.fstrm" >/dev/null 2>&1 </dev/null &
  READERS+=($!)
done
for _ in $(seq 1 100); do [[ -S $TAP/glbd.sock && -S $TAP/knot.sock ]] && break; sleep 0.05; done
bash "$PEERS" --servers knot --workloads a,mix --repeat "$REPEAT" --duration "$DURATION" --rate "$RATE" ${KEEP:+--keep} \
  --extra "glbd|5310|1|GLBD_BIN=$GLBD exec bash $ROOT/bench/glbd-peer.sh" \
  --extra "glbd-dnstap|5311|1|GLBD_DNSTAP_SOCK=$TAP/glbd.sock GLBD_BIN=$GLBD exec bash $ROOT/bench/glbd-peer.sh" \
  --extra "knot-dnstap|5312|0|KNOT_DNSTAP_SOCK=$TAP/knot.sock exec bash $ROOT/bench/knot-dnstap-peer.sh" \
  --out "$OUT" >/dev/null
cat "$OUT"
echo
kill -INT "${READERS[@]}" 2>/dev/null || true
wait "${READERS[@]}" 2>/dev/null || true
echo "dnstap messages the readers wrote: glbd $(dnstap-read "$TAP/glbd.fstrm" 2>/dev/null | wc -l), knot $(dnstap-read "$TAP/knot.fstrm" 2>/dev/null | wc -l)"
echo
echo "### dnstap on / off (server CPU per query; lost queries)"
echo
echo "| workload | glbd srv us/q off -> on | ratio | knot srv us/q off -> on | ratio | lost (glbd-dnstap, knot-dnstap) |"
echo "|---|---|---:|---|---:|---|"
awk -F'|' 'NR > 2 && $2 ~ /[a-z]/ {
    gsub(/ /, "", $2); gsub(/ /, "", $4); s = $2; w = $4
    srv[s, w] = $9 + 0; lost[s, w] = $7; ws[w] = 1
  }
  END {
    for (w in ws) {
      printf "| %s | %.2f -> %.2f | %.2f | %.2f -> %.2f | %.2f | %s, %s |\n", w,
        srv["glbd", w], srv["glbd-dnstap", w], srv["glbd-dnstap", w] / srv["glbd", w],
        srv["knot", w], srv["knot-dnstap", w], srv["knot-dnstap", w] / srv["knot", w],
        lost["glbd-dnstap", w], lost["knot-dnstap", w]
    }
  }' "$OUT" | sort
