"""Running a repository's tests in the sandbox, before and after a patch, and scoring it.

The reward is shaped from per-test results, not the exit code: the tests that failed at
baseline (the targets) should now pass, no test that passed may fail, smaller patches
are preferred, and a patch that adds lint errors loses a little.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from workers.fix.localize import (
    COVERAGE_DATA_NAME,
    MAX_COVERAGE_BYTES,
    with_coverage,
    write_coverage_rc,
)
from workers.fix.pytest_shim import SHIM_DIR, install_shim
from workers.fix.types import Patch, RefusedEdit, check_edit_path
from workers.sandbox.base import Limits, RunResult, Sandbox
from workers.sandbox.disk import workspace_kill_text
from workers.sandbox.junit import TestResult, pytest_command
from workers.sandbox.tests_step import REPORT, read_report
from workers.sandbox.workspace import workspace_copy


@dataclass
class TestsOutcome:
    __test__ = False  # not a pytest test class

    run: RunResult
    tests: list[TestResult] = field(default_factory=list)
    report_error: str | None = None
    coverage_file: Path | None = None

    @property
    def passed(self) -> set[str]:
        return {t.nodeid for t in self.tests if t.outcome == "passed"}

    @property
    def failed(self) -> set[str]:
        return {t.nodeid for t in self.tests if t.outcome in ("failed", "error")}

    @property
    def skipped(self) -> set[str]:
        return {t.nodeid for t in self.tests if t.outcome == "skipped"}

    @property
    def ok(self) -> bool:
        """The run itself worked (it may still have failing tests)."""
        return not (self.run.timed_out or self.run.disk_limit_exceeded or self.report_error)

    def without(self, nodeids: Collection[str]) -> TestsOutcome:
        """This outcome as if ``nodeids`` had not run (neither failed nor passed)."""
        kept = [t for t in self.tests if t.nodeid not in nodeids]
        return replace(self, tests=kept)


@dataclass
class Score:
    reward: float
    success: bool
    fixed: set[str]
    still_failing: set[str]
    broken: set[str]
    only_targets: bool = False  # only the failing tests ran: nothing is known of the rest
    # passing tests that failed in one run of the candidate and passed when it ran again
    flaky: set[str] = field(default_factory=set)
    # targets left failing by a success: they never run the changed file (FixLoop._enough)
    left_failing: set[str] = field(default_factory=set)
    # targets that skip once the candidate is in, beside targets it made pass (see score)
    skipped: set[str] = field(default_factory=set)

    def summary(self) -> str:
        parts = [f"{len(self.fixed)} target test(s) fixed"]
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped once fixed")
        if self.still_failing:
            parts.append(f"{len(self.still_failing)} still failing")
        if self.broken:
            parts.append(f"{len(self.broken)} previously passing test(s) broken")
        if self.flaky:
            parts.append(f"{len(self.flaky)} flaky test(s) passed when run again")
        if self.left_failing:
            parts.append(f"{len(self.left_failing)} left failing: they never run the changed file")
        text = ", ".join(parts)
        return f"{text} (only the failing tests were run)" if self.only_targets else text


def score(
    baseline: TestsOutcome,
    after: TestsOutcome,
    patch: Patch | None,
    *,
    only_targets: bool = False,
) -> Score:
    """``only_targets``: ``after`` ran just the baseline's failing tests (the quick check),
    so the passing tests it did not run are not counted as broken - and it is never a
    success, which needs the whole suite.

    A target that is skipped once the candidate is in is no longer failing, provided
    another target now passes: a ``unittest`` test whose ``subTest`` per optional backend
    skips where the backend is missing (pathspec's) fails while the bug is there and is
    reported skipped once it is gone. Skips alone are no evidence of a fix."""
    targets = baseline.failed
    kept = baseline.passed
    now_passed = after.passed
    fixed = targets & now_passed
    skipped = (targets & after.skipped) if fixed else set()
    broken = set() if only_targets else _broken(baseline, after)
    if not after.ok:
        return Score(-1.0, False, set(), targets, broken, only_targets)
    resolved = len(fixed) + len(skipped)
    reward = (resolved / len(targets) if targets else 0.0) - 1.0 * len(broken) / max(1, len(kept))
    if patch is not None:
        reward -= 0.002 * patch.changed_lines
        reward -= 0.1 * new_lint_errors(patch)
    still = targets - fixed - skipped
    success = bool(targets) and not still and not broken and not only_targets
    return Score(round(reward, 4), success, fixed, still, broken, only_targets, skipped=skipped)


def _broken(baseline: TestsOutcome, after: TestsOutcome) -> set[str]:
    """The baseline's passing tests that do not pass after, less the cases of a
    parametrized test renamed by the candidate: annotated-types names its cases after
    the constraints the code under test expands (``test_valid_cases[… Le(le=4) …]``),
    and its right fix renamed 14 passing cases. A case gone from a test function counts
    as renamed when at least as many new cases of that function pass."""
    gone = {t for t in baseline.passed if t not in after.passed}
    ran = {t.nodeid for t in after.tests}
    before = {t.nodeid for t in baseline.tests}
    vanished: Counter[str] = Counter(_case_of(t) for t in gone if t not in ran and "[" in t)
    new_passing = Counter(_case_of(t) for t in after.passed - before if "[" in t)
    renamed = {f for f, n in vanished.items() if new_passing[f] >= n}
    return {t for t in gone if t in ran or "[" not in t or _case_of(t) not in renamed}


def _case_of(nodeid: str) -> str:
    """``t.py::test_x[a-1]`` → ``t.py::test_x``."""
    return nodeid.split("[", 1)[0]


def new_lint_errors(patch: Patch) -> int:
    """How many more pyflakes errors (undefined names, …) the patched file has."""
    if not patch.path.endswith(".py"):
        return 0
    return max(0, _pyflakes_count(patch.after) - _pyflakes_count(patch.before))


def _pyflakes_count(text: str) -> int:
    ruff = Path(sys.executable).parent / "ruff"
    argv = [str(ruff)] if ruff.exists() else [sys.executable, "-m", "ruff"]
    try:
        done = subprocess.run(
            [
                *argv,
                "check",
                "--isolated",
                "--no-cache",
                "--select",
                "F",
                "--output-format",
                "json",
                "--exit-zero",
                "--stdin-filename",
                "patched.py",
                "-",
            ],
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=30,
            check=False,
        )
        return len(json.loads(done.stdout or b"[]"))
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return 0


# Every test run hashes strings the same way (see TestRunner._run_env).
HASH_SEED = "0"


@dataclass
class TestRunner:
    """Runs the tests of a checkout in the sandbox, each time on a private copy."""

    sandbox: Sandbox
    checkout: Path
    limits: Limits
    python: str = "python3"
    custom_command: Sequence[str] | None = None  # a configured non-pytest command
    pytest_args: Sequence[str] = ()  # a configured pytest call's own arguments (-k, paths)
    per_test_timeout_s: float = 60.0
    scratch: Path | None = None  # where coverage data is kept after the copy is removed
    env: Mapping[str, str] = field(default_factory=dict)  # e.g. PYTHONPATH for a src layout
    runs: int = 0

    __test__ = False  # not a pytest test class

    def run(
        self,
        patches: Sequence[Patch] = (),
        *,
        coverage: bool = False,
        select: Sequence[str] = (),
        timeout_s: float | None = None,
    ) -> TestsOutcome:
        """``select``: pytest node ids to run instead of the whole suite (ignored for a
        configured non-pytest command, which has no way to pick tests). ``timeout_s``:
        a shorter limit than the runner's for this run."""
        limits = self.limits
        if timeout_s is not None and timeout_s < limits.timeout_s:
            limits = replace(limits, timeout_s=timeout_s)
        with workspace_copy(self.checkout) as workspace:
            for patch in patches:
                target = (workspace / check_edit_path(patch.path)).resolve()
                if workspace.resolve() not in target.parents:  # a symlink pointing out
                    raise RefusedEdit(f"refused: {patch.path!r} leaves the repository")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(patch.after, encoding="utf-8")
            self.runs += 1
            if self.custom_command:
                result = self.sandbox.run(
                    list(self.custom_command),
                    workspace=workspace,
                    limits=limits,
                    env=self._run_env(),
                )
                return TestsOutcome(result, _exit_code_tests(result, limits))
            return self._pytest(workspace, coverage, select, limits)

    def _run_env(self) -> dict[str, str]:
        """The environment of every run, with string hashing fixed: a suite that builds
        its parametrised cases from a set names them by their order (isodate 0.7's
        ``test_format[4-19-expected6-%C]`` was ``expected19`` in the next run), and a
        candidate must run the tests the baseline ran, or each renamed one counts as
        broken (48 of them on every candidate, the right patch too). A repository that
        sets its own seed keeps it."""
        return {"PYTHONHASHSEED": HASH_SEED, **self.env}

    def _pytest(
        self, workspace: Path, coverage: bool, select: Sequence[str], limits: Limits
    ) -> TestsOutcome:
        report = workspace / REPORT
        shim = install_shim(workspace)  # a config's --cov, -n, --reruns without the plugin
        env = {**self._run_env(), "PYTHONPATH": _path_with(self.env.get("PYTHONPATH"), SHIM_DIR)}
        # `--` so that a node id can never be read as an option.
        args = [*self.pytest_args, *shim]
        command = pytest_command(
            f"/workspace/{REPORT}",
            [*args, "--", *select] if select else args,
            per_test_timeout_s=self.per_test_timeout_s,
            python=self.python,
            has_pytest_timeout=True if self.sandbox.name == "docker" else None,
        )
        if coverage:
            write_coverage_rc(workspace, SHIM_DIR)
            command = with_coverage(command)
        result = self.sandbox.run(command, workspace=workspace, limits=limits, env=env)
        tests, error = read_report(report, result, limits)
        if coverage and "No module named coverage" in result.stderr:
            return self._pytest(workspace, False, select, limits)
        outcome = TestsOutcome(result, tests, error)
        if coverage and self.scratch is not None:
            outcome.coverage_file = _keep_coverage(
                workspace / COVERAGE_DATA_NAME, self.scratch / f"coverage-{self.runs}.sqlite"
            )
        return outcome


def _path_with(path: str | None, folder: str) -> str:
    return os.pathsep.join(p for p in (path, folder) if p)


def _keep_coverage(data: Path, kept: Path) -> Path | None:
    """Copy the run's coverage data out of the workspace before it is removed.

    The repository's code wrote that file, so it may be a symlink to a host file: it is
    opened without following links, and only a regular file of bounded size is kept.
    """
    try:
        fd = os.open(data, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_COVERAGE_BYTES:
            return None
        kept.write_bytes(source.read(MAX_COVERAGE_BYTES + 1))
    return kept


def _exit_code_tests(result: RunResult, limits: Limits) -> list[TestResult]:
    """A configured command that is not pytest: the whole suite is one test."""
    killed = result.timed_out or result.disk_limit_exceeded
    outcome = "passed" if result.exit_code == 0 and not killed else "failed"
    message = result.stderr[-2000:] if outcome == "failed" else ""
    if result.disk_limit_exceeded:
        said = workspace_kill_text(result.details, limits.workspace_mb)
        message = f"{said} and was stopped.\n{message}"
    return [
        TestResult(
            nodeid="(test command)",
            classname="",
            name="test command",
            file=None,
            outcome=outcome,  # type: ignore[arg-type]
            duration_s=result.duration_s,
            message=message,
        )
    ]
