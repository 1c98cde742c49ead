#!/usr/bin/env bash
# Builds the glbd image without a registry: Debian 12 base images made locally with debootstrap when
# `debian:12` is not present (kept in the engine's storage, so the next run reuses them), then the
# Dockerfile with --pull=never: from the source tree, or with --deb from a .deb already made (nothing
# compiled). Uses podman, else docker.
#   bash docker/image.sh [--tag glbd:dev] [--mirror URL] [--save FILE.tar] [--base-only] [--deb FILE.deb]
# The Debian mirror is the machine's own (its apt sources: the first one serving bookworm), so an
# air-gapped site's mirror is used as it is; --mirror overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."
# machine_mirror: the URI of the first apt source for bookworm itself (deb822 .sources files, then
# sources.list, under APT_DIR, default /etc/apt), or Debian's own when none is found.
machine_mirror() {
  local uri
  uri=$(awk 'BEGIN {RS = ""} /(^|\n)Types:[^\n]*deb( |$|\n)/ && /(^|\n)Suites:[^\n]*bookworm( |\n|$)/ {
               if (match($0, /URIs:[ \t]*[^ \t\n]+/)) {u = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", u); print u; exit}
             }' "${APT_DIR:-/etc/apt}"/sources.list.d/*.sources 2>/dev/null || true)
  [[ -z $uri ]] && uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' "${APT_DIR:-/etc/apt}"/sources.list 2>/dev/null || true)
  echo "${uri:-http://deb.debian.org/debian}"
}
TAG=glbd:dev MIRROR=$(machine_mirror) SAVE="" BASE_ONLY=0 DEB=""
while (($#)); do
  case $1 in
    --tag) TAG=$2; shift ;;
    --mirror) MIRROR=$2; shift ;;
    --save) SAVE=$2; shift ;;
    --base-only) BASE_ONLY=1 ;;
    --deb) DEB=$(realpath "$2"); shift ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
  shift
done
if command -v podman >/dev/null; then
  ENGINE=podman
  export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/docker/podman/containers.conf}
elif command -v docker >/dev/null; then
  ENGINE=docker
else
  echo "image.sh: neither podman nor docker is installed" >&2; exit 1
fi

# debian:12 (minbase) and debian:12-slim (the same, without documentation, manual pages and locales, as
# Debian's own slim images are made).
base_images() {
  local root
  root=$(mktemp -d)
  trap 'rm -rf "$root"' RETURN
  echo "image.sh: making debian:12 with debootstrap from $MIRROR"
  debootstrap --variant=minbase bookworm "$root/rootfs" "$MIRROR" >/dev/null
  cat > "$root/rootfs/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
APT
  rm -rf "$root/rootfs/var/cache/apt/archives/"*.deb "$root/rootfs/var/lib/apt/lists/"*
  tar -C "$root/rootfs" -c . | $ENGINE import --change 'CMD ["bash"]' - debian:12 >/dev/null 2>&1
  cat > "$root/rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
DPKG
  find "$root/rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$root/rootfs/usr/share/man/"* "$root/rootfs/usr/share/info/"* "$root/rootfs/usr/share/locale/"*
  tar -C "$root/rootfs" -c . | $ENGINE import --change 'CMD ["bash"]' - debian:12-slim >/dev/null 2>&1
}

if ! $ENGINE image inspect debian:12 >/dev/null 2>&1 || ! $ENGINE image inspect debian:12-slim >/dev/null 2>&1; then
  base_images
fi
((BASE_ONLY)) && exit 0
start=$(date +%s)
pull=(--pull=never)
[[ $ENGINE == docker ]] && pull=()  # docker build has no --pull=never; it uses a local image when there is one
if [[ -n $DEB ]]; then
  # The package stands in for the Dockerfile's build stage (a named build context of that name, which
  # podman and docker's BuildKit both take), so the build stage is not run; the context is empty.
  debs=$(mktemp -d) context=$(mktemp -d)
  trap 'rm -rf "$debs" "$context"' EXIT
  cp "$DEB" "$debs/glbd.deb"
  $ENGINE build "${pull[@]}" --network host --build-context build="$debs" \
    --build-arg GLBD_PACKAGE="sha256:$(sha256sum < "$DEB" | cut -d' ' -f1)" -f docker/Dockerfile -t "$TAG" "$context"
else
  # From source: the package is built in the image's first stage, its digest unknown here; the tree's is.
  $ENGINE build "${pull[@]}" --network host \
    --build-arg GLBD_PACKAGE="source:$( (git rev-parse HEAD; git status --porcelain; git diff HEAD) 2>/dev/null | sha256sum | cut -c1-16)" \
    -f docker/Dockerfile -t "$TAG" .
fi >/dev/null
echo "image.sh: built $TAG in $(( $(date +%s) - start )) s, $($ENGINE image inspect --format '{{.Size}}' "$TAG") bytes"
if [[ -n $SAVE ]]; then
  $ENGINE save -o "$SAVE" "$TAG"
  echo "image.sh: saved to $SAVE ($(stat -c %s "$SAVE") bytes)"
fi
