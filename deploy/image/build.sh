#!/usr/bin/env bash
# Build Forge's image without a registry: a Debian root file system made here
# with mmdebstrap (from the Debian mirror) becomes the base image, and podman
# builds the repository's Dockerfile on it (BASE_IMAGE). Only the Debian
# mirror and PyPI are reached. Needs: apt-get install mmdebstrap podman
# buildah runc (.ci/run installs them).
#
#   deploy/image/build.sh                  # -> localhost/forge-sidecar:latest
#   IMAGE=forge-sidecar:dev GPU=none deploy/image/build.sh
#
# Environment:
#   IMAGE          tag to build (default localhost/forge-sidecar:latest)
#   GPU            vulkan (default) or none: the Dockerfile's GPU argument
#   SUITE          Debian release of the base (default bookworm: Python 3.11)
#   MIRROR         Debian mirror (default: mmdebstrap's, deb.debian.org)
#   REFRESH_BASE=1 make the base again even when it exists (security updates)
#
# The base is tagged by a hash of what went into it and reused while it
# exists; podman keeps the Dockerfile's layers and its pip cache mount, so a
# rebuild after a source change reinstalls only Forge itself. Prints the build
# time and the image size at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${IMAGE:-localhost/forge-sidecar:latest}
GPU=${GPU:-vulkan}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-}

# podman's default rlimits (nofile, nproc) cannot be set inside some sandboxes
# and CI containers ("error setting rlimit type 7: operation not permitted"):
# unless the caller has a containers.conf of their own, containers inherit the
# limits podman itself runs with.
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/image/containers.conf}

for tool in mmdebstrap podman; do
  if ! command -v "$tool" >/dev/null; then
    echo "deploy/image/build.sh: $tool not found (apt-get install mmdebstrap podman buildah runc)" >&2
    exit 2
  fi
done

# What the Dockerfile expects of its base (python3 with venv), plus what its
# runtime stage would otherwise fetch with apt (libgomp1, tini), and
# ca-certificates for pip. Recommends, documentation and translations are
# left out (~130 MB instead of ~225 MB); the merged-usr hook replaces the
# usrmerge package, which would pull in perl.
PACKAGES=python3,python3-venv,libgomp1,tini,ca-certificates
MMDEBSTRAP_ARGS=(
  --variant=minbase
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --aptopt='APT::Install-Recommends "false"'
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-include=/usr/share/locale/locale.alias'
  --include="$PACKAGES"
)
key=$(printf '%s\n' "$SUITE" "$MIRROR" "${MMDEBSTRAP_ARGS[@]}" | sha256sum | cut -c1-12)
BASE=localhost/forge-base:$SUITE-$key

start=$(date +%s)
if [[ ${REFRESH_BASE:-0} == 1 ]] || ! podman image exists "$BASE"; then
  echo "== base $BASE: mmdebstrap $SUITE"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mmdebstrap --quiet "${MMDEBSTRAP_ARGS[@]}" "$SUITE" "$tmp/rootfs.tar" ${MIRROR:+"$MIRROR"}
  podman import --quiet "$tmp/rootfs.tar" "$BASE" >/dev/null
  rm -rf "$tmp"
else
  echo "== base $BASE (reused; REFRESH_BASE=1 makes it again)"
fi
base_done=$(date +%s)

# A network whose proxy re-signs TLS: pip in the build trusts the CA bundle
# pip trusts here (a build secret, so the image does not keep it).
secret=()
cert=${PIP_CERT:-${SSL_CERT_FILE:-}}
if [[ -n $cert && -s $cert ]]; then
  secret=(--secret "id=pip_cert,src=$cert")
fi

echo "== podman build $IMAGE (GPU=$GPU)"
podman build --layers "${secret[@]}" \
  --build-arg BASE_IMAGE="$BASE" \
  --build-arg GPU="$GPU" \
  --tag "$IMAGE" \
  --file Dockerfile .
end=$(date +%s)

size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "== $IMAGE: $((size / 1000000)) MB, built in $((end - start)) s" \
  "(base $((base_done - start)) s, podman build $((end - base_done)) s)"
