"""Where a repository keeps its tests when no name says so: pytest's ``testpaths``."""

from __future__ import annotations

import pytest

from workers.code_paths import is_test_path
from workers.review.repo_files import pytest_testpaths


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = "t/unit/"\n'),
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["t/unit", "./t/smoke"]\n'),
        ("pytest.ini", "[pytest]\ntestpaths =\n    t/unit\n    t/smoke\n"),
        (".pytest.ini", "[pytest]\ntestpaths = t/unit t/smoke\n"),
        ("tox.ini", "[tox]\nenvlist = py\n\n[pytest]\ntestpaths = t/unit t/smoke\n"),
        ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = t/unit t/smoke\n"),
    ],
)
def test_testpaths_are_read_from_each_of_pytests_config_files(name: str, text: str) -> None:
    found = pytest_testpaths({name: text}.get)
    assert found[0] == "t/unit"
    assert found[1:] in ((), ("t/smoke",))


def test_the_first_config_file_pytest_would_use_decides() -> None:
    files = {
        "pytest.ini": "[pytest]\naddopts = -q\n",  # pytest's config, with no testpaths
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["t"]\n',
        "setup.cfg": "[tool:pytest]\ntestpaths = other\n",
    }
    assert pytest_testpaths(files.get) == ()
    del files["pytest.ini"]
    assert pytest_testpaths(files.get) == ("t",)


def test_the_whole_repository_globs_and_paths_outside_it_are_not_test_roots() -> None:
    text = (
        '[tool.pytest.ini_options]\ntestpaths = [".", "src/*/tests", "../elsewhere", "/abs", "t"]\n'
    )
    assert pytest_testpaths({"pyproject.toml": text}.get) == ("t",)


def test_a_config_that_is_not_one_names_no_test_roots() -> None:
    assert pytest_testpaths({"pyproject.toml": "testpaths = [[[\n"}.get) == ()
    assert pytest_testpaths({"setup.cfg": "not an ini file\n"}.get) == ()
    assert pytest_testpaths({}.get) == ()


def test_a_path_under_a_test_root_is_test_code() -> None:
    roots = ("t/unit", "checks/smoke.py")
    assert is_test_path("t/unit/bin/proj/daemon_config.py", roots)
    assert is_test_path("checks/smoke.py", roots)
    assert not is_test_path("t/unitary/app.py", roots)
    assert not is_test_path("t/unit_helpers.py", roots)
    assert not is_test_path("t/unit/bin/proj/daemon_config.py")
