"""Rebuilding a file's base text from its head text and its diff."""

from __future__ import annotations

import difflib
import random

import pytest

from workers.review.base_text import text_before
from workers.review.diff_model import DiffModel


def _entry(old: str, new: str, context: int = 3):
    patch = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "a/m.py",
            "b/m.py",
            n=context,
        )
    )
    return DiffModel.from_unified(patch).file("m.py")


def _edited(lines: list[str], rng: random.Random) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(out) + 1)
        action = rng.choice(["add", "remove", "change"])
        if action == "add":
            out[at:at] = [
                f"added_{rng.randrange(10**6)} = {at}\n" for _ in range(rng.randint(1, 3))
            ]
        elif out and at < len(out):
            out[at : at + rng.randint(1, 3)] = (
                [] if action == "remove" else [f"changed_{rng.randrange(10**6)}()\n"]
            )
    return out


@pytest.mark.parametrize("context", [1, 3])  # GitHub sends three lines
def test_the_base_text_comes_back_from_any_edit(context: int) -> None:
    rng = random.Random(context)
    for _ in range(200):
        old_lines = [f"line_{i} = {i}\n" for i in range(rng.randint(1, 40))]
        new_lines = _edited(old_lines, rng)
        old, new = "".join(old_lines), "".join(new_lines)
        if old == new or not new:
            continue
        entry = _entry(old, new, context)
        assert text_before(new, entry) == old


def test_lines_that_only_lost_a_carriage_return_come_back_once() -> None:
    old = "a = 1\r\nb = 2\r\nc = 3\r\n"
    new = "a = 1\nb = 2\nc = 4\n"
    before = text_before(new, _entry(old, new))
    assert before is not None and before.splitlines() == old.splitlines()


def test_a_diff_that_does_not_fit_the_text_gives_nothing() -> None:
    old = "".join(f"x{i} = {i}\n" for i in range(20))
    new = old.replace("x10 = 10", "x10 = 11")
    entry = _entry(old, new)
    assert text_before(new.replace("x9 = 9", "x9 = 0"), entry) is None  # another commit
    assert text_before("".join(new.splitlines(keepends=True)[:5]), entry) is None  # cut short


def test_a_new_file_had_no_text_before() -> None:
    assert text_before("a = 1\n", _entry("", "a = 1\n")) is None
