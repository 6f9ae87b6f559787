"""The service image (deploy/Dockerfile), built the way CI builds it and run for real.

``deploy/build-service-image.sh`` builds the wheels on the host and the image with
``docker build --network none`` on the locally imported Debian base
(``kaizen-sandbox-base:bookworm`` from deploy/sandbox/build-base.sh): no registry, no
network inside the build. The script is idempotent: the wheelhouse and Docker's layer cache
make a rebuild with nothing changed take seconds (the first build takes minutes).

Then, in containers without a network:

- ``kaizen fix`` runs a repository's tests under bubblewrap with the image's python3 and
  fixes its bug, as a compose worker would;
- ``kaizen doctor`` passes on the embedded defaults (file broker and embedded Qdrant under
  the data dir, GitHub and LLM not configured: "skip") with a real sandbox: bubblewrap,
  given exactly what deploy/docker-compose.yml gives the worker; and without any sandbox
  it fails on the sandbox check alone, saying what to do;
- the image runs as uid 10001 with ``kaizen`` as entrypoint and ``serve`` as command, and
  its HEALTHCHECK command succeeds against a running web process;
- the offline embedding model, ruff, git and bubblewrap work inside it.

Skipped when no Docker engine answers or the base image is missing, unless
``KAIZEN_REQUIRE_SANDBOXES=1`` (set by CI), where that is a failure instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("KAIZEN_TEST_SERVICE_IMAGE", "kaizen:latest")
BASE_IMAGE = os.environ.get("KAIZEN_TEST_SERVICE_BASE_IMAGE", "kaizen-sandbox-base:bookworm")
REQUIRED = os.environ.get("KAIZEN_REQUIRE_SANDBOXES") == "1"
BUILD_TIMEOUT_S = 1800
# Containers started here carry this label, so a leftover is easy to find.
TEST_LABEL = "kaizen.test=service-image"
# What deploy/docker-compose.yml grants the bwrap worker, and nothing more.
BWRAP_WORKER_OPTS = [
    "--user",
    "0:0",
    "--cap-add",
    "SYS_ADMIN",
    "--security-opt",
    "seccomp=unconfined",
    "--security-opt",
    "apparmor=unconfined",
    "--security-opt",
    "systempaths=unconfined",
]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(BUILD_TIMEOUT_S + 300)]


def _unavailable() -> str | None:
    if shutil.which("docker") is None:
        return "no docker CLI"
    info = subprocess.run(["docker", "info"], capture_output=True, timeout=60, check=False)
    if info.returncode != 0:
        return "no Docker engine answers"
    base = subprocess.run(
        ["docker", "image", "inspect", BASE_IMAGE], capture_output=True, timeout=60, check=False
    )
    if base.returncode != 0:
        return f"no base image {BASE_IMAGE} (bash deploy/sandbox/build-base.sh makes it)"
    return None


@pytest.fixture(scope="module")
def image() -> str:
    reason = _unavailable()
    if reason is not None:
        if REQUIRED:
            pytest.fail(
                f"KAIZEN_REQUIRE_SANDBOXES=1 but the service image cannot be built: {reason}"
            )
        pytest.skip(f"service image not buildable here: {reason}")
    env = {**os.environ, "IMAGE": IMAGE, "BASE_IMAGE": BASE_IMAGE}
    start = time.monotonic()
    build = subprocess.run(
        ["bash", str(ROOT / "deploy" / "build-service-image.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert build.returncode == 0, f"build failed:\n{build.stdout}\n{build.stderr[-6000:]}"
    print(f"service image {IMAGE} ready in {time.monotonic() - start:.0f}s")
    return IMAGE


def run(image: str, *args: str, opts: list[str] | None = None, timeout: float = 180) -> Any:
    """``docker run --rm --network none [opts] image args...``."""
    cmd = ["docker", "run", "--rm", "--network", "none", "--label", TEST_LABEL]
    return subprocess.run(
        [*cmd, *(opts or []), image, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def shell(image: str, script: str, opts: list[str], timeout: float) -> str:
    """``script`` run by ``sh -c`` in a container (``opts`` name the entrypoint); its
    stdout, after checking that it succeeded."""
    proc = run(image, "-c", script, opts=opts, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return str(proc.stdout)


def doctor(image: str, opts: list[str]) -> tuple[int, dict[str, dict[str, str]]]:
    proc = run(image, "doctor", "--json", opts=opts)
    assert proc.stdout.strip(), proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    return proc.returncode, checks


def test_doctor_passes_offline_with_the_bwrap_sandbox(image: str) -> None:
    """The worker's setup in deploy/docker-compose.yml, minus Redis and Qdrant (no network
    here): the embedded broker and Qdrant under the data dir, a real bubblewrap sandbox."""
    code, checks = doctor(image, [*BWRAP_WORKER_OPTS, "-e", "KAIZEN_SANDBOX=bwrap"])
    assert code == 0, checks
    assert [c["status"] for c in checks.values()] == ["ok", "ok", "ok", "skip", "skip", "ok"]
    assert "/var/lib/kaizen/broker" in checks["broker"]["detail"]
    assert "/var/lib/kaizen/qdrant" in checks["qdrant"]["detail"]
    # The tests run with the image's python3, as the sandbox's PATH finds it, not Kaizen's
    # own virtualenv: it must have pytest (the base's, or the wheels the build installs).
    assert checks["sandbox"]["detail"].startswith(
        "bubblewrap available; tests run with /usr/bin/python3 (pytest "
    ), checks["sandbox"]


def test_a_fix_runs_the_repositorys_tests_under_bubblewrap_in_the_image(image: str) -> None:
    """The compose worker's path end to end: `kaizen fix` on a repository, its tests run
    under bubblewrap with the image's python3, test by test, and the bug found and fixed."""
    fixture = ROOT / "tests" / "fixtures" / "fix_repo"
    script = (
        "set -e; cp -r /fixture /tmp/repo; "
        "kaizen fix --repo /tmp/repo --no-llm --json --max-runs 30 --issue-text "
        "'total_price([(10, 2)], 0.1) gives 22.0; a 10 % discount should give 18.0.'"
    )
    opts = [
        *BWRAP_WORKER_OPTS,
        *("-e", "KAIZEN_SANDBOX=bwrap", "-v", f"{fixture}:/fixture:ro", "--entrypoint", "sh"),
    ]
    result = json.loads(shell(image, script, opts, timeout=600))
    assert result["fixed"] is True, result
    assert "amount - amount * discount" in result["patch"]


def test_a_base_without_pytest_gets_the_test_runner_from_the_wheels(image: str) -> None:
    """python:3.11-slim-bookworm, the default base outside CI, has no pytest: the build
    installs it from build/wheelhouse/testrunner with deploy/install-test-runner.sh. Here
    the script runs on CI's base with Debian's pytest packages purged, as the build would."""
    script = (
        "set -e; dpkg --purge python3-pytest-asyncio python3-pytest-mock python3-hypothesis "
        "python3-pytest-timeout python3-pytest python3-coverage >/dev/null; "
        "! python3 -c 'import pytest' 2>/dev/null; "
        "sh /deploy/install-test-runner.sh /wheels; "
        "mkdir /tmp/t && cd /tmp/t && printf 'async def test_a(mocker):\n    pass\n' > test_a.py; "
        "python3 -m pytest -q -p no:cacheprovider -o asyncio_mode=auto --timeout 30 test_a.py"
    )
    opts = [
        *("--user", "0:0", "--entrypoint", "sh"),
        *("-v", f"{ROOT / 'deploy'}:/deploy:ro"),
        *("-v", f"{ROOT / 'build' / 'wheelhouse' / 'testrunner'}:/wheels:ro"),
    ]
    out = shell(BASE_IMAGE, script, opts, timeout=300)
    assert "installed the test runner: pytest " in out
    assert "1 passed" in out

    again = run(image, "-c", "sh /deploy/install-test-runner.sh /nowhere", opts=opts[:6])
    assert again.returncode == 0 and "has the test runner already" in again.stdout, again


def test_doctor_as_the_image_user(image: str) -> None:
    """As uid 10001 with no sandbox backend, doctor fails on the sandbox alone and says
    what to do; KAIZEN_SANDBOX=none (trusted repositories only) makes it pass."""
    code, checks = doctor(image, [])
    assert code == 1
    failed = {name: c["detail"] for name, c in checks.items() if c["status"] == "fail"}
    assert list(failed) == ["sandbox"], checks
    assert "KAIZEN_SANDBOX=none" in failed["sandbox"]
    assert checks["settings"]["status"] == checks["broker"]["status"] == "ok"
    assert checks["qdrant"]["status"] == "ok"

    code, checks = doctor(image, ["-e", "KAIZEN_SANDBOX=none"])
    assert code == 0, checks
    assert checks["sandbox"]["detail"].startswith("UNSANDBOXED")


def test_image_config_non_root_entrypoint_and_labels(image: str) -> None:
    out = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{json .Config}}", image],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    config = json.loads(out.stdout)
    assert config["User"] == "10001:10001"
    assert config["Entrypoint"] == ["kaizen"]
    assert config["Cmd"] == ["serve", "--host", "0.0.0.0"]  # noqa: S104
    assert "KAIZEN_DATA_DIR=/var/lib/kaizen" in config["Env"]
    assert config["Healthcheck"]["Test"][0] == "CMD"
    # The base's kaizen.sandbox=1 would make the sandbox backend's pruning remove Kaizen
    # itself along with leftover sandboxes.
    assert config["Labels"].get("kaizen.sandbox") != "1"

    ids = run(
        image, "-c", "id -u; id -g; stat -c '%u %a' /var/lib/kaizen", opts=["--entrypoint", "sh"]
    )
    assert ids.returncode == 0, ids.stderr
    assert ids.stdout.split("\n")[:3] == ["10001", "10001", "10001 750"]


def test_cli_help(image: str) -> None:
    proc = run(image, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "doctor" in proc.stdout and "serve" in proc.stdout


def test_tools_and_offline_embeddings(image: str) -> None:
    """What reviews and fixes run inside the service: ruff (beside the interpreter), git,
    the sandbox's tools, and the local embedding model (torch, trimmed, on CPU)."""
    script = (
        "set -e; ruff --version; git --version; bwrap --version; command -v unshare mount; "
        'python3 -c "from memory.embedding import LocalEmbedder; '
        "print('dim', len(LocalEmbedder().embed(['a finding'])[0]))\""
    )
    proc = run(image, "-c", script, opts=["--entrypoint", "sh"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "dim 384" in proc.stdout
    assert proc.stdout.startswith("ruff ")


@pytest.fixture
def web(image: str) -> Iterator[str]:
    name = f"kaizen-service-test-{uuid.uuid4().hex[:12]}"
    started = subprocess.run(
        [
            *("docker", "run", "-d", "--name", name, "--network", "none"),
            *("--label", TEST_LABEL, "-e", "KAIZEN_WEBHOOK_SECRET=service-image-test", image),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    try:
        yield name
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=120, check=False)


def test_healthcheck_passes_against_the_default_command(image: str, web: str) -> None:
    """The image's own HEALTHCHECK command, run in the container of the default command
    (`kaizen serve --host 0.0.0.0`), succeeds once the server is up."""
    out = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{json .Config.Healthcheck.Test}}", image],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    test = json.loads(out.stdout)
    assert test[0] == "CMD"
    deadline = time.monotonic() + 90
    last = ""
    while time.monotonic() < deadline:
        probe = subprocess.run(
            ["docker", "exec", web, *test[1:]], capture_output=True, text=True, timeout=60
        )
        if probe.returncode == 0:
            break
        last = probe.stderr[-2000:]
        time.sleep(1)
    else:
        logs = subprocess.run(["docker", "logs", web], capture_output=True, text=True, timeout=60)
        pytest.fail(f"healthcheck never passed: {last}\nlogs:\n{logs.stdout}{logs.stderr}")
    whoami = subprocess.run(
        ["docker", "exec", web, "id", "-u"], capture_output=True, text=True, timeout=60
    )
    assert whoami.stdout.strip() == "10001"
