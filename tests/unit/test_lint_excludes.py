"""Files the repository's own linters leave out are left out of Kaizen's ruff pass."""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from workers.review.lint_excludes import RUFF_DEFAULT_EXCLUDE, LintExcludes, lint_excludes
from workers.review.ruff_scan import ruff_command


def excludes(**files: str) -> LintExcludes:
    by_name = {name.replace("__", ".").replace("_", "-"): text for name, text in files.items()}
    return lint_excludes(by_name.get)


BLACK_PRE_COMMIT = """
exclude: ^(profiling/|tests/data/)
repos:
  - repo: https://github.com/pycqa/flake8
    rev: 7.0.0
    hooks:
      - id: flake8
        exclude: ^src/blib2to3/
  - repo: https://github.com/pre-commit/mirrors-mypy
    hooks:
      - id: mypy
        exclude: ^(docs/conf.py|scripts/generate_schema.py)$
"""


@pytest.mark.parametrize(
    ("path", "left_out"),
    [
        ("tests/data/cases/comments.py", True),  # the top-level exclude
        ("profiling/mix.py", True),
        ("src/blib2to3/pgen2/driver.py", True),  # the flake8 hook's
        ("scripts/generate_schema.py", False),  # only mypy's: ruff findings are not mypy's
        ("src/black/nodes.py", False),
        ("docs/tests/data/x.py", False),  # anchored at the root
    ],
)
def test_pre_commit_excludes(path: str, left_out: bool) -> None:
    found = excludes(__pre_commit_config__yaml=BLACK_PRE_COMMIT)
    assert found.excludes(path) is left_out
    assert found.sources == (".pre-commit-config.yaml",)


BUGBEAR_PYPROJECT = """
[tool.black]
force-exclude = '''
(
  ^/tests\\/eval_files\\/.*
)
'''
extend-exclude = "^/vendored/"
"""


@pytest.mark.parametrize(
    ("path", "left_out"),
    [
        ("tests/eval_files/b009_b010_b043_mangled.py", True),  # force-exclude, verbose
        ("vendored/six.py", True),  # extend-exclude, on one line
        ("tests/test_bugbear.py", False),
        ("bugbear.py", False),
        ("src/tests/eval_files/x.py", False),  # anchored at the root, as black reads it
    ],
)
def test_the_files_black_is_kept_off_are_left_out(path: str, left_out: bool) -> None:
    """flake8-bugbear keeps its checks' cases in ``tests/eval_files/`` and black off them:
    10 comments on code that is there to be wrong before."""
    found = excludes(pyproject__toml=BUGBEAR_PYPROJECT)
    assert found.excludes(path) is left_out
    assert "pyproject.toml" in found.sources


def test_ruffs_own_defaults_count_without_a_config() -> None:
    found = excludes()
    assert found.excludes("dist/lib/pkg/mod.py")
    assert found.excludes("pkg/.venv/lib/site.py")
    assert found.excludes("docs/_build/conf.py")
    assert not found.excludes("src/builder.py")
    # not a default of the ruff Kaizen runs: pip keeps source code in such a folder
    assert not found.excludes("src/pip/_internal/operations/build/build_tracker.py")
    assert found.sources == ()


def test_the_defaults_are_those_of_the_ruff_kaizen_runs() -> None:
    ruff = ruff_command()
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "a.py").write_text("")
        shown = subprocess.run(
            [*ruff, "check", "--isolated", "--show-settings", "a.py"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    block = shown.split("file_resolver.exclude = [", 1)[1].split("]", 1)[0]
    defaults = [line.strip().strip(",").strip('"') for line in block.splitlines()]
    assert tuple(d for d in defaults if d) == RUFF_DEFAULT_EXCLUDE


def test_a_glob_written_with_a_folder_counts_from_the_root_only() -> None:
    """pip 24.2: ``extend-exclude = ["_vendor", "./build", ...]`` means its top-level
    build folder, not ``src/pip/_internal/operations/build``; ``_vendor`` is a name."""
    found = excludes(pyproject__toml="[tool.ruff]\nextend-exclude = ['_vendor', './build']\n")
    assert found.excludes("build/lib/pip/__init__.py")
    assert not found.excludes("src/pip/_internal/operations/build/build_tracker.py")
    assert found.excludes("src/pip/_vendor/rich/console.py")
    flake8 = excludes(setup__cfg="[flake8]\nexclude = ./docs, tests/data\n")
    assert flake8.excludes("docs/conf.py")
    assert not flake8.excludes("src/docs/conf.py")
    assert not flake8.excludes("pkg/tests/data/x.py")


def test_a_ruff_exclude_replaces_the_defaults_and_extend_exclude_adds() -> None:
    replaced = excludes(ruff__toml="exclude = ['generated']\n")
    assert replaced.excludes("generated/api.py")
    assert replaced.excludes("pkg/generated/api.py")  # a name alone: anywhere
    assert not replaced.excludes("dist/x.py")
    extended = excludes(
        pyproject__toml=(
            "[tool.ruff]\nextend-exclude = ['tests/fixtures/', '*_pb2.py']\n"
            "[tool.ruff.lint]\nexclude = ['legacy/**']\n"
        )
    )
    assert extended.excludes("tests/fixtures/bad_code.py")
    assert extended.excludes("proto/user_pb2.py")
    assert extended.excludes("legacy/old/module.py")
    assert extended.excludes("dist/x.py")
    assert not extended.excludes("tests/test_fixtures.py")
    assert extended.sources == ("pyproject.toml",)


def test_double_stars_match_no_folder_too_and_braces_spell_alternatives() -> None:
    """pylint 3.3: ``extend-exclude = ["tests/**/functional/"]`` leaves out its test inputs
    in ``tests/functional`` (code written to trigger messages), as ruff reads it."""
    found = excludes(
        pyproject__toml="[tool.ruff]\nextend-exclude = ['tests/**/functional/', 'gen/{a,b}']\n"
    )
    assert found.excludes("tests/functional/s/slots_checks.py")
    assert found.excludes("tests/extensions/functional/x.py")
    assert found.excludes("gen/a/x.py") and found.excludes("gen/b/y.py")
    assert not found.excludes("gen/c/z.py")
    assert not found.excludes("pylint/checkers/functional.py")
    assert not found.excludes("src/tests/functional/x.py")  # written with a folder: rooted


def test_flake8_excludes_from_its_first_config_with_a_section() -> None:
    found = excludes(
        setup__cfg="[metadata]\nname = x\n",
        tox__ini="[flake8]\nexclude =\n    .git,\n    tests/data  # odd code\n    vendored\n",
        __flake8="[flake8]\nexclude = other\n",
    )
    assert found.excludes("tests/data/sample.py")
    assert found.excludes("src/vendored/six.py")
    assert not found.excludes("other/x.py")
    assert found.sources == ("tox.ini",)


@pytest.mark.parametrize(
    "files",
    [
        {"ruff__toml": "exclude = ['/', '../..', '', 7]\n"},
        {"__flake8": "[flake8]\nexclude = /etc, ../up\n"},
        {"__pre_commit_config__yaml": "exclude: '^$'\nrepos: []\n"},
        {"__pre_commit_config__yaml": "exclude: '(unclosed'\n"},
        {"__pre_commit_config__yaml": "- just\n- a list\n"},
        {"__pre_commit_config__yaml": "exclude: [not, a, string]\n"},
        {"__pre_commit_config__yaml": ": : not yaml : ["},
    ],
)
def test_configs_that_exclude_nothing_or_cannot_be_read_leave_everything_in(
    files: dict[str, str],
) -> None:
    found = excludes(**files)
    assert not found.excludes("src/pkg/mod.py")
    assert not found.excludes("tests/test_mod.py")


def test_a_backtracking_regex_gives_up_in_time_and_excludes_nothing() -> None:
    found = excludes(__pre_commit_config__yaml="exclude: '^(a|aa)+$'\n")
    started = time.perf_counter()
    for n in range(60, 260):  # years of backtracking each, without the limit
        assert not found.excludes("a" * n + "!")
    assert time.perf_counter() - started < 2.0  # given up once, then not tried again
