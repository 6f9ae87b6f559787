"""The ruff rules a repository switched off in its own config, read as data."""

from __future__ import annotations

import time

import pytest

from workers.review.ruff_team_config import (
    PerFileIgnore,
    TeamRuffConfig,
    flake8_per_file,
    ignored_by_team,
    parse_config,
    ruff_table_in,
    team_config,
)


def ignores_in(name: str, text: str) -> list[str] | None:
    table = ruff_table_in(name, text)
    return None if table is None else list(parse_config(table).ignores)


def team_ignores(found: dict[str, str]) -> list[str]:
    return list(team_config(found.get).ignores)


def files(**by_name: str) -> dict[str, str]:
    return {name.replace("_", "."): text for name, text in by_name.items()}


def test_pyproject_ignores_old_and_lint_tables_and_extend() -> None:
    text = (
        "[project]\nname = 'x'\n"
        "[tool.ruff]\nignore = ['E501']\nextend-ignore = ['B904']\n"
        "[tool.ruff.lint]\nignore = ['RET503', 'E501']\nextend-ignore = ['S110']\n"
    )
    assert ignores_in("pyproject.toml", text) == ["E501", "B904", "RET503", "S110"]


def test_ruff_toml_has_no_tool_table() -> None:
    assert ignores_in("ruff.toml", "[lint]\nignore = ['D']\n") == ["D"]
    assert ignores_in(".ruff.toml", "ignore = ['UP032']\n") == ["UP032"]


@pytest.mark.parametrize(
    "text",
    [
        "[project]\nname = 'x'\n",
        "this is = = not toml",
        "[tool]\nruff = 3\n",
        "[tool.ruff]\nignore = " + "[" * 5_000,  # RecursionError inside tomllib
    ],
)
def test_a_pyproject_without_a_ruff_table_is_not_a_ruff_config(text: str) -> None:
    assert ignores_in("pyproject.toml", text) is None


def test_only_rule_selectors_are_taken() -> None:
    text = "[tool.ruff.lint]\nignore = ['B904', '../../etc', 7, 'e501', 'PLR2004', '']\n"
    assert ignores_in("pyproject.toml", text) == ["B904", "PLR2004"]


def test_the_first_ruff_config_in_ruffs_order_wins() -> None:
    found = files(
        ruff_toml="[lint]\nignore = ['B904']\n",
        pyproject_toml="[tool.ruff]\nignore = ['RET503']\n",
    )
    assert team_ignores(found) == ["B904"]
    # a pyproject.toml without [tool.ruff] does not hide a ruff.toml, nor the reverse
    assert team_ignores({"pyproject.toml": "[project]\n", "ruff.toml": "ignore=['S']"}) == ["S"]
    assert team_ignores({}) == []


def test_what_kaizen_yml_selects_is_kept() -> None:
    assert not ignored_by_team("ruff:E722", ["E7"], keep=["E722"])
    assert not ignored_by_team("ruff:E722", ["E722"], keep=["E"])
    assert ignored_by_team("ruff:E711", ["E7"], keep=["E722"])


@pytest.mark.parametrize(
    ("pattern", "ignores", "dropped"),
    [
        ("ruff:E711", ["E"], True),
        ("ruff:E711", ["E7"], True),
        ("ruff:E711", ["E72"], False),
        ("ruff:B006", ["ALL"], True),
        ("ruff:syntax-error", ["ALL"], False),
        ("secrets:aws-access-key", ["ALL"], False),
        ("llm:correctness", ["E"], False),
    ],
)
def test_findings_are_matched_by_prefix_like_ruff(
    pattern: str, ignores: list[str], dropped: bool
) -> None:
    assert ignored_by_team(pattern, ignores) is dropped


HTTPX = """
[tool.ruff.lint]
select = ["E", "F", "I", "B", "PIE"]
ignore = ["B904", "B028"]

[tool.ruff.lint.per-file-ignores]
"__init__.py" = ["F403", "F405"]
"tests/*" = ["S"]
"!src/**/*.py" = ["T20"]
"docs/{conf,build}.py" = ["E402"]
"../outside.py" = ["ALL"]
"/etc/*" = ["ALL"]
"scripts/*" = "F401"
"""


def test_per_file_ignores_are_read_from_both_tables() -> None:
    old = "[tool.ruff.per-file-ignores]\n'a.py' = ['E501']\n"
    new = "[tool.ruff.lint.extend-per-file-ignores]\n'b.py' = ['B006', 'not a rule']\n"
    table = ruff_table_in("pyproject.toml", old + new)
    assert table is not None
    assert parse_config(table).per_file == (
        PerFileIgnore("a.py", ("E501",)),
        PerFileIgnore("b.py", ("B006",)),
    )


def test_per_file_ignores_leave_out_paths_outside_the_repository_and_non_lists() -> None:
    table = ruff_table_in("pyproject.toml", HTTPX)
    assert table is not None
    assert [e.glob for e in parse_config(table).per_file] == [
        "__init__.py",
        "tests/*",
        "src/**/*.py",
        "docs/{conf,build}.py",
    ]


@pytest.mark.parametrize(
    ("pattern", "path", "dropped"),
    [
        ("ruff:F403", "httpx/__init__.py", True),  # a file name alone matches in any folder
        ("ruff:F403", "__init__.py", True),
        ("ruff:F403", "httpx/_client.py", False),
        ("ruff:S301", "tests/unit/test_pickle.py", True),  # "*" crosses folders, as in ruff
        ("ruff:S301", "src/tests/test_pickle.py", False),  # "tests/*" is from the root
        ("ruff:T201", "scripts/run.py", True),  # negated: every file but src/**/*.py
        ("ruff:T201", "src/pkg/run.py", False),
        ("ruff:T201", "src/run.py", False),  # "**/" matches no folder too
        ("ruff:E402", "docs/conf.py", True),  # {a,b} alternatives
        ("ruff:E402", "docs/build.py", True),
        ("ruff:E402", "docs/other.py", False),
        ("ruff:B904", "anywhere.py", True),  # the plain ignore list still counts
        ("ruff:syntax-error", "httpx/__init__.py", False),
    ],
)
def test_per_file_ignores_match_paths_as_ruff_does(pattern: str, path: str, dropped: bool) -> None:
    team = team_config({"pyproject.toml": HTTPX}.get)
    assert team.ignores_finding(pattern, path) is dropped


def test_what_kaizen_yml_selects_beats_a_per_file_ignore() -> None:
    team = TeamRuffConfig(per_file=(PerFileIgnore("__init__.py", ("F4",)),))
    assert team.ignores_finding("ruff:F403", "pkg/__init__.py")
    assert not team.ignores_finding("ruff:F403", "pkg/__init__.py", keep=["F403"])


def test_a_hostile_glob_is_matched_without_backtracking() -> None:
    team = TeamRuffConfig(per_file=(PerFileIgnore("*a" * 60 + "b", ("E",)),))
    started = time.perf_counter()
    assert not team.ignores_finding("ruff:E711", "a" * 4000)
    assert time.perf_counter() - started < 1.0


SQLALCHEMY_SETUP_CFG = """
[flake8]
ignore =
\tA003,A005
\tD,
\tE203,E305,E711,
\tW503,W504
extend-ignore =
\tU100,U101
exclude = .venv,.git,.tox,dist,doc,*egg,build
per-file-ignores =
\t**/__init__.py:F401
\ttest/*:FA100
\ttest/typing/plain_files/*:F821,E501,FA100
\tlib/sqlalchemy/events.py:F401
"""


def test_the_teams_flake8_ignores_count_too() -> None:
    """sqlalchemy lints with flake8: ``reveal_type`` in its typing tests is an undefined
    name on purpose (``test/typing/plain_files/*:F821``)."""
    team = team_config(files(setup_cfg=SQLALCHEMY_SETUP_CFG).get)

    assert team.ignores_finding("ruff:E711", "lib/sqlalchemy/sql/elements.py")
    assert team.ignores_finding("ruff:D102", "lib/sqlalchemy/sql/elements.py")
    assert team.ignores_finding("ruff:F821", "test/typing/plain_files/orm/relationship.py")
    assert not team.ignores_finding("ruff:F821", "lib/sqlalchemy/orm/relationships.py")
    assert team.ignores_finding("ruff:F401", "lib/sqlalchemy/orm/__init__.py")
    assert team.ignores_finding("ruff:F401", "lib/sqlalchemy/events.py")
    assert not team.ignores_finding("ruff:F401", "lib/sqlalchemy/schema.py")


def test_flake8_per_file_ignores_on_one_line_and_with_several_names() -> None:
    entries = flake8_per_file("src/a.py,src/b.py:E1,F4 tests/*:S101  # comment-free\n")
    assert [(e.glob, e.selectors) for e in entries] == [
        ("src/a.py", ("E1", "F4")),
        ("src/b.py", ("E1", "F4")),
        ("tests/*", ("S101",)),
    ]
    assert flake8_per_file("") == []
    assert flake8_per_file("no-colon-at-all") == []
    assert flake8_per_file("../outside.py:F401") == []


def test_ruff_and_flake8_ignores_add_up() -> None:
    team = team_config(
        files(
            ruff_toml="ignore = ['B904']\n",
            tox_ini="[flake8]\nextend_ignore = E501\n",
        ).get
    )
    assert team.ignores == ("B904", "E501")
