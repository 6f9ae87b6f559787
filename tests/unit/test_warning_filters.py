"""A project's warning filters naming a module the sandbox lacks: found in pytest's
output, and left out of the next run with the rest kept (run with the real pytest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_pytest
from workers.fix.warning_filters import missing_filter_module, project_filters, without_filters_of

PYTEST_7 = """\
ERROR: while parsing the following warning configuration:

  ignore::pytest_benchmark.logger.PytestBenchmarkWarning

This error occurred:

Traceback (most recent call last):
ModuleNotFoundError: No module named 'pytest_benchmark'
"""
PYTEST_9 = (
    "pytest.PytestConfigWarning: Failed to import filter module 'pytest_benchmark': "
    "ignore::pytest_benchmark.logger.PytestBenchmarkWarning\n"
)


def test_the_missing_module_is_read_from_what_pytest_says() -> None:
    assert missing_filter_module(PYTEST_7) == "pytest_benchmark"
    assert missing_filter_module(PYTEST_9) == "pytest_benchmark"
    assert missing_filter_module("ModuleNotFoundError: No module named 'yaml'") is None
    assert missing_filter_module("") is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\nfilterwarnings =\n    error\n    ignore::pkg.W\n"),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\nfilterwarnings = ["error", "ignore::pkg.W"]\n',
        ),
        (
            "tox.ini",
            "[tox]\nenvlist = py3\n\n[pytest]\nfilterwarnings =\n  error\n  ignore::pkg.W\n",
        ),
        ("setup.cfg", "[tool:pytest]\nfilterwarnings =\n    error\n    ignore::pkg.W\n"),
    ],
)
def test_the_filters_are_read_from_each_kind_of_config(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    assert project_filters(tmp_path) == ["error", "ignore::pkg.W"]


def test_a_pytest_ini_wins_and_an_unreadable_config_is_none(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nfilterwarnings = ["ignore"]\n'
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    assert project_filters(tmp_path) == ["error"]
    (tmp_path / "pytest.ini").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options\nbroken")
    assert project_filters(tmp_path) is None
    assert without_filters_of(tmp_path, "pkg") == ["-p", "no:warnings"]


CONFIG = """\
[pytest]
filterwarnings =
    error
    ignore::not_installed_here.logger.SomeWarning
    ignore:.*old.*:DeprecationWarning
"""
TESTS = """\
import warnings


def test_warns():
    warnings.warn("new", UserWarning)


def test_old_api():
    warnings.warn("the old way", DeprecationWarning)


def test_fails():
    assert 1 == 2
"""


def test_the_run_goes_on_with_the_other_filters_in_force(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(CONFIG)
    (tmp_path / "test_w.py").write_text(TESTS)
    stopped = run_pytest(tmp_path, [])
    module = missing_filter_module(stopped.stdout + stopped.stderr)
    assert module == "not_installed_here"
    assert "passed" not in stopped.stdout

    again = run_pytest(tmp_path, without_filters_of(tmp_path, module))

    # "error" still turns the UserWarning into a failure; the DeprecationWarning filter holds
    assert "FAILED test_w.py::test_warns" in again.stdout
    assert "FAILED test_w.py::test_fails" in again.stdout
    assert "2 failed, 1 passed" in again.stdout
