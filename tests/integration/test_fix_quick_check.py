"""The fix loop's quick check in the real sandbox: on a slow suite the failing tests run
first and only a candidate that passes them runs the whole suite, which alone accepts it;
a failure that the failing tests do not reproduce alone turns the check off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import FIXTURES
from tests.integration import test_fix_loop
from workers.fix.evaluate import TestRunner
from workers.fix.loop import FixBudget, FixLoop
from workers.sandbox.base import Limits, Sandbox

pytestmark = pytest.mark.slow
sandbox = test_fix_loop.sandbox  # the same fixture: the real sandbox, or a skip

ISSUE = "total_price([(10, 2)], 0.1) gives 22.0; a 10 % discount should give 18.0."
# Slow enough that the failing tests alone stay under half the suite's time even when a
# busy machine (CI runs the suite on every core) slows each container's start by a second.
SLOW_TEST = "import time\n\n\ndef test_slow_but_passing():\n    time.sleep(4.0)\n"
# Passes alone, fails after test_a_sets: a failure only the whole suite shows.
ORDER_DEPENDENT = (
    "import os\n\n\n"
    "def test_a_sets():\n    os.environ['KZ_ORDER_FLAG'] = '1'\n\n\n"
    "def test_b_expects_a_clean_environment():\n    assert 'KZ_ORDER_FLAG' not in os.environ\n"
)


def quick_loop(sandbox: Sandbox, said: list[str], runs: int) -> FixLoop:
    """A loop that uses the quick check on the fixture's slow suite."""
    budget = FixBudget(max_sandbox_runs=runs, quick_check_min_suite_s=0.5)
    return FixLoop(sandbox=sandbox, memory=None, budget=budget, progress=said.append)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(FIXTURES / "fix_repo", target)
    (target / "tests" / "test_slow.py").write_text(SLOW_TEST)
    return target


def test_on_a_slow_suite_candidates_run_the_failing_tests_first(
    sandbox: Sandbox, checkout: Path
) -> None:
    said: list[str] = []
    loop = quick_loop(sandbox, said, 40)
    result = loop.run(repo="octo-org/shop", issue_id="7", issue_text=ISSUE, checkout=checkout)
    assert result.fixed and "amount - amount * discount" in result.patch
    assert any("each candidate runs them first" in line for line in said), said
    *rejected, winner = result.attempts
    assert rejected, "the fixture's first candidates are wrong ones"
    quick_only = [a for a in rejected if "only the failing tests were run" in a.summary]
    assert quick_only and all(a.reward < 1.0 for a in quick_only)
    assert "only the failing tests were run" not in winner.summary
    # The winner was accepted on the whole suite: every test passes, the slow one too.
    assert result.after_passed == result.baseline_passed + 1
    # One run for the baseline, one for the check on it, one per rejected candidate that
    # failed its targets, two for each that ran the whole suite.
    full_runs = len(rejected) - len(quick_only) + 1
    assert result.sandbox_runs == 2 + len(quick_only) + 2 * full_runs


def test_a_fast_suite_runs_every_candidate_on_the_whole_suite(
    sandbox: Sandbox, checkout: Path
) -> None:
    (checkout / "tests" / "test_slow.py").unlink()
    said: list[str] = []
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(), progress=said.append)
    result = loop.run(repo="octo-org/shop", issue_id="7", issue_text=ISSUE, checkout=checkout)
    assert result.fixed
    assert not any("only the failing tests were run" in a.summary for a in result.attempts)
    assert result.sandbox_runs == 1 + len(result.attempts)


def test_a_failure_the_failing_tests_do_not_show_alone_turns_the_check_off(
    sandbox: Sandbox, checkout: Path
) -> None:
    (checkout / "tests" / "test_order.py").write_text(ORDER_DEPENDENT)
    said: list[str] = []
    loop = quick_loop(sandbox, said, 5)
    result = loop.run(repo="octo-org/shop", issue_id="7", issue_text=ISSUE, checkout=checkout)
    assert "tests/test_order.py::test_b_expects_a_clean_environment" in result.baseline_failed
    assert any("do not fail the same way on their own" in line for line in said)
    assert result.attempts and not any(
        "only the failing tests were run" in a.summary for a in result.attempts
    )
    assert not result.fixed  # no patch to pricing.py makes the order-dependent test pass


def test_the_quick_check_lets_through_a_fix_that_leaves_only_unrelated_failures(
    sandbox: Sandbox, checkout: Path
) -> None:
    """On a slow suite the quick check runs the failing tests first: a candidate that
    fixes what the issue names (`total_price`) and leaves failing only a test that never
    runs the changed line goes on to the whole suite and is accepted there."""
    (checkout / "tests" / "test_legacy.py").write_text(
        "def test_legacy_format():\n    assert 'v1' == 'v2'\n"
    )
    (checkout / "tests" / "test_pricing.py").write_text(
        (checkout / "tests" / "test_pricing.py")
        .read_text()
        .replace("def test_total_with_discount", "def test_total_price_with_discount")
    )
    said: list[str] = []
    loop = quick_loop(sandbox, said, 40)
    result = loop.run(repo="octo-org/shop", issue_id="8", issue_text=ISSUE, checkout=checkout)
    assert result.fixed, result.message
    assert "amount - amount * discount" in result.patch
    assert any("each candidate runs them first" in line for line in said), said
    assert result.other_failed == ["tests/test_legacy.py::test_legacy_format"]
    assert result.baseline_failed == ["tests/test_pricing.py::test_total_price_with_discount"]
    assert "left failing" in result.attempts[-1].summary


def test_a_candidates_run_stops_at_its_own_shorter_limit(sandbox: Sandbox, tmp_path: Path) -> None:
    """A candidate that makes a test spin is cut off at what its run may take, not at the
    runner's limit (idna: one such candidate took the whole 300 s)."""
    repo = tmp_path / "spins"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_spin.py").write_text(
        "import time\n\n\ndef test_spin():\n    time.sleep(60)\n"
    )
    runner = TestRunner(sandbox, repo, Limits(timeout_s=120), per_test_timeout_s=90)
    outcome = runner.run(timeout_s=3)
    assert outcome.run.timed_out and not outcome.ok
    assert outcome.run.duration_s < 30


def test_a_root_tests_module_is_checked_quickly_by_its_own_node_ids(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """jsonpointer keeps its ``unittest`` cases in a root ``tests.py``: pytest reports them
    as ``tests.SpecificationTests``, and read as node ids they could not be run alone."""
    repo = tmp_path / "rootcase"
    repo.mkdir()
    (repo / "calc.py").write_text("def double(x):\n    return x * 3\n")
    (repo / "tests.py").write_text(
        "import time\nimport unittest\n\nfrom calc import double\n\n\n"
        "class DoubleTests(unittest.TestCase):\n"
        "    def test_double(self):\n        self.assertEqual(double(2), 4)\n\n"
        "    def test_slow(self):\n        time.sleep(4.0)\n"
    )
    said: list[str] = []
    result = quick_loop(sandbox, said, 20).run(
        repo="octo-org/calc",
        issue_id="3",
        issue_text="double(2) gives 6, it should give 4",
        checkout=repo,
    )
    assert result.baseline_failed == ["tests.py::DoubleTests::test_double"]
    assert any("each candidate runs them first" in line for line in said), said
    assert result.fixed and "x * 2" in result.patch
