#!/bin/sh
# Build the tool sandbox image `synthorg-sandbox` without any image registry.
#
# A minimal Debian bookworm root filesystem with python3 is made by mmdebstrap from this
# machine's own apt sources and turned into an image by `docker import`. The result matches
# sandbox/Dockerfile (for machines that can pull a base image): Python 3.11, user
# 65534:65534 (nobody:nogroup), WORKDIR /workspace, and empty mount points /opt/sdk (the
# read-only MCP SDK) and /opt/server (the read-only MCP server).
#
# Tags: synthorg-sandbox:<version> and synthorg-sandbox:latest, where <version> hashes this
# recipe and the apt sources, so a changed recipe builds again; an existing tag is kept.
# Environment: SANDBOX_IMAGE (name), SANDBOX_APT_SOURCES (sources files), FORCE=1 (rebuild).
set -eu

IMAGE=${SANDBOX_IMAGE:-synthorg-sandbox}
SUITE=bookworm
INCLUDE=python3
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "build_image: $*" >&2; exit 1; }

if [ -z "${SANDBOX_APT_SOURCES:-}" ]; then
    SANDBOX_APT_SOURCES=$(ls /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
fi
[ -n "$SANDBOX_APT_SOURCES" ] || die "no apt sources found (set SANDBOX_APT_SOURCES)"

# shellcheck disable=SC2086 # SANDBOX_APT_SOURCES is a list of paths
VERSION=$(cat "$here/build_image.sh" $SANDBOX_APT_SOURCES | sha256sum | cut -c1-12)
TAG="$IMAGE:$VERSION"

if [ "${FORCE:-0}" != 1 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
    docker tag "$TAG" "$IMAGE:latest"
    exit 0
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || die "mmdebstrap is missing: install it (apt-get install mmdebstrap) or run as root"
    echo "build_image: installing mmdebstrap ..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null 2>&1 \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; } \
        || die "apt-get install mmdebstrap failed"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
start=$(date +%s)
echo "build_image: building $TAG (mmdebstrap $SUITE + $INCLUDE) ..." >&2

# Documentation, man pages and translations are dropped; the image never runs apt.
# shellcheck disable=SC2086
mmdebstrap --quiet --variant=essential --include="$INCLUDE" \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='mkdir -p "$1/workspace" "$1/opt/sdk" "$1/opt/server"' \
    --customize-hook='chown 65534:65534 "$1/workspace"' \
    --customize-hook='rm -rf "$1/var/cache/apt" "$1/var/lib/apt/lists" "$1/var/log"/*' \
    "$SUITE" "$work/rootfs.tar" $SANDBOX_APT_SOURCES \
    || die "mmdebstrap failed"

docker import \
    --change 'USER 65534:65534' \
    --change 'WORKDIR /workspace' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
    --change 'ENV PYTHONUNBUFFERED=1' \
    --change "LABEL org.synthorg.sandbox.version=$VERSION" \
    --change 'CMD ["python3"]' \
    "$work/rootfs.tar" "$TAG" >/dev/null || die "docker import failed"
docker tag "$TAG" "$IMAGE:latest"

echo "build_image: built $TAG in $(( $(date +%s) - start )) s" \
    "($(docker image inspect --format '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
