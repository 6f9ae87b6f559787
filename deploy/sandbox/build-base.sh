#!/usr/bin/env bash
# Build the Kaizen sandbox images without any container registry.
#
#   1. kaizen-sandbox-base:bookworm - a Debian bookworm minbase root filesystem made with
#      debootstrap (python3 with pip and venv for a repository's install_command,
#      pytest, pytest-timeout, coverage, the test plugins and
#      libraries projects most often need - pytest-asyncio, pytest-mock, hypothesis -
#      git, ca-certificates) and
#      `docker import`ed. Cached: skipped when the tag exists with the same package list
#      (FORCE_BASE=1 rebuilds it).
#   2. kaizen-sandbox:latest - deploy/sandbox/Dockerfile on top of it (non-root uid 10001,
#      /workspace). Its build needs no network (the daemon may run with --bridge=none).
#
# Needs: root (debootstrap), a running docker daemon, Debian's mirror (only for step 1).
# Env: MIRROR, SUITE, BASE_IMAGE, IMAGE, FORCE_BASE, DEBOOTSTRAP_CACHE (dir for .debs).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
BASE_IMAGE="${BASE_IMAGE:-kaizen-sandbox-base:${SUITE}}"
IMAGE="${IMAGE:-kaizen-sandbox:latest}"
# No pytest-cov or xdist: Kaizen measures coverage itself, per test, in one process; the
# options a project's config gives them are accepted by workers/fix/pytest_shim.py.
PACKAGES="python3,python3-pip,python3-venv,python3-pytest,python3-pytest-timeout,python3-coverage,python3-pytest-asyncio,python3-pytest-mock,python3-hypothesis,git,ca-certificates"
# Images carry their own label: kaizen.sandbox=1 marks *containers* the Docker backend
# started (and may prune), and labels on an image are inherited by its containers.
LABEL="kaizen.sandbox.image=1"

log() { printf '[build-base %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

docker info >/dev/null 2>&1 || { log "no docker daemon answers"; exit 1; }

# The package list is stamped on the base image: a changed list rebuilds it.
built_with="$(docker image inspect --format '{{ index .Config.Labels "kaizen.packages" }}' \
    "$BASE_IMAGE" 2>/dev/null || true)"
if [[ -z "${FORCE_BASE:-}" ]] && [[ "$built_with" == "$PACKAGES" ]]; then
    log "base image $BASE_IMAGE exists with these packages; not rebuilding (FORCE_BASE=1 to force)"
else
    if ! command -v debootstrap >/dev/null 2>&1; then
        log "installing debootstrap"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    fi
    rootfs="$(mktemp -d /var/tmp/kaizen-rootfs.XXXXXX)"
    trap 'rm -rf --one-file-system "$rootfs"' EXIT
    cache_args=()
    if [[ -n "${DEBOOTSTRAP_CACHE:-}" ]]; then
        mkdir -p "$DEBOOTSTRAP_CACHE"
        cache_args=(--cache-dir="$DEBOOTSTRAP_CACHE")
    fi
    log "debootstrap $SUITE ($PACKAGES) into $rootfs"
    start=$SECONDS
    debootstrap --variant=minbase --include="$PACKAGES" "${cache_args[@]}" \
        "$SUITE" "$rootfs" "$MIRROR" >&2
    log "debootstrap took $((SECONDS - start))s"
    # Slim it: package caches and docs are never needed inside a sandbox.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
        "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
    start=$SECONDS
    tar -C "$rootfs" --numeric-owner -c . | docker import \
        --change "LABEL $LABEL" --change "LABEL kaizen.packages=$PACKAGES" \
        --change 'CMD ["/bin/bash"]' \
        --message "kaizen sandbox base ($SUITE minbase)" - "$BASE_IMAGE" >/dev/null
    log "docker import took $((SECONDS - start))s"
    rm -rf --one-file-system "$rootfs"
    trap - EXIT
fi

log "building $IMAGE from $here/Dockerfile on $BASE_IMAGE"
start=$SECONDS
docker build --network none --label "$LABEL" --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    -t "$IMAGE" "$here" >&2
log "docker build took $((SECONDS - start))s"
docker run --rm --network none --label "$LABEL" "$IMAGE" \
    python3 -c 'import pytest, pytest_timeout, pytest_asyncio, pytest_mock, hypothesis, sys; print("ok", sys.version.split()[0], pytest.__version__)'
