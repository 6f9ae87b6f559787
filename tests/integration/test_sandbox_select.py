"""Choosing a backend, running unsandboxed only when asked, pytest per test, and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.procs import kaizen_cmd, kaizen_env
from workers.sandbox.base import Limits, SandboxUnavailable
from workers.sandbox.bwrap import bwrap_available
from workers.sandbox.docker import docker_available
from workers.sandbox.select import choose_sandbox
from workers.sandbox.tests_step import run_pytest
from workers.sandbox.unsandboxed import UnsandboxedRunner
from workers.sandbox.workspace import workspace_copy

pytestmark = pytest.mark.slow

REQUIRED = os.environ.get("KAIZEN_REQUIRE_SANDBOXES") == "1"
BWRAP = bwrap_available()
DOCKER = docker_available()


def needs(reason: str | None) -> pytest.MarkDecorator:
    return pytest.mark.skipif(reason is not None and not REQUIRED, reason=reason or "")


SUITE = {
    "test_math.py": (
        "def test_adds():\n    assert 1 + 1 == 2\n\n"
        "def test_breaks():\n    assert 1 + 1 == 3\n\n"
        "def test_raises():\n    raise KeyError('missing')\n"
    )
}


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


@needs(DOCKER)
def test_auto_prefers_docker_when_an_engine_answers() -> None:
    assert choose_sandbox("auto").name == "docker"


@needs(BWRAP)
def test_bwrap_can_be_asked_for() -> None:
    assert choose_sandbox("bwrap").name == "bwrap"


def test_a_missing_image_or_unknown_backend_is_refused_with_the_reason() -> None:
    with pytest.raises(SandboxUnavailable, match="Docker sandbox unavailable"):
        choose_sandbox("docker", image="kaizen-no-such-image:never")
    with pytest.raises(SandboxUnavailable, match="unknown sandbox backend"):
        choose_sandbox("chroot")


def test_unsandboxed_needs_to_be_asked_for_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        runner = choose_sandbox("none")
    assert runner.name == "none"
    assert "without any sandbox" in caplog.text


def test_unsandboxed_runs_keep_the_time_limit_output_cap_and_clean_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_not_for_the_sandbox")
    runner = UnsandboxedRunner()
    env_run = runner.run(
        [sys.executable, "-c", "import os; print(sorted(os.environ))"],
        workspace=tmp_path,
        limits=Limits(timeout_s=10),
    )
    assert "GITHUB_TOKEN" not in env_run.stdout
    started = time.monotonic()
    slow = runner.run(
        ["sh", "-c", "sleep 30 & sleep 30"], workspace=tmp_path, limits=Limits(timeout_s=1)
    )
    assert slow.timed_out and slow.exit_code is None
    assert time.monotonic() - started < 10
    loud = runner.run(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * 5_000_000)"],
        workspace=tmp_path,
        limits=Limits(timeout_s=20, output_bytes=1000),
    )
    assert loud.output_truncated and len(loud.stdout) == 1000


@pytest.mark.parametrize(
    ("backend", "python", "reason"),
    [("bwrap", sys.executable, BWRAP), ("docker", "python3", DOCKER)],
)
def test_pytest_results_come_back_per_test(
    tmp_path: Path, backend: str, python: str, reason: str | None
) -> None:
    if reason is not None and not REQUIRED:
        pytest.skip(reason)
    repo = make_repo(tmp_path / "repo", SUITE)
    sandbox = choose_sandbox(backend)
    with workspace_copy(repo) as workspace:
        run = run_pytest(sandbox, workspace, limits=Limits(timeout_s=120), python=python)
    assert run.report_error is None, run.run.stderr[-2000:]
    outcomes = {t.name: t.outcome for t in run.tests}
    assert outcomes == {"test_adds": "passed", "test_breaks": "failed", "test_raises": "failed"}
    raised = next(t for t in run.tests if t.name == "test_raises")
    assert raised.exception_type == "KeyError"
    assert not (repo / ".kaizen-junit.xml").exists()  # the original clone is untouched


def run_cli(
    *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = kaizen_env(**(extra_env or {}))
    return subprocess.run(
        kaizen_cmd("sandbox", "run", *args),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs(BWRAP)
def test_cli_prints_the_result_and_exits_with_the_commands_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"fail.py": "import sys; print('out'); sys.exit(3)"})
    done = run_cli(
        "--backend",
        "bwrap",
        "--workspace",
        str(repo),
        "--timeout",
        "30",
        "--",
        sys.executable,
        "fail.py",
    )
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    assert result["exit_code"] == 3
    assert result["stdout"] == "out\n"
    assert result["backend"] == "bwrap"
    assert set(result) >= {"exit_code", "timed_out", "oom_killed", "duration_s", "stdout", "stderr"}


@needs(BWRAP)
def test_cli_reports_a_timeout(tmp_path: Path) -> None:
    done = run_cli(
        "--backend",
        "bwrap",
        "--workspace",
        str(tmp_path),
        "--timeout",
        "1",
        "--",
        "sleep",
        "30",
    )
    assert done.returncode == 124
    assert json.loads(done.stdout)["timed_out"] is True


def test_cli_refuses_a_backend_that_cannot_run(tmp_path: Path) -> None:
    done = run_cli(
        "--backend",
        "docker",
        "--workspace",
        str(tmp_path),
        "--",
        "true",
        extra_env={"sandbox_image": "kaizen-no-such-image:never"},
    )
    assert done.returncode == 2
    assert "Docker sandbox unavailable" in done.stderr
    assert "Traceback" not in done.stderr


def test_auto_refuses_when_neither_backend_can_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import workers.sandbox.bwrap as bwrap_module
    import workers.sandbox.docker as docker_module

    monkeypatch.setattr(docker_module, "docker_available", lambda image: "no engine answers")
    monkeypatch.setattr(bwrap_module, "bwrap_available", lambda: "bwrap is not installed")
    with pytest.raises(SandboxUnavailable) as raised:
        choose_sandbox("auto")
    message = str(raised.value)
    assert "no engine answers" in message and "bwrap is not installed" in message
    assert "KAIZEN_SANDBOX=none" in message


@needs(BWRAP)
def test_install_phase_has_no_network_unless_the_repo_allows_it(tmp_path: Path) -> None:
    from workers.sandbox.tests_step import run_install

    sandbox = choose_sandbox("bwrap")
    probe = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 6379), timeout=2); print('reached')\n"
        "except OSError as exc:\n"
        "    print('no network', exc.errno)\n"
    )
    closed = run_install(
        sandbox,
        tmp_path,
        [sys.executable, "-c", probe],
        limits=Limits(timeout_s=30),
        allow_network=False,
    )
    assert "no network" in closed.stdout, closed.stderr
    # bubblewrap cannot give a run a network of its own here; it refuses instead of
    # sharing the host's (whose loopback has Redis on it).
    with pytest.raises(SandboxUnavailable):
        run_install(
            sandbox,
            tmp_path,
            [sys.executable, "-c", probe],
            limits=Limits(timeout_s=30),
            allow_network=True,
        )
