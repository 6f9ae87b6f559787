"""The oldest Python a repository supports, read from its metadata without running it."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.review.python_version import (
    DeclaredPython,
    admits_python2,
    declared_python,
    declared_python_at,
    lowest_minor,
)


@pytest.mark.parametrize(
    ("spec", "minor"),
    [
        (">=3.8", 8),
        (">= 3.7", 7),
        (">=3.8.1", 8),
        ("~=3.9", 9),
        (">3.8", 8),
        (">=3.9,<4", 9),
        (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*, !=3.4.*", 5),
        ("==3.11.*", 11),
        ("^3.8", 8),  # Poetry
        ("~3.10", 10),
        (">=3.8 <4.0", 8),
        ("^3.9 || ^3.7", 7),
        ("3.12.*", 12),
        ("not a version", None),
        ("<3", None),  # no Python 3 at all
        ("", None),
    ],
)
def test_lowest_minor(spec: str, minor: int | None) -> None:
    assert lowest_minor(spec) == minor


def test_ruff_target_is_clamped_to_what_ruff_knows() -> None:
    assert DeclaredPython(5, "x").ruff_target == "py37"
    assert DeclaredPython(9, "x").ruff_target == "py39"
    assert DeclaredPython(20, "x").ruff_target == "py313"


def found(**files: str) -> DeclaredPython | None:
    by_name = {name.replace("__", ".").replace("_", "-"): text for name, text in files.items()}
    return declared_python(by_name.get)


PYPROJECT = "[project]\nname = 'x'\nrequires-python = '>=3.9'\n"


def test_the_ruff_configs_target_version_comes_first() -> None:
    declared = found(pyproject__toml=PYPROJECT + "[tool.ruff]\ntarget-version = 'py311'\n")
    assert declared == DeclaredPython(11, 'target-version = "py311" in pyproject.toml')
    # a ruff.toml without target-version: requires-python, as ruff reads it
    assert found(ruff__toml="line-length = 100\n", pyproject__toml=PYPROJECT) == DeclaredPython(
        9, "requires-python = '>=3.9' in pyproject.toml"
    )


def test_ruffs_oldest_target_gives_way_to_an_older_declared_python() -> None:
    """loguru: ``target-version = "py37"`` with "we should target Python 3.5, but Ruff does
    not support it", and ``requires-python = ">=3.5"``: py37 is ruff's floor, not theirs."""
    pyproject = (
        "[project]\nname = 'x'\nrequires-python = '>=3.5,<4.0'\n"
        "[tool.ruff]\ntarget-version = 'py37'\n"
    )
    assert found(pyproject__toml=pyproject) == DeclaredPython(
        5, "requires-python = '>=3.5,<4.0' in pyproject.toml"
    )
    # a newer specifier, or a target above ruff's floor, leaves the target as it was (a
    # newer specifier is kept beside it: where pip installs from)
    newer = pyproject.replace(">=3.5,<4.0", ">=3.8")
    assert found(pyproject__toml=newer) == DeclaredPython(
        7, 'target-version = "py37" in pyproject.toml', installs_from=8
    )
    above = pyproject.replace("py37", "py38")
    assert found(pyproject__toml=above) == DeclaredPython(
        8, 'target-version = "py38" in pyproject.toml'
    )


def test_a_newer_version_specifier_beside_ruffs_target_is_where_pip_installs_from() -> None:
    """folium 0.20: ``target-version = "py37"`` in its ruff config, ``python_requires=">=3.9"``
    in setup.py. Ruff lints for py37 as the team's does; pip installs from 3.9."""
    setup_py = "from setuptools import setup\nsetup(name='folium', python_requires='>=3.9')\n"
    declared = found(pyproject__toml="[tool.ruff]\ntarget-version = 'py37'\n", setup__py=setup_py)
    assert declared == DeclaredPython(
        7, 'target-version = "py37" in pyproject.toml', installs_from=9
    )
    # classifiers are not what pip enforces
    classified = "[project]\nname = 'x'\nclassifiers = ['Programming Language :: Python :: 3.9']\n"
    assert found(pyproject__toml=classified + "[tool.ruff]\ntarget-version = 'py38'\n") == (
        DeclaredPython(8, 'target-version = "py38" in pyproject.toml')
    )


def test_each_place_in_turn() -> None:
    assert found(pyproject__toml="[tool.poetry.dependencies]\npython = '^3.8'\n") == (
        DeclaredPython(8, "python = '^3.8' in [tool.poetry.dependencies]")
    )
    assert found(setup__cfg="[metadata]\nname = x\n[options]\npython_requires = >= 3.7\n") == (
        DeclaredPython(7, "python_requires = '>= 3.7' in setup.cfg")
    )
    setup_py = "from setuptools import setup\nsetup(name='x', python_requires='>=3.6')\n"
    assert found(setup__py=setup_py) == DeclaredPython(6, "python_requires = '>=3.6' in setup.py")
    assert found(__python_version="3.12.1\n") == DeclaredPython(12, "3.12 in .python-version")
    assert found(__python_version="3.11\npypy3.10\n3.10.4\n") == DeclaredPython(
        10, "3.10 in .python-version"
    )
    assert found() is None


def test_a_pyproject_without_a_version_falls_through_to_setup_cfg() -> None:
    declared = found(
        pyproject__toml="[build-system]\nrequires = ['setuptools']\n",
        setup__cfg="[options]\npython_requires = >=3.8\n",
    )
    assert declared is not None and declared.minor == 8


def test_setup_py_is_read_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    setup_py = (
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "import setuptools\nsetuptools.setup(python_requires='>=3.8')\n"
    )
    assert found(setup__py=setup_py) == DeclaredPython(8, "python_requires = '>=3.8' in setup.py")
    assert not marker.exists()
    # a value computed when setup.py runs is not known without running it
    assert found(setup__py="setup(python_requires='>=' + MIN)\n") is None


@pytest.mark.parametrize(
    "files",
    [
        {"pyproject__toml": "[project]\nrequires-python = " + "[" * 5_000},
        {"pyproject__toml": "[project]\nrequires-python = 3.8\n"},  # not a string
        {"setup__cfg": "this is not [an ini"},
        {"setup__py": "setup(python_requires=" + "(" * 5_000},
        {"setup__py": "x = 1\n" * 200_000 + "setup(python_requires='>=3.8')\n"},  # too large
        {"__python_version": "system\n"},
    ],
)
def test_unreadable_metadata_declares_nothing(files: dict[str, str]) -> None:
    assert found(**files) is None


PEEWEE_SETUP_PY = """\
from setuptools import setup
setup(
    name='peewee',
    classifiers=[
        'Programming Language :: Python',
        'Programming Language :: Python :: 2',
        'Programming Language :: Python :: 2.7',
        'Programming Language :: Python :: 3',
        'Programming Language :: Python :: 3.4',
        'Programming Language :: Python :: 3.5',
    ],
)
"""


def test_trove_classifiers_name_the_oldest_python_when_nothing_else_does() -> None:
    # peewee 3.17 declares its Pythons only by classifier (2.7, 3.4, …)
    assert found(setup__py=PEEWEE_SETUP_PY) == DeclaredPython(
        4, "'Programming Language :: Python :: 3.4' classifier in setup.py", python2=True
    )
    # a list kept in a variable is still literal data in the syntax tree
    in_a_name = (
        "CLASSIFIERS = ['Programming Language :: Python :: 3.9']\nsetup(classifiers=CLASSIFIERS)\n"
    )
    assert found(setup__py=in_a_name) == DeclaredPython(
        9, "'Programming Language :: Python :: 3.9' classifier in setup.py"
    )
    setup_cfg = (
        "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.12\n"
        "    Programming Language :: Python :: 3.8\n"
        "    Programming Language :: Python :: 3 :: Only\n"
    )
    assert found(setup__cfg=setup_cfg) == DeclaredPython(
        8, "'Programming Language :: Python :: 3.8' classifier in setup.cfg"
    )
    pyproject = "[project]\nclassifiers = ['Programming Language :: Python :: 3.10']\n"
    assert found(pyproject__toml=pyproject) == DeclaredPython(
        10, "'Programming Language :: Python :: 3.10' classifier in pyproject.toml"
    )


def test_a_version_specifier_outranks_classifiers() -> None:
    pyproject = (
        "[project]\nrequires-python = '>=3.9'\n"
        "classifiers = ['Programming Language :: Python :: 3.7']\n"
    )
    assert found(pyproject__toml=pyproject) == DeclaredPython(
        9, "requires-python = '>=3.9' in pyproject.toml"
    )
    setup_py = "setup(python_requires='>=3.8')\n"
    declared = found(
        pyproject__toml="[project]\nclassifiers = ['Programming Language :: Python :: 3.6']\n",
        setup__py=setup_py,
    )
    assert declared is not None and declared.minor == 8


def test_python_2_classifiers_without_a_python_3_minor_say_python_2() -> None:
    """pexpect 4.9 lists ``Python :: 2.7`` and ``Python :: 3`` only."""
    setup_py = (
        "setup(classifiers=['Programming Language :: Python :: 2.7',"
        " 'Programming Language :: Python :: 3'])\n"
    )
    assert found(setup__py=setup_py) == DeclaredPython(
        7, "'Programming Language :: Python :: 2.7' classifier in setup.py", python2=True
    )


def test_classifiers_without_a_python_3_minor_declare_nothing() -> None:
    only_major = (
        "setup(classifiers=['Programming Language :: Python :: 3',"
        " 'Programming Language :: Python :: 3 :: Only'])\n"
    )
    assert found(setup__py=only_major) is None
    # a classifier of something else that merely mentions a version
    assert found(setup__py="setup(classifiers=['Framework :: Django :: 3.2'])\n") is None


@pytest.mark.parametrize(
    ("spec", "python2"),
    [
        (">=2.7, !=3.0.*, !=3.1.*, !=3.2.*", True),  # python-dateutil 2.9
        (">=2.7", True),
        ("^2.7 || ^3.6", True),
        ("~=2.7", True),
        (">=3.6", False),
        (">=3", False),
        ("==3.11.*", False),
        ("not a version", False),
    ],
)
def test_admits_python2(spec: str, python2: bool) -> None:
    assert admits_python2(spec) is python2


def test_support_for_python_2_is_part_of_what_is_declared() -> None:
    setup_py = "setup(python_requires='>=2.7, !=3.0.*, !=3.1.*, !=3.2.*')\n"
    assert found(setup__py=setup_py) == DeclaredPython(
        3, "python_requires = '>=2.7, !=3.0.*, !=3.1.*, !=3.2.*' in setup.py", python2=True
    )
    declared = found(pyproject__toml=PYPROJECT)
    assert declared is not None and not declared.python2


def test_the_nearest_project_that_declares_a_python_declares_for_its_files() -> None:
    """A nested ``pyproject.toml`` with only a tool's settings declares nothing: its
    files follow the next project up that does, here the root."""
    files = {
        "pyproject.toml": PYPROJECT,
        "docs/tutorial/pyproject.toml": "[project]\nname = 't'\nrequires-python = '>=3.8'\n",
        "docs/tutorial/tool/pyproject.toml": "[tool.black]\nline-length = 88\n",
        "tools/pyproject.toml": "[tool.black]\nline-length = 88\n",
    }

    nested = declared_python_at("docs/tutorial/tool/src/t/models.py", files.get)
    tools = declared_python_at("tools/run.py", files.get)
    root = declared_python_at("src/x/core.py", files.get)

    assert nested is not None and nested.minor == 8
    assert nested.source == "requires-python = '>=3.8' in pyproject.toml of `docs/tutorial/`"
    assert tools == root == declared_python(files.get)
