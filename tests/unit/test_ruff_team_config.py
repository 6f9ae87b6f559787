"""The ruff rules a repository switched off in its own config, read as data."""

from __future__ import annotations

import pytest

from workers.review.ruff_team_config import ignored_by_team, ignores_in, team_ignores


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
    assert team_ignores(found.get) == ["B904"]
    # a pyproject.toml without [tool.ruff] does not hide a ruff.toml, nor the reverse
    assert team_ignores({"pyproject.toml": "[project]\n", "ruff.toml": "ignore=['S']"}.get) == ["S"]
    assert team_ignores({}.get) == []


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
