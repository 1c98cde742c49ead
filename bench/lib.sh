# bench/lib.sh — sourced by the bench scripts (from the repository's top): the glbd they measure, a view signed,
# the poller that times an answer.

# release_glbd PATH: prints PATH made absolute; build-release/glbd (the default) is built first, Release.
release_glbd() {
  if [[ $1 == build-release/glbd ]]; then
    cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-release -j"$(nproc)" --target glbd >/dev/null
  fi
  realpath "$1"
}

# sign_view DIR GLBD: a CSK (ECDSA P-256, `glbd keygen --dnssec`) for glb.example.test, written into DIR and
# named in DIR/glbd.yaml's zone (tests/tools/scale-view.py's config).
sign_view() {
  local key
  key=$("$2" keygen --dnssec glb.example.test --dir "$1")
  sed -i "s|^    nameservers: .*|&\n    dnssec: {keys: [$key]}|" "$1/glbd.yaml"
  grep -q "dnssec: {keys: \[$key\]}" "$1/glbd.yaml" || { echo "bench: $1 has no key" >&2; return 1; }
}

# start_wait N NAME WANT LIMIT_MS [fleet-wait.py's options]: bench/fleet-wait.py (servers PREFIX1..N asked for
# NAME on $PORT) in the background, returning once it is set up to ask (Python's own start is not timed); then
# take T0, act, and `go T0`; end_wait leaves the ms from T0 until every server answered as WANT in RESULT, or
# fails. Uses WORK (go, go.ready, result) and sets WAITER.
start_wait() {
  rm -f "$WORK/go" "$WORK/go.tmp" "$WORK/go.ready" "$WORK/result"
  python3 bench/fleet-wait.py "$1" "$2" "$3" "$4" "$WORK/go" "$PORT" "${@:5}" > "$WORK/result" &
  WAITER=$!
  for ((i = 0; i < 3000; i++)); do [[ -e $WORK/go.ready ]] && return 0; sleep 0.01; done
  echo "the poller did not start" >&2; return 1
}
go() { echo "$1" > "$WORK/go.tmp" && mv "$WORK/go.tmp" "$WORK/go"; }
end_wait() { RESULT=; wait "$WAITER" && RESULT=$(cat "$WORK/result"); }

# work_dir: WORK, a new temporary directory, removed at exit after the glbd whose pid is in PID (when set)
# is stopped.
work_dir() {
  WORK=$(mktemp -d)
  PID=
  trap '[[ -n $PID ]] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
}
