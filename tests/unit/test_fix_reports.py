"""What a fix says on GitHub when some tests fail whatever the code does."""

from __future__ import annotations

from workers.fix.github_fix import FixJob, failure_comment, pull_body
from workers.fix.loop import AttemptRecord, FixResult

JOB = FixJob("octo/shop", 7, "Discount", "wrong total", "d-1", "octocat")
ASIDE = {
    "tests/test_api.py::test_fetch": "no network",
    "tests/test_yaml.py::test_load": "missing dependency 'yaml'",
}


def test_the_pull_request_names_the_tests_it_did_not_judge() -> None:
    result = FixResult(
        True,
        "Found a fix",
        attempts=[AttemptRecord("template", "fix:sign:AssertionError", "flip +", 1.0, True, "ok")],
        baseline_failed=["tests/test_pricing.py::test_total"],
        after_passed=12,
        environment_failed=ASIDE,
    )
    body = pull_body(JOB, result)
    assert (
        "**After:** 12 tests pass in the sandbox (2 test(s) fail in the sandbox whatever "
        "the code does (no network: 1, missing dependency 'yaml': 1): set aside, not judged)"
    ) in body


def test_without_such_tests_the_pull_request_says_all_pass() -> None:
    result = FixResult(True, "Found a fix", after_passed=12)
    assert "**After:** all 12 tests pass in the sandbox; " in pull_body(JOB, result)


def test_a_failed_fix_lists_the_tests_it_set_aside() -> None:
    result = FixResult(
        False,
        "No fix found in 3 attempt(s) (4 sandbox runs).",
        baseline_failed=["tests/test_pricing.py::test_total"],
        environment_failed=ASIDE,
    )
    comment = failure_comment(result)
    assert "2 test(s) fail in the sandbox whatever the code does" in comment
    assert "`tests/test_api.py::test_fetch`, `tests/test_yaml.py::test_load`" in comment


def test_the_pull_request_names_a_test_that_failed_once() -> None:
    result = FixResult(True, "Found a fix", after_passed=12, flaky=["tests/test_io.py::test_race"])
    body = pull_body(JOB, result)
    assert (
        "**Flaky?** failed once with this change and passed when the whole suite ran again: "
        "`tests/test_io.py::test_race`."
    ) in body
    assert "Flaky?" not in pull_body(JOB, FixResult(True, "Found a fix", after_passed=12))


def test_failing_tests_the_issue_did_not_name_are_said_to_be_unjudged() -> None:
    others = ["tests/test_legacy.py::test_format"]
    fixed = FixResult(True, "Found a fix", after_passed=11, other_failed=others)
    assert (
        "**After:** 11 tests pass in the sandbox (1 other test(s) the issue does not name failed "
        "before this change and were not judged)"
    ) in pull_body(JOB, fixed)
    failed = FixResult(False, "No fix found", other_failed=others)
    assert (
        "Also failing before, but not named by the issue (not targets): "
        "`tests/test_legacy.py::test_format`"
    ) in failure_comment(failed)
