"""pytest JUnit XML → per-test results, and the pytest command line for a sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workers.sandbox.junit import (
    JUnitError,
    TestResult,
    load_junit,
    parse_junit,
    pytest_command,
)

# What pytest 8 (xunit2) writes, trimmed: one suite inside <testsuites>.
PYTEST_REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">
<testsuite name="pytest" errors="1" failures="2" skipped="2" tests="6" time="2.034">
<testcase classname="tests.sub.test_a" name="test_ok" time="0.001" />
<testcase classname="tests.sub.test_a" name="test_fail" time="0.002"><failure
 message="AssertionError: nope&#10;assert 1 == 2">&gt;   def test_fail(): assert 1 == 2
tests/sub/test_a.py:3: AssertionError</failure></testcase>
<testcase classname="tests.sub.test_a.TestC" name="test_skip" time="0.000"><skipped
 type="pytest.skip" message="why">/tmp/x/tests/sub/test_a.py:5: why</skipped></testcase>
<testcase classname="tests.sub.test_a.TestC" name="test_xf" time="0.000"><skipped
 type="pytest.xfail" message="x" /></testcase>
<testcase classname="tests.sub.test_a" name="test_err" time="0.000"><error
 message="failed on setup with &quot;RuntimeError: fixture boom&quot;">boom</error></testcase>
<testcase classname="tests.sub.test_a" name="test_hang" time="2.000"><failure
 message="Failed: Timeout (&gt;2.0s) from pytest-timeout.">E   Failed: Timeout</failure>
<system-out>captured &lt;stdout&gt;</system-out><system-err>err</system-err></testcase>
</testsuite></testsuites>"""


def by_name(results: list[TestResult]) -> dict[str, TestResult]:
    return {r.name: r for r in results}


def test_parses_every_outcome_of_a_pytest_report() -> None:
    results = parse_junit(PYTEST_REPORT)
    assert [r.name for r in results] == [
        "test_ok",
        "test_fail",
        "test_skip",
        "test_xf",
        "test_err",
        "test_hang",
    ]
    got = by_name(results)
    assert got["test_ok"].outcome == "passed"
    assert got["test_ok"].nodeid == "tests/sub/test_a.py::test_ok"
    assert got["test_ok"].file == "tests/sub/test_a.py"
    assert got["test_ok"].duration_s == pytest.approx(0.001)
    assert got["test_fail"].outcome == "failed"
    assert got["test_fail"].exception_type == "AssertionError"
    assert got["test_fail"].message.startswith("AssertionError: nope")
    assert got["test_skip"].outcome == "skipped"
    assert got["test_skip"].nodeid == "tests/sub/test_a.py::TestC::test_skip"
    assert got["test_skip"].message == "why"
    assert got["test_xf"].outcome == "skipped"
    assert got["test_xf"].message == "xfail: x"
    assert got["test_err"].outcome == "error"
    assert got["test_err"].exception_type == "RuntimeError"
    assert got["test_hang"].outcome == "failed"
    assert got["test_hang"].timed_out is True
    assert not got["test_fail"].timed_out
    assert got["test_ok"].as_dict()["outcome"] == "passed"


def test_multiple_testsuites_and_a_bare_testsuite() -> None:
    multi = """<testsuites>
      <testsuite name="a"><testcase classname="t.test_a" name="one" time="1"/></testsuite>
      <testsuite name="b"><testcase classname="t.test_b" name="two" time="2">
        <failure type="ValueError" message="bad">tb</failure></testcase></testsuite>
    </testsuites>"""
    results = parse_junit(multi)
    assert [(r.nodeid, r.outcome) for r in results] == [
        ("t/test_a.py::one", "passed"),
        ("t/test_b.py::two", "failed"),
    ]
    assert results[1].exception_type == "ValueError"  # a type attribute wins

    bare = '<testsuite name="pytest"><testcase classname="m.test_x" name="t"/></testsuite>'
    assert [r.outcome for r in parse_junit(bare)] == ["passed"]
    assert parse_junit(b"<testsuites/>") == []


def test_missing_attributes_and_file_attribute() -> None:
    results = parse_junit(
        "<testsuite><testcase/>"
        '<testcase name="n" time="oops"/>'
        '<testcase classname="pkg.mod" name="check" file="pkg/mod.py" time="0.5"/>'
        '<testcase classname="helpers.Thing" name="x"/></testsuite>'
    )
    first, second, third, fourth = results
    assert (first.name, first.classname, first.file, first.duration_s) == ("", "", None, 0.0)
    assert second.nodeid == "n"
    assert second.duration_s == 0.0
    assert third.file == "pkg/mod.py"
    assert third.nodeid == "pkg/mod.py::check"
    assert fourth.file is None  # no test module in the classname
    assert fourth.nodeid == "helpers.Thing::x"


def test_a_root_tests_module_is_named_by_its_file() -> None:
    """jsonpointer and texttable keep their tests in a root ``tests.py``: pytest calls its
    cases ``tests.SpecificationTests``, and only ``tests.py::…`` can be run again."""
    results = parse_junit(
        '<testsuite><testcase classname="tests.SpecificationTests" name="test_tilde"/>'
        '<testcase classname="tests" name="test_plain"/>'
        '<testcase classname="tests.helpers" name="test_in_a_package"/></testsuite>'
    )
    assert [r.nodeid for r in results] == [
        "tests.py::SpecificationTests::test_tilde",
        "tests.py::test_plain",
        "tests.helpers::test_in_a_package",  # a module of a tests package: not known
    ]


def test_a_module_that_cannot_be_collected_is_named_by_its_file() -> None:
    """pytest names a collection error by the module's dotted name and no classname
    (idna 3.12's property tests need a newer hypothesis); as a path it can be run again
    on its own, which the dotted name cannot."""
    results = parse_junit(
        '<testsuite><testcase classname="" name="tests.test_props" time="0.000">'
        '<error message="collection failure">TypeError: characters() got an unexpected'
        " keyword argument</error></testcase>"
        '<testcase classname="" name="tests" time="0.000">'
        '<error message="collection failure">ImportError</error></testcase></testsuite>'
    )
    assert [(r.nodeid, r.file, r.outcome) for r in results] == [
        ("tests/test_props.py", "tests/test_props.py", "error"),
        ("tests.py", "tests.py", "error"),
    ]


def test_exception_type_of_a_bare_assert_comes_from_the_traceback() -> None:
    [result] = parse_junit(
        '<testsuite><testcase classname="t.test_a" name="x">'
        '<failure message="assert (1 + 1) == 3">def test_x():\n'
        "&gt;       assert 1 + 1 == 3\nE       assert (1 + 1) == 3\n\n"
        "t/test_a.py:5: AssertionError</failure></testcase></testsuite>"
    )
    assert result.exception_type == "AssertionError"
    assert result.message == "assert (1 + 1) == 3"


def test_failure_message_from_text_when_no_attribute() -> None:
    [result] = parse_junit(
        '<testsuite><testcase classname="t.test_a" name="x">'
        "<failure>KeyError: 'a'\ntraceback</failure></testcase></testsuite>"
    )
    assert result.outcome == "failed"
    assert result.exception_type == "KeyError"
    assert result.message.startswith("KeyError")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("<testsuite><testcase></testsuite>", "malformed"),
        ("", "malformed"),
        ("not xml at all", "malformed"),
        ("<html><body/></html>", "root element is <html>"),
        (
            '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite>&a;</testsuite>',
            "DTD",
        ),
    ],
)
def test_bad_reports_raise_a_clear_error(text: str, needle: str) -> None:
    with pytest.raises(JUnitError, match=needle):
        parse_junit(text)


def test_load_junit_refuses_symlinks_and_oversized_files(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(PYTEST_REPORT)
    assert len(load_junit(report)) == 6

    secret = tmp_path / "secret"
    secret.write_text("<testsuite><testcase name='leak'/></testsuite>")
    link = tmp_path / "link.xml"
    link.symlink_to(secret)
    with pytest.raises(JUnitError, match="cannot open"):
        load_junit(link)
    with pytest.raises(JUnitError, match="no JUnit report"):
        load_junit(tmp_path / "missing.xml")
    with pytest.raises(JUnitError, match="over 10"):
        load_junit(report, max_bytes=10)
    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    with pytest.raises(JUnitError, match="not a regular file"):
        load_junit(fifo)


def test_pytest_command() -> None:
    cmd = pytest_command("/workspace/.kaizen-junit.xml", ["tests", "-x"])
    assert cmd == [
        "python",
        "-m",
        "pytest",
        "-q",
        "--junitxml=/workspace/.kaizen-junit.xml",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "--maxfail=0",
        "tests",
        "-x",
    ]
    with_timeout = pytest_command("r.xml", (), 30, python=sys.executable)
    # pytest-timeout is a dev dependency, so the venv's python has it.
    assert "--timeout=30" in with_timeout
    assert with_timeout[0] == sys.executable
    assert "--timeout=30" not in pytest_command("r.xml", (), 30, has_pytest_timeout=False)
    assert "--timeout=1" in pytest_command("r.xml", (), 0.2, has_pytest_timeout=True)
    missing = pytest_command("r.xml", (), 30, python="/nonexistent/python")
    assert not any(arg.startswith("--timeout") for arg in missing)


def test_the_run_goes_on_past_failures_whatever_the_projects_addopts_say(tmp_path: Path) -> None:
    """transitions 0.9.3: ``addopts = -x`` and a test module that cannot be imported
    stopped every run before a test of the code had run."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -x -rf\n")
    (tmp_path / "test_a_style.py").write_text("import not_installed_here\n")
    (tmp_path / "test_b_code.py").write_text(
        "def test_one():\n    assert 1 == 2\n\n\ndef test_two():\n    assert 2 == 3\n"
    )
    report = tmp_path / "report.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}

    subprocess.run(
        pytest_command(str(report), python=sys.executable, has_pytest_timeout=False),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )

    failed = {r.name for r in load_junit(report) if r.outcome in ("failed", "error")}
    assert {"test_one", "test_two"} <= failed
