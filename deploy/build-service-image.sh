#!/usr/bin/env bash
# Build the Kaizen service image (deploy/Dockerfile) without any container registry and
# without network inside the build.
#
#   1. build/wheelhouse/deps - a wheel for every runtime dependency (pyproject's
#      `dependencies`, plus ruff, which reviews and fix attempts run), built on the host
#      with pip from the package index. torch is the CPU wheel from TORCH_WHEELS
#      (/opt/wheels); the build fails if a CUDA torch, nvidia-* or triton wheel slips in.
#      Versions follow the project's virtualenv (.venv) where it has them, so the image
#      runs what the test suite ran. Cached: rebuilt only when the requirements, the
#      Python version or the torch pin change (FORCE_WHEELS=1 rebuilds it).
#      build/wheelhouse/testrunner - pytest and the plugins fixes run tests with, for the
#      image's python3 when its base lacks them (bubblewrap sandboxes use that python3).
#   2. build/wheelhouse/app - the kaizen-bot wheel, rebuilt when the sources change.
#   3. docker build --network none -f deploy/Dockerfile, tagged IMAGE (kaizen:latest), on
#      BASE_IMAGE (kaizen-sandbox-base:bookworm when it exists, else
#      python:3.11-slim-bookworm). Docker's layer cache makes an unchanged rebuild take
#      seconds; a source change rebuilds only the small application layer.
#
# Idempotent: run it again whenever; it redoes only what changed (unchanged: ~5 s; a code
# change: ~20 s; new dependencies: a few minutes). One run at a time (flock).
# Needs: a running docker daemon, Python 3.11 with pip (PYTHON, default .venv/bin/python),
# the package index (only for step 1, and for step 2 when setuptools is not installed).
# Env: IMAGE, BASE_IMAGE, PYTHON, TORCH_WHEELS, FORCE_WHEELS, EXTRA_DEBS (default
# bubblewrap; "" for none), PIP_WHEEL_ARGS (extra args
# for `pip wheel`, e.g. --extra-index-url https://download.pytorch.org/whl/cpu where no
# local CPU torch wheel exists).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
IMAGE="${IMAGE:-kaizen:latest}"
TORCH_WHEELS="${TORCH_WHEELS:-/opt/wheels}"
house="$root/build/wheelhouse"
LABEL="kaizen.service=1"

log() { printf '[build-service-image %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
total_start=$SECONDS

docker info >/dev/null 2>&1 || { log "no docker daemon answers"; exit 1; }

# One build at a time (a test run and a manual run share the wheelhouse).
mkdir -p "$house"
exec 9>"$house/.lock"
if ! flock -n 9; then
    log "another build is running; waiting for it"
    flock 9
fi

if [[ -z "${BASE_IMAGE:-}" ]]; then
    if docker image inspect kaizen-sandbox-base:bookworm >/dev/null 2>&1; then
        BASE_IMAGE=kaizen-sandbox-base:bookworm
    else
        BASE_IMAGE=python:3.11-slim-bookworm
    fi
fi

if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$root/.venv/bin/python" ]]; then PYTHON="$root/.venv/bin/python"; else PYTHON=python3; fi
fi
py_version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
# Wheels are built for this interpreter: the image's Python must be the same minor version.
# (Pulled first where a registry answers; here the base image must already be local.)
docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 || docker pull "$BASE_IMAGE" >&2
base_python="$(docker run --rm --network none --label kaizen.sandbox=0 --entrypoint python3 "$BASE_IMAGE" \
    -c 'import platform; print(platform.python_version())')"
if [[ "${base_python%.*}" != "$py_version" ]]; then
    log "$BASE_IMAGE has Python $base_python but $PYTHON is $py_version: wheels would not fit"
    exit 1
fi

# --- 1. dependency wheels ------------------------------------------------------------------
req="$(mktemp)"
cons="$(mktemp)"
trap 'rm -f "$req" "$cons"' EXIT
# The runtime requirements: pyproject's dependencies, plus ruff (from the dev extra: the
# review pipeline and fix evaluation run it, so the service needs it too).
"$PYTHON" - "$root/pyproject.toml" >"$req" <<'EOF'
import re, sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
deps = list(project["dependencies"])
names = {re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower() for d in deps}
for extra in project.get("optional-dependencies", {}).values():
    for d in extra:
        if re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower() == "ruff" and "ruff" not in names:
            deps.append(d)
            names.add("ruff")
print("\n".join(deps))
EOF
# torch: pin the CPU build when its wheel lies in TORCH_WHEELS (a bare ==X.Y.Z could pick a
# multi-GB CUDA build from the index).
torch_pin="$(sed -n 's/^torch==\([0-9.]*\)$/\1/p' "$req")"
torch_line=""
if [[ -n "$torch_pin" ]] && compgen -G "$TORCH_WHEELS/torch-${torch_pin}+cpu-*.whl" >/dev/null; then
    torch_line="torch==${torch_pin}+cpu"
fi
key="$( { cat "$req"; echo "python=$base_python torch=$torch_line args=${PIP_WHEEL_ARGS:-}"; } \
    | sha256sum | cut -d' ' -f1)"

if [[ -z "${FORCE_WHEELS:-}" ]] && [[ -f "$house/deps/.key" ]] \
    && [[ "$(cat "$house/deps/.key")" == "$key" ]]; then
    log "dependency wheels are up to date ($(find "$house/deps" -name '*.whl' | wc -l) wheels)"
else
    # The virtualenv's versions as constraints (the set the tests ran with), when it has them.
    : >"$cons"
    if "$PYTHON" -m pip --version >/dev/null 2>&1; then
        "$PYTHON" -m pip freeze --exclude-editable 2>/dev/null \
            | grep -E '^[A-Za-z0-9._-]+==' | grep -viE '^(kaizen-bot|kaizen_bot)==' >"$cons" || true
    fi
    if [[ -n "$torch_line" ]]; then
        sed -i '/^torch==/d' "$cons"
        echo "$torch_line" >>"$cons"
    fi
    log "building dependency wheels with $PYTHON ($(wc -l <"$cons") constraints)"
    start=$SECONDS
    tmp="$house/deps.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    cp "$req" "$tmp/requirements.txt"
    # pip itself too: the image's build stage runs pip from its wheel (minimal Debian has no
    # ensurepip) and the final image carries no pip at all.
    # shellcheck disable=SC2086
    "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$tmp" \
        --find-links "$TORCH_WHEELS" --constraint "$cons" ${PIP_WHEEL_ARGS:-} \
        -r "$tmp/requirements.txt" pip
    # Resolve once more with the image's own interpreter, offline, from these wheels only:
    # markers differ between Python versions (redis needs async-timeout before 3.11.3, and
    # Debian's python3 is 3.11.2), so what the host's pip left out is added here.
    for _ in 1 2 3 4 5; do
        if out="$(docker run --rm --network none --label kaizen.sandbox=0 -v "$tmp:/wheels:ro" \
            --entrypoint /bin/sh \
            "$BASE_IMAGE" -c 'set -e; python3 -m venv --without-pip /tmp/v; set -- /wheels/pip-*.whl
            /tmp/v/bin/python "$1/pip" install --dry-run \
            --ignore-installed --no-index --find-links /wheels --disable-pip-version-check \
            --quiet -r /wheels/requirements.txt' 2>&1)"; then
            break
        fi
        missing="$(sed -n 's/.*No matching distribution found for \([^ ]*\).*/\1/p' <<<"$out")"
        if [[ -z "$missing" ]]; then
            printf '%s\n' "$out" >&2
            log "the wheels do not install on $BASE_IMAGE (Python $base_python)"
            exit 1
        fi
        log "adding wheels that Python $base_python needs: $missing"
        # shellcheck disable=SC2086
        "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$tmp" \
            --find-links "$TORCH_WHEELS" --constraint "$cons" ${PIP_WHEEL_ARGS:-} $missing
    done
    if compgen -G "$tmp/nvidia_*" >/dev/null || compgen -G "$tmp/triton-*" >/dev/null; then
        log "a CUDA build of torch was resolved (nvidia-*/triton wheels in $tmp); refusing"
        exit 1
    fi
    if [[ -n "$torch_line" ]] && ! compgen -G "$tmp/torch-${torch_pin}+cpu-*.whl" >/dev/null; then
        log "torch is not the CPU wheel ${torch_line}; refusing"
        exit 1
    fi
    rm -rf "$house/deps"
    mv "$tmp" "$house/deps"
    echo "$key" >"$house/deps/.key"
    log "dependency wheels took $((SECONDS - start))s ($(du -sh "$house/deps" | cut -f1))"
fi

# --- 1b. Debian packages the base lacks ---------------------------------------------------
# bubblewrap, for workers that sandbox with KAIZEN_SANDBOX=bwrap (deploy/docker-compose.yml,
# the Helm chart). Fetched on the host with apt (the build has no network) and installed
# with dpkg in the image; their dependencies must already be in the base (they are in
# Debian's minbase and python:3.11-slim-bookworm). EXTRA_DEBS="" leaves them out.
EXTRA_DEBS="${EXTRA_DEBS-bubblewrap}"
mkdir -p "$house/debs"
if [[ "$(cat "$house/debs/.key" 2>/dev/null)" == "$EXTRA_DEBS" ]]; then
    log "Debian packages are up to date (${EXTRA_DEBS:-none})"
else
    rm -f "$house/debs"/*.deb "$house/debs/.key"
    if [[ -n "$EXTRA_DEBS" ]]; then
        # shellcheck disable=SC2086
        if (cd "$house/debs" && apt-get download -qq $EXTRA_DEBS 2>/dev/null) \
            || { apt-get update -qq && (cd "$house/debs" && apt-get download -qq $EXTRA_DEBS); }; then
            log "fetched $(cd "$house/debs" && echo *.deb)"
        else
            log "could not fetch $EXTRA_DEBS with apt-get download: the image will lack them"
        fi
    fi
    echo "$EXTRA_DEBS" >"$house/debs/.key"
fi

# --- 1c. the sandbox's test runner ----------------------------------------------------------
# Workers that sandbox with bubblewrap run a repository's tests with the image's own
# python3 (the sandbox sees the image's /usr read-only), so that interpreter needs pytest
# and what fixes lean on: the same set as the Docker sandbox image (deploy/sandbox).
# Installed in the image only where the base's python3 lacks them (Debian's packages in
# kaizen-sandbox-base already have them; python:3.11-slim-bookworm has none).
TEST_RUNNER="pytest pytest-timeout coverage pytest-asyncio pytest-mock hypothesis"
runner_key="$(echo "python=$base_python $TEST_RUNNER args=${PIP_WHEEL_ARGS:-}" | sha256sum | cut -d' ' -f1)"
if [[ -z "${FORCE_WHEELS:-}" ]] && [[ "$(cat "$house/testrunner/.key" 2>/dev/null)" == "$runner_key" ]]; then
    log "test runner wheels are up to date"
else
    start=$SECONDS
    tmp="$house/testrunner.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    tr ' ' '\n' <<<"$TEST_RUNNER" >"$tmp/requirements.txt"
    # shellcheck disable=SC2086
    "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$tmp" \
        ${PIP_WHEEL_ARGS:-} -r "$tmp/requirements.txt" pip
    rm -rf "$house/testrunner"
    mv "$tmp" "$house/testrunner"
    echo "$runner_key" >"$house/testrunner/.key"
    log "test runner wheels took $((SECONDS - start))s ($(find "$house/testrunner" -name '*.whl' | wc -l) wheels)"
fi

# --- 2. the application wheel --------------------------------------------------------------
# Built from a copy of the sources (setuptools writes build/ and *.egg-info next to them).
sources=(pyproject.toml README.md bot workers memory)
src_key="$( { find "${sources[@]}" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
    | LC_ALL=C sort -z | xargs -0 sha256sum; echo "python=$py_version"; } | sha256sum | cut -d' ' -f1)"
if [[ -f "$house/app/.key" ]] && [[ "$(cat "$house/app/.key")" == "$src_key" ]] \
    && compgen -G "$house/app/kaizen_bot-*.whl" >/dev/null; then
    log "application wheel is up to date"
else
    start=$SECONDS
    work="$(mktemp -d)"
    tar -c --exclude='__pycache__' --exclude='*.pyc' "${sources[@]}" | tar -x -C "$work"
    isolation=()
    if "$PYTHON" -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 68)' \
        2>/dev/null; then
        isolation=(--no-build-isolation)
    fi
    rm -rf "$house/app"
    SOURCE_DATE_EPOCH=315532800 "$PYTHON" -m pip wheel --quiet --disable-pip-version-check \
        --no-deps "${isolation[@]}" --wheel-dir "$house/app" "$work"
    rm -rf "$work"
    echo "$src_key" >"$house/app/.key"
    log "application wheel took $((SECONDS - start))s"
fi

# --- 3. the image --------------------------------------------------------------------------
log "building $IMAGE from deploy/Dockerfile on $BASE_IMAGE"
start=$SECONDS
build_log="$(mktemp)"
trap 'rm -f "$req" "$cons" "$build_log"' EXIT
docker build --network none --label "$LABEL" --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    -f deploy/Dockerfile -t "$IMAGE" "$root" 2>&1 | tee "$build_log" \
    | while IFS= read -r line; do printf '%(%H:%M:%S)T %s\n' -1 "$line"; done >&2
log "docker build took $((SECONDS - start))s"
# The legacy builder keeps the build stages as untagged images: they are the layer cache.
# Tag this build's last stage (so it stays) and drop superseded stages and images, which
# would otherwise pile up (1.5 GB each time the dependencies change). BuildKit keeps its
# cache elsewhere and prints no such ids: then nothing is done here.
stage_tip="$(awk '/^ ---> [0-9a-f]+$/ {id = $2} /^Step [0-9]+\/[0-9]+ : FROM .* AS final$/ {print id}' \
    "$build_log" | tail -n 1)"
if [[ -n "$stage_tip" ]]; then
    docker tag "$stage_tip" "${IMAGE%:*}-build-cache:latest"
    docker image prune --force --filter label=kaizen.service.stage=1 >/dev/null
    docker image prune --force --filter "label=$LABEL" >/dev/null
fi
size="$(docker image inspect --format '{{.Size}}' "$IMAGE")"
log "$IMAGE: $((size / 1000000)) MB; the whole build took $((SECONDS - total_start))s"
docker run --rm --network none "$IMAGE" --help >/dev/null
log "$IMAGE runs"
