"""Pylint's disable comments read as the team's word on ruff's equivalent checks."""

from __future__ import annotations

import pytest

from workers.review.pylint_disables import disabled_by_pylint

SOURCE = """\
def track(*args, **kwargs):
    # pylint: disable-next=consider-using-with,unspecified-encoding
    stream = open(*args, **kwargs)
    try:
        return stream.read()
    except Exception:  # pylint: disable=W0718
        return None
    finally:
        run(cmd)  # pylint:disable = all
    other = open(path)  # noqa: SIM115
"""


@pytest.mark.parametrize(
    ("row", "code"),
    [
        (3, "SIM115"),  # the line after disable-next
        (3, "PLW1514"),
        (6, "BLE001"),  # a message id on the line
        (9, "PLW1510"),  # all
    ],
)
def test_a_check_the_team_disabled_there(row: int, code: str) -> None:
    assert disabled_by_pylint(SOURCE, row, code)


@pytest.mark.parametrize(
    ("row", "code"),
    [
        (3, "S102"),  # another check
        (2, "SIM115"),  # disable-next is about the next line only
        (6, "E722"),
        (10, "SIM115"),  # no pylint comment (ruff reads its own noqa)
        (40, "SIM115"),  # past the end
    ],
)
def test_anything_else_stands(row: int, code: str) -> None:
    assert not disabled_by_pylint(SOURCE, row, code)
