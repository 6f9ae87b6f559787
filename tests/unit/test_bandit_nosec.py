"""Bandit's ``# nosec`` on a line silences the bandit checks ruff makes there (S rules)."""

from __future__ import annotations

import pytest

from tests.unit.test_review_conventions import diff_of
from workers.review.bandit_nosec import silenced_by_nosec
from workers.review.ruff_scan import run_ruff

QUERY = 'query = f"SELECT * FROM {table}"'


@pytest.mark.parametrize(
    ("comment", "code", "silenced"),
    [
        ("# nosec", "S608", True),
        ("# nosec B608", "S608", True),
        ("# nosec: B608", "S608", True),
        ("#nosec B105,B608", "S608", True),
        ("# nosec B105", "S608", False),
        ("# nosec hardcoded_sql_expressions", "S608", True),
        ("# nosec - the table name comes from the catalog", "S608", True),
        ("# noqa: E501  # nosec B608", "S608", True),
        ("# nosec", "E501", False),
        ("# not nosec-able", "S608", False),
        ("", "S608", False),
    ],
)
def test_a_nosec_comment_names_what_it_silences(comment: str, code: str, silenced: bool) -> None:
    assert silenced_by_nosec(f"{QUERY}  {comment}\n", 1, code) is silenced


def test_nosec_inside_a_string_is_no_comment() -> None:
    assert not silenced_by_nosec('query = "SELECT * FROM t  # nosec" + name\n', 1, "S608")


def test_a_row_outside_the_text_is_not_silenced() -> None:
    assert not silenced_by_nosec(f"{QUERY}  # nosec\n", 3, "S608")


def test_ruff_says_nothing_where_the_team_wrote_nosec() -> None:
    """kedro-datasets 9.6: ``query = f"SELECT * FROM {self.table_name}"  # nosec B608``
    under ``# B608: table name comes from catalog config, not user input``."""
    new = (
        "def load(table_name, other):\n"
        '    first = f"SELECT * FROM {table_name}"  # nosec B608\n'
        '    second = f"SELECT * FROM {other}"  # nosec B105\n'
        "    return first, second\n"
    )
    found = run_ruff({"pkg/db.py": new}, diff_of({"pkg/db.py": ("", new)}), select=["S608"])

    assert [f.line for f in found] == [3]
