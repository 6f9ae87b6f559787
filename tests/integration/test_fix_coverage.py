"""Real per-test coverage: coverage.py runs pytest on a tiny buggy repository (unsandboxed,
with this interpreter), and the localiser reads the data back and ranks the bug first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workers.fix.localize import (
    COVERAGE_DATA_NAME,
    case_key,
    from_issue_text,
    ochiai,
    rank,
    read_coverage,
    with_coverage,
    write_coverage_rc,
)
from workers.sandbox.junit import load_junit, pytest_command

pytest.importorskip("coverage", reason="coverage.py is not installed in this interpreter")

CALC = """\
def classify(n):
    if n < 0:
        return "negative"
    if n == 0:
        return "zero"
    if n > 100:
        return "small"
    return "positive"


def double(n):
    return n * 2
"""
BUG = ("calc/core.py", 7)  # "small" should be "large"

# No tests/__init__.py: under pytest's default import mode coverage names these tests
# "test_core.…" while JUnit says "tests/test_core.py::…" - the mapping must join them.
TESTS = """\
import pytest

from calc.core import classify, double


def test_negative():
    assert classify(-3) == "negative"


def test_zero():
    assert classify(0) == "zero"


@pytest.mark.parametrize("n", [1, 50])
def test_positive(n):
    assert classify(n) == "positive"


class TestLarge:
    def test_large(self):
        assert classify(1000) == "large"

    def test_huge(self):
        assert classify(10**9) == "large"


def test_double():
    assert double(2) == 4
"""


PLUGINS = ".kaizen-pytest"  # the folder the fix loop puts on PYTHONPATH


def run_with_coverage(root: Path) -> subprocess.CompletedProcess[str]:
    write_coverage_rc(root, PLUGINS)
    report = root / ".kaizen-junit.xml"
    command = with_coverage(
        pytest_command(str(report), per_test_timeout_s=None, python=sys.executable)
    )
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COVERAGE_", "PYTHON"))
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = str(root / PLUGINS)
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def make_repo(root: Path, layout: str) -> None:
    (root / "calc").mkdir()
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "core.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(TESTS)
    if layout == "package":
        (root / "tests" / "__init__.py").write_text("")
    # pytest.ini pins pytest's rootdir to the repository.
    options = "addopts = --import-mode=importlib\n" if layout == "importlib" else ""
    (root / "pytest.ini").write_text(f"[pytest]\n{options}")


# The import mode changes the module names Python sees ("prepend": test_core, "package"
# with tests/__init__.py and "importlib": tests.test_core); node ids stay the same.
@pytest.mark.parametrize("layout", ["prepend", "package", "importlib"])
def test_coverage_run_ranks_the_buggy_line_first(tmp_path: Path, layout: str) -> None:
    make_repo(tmp_path, layout)
    done = run_with_coverage(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # two tests fail

    tests = load_junit(tmp_path / ".kaizen-junit.xml")
    failed = {t.nodeid for t in tests if t.outcome == "failed"}
    passed = {t.nodeid for t in tests if t.outcome == "passed"}
    assert failed == {
        "tests/test_core.py::TestLarge::test_large",
        "tests/test_core.py::TestLarge::test_huge",
    }
    assert len(passed) == 5

    coverage = read_coverage(tmp_path / COVERAGE_DATA_NAME, tmp_path)
    # One key on both sides: every JUnit test has its coverage under case_key.
    assert {case_key(t) for t in tests} == set(coverage)
    assert coverage["tests.test_core.TestLarge.test_large"] == {
        ("calc/core.py", n) for n in (2, 4, 6, 7)
    }

    spectrum = ochiai(coverage, failed, passed)
    assert (spectrum[0].path, spectrum[0].line) == BUG
    assert spectrum[0].score == pytest.approx(1.0)
    assert spectrum[1].score < 1.0
    assert all(not s.path.startswith("tests/") for s in spectrum)

    files = {str(p.relative_to(tmp_path)): p.read_text() for p in tmp_path.rglob("*.py")}
    issue = from_issue_text("`classify` says small for big numbers", files)
    ranked = rank(spectrum, issue)
    assert (ranked[0].path, ranked[0].line) == BUG
    assert "ochiai 1.00" in ranked[0].why and "symbol named in the issue" in ranked[0].why


GRADES = """\
def grade(n):
    if n >= 90:
        return "A"
    if n >= 80:
        return "B"
    if n >= 70:
        return "c"
    return "F"
"""

GRADE_TESTS = """\
import pytest

from grades import grade


@pytest.mark.parametrize(("n", "want"), [(95, "A"), (85, "B"), (75, "C"), (50, "F")])
def test_grade(n, want):
    assert grade(n) == want
"""


def test_each_parametrised_case_has_its_own_coverage(tmp_path: Path) -> None:
    """One failing case out of four: the line only it ran is the one suspect at 1.0. With
    one context per test function every line the four cases ran scored the same."""
    (tmp_path / "grades.py").write_text(GRADES)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_grades.py").write_text(GRADE_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    done = run_with_coverage(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr

    tests = load_junit(tmp_path / ".kaizen-junit.xml")
    failed = {t.nodeid for t in tests if t.outcome == "failed"}
    passed = {t.nodeid for t in tests if t.outcome == "passed"}
    assert failed == {"tests/test_grades.py::test_grade[75-C]"}
    coverage = read_coverage(tmp_path / COVERAGE_DATA_NAME, tmp_path)
    assert set(coverage) == {case_key(t) for t in tests}

    spectrum = ochiai(coverage, failed, passed)
    assert (spectrum[0].path, spectrum[0].line, spectrum[0].score) == ("grades.py", 7, 1.0)
    assert len(spectrum) == 4  # lines 2, 4, 6 and 7: what the failing case ran
    assert all(s.score < 1.0 for s in spectrum[1:])
