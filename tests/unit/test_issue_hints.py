"""Operator hints from an issue's words, and the plan they reorder."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from workers.fix.issue_hints import HINT_BOOST, operator_hints
from workers.fix.loop import FixContext, FixLoop
from workers.fix.types import Patch, Suspect

BY_ONE = {"fix:off-by-one", "fix:comparison", "fix:slice-bound", "fix:constant"}


@pytest.mark.parametrize(
    "text",
    [
        "each row gets one space too many after the point",
        "Rate limiter lets one request too many through",
        "The average line stops one day short of today",
        "Teaser text is one word shorter than configured",
        "links point one line above the TODO",
        "looks like an off-by-one in the pager",
        "the export drops the last row",
        "there is an extra blank line at the end",
    ],
)
def test_words_that_count_by_one_point_at_the_bounds(text: str) -> None:
    assert operator_hints(text) == dict.fromkeys(BY_ONE, HINT_BOOST)


@pytest.mark.parametrize(
    "text",
    [
        "An interval nested in a longer one also cuts the longer one short",
        "the first one fails, the next one less often",
        "Transfers go the wrong way and nothing else",
        "IndexError: list index out of range",  # past the end, or an empty list
        "",
    ],
)
def test_one_as_a_pronoun_or_other_words_point_nowhere(text: str) -> None:
    assert operator_hints(text) == {}


def test_a_none_used_as_a_value_points_at_a_guard() -> None:
    for text in (
        "TypeError: 'NoneType' object is not subscriptable",
        "AttributeError: 'NoneType' object has no attribute 'strip'",
    ):
        assert operator_hints(text) == {"fix:none-check": HINT_BOOST}


@pytest.mark.parametrize(
    "text",
    [
        "Chained transforms are applied in the wrong order",
        "Comparisons come out backwards: simple_eval('1 < 2') returns False",
        "The ratio is computed the wrong way round",
        "It divides the other way around",
    ],
)
def test_things_in_the_wrong_order_point_at_swapped_arguments(text: str) -> None:
    assert operator_hints(text) == {"fix:swap-arguments": HINT_BOOST}


def test_backwards_compatibility_points_nowhere() -> None:
    assert operator_hints("This breaks backwards compatibility with 1.x") == {}
    assert operator_hints("Keep it backward-compatible") == {}


SOURCE = "def allowed(count, limit):\n    return fits(count, limit - 1)\n"


def _first_operator(issue: str) -> str:
    loop = FixLoop(sandbox=cast(Any, None), memory=None)
    ctx = FixContext(
        repo="o/r",
        issue_id="1",
        issue_text=issue,
        checkout=Path("."),
        baseline=cast(Any, None),
        suspects=[Suspect("limits.py", 2, 1.0, "traceback")],
        error_class="AssertionError",
        files={"limits.py": SOURCE},
        skills=[],
        reflections=[],
    )
    kind, first = next(iter(loop._plan(ctx)))
    assert kind == "template" and isinstance(first, Patch)
    return first.operator


def test_the_hinted_operators_come_first_on_a_line() -> None:
    neutral = _first_operator("The limiter misbehaves")
    hinted = _first_operator("The limiter lets one request too many through")

    assert neutral not in BY_ONE
    assert hinted in BY_ONE
    assert _first_operator("arguments are swapped somewhere") == "fix:swap-arguments"
