#!/usr/bin/env bash
# The .deb: packaged with CPack from a build directory (default: build), checked with lintian (no error; the
# output is printed), then installed with `apt-get install ./glbd_*.deb` into a fresh Debian 12 container
# (the base image docker/image.sh makes) with no build tree: the package's dependencies must resolve, the
# system user and /var/lib/glbd exist, `glbd check` passes on the example config, and `systemd-analyze
# verify` accepts the unit. Purging removes /var/lib/glbd and the config.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
command -v podman >/dev/null || { echo "SKIP: podman is not installed"; exit 77; }
command -v lintian >/dev/null || { echo "SKIP: lintian is not installed"; exit 77; }
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}
WORK=$(mktemp -d -t glbd-deb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

start=$(date +%s)
cmake --build "$BUILD" -j"$(nproc)" --target glbd glbd_deb_docs >/dev/null
(cd "$BUILD" && cpack -G DEB -B "$WORK" >/dev/null)
deb=$(ls "$WORK"/glbd_*.deb)
echo "packaged $(basename "$deb") in $(( $(date +%s) - start )) s: $(stat -c %s "$deb") bytes"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
dpkg-deb --contents "$deb" | awk '{print $1, $6}'

# Every guide is shipped, and the manual page is the program's own --help (help2man): each command it lists.
dpkg-deb --contents "$deb" > "$WORK/contents"
for doc in README.md docs/*.md; do
    grep -q " ./usr/share/doc/glbd/$(basename "$doc").gz$" "$WORK/contents" || fail "$doc is not shipped"
done
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/man/man1/glbd.1.gz | gzip -dc > "$WORK/glbd.1" ||
    fail "no manual page in the package (is help2man installed?)"
groff -man -Tascii -rLL=300n -ww "$WORK/glbd.1" 2>"$WORK/groff.err" | col -b > "$WORK/glbd.txt"
[[ ! -s $WORK/groff.err ]] || fail "groff warns of the manual page: $(cat "$WORK/groff.err")"
"$BUILD/glbd" --help | sed -n 's/^  \(glbd [a-z-]*\( --[a-z-]*\)\?\).*/\1/p' | sort -u > "$WORK/commands"
(( $(wc -l < "$WORK/commands") >= 10 )) || fail "only $(wc -l < "$WORK/commands") commands read from --help"
while read -r command; do
    grep -qF -- "$command" "$WORK/glbd.txt" || fail "the manual page does not list \"$command\""
done < "$WORK/commands"
echo "ok: every guide shipped; the manual page lists each of the $(wc -l < "$WORK/commands") commands of glbd --help"

echo "lintian:"
lintian --info --display-info "$deb" | tee "$WORK/lintian.txt" || true
grep -q '^E: ' "$WORK/lintian.txt" && fail "lintian reports errors"
echo "ok: lintian: no error ($(grep -c '^W: ' "$WORK/lintian.txt" || true) warning(s), each overridden with a reason or listed above)"

bash docker/image.sh --base-only
cp "$deb" "$WORK/pkg.deb"
podman run --rm --network host --pull=never -v "$WORK:/pkg:ro" debian:12 bash -euo pipefail -c '
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends /pkg/pkg.deb systemd >/dev/null
  echo "installed: $(dpkg-query -W -f="\${Package} \${Version} \${Status}" glbd)"
  getent passwd glbd | grep ":/var/lib/glbd:" >/dev/null || { echo "FAIL: no glbd system user"; exit 1; }
  [ "$(stat -c "%U:%G %a" /var/lib/glbd)" = "glbd:glbd 750" ] || { echo "FAIL: /var/lib/glbd is $(stat -c "%U:%G %a" /var/lib/glbd)"; exit 1; }
  glbd check --config /etc/glbd/glbd.yaml
  systemd-analyze verify --man=no /lib/systemd/system/glbd.service  # no man-db here: the page is checked below
  man -w glbd >/dev/null 2>&1 || [ -f /usr/share/man/man1/glbd.1.gz ] || { echo "FAIL: no manual page"; exit 1; }
  grep -qx /etc/glbd/glbd.yaml /var/lib/dpkg/info/glbd.conffiles || { echo "FAIL: the config is not a conffile"; exit 1; }
  apt-get purge -y -qq glbd >/dev/null
  [ ! -e /var/lib/glbd ] && [ ! -e /etc/glbd/glbd.yaml ] || { echo "FAIL: purge left files behind"; exit 1; }
  echo "ok: installed without the build tree, user and state directory made, config checked, unit verified, purged clean"
'
