"""The fix loop: baseline, localise, try patches in the order learning suggests, keep the
first that makes the failing tests pass without breaking others.

Order of work, and why:

0. If the repository's config names an ``install_command``, run it once in the sandbox on
   a private copy of the clone (network only with ``allow_network_install``); every test
   run then starts from a copy of that prepared tree, so what it installed into the
   workspace (a ``.venv``, a ``--target`` folder) is there, while the clone that commits
   and pushes is never touched by the repository's code (no planted git hooks).
1. Detect the test command and run a baseline in the sandbox (with per-test coverage when
   the sandbox's Python has coverage.py): the failing tests are the targets, the passing
   ones must stay green. Failing tests the sandbox makes fail whatever the code does (a
   dependency nothing installed, no network: ``workers.fix.environment``) are set aside,
   neither targets nor counted as broken, and named; when the issue names some of the
   failing tests (``workers.fix.targets``), those alone are the targets. No failing test
   means no way to tell a fix from a guess, so the loop stops and says so.
2. Localise: tracebacks and names in the issue, frames of the failing tests, and an
   Ochiai ranking over per-test coverage.
3. Propose: template operators at the suspicious lines (always), and the LLM policy when
   an endpoint is configured. Candidates are ordered by suspiciousness times the learned
   score of their pattern for this error class (``fix:<operator>:<ErrorType>``), with a
   boost for operators that fixed similar issues before (skills from memory).
4. Each candidate runs in a fresh copy. When the suite is slow enough for it to pay, the
   failing tests alone run first (the quick check) and only a candidate that makes them
   all pass runs the whole suite, which alone can accept it: on a real project most
   candidates fail their targets, and a full run of every one is what spent the budget.
   The quick check is used only after it reproduced the baseline's failures on the
   unpatched tree (a test that fails only after another one would pass alone, and every
   candidate would look like a fix). Its reward is stored on an experience and its
   verdict moves the pattern's score, so the next issue with the same kind of failure
   tries the right operator sooner. A candidate that fixes every target but fails one to
   three passing tests gets the whole suite run once more before it is rejected: real
   projects have flaky tests, and only a clean second run accepts it (the PR names them).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from memory.activity import Event
from memory.scores import Prior, posterior
from memory.service import Memory
from memory.types import Experience, Kind, Outcome, Signal
from workers.fix import localize
from workers.fix.environment import (
    describe,
    environment_failures,
    fixture_names,
    identifiers,
    optional_imports,
    repository_modules,
)
from workers.fix.evaluate import Score, TestRunner, TestsOutcome, score
from workers.fix.issue_hints import operator_hints
from workers.fix.operators import OPERATORS
from workers.fix.planning import plausibility, rank_in_tiers
from workers.fix.targets import named_in, never_run, targets_of_named_code
from workers.fix.testcmd import TestCommand, config_text, detect_test_command, src_layout
from workers.fix.types import Patch, Suspect
from workers.fix.warning_filters import missing_filter_module, without_filters_of
from workers.review.repo_files import pytest_testpaths
from workers.review.secrets_scan import redact_secrets
from workers.sandbox.base import Limits, Sandbox, SandboxUnavailable
from workers.sandbox.disk import workspace_kill_text
from workers.sandbox.tests_step import run_install
from workers.sandbox.workspace import workspace_copy

log = logging.getLogger(__name__)

MAX_SUSPECTS = 8
SKILL_BOOST = 2.0
# A recalled fix boosts its operator only if its issue is this similar (cosine) to this
# one. Recall always returns its ``limit`` nearest accepted fixes, however far: on the fix
# corpus (bench/fix_corpus.py) the same issue seen again scores 0.72-0.94 with the local
# embedder, but another repository's unrelated bug 0.25-0.47, and boosting those
# operators pushed the right candidate at the top suspect past the run budget.
SKILL_MIN_SIMILARITY = 0.6
# What the install step may add to the workspace: dependencies land there (the sandbox's
# root is read-only), and a virtualenv with a CUDA build of torch takes several GB. Test
# runs keep the sandbox's default (``Limits.workspace_mb``).
INSTALL_WORKSPACE_MB = 12_288
# And files: a node_modules tree holds hundreds of thousands.
INSTALL_WORKSPACE_FILES = 2_000_000
# A candidate that fixes every target but fails this many passing tests or fewer gets a
# second full run before it is rejected (flaky tests); more looks like real breakage.
MAX_FLAKY_RETRY = 3
# The quick check is not worth its extra run for more targets than this (they are most of
# the suite) or for a suite this fast (the sandbox's start-up is most of a run).
MAX_QUICK_TARGETS = 100
QUICK_CHECK_MIN_SUITE_S = 5.0
MAX_RUN_TIMEOUT_S = 300.0
# A candidate's run may take this many times what the same tests took unpatched (and at
# least the floor: a right patch lets a test that failed early run its whole course)
# before it counts as hanging. A template that turns a loop's condition around can make
# every test it reaches spin: idna 3.12's suite takes 24 s, and one such candidate ran
# for the whole 300 s limit, as did each test of the quick check up to its 60 s.
QUICK_TIMEOUT_FACTOR = 4.0
QUICK_TIMEOUT_FLOOR_S = 60.0
SUITE_TIMEOUT_FACTOR = 3.0  # of the baseline, which ran with coverage: slower already
SUITE_TIMEOUT_FLOOR_S = 120.0
PYTHON_EXCLUDES = (".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist")


# Baseline runs again without the warning filters naming modules the sandbox lacks, one
# module more each time (see workers.fix.warning_filters)
MAX_FILTER_RETRIES = 3


@dataclass
class FixBudget:
    max_attempts: int = 3  # LLM attempts (each a short tool-using loop)
    max_sandbox_runs: int = 40  # candidate evaluations, all policies together
    time_limit_s: float = 600.0
    run_timeout_s: float = 120.0
    workspace_mb: int = Limits().workspace_mb  # what one test run may add to its workspace
    install_workspace_mb: int = INSTALL_WORKSPACE_MB  # what the install step may add
    workspace_files: int = Limits().workspace_files  # files one test run may add
    install_workspace_files: int = INSTALL_WORKSPACE_FILES
    # Run only the failing tests first when the baseline took at least this long.
    quick_check_min_suite_s: float = QUICK_CHECK_MIN_SUITE_S

    @classmethod
    def within(cls, time_limit_s: float, *, max_attempts: int, max_sandbox_runs: int) -> FixBudget:
        """The budget of a fix given its time limit: one test run may take most of it, up
        to 5 minutes (a real project's baseline with coverage can take minutes; a run
        that hangs must not take the whole fix)."""
        return cls(
            max_attempts=max_attempts,
            max_sandbox_runs=max_sandbox_runs,
            time_limit_s=float(time_limit_s),
            run_timeout_s=min(MAX_RUN_TIMEOUT_S, float(time_limit_s)),
        )


@dataclass(frozen=True)
class CandidateRuns:
    """How a candidate is run: ``quick``, the failing tests to run alone first (none: the
    whole suite straight away), and the time each kind of run may take."""

    quick: list[str]
    quick_timeout_s: float
    suite_timeout_s: float


def candidate_runs(quick: list[str], alone_s: float, suite_s: float) -> CandidateRuns:
    """The candidates' runs given how long the failing tests took alone (``alone_s``) and
    the whole suite in the baseline (``suite_s``); the runner's own limit still caps both."""
    return CandidateRuns(
        quick,
        quick_timeout_s=max(QUICK_TIMEOUT_FLOOR_S, QUICK_TIMEOUT_FACTOR * alone_s),
        suite_timeout_s=max(SUITE_TIMEOUT_FLOOR_S, SUITE_TIMEOUT_FACTOR * suite_s),
    )


@dataclass
class AttemptRecord:
    policy: str  # template | llm
    pattern: str
    description: str
    reward: float
    success: bool
    summary: str
    experience_id: str | None = None
    reflection: str | None = None


@dataclass
class FixResult:
    fixed: bool
    message: str
    attempts: list[AttemptRecord] = field(default_factory=list)
    sandbox_runs: int = 0
    patch: str = ""
    patches: list[Patch] = field(default_factory=list)
    reward: float = 0.0
    duration_s: float = 0.0
    baseline_failed: list[str] = field(default_factory=list)
    baseline_passed: int = 0
    after_passed: int = 0
    error_class: str = ""
    suspects: list[Suspect] = field(default_factory=list)
    winning_experience: str | None = None
    # failing tests set aside: they fail in the sandbox whatever the code does (node id ->
    # cause, workers.fix.environment); not in baseline_failed, never counted as broken
    environment_failed: dict[str, str] = field(default_factory=dict)
    # passing tests that failed once with the fix and passed when the suite ran again
    flaky: list[str] = field(default_factory=list)
    # failing tests the issue did not name when it named others (workers.fix.targets):
    # not targets, not in baseline_failed, never counted as broken
    other_failed: list[str] = field(default_factory=list)

    @property
    def patterns_tried(self) -> list[str]:
        return list(dict.fromkeys(a.pattern for a in self.attempts))

    def as_json(self) -> dict[str, Any]:
        return {
            "fixed": self.fixed,
            "attempts": len(self.attempts),
            "sandbox_runs": self.sandbox_runs,
            "patch": self.patch,
            "patterns_tried": self.patterns_tried,
            "reward": self.reward,
            "duration_s": round(self.duration_s, 3),
            "message": self.message,
            "error_class": self.error_class,
            "baseline_failed": self.baseline_failed,
            "environment_failed": self.environment_failed,
            "flaky": self.flaky,
            "other_failed": self.other_failed,
        }


@dataclass
class FixContext:
    """What a policy may look at: the issue, the checkout, the failing tests, the suspects."""

    repo: str
    issue_id: str
    issue_text: str
    checkout: Path
    baseline: TestsOutcome
    suspects: list[Suspect]
    error_class: str
    files: dict[str, str]
    skills: list[Experience]
    reflections: list[str]
    # where the repository keeps tests besides the usual names (pytest's testpaths, e.g.
    # celery's t/unit): never edited, like any test
    test_roots: tuple[str, ...] = ()


class LlmPolicy(Protocol):
    """The LLM fixer: one attempt per call, which may run the tests itself."""

    def attempt(
        self, ctx: FixContext, runner: TestRunner, *, number: int
    ) -> tuple[list[Patch], str | None]:
        """The patches of its best edit (empty if it gave up) and a reflection if it failed."""
        ...

    def reflect(self, ctx: FixContext, summary: str) -> str:
        """Why the last attempt's patch failed the tests, for the next attempt to read."""
        ...


def python_files(root: Path, limit_bytes: int = 400_000) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in PYTHON_EXCLUDES for part in rel.parts) or path.is_symlink():
            continue
        try:
            if path.stat().st_size > limit_bytes:
                continue
            files[rel.as_posix()] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return files


def error_class_of(baseline: TestsOutcome) -> str:
    """The commonest exception type among the failing tests (``AssertionError``, …)."""
    kinds = Counter(
        (t.exception_type or "failure").split(".")[-1]
        for t in baseline.tests
        if t.outcome in ("failed", "error")
    )
    if not kinds:
        return "failure"
    name = kinds.most_common(1)[0][0]
    return "".join(ch for ch in name if ch.isalnum() or ch == "_")[:60] or "failure"


def pattern_for(operator: str, error_class: str) -> str:
    """``fix:comparison`` for ``AssertionError`` → ``fix:comparison:AssertionError``."""
    return f"{operator}:{error_class}"


def _fingerprint(issue_id: str, patch: Patch) -> str:
    digest = hashlib.sha256(f"{patch.path}\0{patch.after}".encode()).hexdigest()[:20]
    return f"{issue_id}:{digest}"


class FixLoop:
    def __init__(
        self,
        *,
        sandbox: Sandbox,
        memory: Memory | None,
        llm: LlmPolicy | None = None,
        budget: FixBudget | None = None,
        python: str = "python3",
        rng: random.Random | None = None,
        progress: Callable[[str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.memory = memory
        self.llm = llm
        self.budget = budget or FixBudget()
        self.python = python
        self.rng = rng or random.Random()  # noqa: S311 - sampling, not cryptography
        self.progress = progress or (lambda _text: None)
        self.cancelled = cancelled or (lambda: False)
        # Experience id -> similarity of the recalled skill to the current issue.
        self._skill_similarity: dict[str, float] = {}

    def run(
        self,
        *,
        repo: str,
        issue_id: str,
        issue_text: str,
        checkout: Path,
        test_command: str | None = None,
        install_command: str | None = None,
        allow_network_install: bool = False,
    ) -> FixResult:
        started = time.monotonic()
        command = detect_test_command(checkout, test_command)
        if command is None:
            result = FixResult(
                False,
                "No tests found (no pytest configuration, tests/ folder, test_*.py files, "
                "or tests.py / test.py at the root or in a package): "
                "Kaizen needs a failing test to know when a fix works. Set `fix.test_command` "
                "in .github/kaizen.yml if the tests run another way.",
            )
            self._note(repo, issue_id, result)
            return result
        with contextlib.ExitStack() as stack:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kaizen-fix-")))
            tests_from = checkout
            install_runs = 0
            failed_install: str | None = None
            if install_command is not None and install_command.strip():
                tests_from = stack.enter_context(workspace_copy(checkout, parent=scratch))
                failed_install = self._install(tests_from, install_command, allow_network_install)
                install_runs = 1
            runner = self._runner(tests_from, command, scratch)
            if failed_install is not None:
                result = FixResult(False, failed_install)
            else:
                result = self._run(repo, issue_id, issue_text, checkout, runner, started)
            result.sandbox_runs = runner.runs + install_runs
            result.duration_s = time.monotonic() - started
        self._note(repo, issue_id, result)
        return result

    def _install(self, workspace: Path, command: str, allow_network: bool) -> str | None:
        """Run ``fix.install_command`` in ``workspace``; why it failed, or ``None``. A failed
        install ends the fix: tests without their dependencies tell nothing about a patch."""
        self.progress(f"Installing dependencies: `{command}`.")
        limits = Limits(
            timeout_s=self.budget.run_timeout_s,
            workspace_mb=self.budget.install_workspace_mb,
            workspace_files=self.budget.install_workspace_files,
        )
        try:
            run = run_install(
                self.sandbox,
                workspace,
                ["sh", "-c", command],
                limits=limits,
                allow_network=allow_network,
            )
        except SandboxUnavailable as exc:
            return (
                f"The install command could not run: {exc}. Vendor the dependencies in the "
                "repository, or run Kaizen where the sandbox can give the install its own "
                "network."
            )
        if run.timed_out or run.disk_limit_exceeded or run.exit_code != 0:
            if run.timed_out:
                how = f"did not finish within {self.budget.run_timeout_s:.0f} s"
            elif run.disk_limit_exceeded:
                how = f"was stopped: {workspace_kill_text(run.details, limits.workspace_mb)}"
            else:
                how = f"failed (exit code {run.exit_code})"
            offline = (
                "" if allow_network else " It ran without network (`fix.allow_network_install`)."
            )
            tail = redact_secrets((run.stderr or run.stdout)[-800:])
            return f"The install command `{command}` {how}.{offline}\n\n```\n{tail}\n```"
        return None

    def _note(self, repo: str, issue_id: str, result: FixResult) -> None:
        """One event per fix run, for the reports' fix results over time."""
        if self.memory is None:
            return
        at = time.time()
        self.memory.note(
            Event(
                id=f"fix:{repo}:{issue_id}:{at:.6f}",
                kind="fix",
                repo=repo,
                at=at,
                pattern=result.attempts[-1].pattern if result.fixed else "",
                data={
                    "issue": issue_id,
                    "fixed": result.fixed,
                    "attempts": len(result.attempts),
                    "sandbox_runs": result.sandbox_runs,
                    "duration_s": round(result.duration_s, 3),
                    "experience_id": result.winning_experience,
                },
            )
        )

    def _runner(self, checkout: Path, command: TestCommand, scratch: Path) -> TestRunner:
        pytest = command.pytest
        limits = Limits(
            timeout_s=self.budget.run_timeout_s,
            workspace_mb=self.budget.workspace_mb,
            workspace_files=self.budget.workspace_files,
        )
        # made absolute by Python at start-up, against the workspace it runs in
        env = {"PYTHONPATH": "src"} if src_layout(checkout) else {}
        if pytest is not None:
            env.update(pytest.env)
        return TestRunner(
            self.sandbox,
            checkout,
            limits,
            python=(pytest.python if pytest is not None else None) or self.python,
            custom_command=None if pytest is not None else command.argv,
            pytest_args=pytest.args if pytest is not None else (),
            per_test_timeout_s=min(60.0, self.budget.run_timeout_s),
            scratch=scratch,
            env=env,
        )

    def _run(
        self,
        repo: str,
        issue_id: str,
        issue_text: str,
        checkout: Path,
        runner: TestRunner,
        started: float,
    ) -> FixResult:
        self.progress("Running the tests as they are (baseline).")
        baseline = runner.run(coverage=runner.custom_command is None)
        if baseline.run.timed_out:
            return FixResult(
                False,
                f"The test suite did not finish within {self.budget.run_timeout_s:.0f} s in the "
                "sandbox (a hanging test?), so fixes cannot be checked.",
                baseline_failed=sorted(baseline.failed),
            )
        if baseline.run.disk_limit_exceeded:
            return FixResult(
                False,
                "The test suite was stopped in the sandbox: "
                f"{workspace_kill_text(baseline.run.details, runner.limits.workspace_mb)}, "
                "so fixes cannot be checked.",
            )
        if baseline.report_error and not baseline.tests:
            baseline = self._without_missing_filters(runner, baseline, checkout)
        if baseline.report_error and not baseline.tests:
            tail = (baseline.run.stderr or baseline.run.stdout)[-800:]
            return FixResult(
                False,
                f"The tests could not be run: {baseline.report_error}.\n\n```\n{tail}\n```",
            )
        files = python_files(checkout)
        set_aside = environment_failures(
            baseline.tests,
            repository_modules(files),
            fixture_names(files),
            optional_imports(files),
            identifiers(files),
        )
        if set_aside:
            self.progress(f"{describe(set_aside)}: set aside, not targets.")
            baseline = baseline.without(set_aside)
        if not baseline.failed and set_aside:
            return FixResult(
                False,
                f"{describe(set_aside)}, and no other test fails, so there is nothing the "
                "code can be changed to fix. Give the sandbox what those tests need with "
                "`fix.install_command` (with `allow_network_install` to download it), or add "
                "a test that shows the bug, and run `/kaizen fix` again.",
                baseline_passed=len(baseline.passed),
                environment_failed=set_aside,
            )
        if not baseline.tests:
            return FixResult(
                False,
                "The test command ran, but no test was collected: pytest collects "
                "`test_*.py` and `*_test.py` files, and Kaizen also names `test.py` / "
                "`tests.py` and the files of a `tests/` folder that define tests. Set "
                "`fix.test_command` in .github/kaizen.yml if the tests run another way.",
            )
        if not baseline.failed:
            return FixResult(
                False,
                f"All {len(baseline.passed)} tests pass, so there is no failing test to fix. "
                "Add a test that shows the bug and run `/kaizen fix` again.",
                baseline_passed=len(baseline.passed),
            )
        spectrum = self._spectrum(baseline, checkout)
        named = named_in(issue_text, baseline.failed)
        others = sorted(baseline.failed - named) if named else []
        if others:
            self.progress(
                f"The issue names {len(named)} of the {len(baseline.failed)} failing tests: "
                f"those are the targets; the other {len(others)} failed before and are left "
                "as they are."
            )
            baseline = baseline.without(others)
        # Named by the code it is about: every failing test stays a target (they help
        # localise), but one that never runs the changed code may be left failing.
        about: set[str] = set()
        if not named and spectrum is not None:
            about, code = targets_of_named_code(issue_text, baseline.failed)
            if about and about != baseline.failed:
                self.progress(
                    f"{len(about)} of the {len(baseline.failed)} failing tests are named "
                    f"after what the issue is about ({', '.join(code)}): a fix must make "
                    "them pass; another failing test may stay failing if it never runs the "
                    "changed code."
                )
            else:
                about = set()
        error_class = error_class_of(baseline)
        self.progress(
            f"{len(baseline.failed)} failing test(s) ({error_class}); localising the bug."
        )
        suspects = self._localise(issue_text, baseline, files, spectrum, about)
        skills, reflections = self._recall(repo, issue_text, error_class)
        ctx = FixContext(
            repo,
            issue_id,
            issue_text,
            checkout,
            baseline,
            suspects,
            error_class,
            files,
            skills,
            reflections,
            pytest_testpaths(functools.partial(config_text, checkout)),
        )
        result = FixResult(
            False,
            "",
            baseline_failed=sorted(baseline.failed),
            baseline_passed=len(baseline.passed),
            error_class=error_class,
            suspects=suspects,
            environment_failed=set_aside,
            other_failed=others,
        )
        runs = self._candidate_runs(runner, baseline)
        for policy, item in self._plan(ctx):
            if runner.runs >= self.budget.max_sandbox_runs:
                break
            if time.monotonic() - started > self.budget.time_limit_s or self.cancelled():
                break
            if policy == "llm":
                assert self.llm is not None and isinstance(item, int)
                patches, reflection = self.llm.attempt(ctx, runner, number=item)
                if not patches:
                    self._record_failed_llm(ctx, result, reflection)
                    continue
                outcome, verdict = self._evaluate(runner, baseline, patches, runs, about, spectrum)
                if not verdict.success:
                    reflection = self.llm.reflect(ctx, verdict.summary())
                    ctx.reflections.append(reflection)
                attempt = self._remember(ctx, "fix:llm", patches, verdict, "llm", reflection)
            else:
                patch = item
                assert isinstance(patch, Patch)
                outcome, verdict = self._evaluate(runner, baseline, [patch], runs, about, spectrum)
                attempt = self._remember(ctx, patch.operator, [patch], verdict, "template", None)
                patches = [patch]
            result.attempts.append(attempt)
            self.progress(
                f"Attempt {len(result.attempts)} ({attempt.pattern}): {verdict.summary()}."
            )
            if verdict.success:
                if verdict.left_failing:  # failed before for reasons of their own
                    result.other_failed = sorted({*result.other_failed, *verdict.left_failing})
                    result.baseline_failed = sorted(
                        set(result.baseline_failed) - verdict.left_failing
                    )
                result.fixed = True
                result.patches = patches
                result.patch = "".join(p.diff() for p in patches)
                result.reward = verdict.reward
                result.after_passed = len(outcome.passed)
                result.flaky = sorted(verdict.flaky)
                result.winning_experience = attempt.experience_id
                result.message = (
                    f"Found a fix after {len(result.attempts)} attempt(s): {attempt.description}."
                )
                return result
        result.reward = max((a.reward for a in result.attempts), default=0.0)
        result.message = (
            f"No fix found in {len(result.attempts)} attempt(s) ({runner.runs} sandbox runs)."
        )
        return result

    def _without_missing_filters(
        self, runner: TestRunner, baseline: TestsOutcome, checkout: Path
    ) -> TestsOutcome:
        """The baseline again without the project's warning filters that name a module
        the sandbox lacks, when those stopped pytest before any test ran (see
        :mod:`workers.fix.warning_filters`); every later run keeps the same arguments."""
        if runner.custom_command is not None:
            return baseline
        given = tuple(runner.pytest_args)
        missing: list[str] = []
        while baseline.report_error and not baseline.tests and len(missing) < MAX_FILTER_RETRIES:
            module = missing_filter_module(f"{baseline.run.stdout}\n{baseline.run.stderr}")
            if module is None or module in missing:
                break
            missing.append(module)
            self.progress(
                f"The project's warning filters name {module!r}, which the sandbox lacks: "
                "running the tests without those filters."
            )
            runner.pytest_args = (*given, *without_filters_of(checkout, *missing))
            baseline = runner.run(coverage=True)
        return baseline

    # -- evaluating ---------------------------------------------------------------------

    def _enough(
        self,
        verdict: Score,
        patches: list[Patch],
        about: Collection[str],
        spectrum: localize.Spectrum | None,
        baseline: TestsOutcome,
    ) -> Score:
        """The verdict, or a success when the patch fixed every failing test named after
        what the issue is about, broke nothing, and each target it left failing never runs
        the file it changes: those failed for reasons of their own (attrs 24.2.0 has a test
        that fails on Python 3.11 whatever the code does). One that runs that file may
        share the bug, and the patch is then no whole fix."""
        if (
            verdict.success
            or not about
            or spectrum is None
            or verdict.broken
            or not verdict.still_failing
            or not set(about) <= verdict.fixed
        ):
            return verdict
        uncollected = {t.nodeid: localize.failure_text(t) for t in baseline.tests if t.uncollected}
        paths = {p.path for p in patches}
        if not never_run(verdict.still_failing, paths, spectrum, uncollected):
            return verdict
        targets = len(verdict.fixed) + len(verdict.skipped) + len(verdict.still_failing)
        return replace(
            verdict,
            success=not verdict.only_targets,
            left_failing=set(verdict.still_failing),
            # rewarded as a whole fix: what it left was never its to fix
            reward=round(verdict.reward + len(verdict.still_failing) / targets, 4),
        )

    def _candidate_runs(self, runner: TestRunner, baseline: TestsOutcome) -> CandidateRuns:
        quick, alone_s = self._quick_targets(runner, baseline)
        return candidate_runs(quick, alone_s, baseline.run.duration_s)

    def _quick_targets(self, runner: TestRunner, baseline: TestsOutcome) -> tuple[list[str], float]:
        """The failing tests' node ids if running them alone is a faithful, cheaper first
        check of a candidate, else ``[]`` (every candidate runs the whole suite); and how
        long they took alone."""
        targets = sorted(baseline.failed)
        if (
            runner.custom_command is not None
            or not targets
            or len(targets) > MAX_QUICK_TARGETS
            or not baseline.passed
            or baseline.run.duration_s < self.budget.quick_check_min_suite_s
            or runner.runs >= self.budget.max_sandbox_runs - 1
        ):
            return [], 0.0
        alone = runner.run(select=targets)
        reproduced = alone.ok and alone.failed == set(targets) and not alone.passed
        if not reproduced:
            self.progress(
                "The failing tests do not fail the same way on their own; every candidate "
                "runs the whole suite."
            )
            return [], 0.0
        if alone.run.duration_s > baseline.run.duration_s / 2:
            return [], 0.0  # the failing tests are the slow part: the check would save little
        self.progress(
            f"The failing tests alone take {alone.run.duration_s:.1f} s of the suite's "
            f"{baseline.run.duration_s:.1f} s: each candidate runs them first."
        )
        return targets, alone.run.duration_s

    def _evaluate(
        self,
        runner: TestRunner,
        baseline: TestsOutcome,
        patches: list[Patch],
        runs: CandidateRuns,
        about: Collection[str] = (),
        spectrum: localize.Spectrum | None = None,
    ) -> tuple[TestsOutcome, Score]:
        """The candidate's outcome and verdict; with ``runs.quick`` its failing tests run
        first and the whole suite only if they all pass (or all those that must, see
        :meth:`_enough`)."""
        single = patches[0] if len(patches) == 1 else None
        quick = runs.quick
        if quick:
            first = runner.run(patches, select=quick, timeout_s=runs.quick_timeout_s)
            if not (first.ok and set(quick) <= first.passed | first.skipped):
                checked = score(baseline, first, single, only_targets=True)
                if not self._enough(checked, patches, about, spectrum, baseline).left_failing:
                    return first, checked
        outcome = runner.run(patches, timeout_s=runs.suite_timeout_s)
        verdict = self._enough(score(baseline, outcome, single), patches, about, spectrum, baseline)
        if not self._worth_a_second_run(verdict, runner):
            return outcome, verdict
        self.progress(
            f"Every target test passes but {len(verdict.broken)} passing test(s) failed: "
            "running the suite again to tell a flaky test from a broken one."
        )
        again = runner.run(patches, timeout_s=runs.suite_timeout_s)
        second = self._enough(score(baseline, again, single), patches, about, spectrum, baseline)
        if not second.success:
            return outcome, verdict
        return again, replace(second, flaky=verdict.broken)

    def _worth_a_second_run(self, verdict: Score, runner: TestRunner) -> bool:
        """A candidate that fixed every target and "broke" one to three tests: real
        projects have flaky tests, and rejecting the right patch for one of them loses
        the fix. The suite runs again whole (a test alone may pass where the suite's
        order makes it fail), and only a clean second run counts."""
        return (
            not verdict.success
            and not verdict.only_targets
            and bool(verdict.fixed)
            and not verdict.still_failing
            and 0 < len(verdict.broken) <= MAX_FLAKY_RETRY
            and runner.runs < self.budget.max_sandbox_runs
        )

    # -- localisation and memory ----------------------------------------------------

    @staticmethod
    def _spectrum(baseline: TestsOutcome, checkout: Path) -> localize.Spectrum | None:
        """The baseline's per-test coverage; None without it (a custom test command, no
        coverage.py in the sandbox, unreadable data)."""
        if baseline.coverage_file is None:
            return None
        try:
            return localize.read_coverage(baseline.coverage_file, checkout)
        except Exception as exc:  # coverage is a help, not a requirement
            log.info("coverage data unreadable", extra={"error": str(exc)})
            return None

    def _localise(
        self,
        issue_text: str,
        baseline: TestsOutcome,
        files: dict[str, str],
        spectrum: localize.Spectrum | None,
        about: Collection[str] = (),
    ) -> list[Suspect]:
        """Suspects from the issue, the failing tests' tracebacks and their coverage.
        When the issue names code and some failing tests are named after it (``about``),
        only theirs are read for tracebacks: the others fail because they use that code,
        and their tracebacks end where its wrong output broke them (more-itertools'
        ``replace`` calling a broken ``windowed``: its ``pred(*w)`` outranked ``windowed``
        itself, and 60 sandbox runs ran out before the bug's line)."""
        tests = baseline.tests
        if about:
            tests = [t for t in tests if t.outcome == "passed" or t.nodeid in about]
        sources = [
            localize.from_issue_text(issue_text, files),
            localize.from_failures(tests, files),
        ]
        if spectrum is not None:
            sources.append(localize.ochiai(spectrum, baseline.failed, baseline.passed, files))
        sources.append(localize.from_test_names(sorted(baseline.failed), files, spectrum))
        sources.append(localize.from_checked_attributes(tests, files, spectrum))
        named = [(s.path, s.line) for source in sources for s in source]
        sources.append(localize.from_issue_comments(issue_text, files, named))
        return localize.rank(*sources, limit=MAX_SUSPECTS * 3)

    def _recall(
        self, repo: str, issue_text: str, error_class: str
    ) -> tuple[list[Experience], list[str]]:
        if self.memory is None:
            return [], []
        query = redact_secrets(f"{error_class}\n{issue_text[:2000]}")
        try:
            store = self.memory.experiences
            hits = store.search_similar(
                query, repo=repo, kind=Kind.FIX, outcome=["accepted"], limit=5
            )
            skills = [h.experience for h in hits]
            self._skill_similarity = {h.experience.id: h.score for h in hits}
            failed = store.search_similar(
                query, repo=repo, kind=Kind.FIX, outcome=["rejected"], limit=10
            )
        except Exception as exc:
            log.warning("memory unavailable for the fix", extra={"error": str(exc)})
            return [], []
        reflections = [h.experience.reflection for h in failed if h.experience.reflection]
        return skills, list(dict.fromkeys(r for r in reflections if r))[:5]

    # -- planning ---------------------------------------------------------------------

    def _theta(self, repo: str, pattern: str) -> float:
        if self.memory is None:
            return 0.5
        try:
            a, b = posterior(self.memory.scores, repo, pattern, time.time(), Prior())
        except ValueError:
            return 0.5
        return a / (a + b)

    def _plan(self, ctx: FixContext) -> Iterator[tuple[str, object]]:
        """Candidates, best first: LLM attempts placed by their learned score among the
        template candidates, which are ranked by suspect score times operator score, times
        :data:`SKILL_BOOST` for operators that fixed a similar enough issue before (the
        LLM still sees every recalled skill) and the hint boost for operators the issue's
        words point at (:mod:`workers.fix.issue_hints`); tied lines take turns
        (:func:`~workers.fix.planning.rank_candidates`). The suspects past the first
        :data:`MAX_SUSPECTS` are ranked only once the first ones' candidates are used up."""
        skill_ops = Counter(
            str(s.extra.get("operator") or "")
            for s in ctx.skills
            if s.extra.get("operator")
            and self._skill_similarity.get(s.id, 1.0) >= SKILL_MIN_SIMILARITY
        )
        top = max((s.score for s in ctx.suspects), default=1.0) or 1.0
        hints = operator_hints(ctx.issue_text)

        def weight(suspect: Suspect, patch: Patch) -> float:
            theta = self._theta(ctx.repo, pattern_for(patch.operator, ctx.error_class))
            boost = SKILL_BOOST if skill_ops.get(patch.operator) else 1.0
            share = plausibility(patch)
            return (suspect.score / top) * theta * boost * hints.get(patch.operator, 1.0) * share

        ranked = rank_in_tiers(ctx.suspects, ctx.files, weight, MAX_SUSPECTS)
        llm_theta = self._theta(ctx.repo, pattern_for("fix:llm", ctx.error_class))
        llm_left = self.budget.max_attempts if self.llm is not None else 0
        number = 0
        for w, patch in ranked:
            while llm_left and llm_theta >= w:
                number += 1
                llm_left -= 1
                yield "llm", number
            yield "template", patch
        while llm_left:
            number += 1
            llm_left -= 1
            yield "llm", number

    # -- remembering ----------------------------------------------------------------

    def _remember(
        self,
        ctx: FixContext,
        operator: str,
        patches: list[Patch],
        verdict: Score,
        policy: str,
        reflection: str | None,
    ) -> AttemptRecord:
        patch = patches[0]
        pattern = pattern_for(operator, ctx.error_class)
        description = patch.description if len(patches) == 1 else f"{len(patches)} file edits"
        record = AttemptRecord(
            policy,
            pattern,
            description,
            verdict.reward,
            verdict.success,
            verdict.summary(),
            reflection=reflection if not verdict.success else None,
        )
        if self.memory is None:
            return record
        diff = "".join(p.diff() for p in patches)
        experience = Experience(
            kind=Kind.FIX,
            repo=ctx.repo,
            pattern=pattern,
            fingerprint=_fingerprint(ctx.issue_id, patch),
            text=redact_secrets(f"{ctx.error_class}\n{ctx.issue_text[:1500]}\n{diff[:2500]}"),
            severity="medium",
            outcome=Outcome.PENDING,
            reward=verdict.reward,
            reflection=record.reflection,
            created_at=time.time(),
            extra={
                "operator": operator,
                "policy": policy,
                "issue": ctx.issue_id,
                "reward": verdict.reward,
                "success": verdict.success,
                "summary": verdict.summary(),
                "patch": redact_secrets(diff[:20000]),
            },
        )
        try:
            exp_id = self.memory.record_experience(experience)
            self.memory.apply_signal(
                Signal(
                    id=f"sandbox:{exp_id}",
                    kind="tests_passed" if verdict.success else "tests_failed",
                    experience_id=exp_id,
                    repo=ctx.repo,
                    pattern=pattern,
                    at=time.time(),
                    reason=record.reflection,
                )
            )
            record.experience_id = exp_id
        except Exception as exc:  # learning is lost for this attempt, the fix goes on
            log.warning("fix attempt not remembered", extra={"error": str(exc)})
        return record

    def _record_failed_llm(
        self, ctx: FixContext, result: FixResult, reflection: str | None
    ) -> None:
        result.attempts.append(
            AttemptRecord(
                "llm",
                pattern_for("fix:llm", ctx.error_class),
                "no usable edit",
                -1.0,
                False,
                "the model proposed no edit",
                reflection=reflection,
            )
        )
        if reflection:
            ctx.reflections.append(reflection)


__all__ = ["OPERATORS", "FixBudget", "FixLoop", "FixResult"]
