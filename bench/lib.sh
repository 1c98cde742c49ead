# bench/lib.sh — sourced by the bench scripts (from the repository's top): the glbd they measure, a view signed.

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

# work_dir: WORK, a new temporary directory, removed at exit after the glbd whose pid is in PID (when set)
# is stopped.
work_dir() {
  WORK=$(mktemp -d)
  PID=
  trap '[[ -n $PID ]] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
}
