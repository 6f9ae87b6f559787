"""Read small CSV documents and print them as aligned text tables."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence


def parse_csv(text: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows; blank lines are skipped, short rows padded with ""."""
    reader = csv.reader(io.StringIO(text))
    rows = [row for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        return [], []
    header, body = rows[0], rows[1:]
    return header, [row + [""] * (len(header) - len(row)) for row in body]


def select_columns(
    header: Sequence[str], rows: Sequence[Sequence[str]], names: Sequence[str]
) -> list[list[str]]:
    indexes = [header.index(name) for name in names]
    return [[row[i] for i in indexes] for row in rows]


def column_widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    widths = [len(name) for name in header]
    for row in rows:
        for i, cell in enumerate(row):
            if cell:
                widths[i] = max(widths[i], len(row))
    return widths


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = column_widths(header, rows)

    def line(cells: Sequence[str]) -> str:
        return " | ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def to_records(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[dict[str, str]]:
    return [dict(zip(header, row, strict=True)) for row in rows]
