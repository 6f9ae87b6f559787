from __future__ import annotations

from pathlib import Path

import pytest

from workers.fix.testcmd import (
    PytestRun,
    TestCommand,
    config_text,
    detect_test_command,
    pytest_run_of,
    src_layout,
)

PYTEST = ["python3", "-m", "pytest"]


def write(root: Path, rel: str, text: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_configured_command_wins_and_runs_through_sh(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\n")
    found = detect_test_command(tmp_path, "make test && echo ok")
    assert found == TestCommand(["sh", "-c", "make test && echo ok"], "config")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest", PytestRun()),
        ("py.test -q -k 'not slow'", PytestRun(None, ("-q", "-k", "not slow"))),
        ("python -m pytest tests/unit -x", PytestRun(None, ("tests/unit", "-x"))),
        ("python3 -m pytest", PytestRun()),
        ("python3.12 -m pytest", PytestRun("python3.12")),
        (".venv/bin/python -m pytest tests", PytestRun(".venv/bin/python", ("tests",))),
        (
            ".venv/bin/pytest -m 'not integration'",
            PytestRun(".venv/bin/python", ("-m", "not integration")),
        ),
        ("/opt/py/bin/pytest", PytestRun("/opt/py/bin/python")),
        (
            "PYTHONPATH=lib DJANGO_SETTINGS_MODULE=site.settings pytest tests",
            PytestRun(
                None, ("tests",), {"PYTHONPATH": "lib", "DJANGO_SETTINGS_MODULE": "site.settings"}
            ),
        ),
        # Kaizen writes the report where it reads it.
        ("pytest --junitxml=out.xml --junit-xml out2.xml -q", PytestRun(None, ("-q",))),
    ],
)
def test_a_configured_plain_pytest_call_is_run_as_pytest(command: str, expected: PytestRun) -> None:
    assert pytest_run_of(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "make test",
        "tox -e py311",
        "pytest && echo done",
        "pytest | tee log",
        "pytest tests/*.py",
        "pytest $ARGS",
        "pytest; true",
        "pytest > out.txt",
        "python -c 'import pytest'",
        "python -m unittest",
        "uv run pytest",
        "PYTHONPATH=src",
        "pytest 'unclosed",
        "pytest -k 'a' # comment",
    ],
)
def test_anything_else_runs_through_the_shell(command: str) -> None:
    assert pytest_run_of(command) is None
    assert detect_test_command(Path("."), command) == TestCommand(["sh", "-c", command], "config")


def test_a_configured_pytest_call_keeps_its_shell_form_too(tmp_path: Path) -> None:
    found = detect_test_command(tmp_path, ".venv/bin/python -m pytest tests")
    assert found == TestCommand(
        ["sh", "-c", ".venv/bin/python -m pytest tests"],
        "config",
        PytestRun(".venv/bin/python", ("tests",)),
    )


def test_blank_configured_command_means_detect(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_a.py")
    assert detect_test_command(tmp_path, "   ") == TestCommand(PYTEST, "convention", PytestRun())


@pytest.mark.parametrize(
    ("rel", "text", "source"),
    [
        ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['t']\n", "pyproject"),
        ("pyproject.toml", "[tool.pytest]\nminversion = '9.0'\n", "pyproject"),
        ("pytest.ini", "", "pytest.ini"),
        (".pytest.ini", "[pytest]\n", "pytest.ini"),
        ("pytest.toml", "[pytest]\n", "pytest.toml"),
        ("tox.ini", "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -q\n", "tox.ini"),
        ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = t\n", "setup.cfg"),
    ],
)
def test_pytest_configuration_sources(tmp_path: Path, rel: str, text: str, source: str) -> None:
    write(tmp_path, rel, text)
    assert detect_test_command(tmp_path) == TestCommand(PYTEST, source, PytestRun())  # type: ignore[arg-type]


def test_config_without_a_pytest_section_is_not_a_source(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.ruff]\nline-length = 100\n")
    write(tmp_path, "tox.ini", "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n")
    write(tmp_path, "setup.cfg", "[metadata]\nname = x\n[pytest]\n")  # wrong name for setup.cfg
    assert detect_test_command(tmp_path) is None


def test_pytest_precedence_matches_pytest(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.pytest.ini_options]\n")
    write(tmp_path, "setup.cfg", "[tool:pytest]\n")
    assert detect_test_command(tmp_path) == TestCommand(PYTEST, "pyproject", PytestRun())
    write(tmp_path, "pytest.ini", "[pytest]\n")
    assert detect_test_command(tmp_path) == TestCommand(PYTEST, "pytest.ini", PytestRun())


@pytest.mark.parametrize("value", ["[unclosed", "[" * 5_000])  # the second: RecursionError
def test_broken_pyproject_falls_back_to_the_table_header(tmp_path: Path, value: str) -> None:
    write(tmp_path, "pyproject.toml", f"[tool.pytest.ini_options]\naddopts = {value}\n")
    assert detect_test_command(tmp_path) == TestCommand(PYTEST, "pyproject", PytestRun())


@pytest.mark.parametrize(
    "rel",
    ["tests/test_core.py", "test/helpers.py", "src/pkg/test_util.py", "pkg/parser_test.py"],
)
def test_conventions(tmp_path: Path, rel: str) -> None:
    write(tmp_path, "pkg/__init__.py")
    write(tmp_path, rel)
    assert detect_test_command(tmp_path) == TestCommand(PYTEST, "convention", PytestRun())


@pytest.mark.parametrize(
    ("name", "tests"),
    [
        ("tests.py", "import pytest\n\n\ndef test_draw():\n    assert True\n"),
        ("test.py", "import unittest\n\n\nclass OTP(unittest.TestCase):\n    def test_at(self):\n"),
    ],
)
def test_a_test_module_at_the_root_is_collected_by_name(
    tmp_path: Path, name: str, tests: str
) -> None:
    """texttable keeps its tests in ``tests.py`` beside ``texttable.py``, pyotp its
    ``unittest`` cases in ``test.py``: pytest collects no such file by default, so the
    run names it among the files pytest reads."""
    write(tmp_path, "texttable.py", "def draw():\n    return ''\n")
    write(tmp_path, name, tests)
    option = ("-o", f"python_files={name} test_*.py *_test.py")

    found = detect_test_command(tmp_path)

    assert found == TestCommand([*PYTEST, *option], "convention", PytestRun(args=option))


@pytest.mark.parametrize("package", ["dotmap", "src/dotmap"])
def test_a_test_module_in_a_package_is_collected_by_name(tmp_path: Path, package: str) -> None:
    """dotmap keeps its ``unittest`` cases in ``dotmap/test.py`` (verboselogs in
    ``verboselogs/tests.py``, a Django app in ``app/tests.py``): "No tests found" before.
    A folder that is no package, or a ``test.py`` that defines no test, is not a suite."""
    write(tmp_path, f"{package}/__init__.py", "class DotMap(dict):\n    pass\n")
    cases = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_get(self):\n"
    write(tmp_path, f"{package}/test.py", cases)
    option = ("-o", "python_files=test.py test_*.py *_test.py")

    found = detect_test_command(tmp_path)

    assert found == TestCommand([*PYTEST, *option], "convention", PytestRun(args=option))


def test_a_test_module_outside_a_package_is_not_a_suite(tmp_path: Path) -> None:
    write(tmp_path, "scripts/test.py", "def test_x():\n    pass\n")  # no __init__.py
    write(tmp_path, "pkg/__init__.py")
    write(tmp_path, "pkg/tests.py", "CASES = [1, 2]\n")
    assert detect_test_command(tmp_path) is None


def test_a_root_tests_py_without_tests_is_not_a_suite(tmp_path: Path) -> None:
    write(tmp_path, "tests.py", "CASES = [1, 2]\n")  # data, no test function
    assert detect_test_command(tmp_path) is None


def test_no_tests_is_none(tmp_path: Path) -> None:
    write(tmp_path, "pkg/__init__.py")
    write(tmp_path, "pkg/testing.py")  # not a test file name
    write(tmp_path, "tests/spec.js")  # a tests/ folder without Python
    write(tmp_path, "README.md", "run test_x.py")
    assert detect_test_command(tmp_path) is None


@pytest.mark.parametrize(
    "folder", [".git", ".venv", "venv", "node_modules", ".tox", "somewhere/site-packages"]
)
def test_skipped_folders_do_not_count(tmp_path: Path, folder: str) -> None:
    write(tmp_path, "app.py")
    write(tmp_path, f"{folder}/pkg/test_vendored.py")
    assert detect_test_command(tmp_path) is None


def test_a_virtualenv_under_any_name_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, "myenv/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "myenv/lib/python3.11/site/test_x.py")
    assert detect_test_command(tmp_path) is None


def test_missing_repo_is_none(tmp_path: Path) -> None:
    assert detect_test_command(tmp_path / "nope") is None


def test_a_src_layout_is_recognised(tmp_path: Path) -> None:
    assert not src_layout(tmp_path)
    write(tmp_path, "src/README.md", "no code here\n")
    assert not src_layout(tmp_path)
    write(tmp_path, "src/shop/pricing.py", "def total(): ...\n")  # a namespace package
    assert src_layout(tmp_path)


def test_a_src_folder_that_would_shadow_the_standard_library_is_left_off_the_path(
    tmp_path: Path,
) -> None:
    write(tmp_path, "src/shop/__init__.py", "")
    write(tmp_path, "src/logging.py", "# would replace the standard logging module\n")
    assert not src_layout(tmp_path)


def test_a_src_symlink_is_not_followed(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere", "shop/__init__.py", "")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "src").symlink_to(tmp_path / "elsewhere")
    assert not src_layout(tmp_path / "repo")


def test_a_root_config_file_is_read_but_never_through_a_link_or_from_a_subfolder(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "host-secret.toml"
    secret.write_text("token = 'x'\n")
    checkout = tmp_path / "repo"
    (checkout / "sub").mkdir(parents=True)
    (checkout / "pytest.ini").write_text("[pytest]\ntestpaths = t/unit\n")
    (checkout / "sub" / "setup.cfg").write_text("[tool:pytest]\n")
    (checkout / "pyproject.toml").symlink_to(secret)

    assert config_text(checkout, "pytest.ini") == "[pytest]\ntestpaths = t/unit\n"
    assert config_text(checkout, "pyproject.toml") is None
    assert config_text(checkout, "sub/setup.cfg") is None
    assert config_text(checkout, "tox.ini") is None


def test_test_files_in_the_test_folder_under_other_names_are_collected_by_path(
    tmp_path: Path,
) -> None:
    """py-ubjson keeps its ``unittest`` cases in ``test/test.py``: pytest collected none
    of them ("All 0 tests pass"). A pattern with a folder in it names that file and no
    ``test.py`` elsewhere; helpers and conftest files that define no tests stay out."""
    write(tmp_path, "ubjson/__init__.py")
    cases = "import unittest\n\n\nclass TestEncode(unittest.TestCase):\n    def test_x(self):\n"
    write(tmp_path, "test/test.py", cases)
    write(tmp_path, "test/units/basic.py", "def test_basic():\n    assert True\n")
    write(tmp_path, "test/helpers.py", "def make():\n    return 1\n")
    write(tmp_path, "test/conftest.py", "def test_in_conftest():\n    pass\n")
    names = "test/test.py test/units/basic.py"
    option = ("-o", f"python_files={names} test_*.py *_test.py")

    found = detect_test_command(tmp_path)

    assert found == TestCommand([*PYTEST, *option], "convention", PytestRun(args=option))
