"""Scoring a candidate: the quick check (failing tests only) can reject, never accept."""

from __future__ import annotations

from workers.fix.evaluate import TestsOutcome, score
from workers.sandbox.base import RunResult
from workers.sandbox.junit import TestResult


def outcome(**tests: str) -> TestsOutcome:
    return TestsOutcome(
        RunResult(exit_code=1, stdout="", stderr="", duration_s=1.0),
        [TestResult(n, "", n, None, o, 0.1) for n, o in tests.items()],  # type: ignore[arg-type]
    )


BASELINE = outcome(target="failed", other="passed", third="passed")


def test_a_full_run_that_fixes_the_target_and_keeps_the_rest_is_a_success() -> None:
    verdict = score(BASELINE, outcome(target="passed", other="passed", third="passed"), None)
    assert verdict.success and verdict.reward == 1.0 and not verdict.broken


def test_tests_missing_from_a_full_run_count_as_broken() -> None:
    verdict = score(BASELINE, outcome(target="passed", other="passed"), None)
    assert not verdict.success and verdict.broken == {"third"}


def test_cases_renamed_by_the_fix_and_passing_under_their_new_ids_are_not_broken() -> None:
    """annotated-types names its test cases after the constraints the code under test
    expands (``test_valid_cases[Annotated[int, Le(le=4)] …]``): the right fix renamed 14
    passing cases, and they counted as broken. A case gone from a test function is not
    broken when as many new cases of that function pass; fewer, or a test that was not
    parametrized, still are."""
    baseline = outcome(**{"t::target": "failed", "t::cases[Le(4)]": "passed", "t::other": "passed"})

    renamed = score(
        baseline,
        outcome(**{"t::target": "passed", "t::cases[Lt(4)]": "passed", "t::other": "passed"}),
        None,
    )
    fewer = score(baseline, outcome(**{"t::target": "passed", "t::other": "passed"}), None)
    failing = score(
        baseline,
        outcome(**{"t::target": "passed", "t::cases[Lt(4)]": "failed", "t::other": "passed"}),
        None,
    )

    assert renamed.success and not renamed.broken
    assert fewer.broken == {"t::cases[Le(4)]"}
    assert failing.broken == {"t::cases[Le(4)]"}


def test_a_quick_check_never_counts_the_tests_it_did_not_run_as_broken() -> None:
    verdict = score(BASELINE, outcome(target="failed"), None, only_targets=True)
    assert verdict.broken == set() and verdict.still_failing == {"target"}
    assert verdict.reward == 0.0
    assert "only the failing tests were run" in verdict.summary()


def test_a_quick_check_that_passes_the_targets_is_still_no_success() -> None:
    verdict = score(BASELINE, outcome(target="passed"), None, only_targets=True)
    assert not verdict.success and verdict.fixed == {"target"}


def test_a_target_that_skips_once_fixed_is_no_longer_failing() -> None:
    """pathspec's ``GitIgnoreSpecTest`` runs one ``subTest`` per backend and skips those
    not installed: failing while the bug is there, reported skipped once it is fixed,
    in the sandbox as on any machine without the optional backends. Beside a target
    that now passes, that is a fix; skips alone are no evidence of one."""
    baseline = outcome(spec="failed", backends="failed", other="passed")

    fixed = score(baseline, outcome(spec="passed", backends="skipped", other="passed"), None)
    skips_only = score(baseline, outcome(spec="skipped", backends="skipped", other="passed"), None)

    assert fixed.success and fixed.reward == 1.0 and fixed.skipped == {"backends"}
    assert not fixed.still_failing and "1 skipped once fixed" in fixed.summary()
    assert not skips_only.success and skips_only.still_failing == {"spec", "backends"}
