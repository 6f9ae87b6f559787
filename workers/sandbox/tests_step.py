"""The test-runner step: pytest inside the sandbox, results per test from JUnit XML.

Rewards are computed per test (target tests now pass, nothing that passed now fails), so
the run's exit code alone is not enough.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from workers.sandbox.base import Limits, RunResult, Sandbox
from workers.sandbox.disk import workspace_kill_text
from workers.sandbox.junit import JUnitError, TestResult, load_junit, pytest_command

REPORT = ".kaizen-junit.xml"


@dataclass
class TestRun:
    run: RunResult
    tests: list[TestResult] = field(default_factory=list)
    report_error: str | None = None

    @property
    def passed(self) -> list[str]:
        return [t.nodeid for t in self.tests if t.outcome == "passed"]

    @property
    def failed(self) -> list[str]:
        return [t.nodeid for t in self.tests if t.outcome in ("failed", "error")]


def run_pytest(
    sandbox: Sandbox,
    workspace: Path,
    *,
    limits: Limits,
    python: str = "python3",
    args: Sequence[str] = (),
    per_test_timeout_s: float | None = 60.0,
    env: Mapping[str, str] | None = None,
) -> TestRun:
    """Run the repository's tests in ``sandbox`` and read back what each test did."""
    report = workspace / REPORT
    report.unlink(missing_ok=True)
    # The Docker image ships pytest-timeout; bubblewrap and unsandboxed runs use host
    # interpreters, which pytest_command checks.
    command = pytest_command(
        f"/workspace/{REPORT}",
        args,
        per_test_timeout_s=per_test_timeout_s,
        python=python,
        has_pytest_timeout=True if sandbox.name == "docker" else None,
    )
    result = sandbox.run(command, workspace=workspace, limits=limits, env=env)
    tests, error = read_report(report, result, limits)
    return TestRun(result, tests, error)


def read_report(
    report: Path, result: RunResult, limits: Limits
) -> tuple[list[TestResult], str | None]:
    """The tests a pytest run's JUnit report lists, or why there are none."""
    if result.disk_limit_exceeded:
        # Killed mid-run: a report left behind is partial, or the suite's own forgery.
        return [], f"{workspace_kill_text(result.details, limits.workspace_mb)} and was stopped"
    if not report.exists():
        return [], "pytest wrote no report (killed or crashed early)"
    try:
        return load_junit(report), None
    except JUnitError as exc:
        return [], str(exc)


def run_install(
    sandbox: Sandbox,
    workspace: Path,
    command: Sequence[str],
    *,
    limits: Limits,
    allow_network: bool,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """The optional install phase (dependencies) before the tests.

    It may reach the network only when the repository's config allows it
    (``fix.allow_network_install``); the test phase that follows never does. A backend
    that cannot give a run its own network refuses with ``SandboxUnavailable`` rather
    than sharing the host's.
    """
    return sandbox.run(
        command, workspace=workspace, limits=replace(limits, network=allow_network), env=env
    )
