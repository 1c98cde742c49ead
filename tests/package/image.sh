#!/usr/bin/env bash
# The container image, built and run: docker/image.sh builds it without a registry; then, with host
# networking on 127.0.0.230, the image must pass `glbd check` on a mounted config, answer over UDP and TCP on
# port 53 as the non-root user glbd (10053) holding only CAP_NET_BIND_SERVICE, stop gracefully (exit 0) on
# `podman stop`, leave no anonymous volume behind, and stay under 100 MB; glbd runs with malloc's heap on huge pages.
# With --deb-from BUILD (tests/run-all.sh: the tree whose package the phase before has checked) the image
# installs that tree's .deb (CPack) instead of compiling glbd again in the Dockerfile's build stage; the
# build stage's package list is then checked against .ci/deps: every library CI builds with is installed
# there too, so the stage that is not run cannot lack one.
#   bash tests/package/image.sh [--deb-from BUILD]
set -euo pipefail
cd "$(dirname "$0")/../.."
DEB_FROM=""
[[ ${1:-} == --deb-from ]] && DEB_FROM=$2
command -v podman >/dev/null || { echo "SKIP: podman is not installed"; exit 77; }
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}
TAG=glbd:test NAME=glbd-image-test ADDR=127.0.0.230
WORK=$(mktemp -d -t glbd-image.XXXXXX)
fail() { echo "FAIL: $*"; podman logs "$NAME" 2>&1 | tail -20 || true; exit 1; }
cleanup() { podman rm -f "$NAME" >/dev/null 2>&1 || true; podman image prune -f >/dev/null 2>&1 || true; rm -rf "$WORK"; }  # prune: the build stage left untagged
trap cleanup EXIT

volumes_before=$(podman volume ls -q | wc -l)
start=$(date +%s)
if [[ -n $DEB_FROM ]]; then
  # The build stage installs what CI's own build needs, less what only the tests use.
  stage=$(sed -n '/^FROM debian:12 AS build/,/^FROM /p' docker/Dockerfile | sed -n '/apt-get install/,/rm -rf/p')
  for p in $(sed -n '/^PACKAGES=(/,/^)/p' .ci/deps | grep -oE '\b(lib[a-z0-9.+-]+-dev|nlohmann-json3-dev|build-essential|cmake|pkg-config)\b'); do
    case $p in libgtest-dev|libgmock-dev|libclang-rt-*) continue ;; esac
    grep -qw -- "$p" <<<"$stage" || fail "docker/Dockerfile's build stage does not install $p (.ci/deps does)"
  done
  echo "ok: the Dockerfile's build stage installs every build dependency .ci/deps has"
  (cd "$DEB_FROM" && cpack -G DEB -B "$WORK/deb" >/dev/null)
  bash docker/image.sh --tag "$TAG" --deb "$(ls "$WORK"/deb/glbd_*.deb)"
else
  bash docker/image.sh --tag "$TAG"
fi
echo "image built (base images included when missing) in $(( $(date +%s) - start )) s"

cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: image-test}
listen: {dns: ["$ADDR:53"]}
admin: {listen: "$ADDR:9153"}
zones:
  - origin: glb.image.test
    nameservers: [{name: ns1.glb.image.test, addresses: [192.0.2.53]}]
hosts:
  - name: shop.glb.image.test
    endpoints: [192.0.2.10, 192.0.2.11]
YAML
chmod 0755 "$WORK"; chmod 0644 "$WORK/glbd.yaml"
run=(--network host --pull=never -v "$WORK:/etc/glbd:ro")

podman run --rm "${run[@]}" "$TAG" check --config /etc/glbd/glbd.yaml >/dev/null || fail "glbd check in the image"
echo "ok: glbd check in the image"

podman run -d --name "$NAME" "${run[@]}" "$TAG" >/dev/null
answer=""
for _ in $(seq 1 100); do  # 10 s at most; dig +short prints a refused try as ";; ..." on stdout: not an answer
    answer=$(dig +short +time=1 +tries=1 @"$ADDR" shop.glb.image.test A 2>/dev/null | grep -v '^;' | sort | tr '\n' ' ') || true
    [[ -n $answer ]] && break
    sleep 0.1
done
[[ $answer == "192.0.2.10 192.0.2.11 " ]] || fail "UDP answer: '$answer'"
tcp=$(dig +short +tcp +time=2 @"$ADDR" shop.glb.image.test A | sort | tr '\n' ' ')
[[ $tcp == "192.0.2.10 192.0.2.11 " ]] || fail "TCP answer: '$tcp'"
echo "ok: answers over UDP and TCP on $ADDR:53"

[[ $(podman exec "$NAME" id -u) == 10053 ]] || fail "uid is $(podman exec "$NAME" id -u), not 10053"
[[ $(podman exec "$NAME" id -g) == 10053 && $(podman exec "$NAME" id -gn) == glbd ]] || fail "group: $(podman exec "$NAME" id)"
caps=$(podman exec "$NAME" grep -E '^Cap(Eff|Prm):' /proc/1/status | awk '{print $2}' | sort -u)
[[ $caps == 0000000000000400 ]] || fail "capabilities of glbd: $caps (want only cap_net_bind_service, 0x400)"
echo "ok: runs as glbd (10053:10053) with only cap_net_bind_service"
cat "/proc/$(podman inspect --format '{{.State.Pid}}' "$NAME")/environ" | tr '\0' '\n' | grep -qx GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ||
    fail "glbd's malloc does not ask for huge pages (GLIBC_TUNABLES, docker/README.md)"

podman stop -t 10 "$NAME" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
[[ $code == 0 ]] || fail "exit code $code after podman stop"
podman logs "$NAME" 2>&1 | grep "signal 15: stopping" >/dev/null || fail "no graceful stop in the log"
podman rm "$NAME" >/dev/null
echo "ok: podman stop: SIGTERM, exit 0"

volumes_after=$(podman volume ls -q | wc -l)
((volumes_after == volumes_before)) || fail "volumes: $volumes_before before, $volumes_after after"
size=$(podman image inspect --format '{{.Size}}' "$TAG")
echo "image size: $size bytes"
podman history --format "{{.Size}} {{.CreatedBy}}" "$TAG" | sed -n 1,5p | cut -c1-150  # sed reads it all: no SIGPIPE under pipefail
((size < 100000000)) || fail "the image is $size bytes, over 100 MB"
echo "ok: image under 100 MB, no volume left behind"
