"""S608 on queries filled only from the code itself: read off the source, no I/O."""

from __future__ import annotations

import pytest

from workers.review.constant_sql import built_from_constants

SOURCE = """\
import os
import secrets
import uuid

COLUMNS = ("id", "name", "created_at")
TABLE = "events"
FROM_ENV = os.environ["TABLE"]
LIMIT = int(os.environ.get("LIMIT", "10"))


def placeholders(cur, ids):
    marks = ",".join("?" * len(ids))
    cur.execute(f"SELECT * FROM t WHERE id IN ({marks})", ids)
    cur.execute("DELETE FROM t WHERE id IN (%s)" % ", ".join("%s" for _ in ids), ids)


def columns(cur):
    cur.execute(f"SELECT {', '.join(COLUMNS)} FROM {TABLE}")
    for table in ("a", "b"):
        cur.execute("DELETE FROM " + table + " WHERE x = ?", (1,))


def nested_case_when(n):
    case = "1"
    for i in range(n):
        case = f"CASE WHEN x={i} THEN {case} ELSE NULL END"
    return f"SELECT {case} FROM t"


def wide(n, m):
    cols = ", ".join(f"col_{i}" for i in range(n))
    return "SELECT {} FROM t LIMIT {:d}".format(cols, LIMIT) + f" OFFSET {m:d}"


def quoted(self, cur, table, name):
    cur.execute("SELECT 1 FROM %s LIMIT 1" % self.quote_name(table))
    cur.execute(f"SELECT * FROM t WHERE name = {conn.escape_string(name)}")


def scratch_tables(cur):
    scratch = f"t{secrets.token_hex(16)}"
    cur.execute(f"create table {scratch} (id integer primary key)")
    cur.execute(f"DROP TABLE tmp_{uuid.uuid4().hex}")


def from_the_caller(cur, table, name):
    cur.execute(f"SELECT * FROM {table}")
    cur.execute("SELECT * FROM t WHERE name = '%s'" % name)
    cur.execute("SELECT * FROM t WHERE name = '{}'".format(name))
    cur.execute("SELECT * FROM " + FROM_ENV)


def partly(cur, name, flag):
    where = "1 = 1"
    if flag:
        where = f"name = '{name}'"
    cur.execute(f"SELECT * FROM t WHERE {where}")


class Store:
    def rows(self, cur):
        cur.execute(f"SELECT * FROM {self.table}")
        cur.execute(f"SELECT * FROM {table_name()}")
        cur.execute(f"SELECT * FROM t WHERE x = {len}")
"""
LINES = SOURCE.splitlines()


def _at(start: str) -> tuple[int, int]:
    """Where ruff puts S608: where the query's expression starts (1-based)."""
    for row, line in enumerate(LINES, start=1):
        if start in line:
            return row, line.index(start) + 1
    raise AssertionError(start)


@pytest.mark.parametrize(
    "fragment",
    [
        'f"SELECT * FROM t WHERE id IN',  # "?" * len(ids)
        '"DELETE FROM t WHERE id IN',  # "%s" for _ in ids
        "f\"SELECT {', '.join(COLUMNS)}",  # module constants
        '"DELETE FROM " + table',  # a loop over a tuple of literals
        'f"SELECT {case} FROM t"',  # built from itself, range counters and literals
        '"SELECT {} FROM t LIMIT',  # a range comprehension, int(), a numeric format
        '"SELECT 1 FROM %s LIMIT 1"',  # quoted by the driver's function (pony's quote_name)
        'f"SELECT * FROM t WHERE name = {conn',  # escaped
        'f"create table {scratch}',  # a random name: hex digits (sqlite-utils 4.2)
        'f"DROP TABLE tmp_{uuid',
    ],
)
def test_a_query_filled_from_the_code_itself_is_constant(fragment: str) -> None:
    assert built_from_constants(SOURCE, *_at(fragment))


@pytest.mark.parametrize(
    "fragment",
    [
        'f"SELECT * FROM {table}"',  # a parameter
        "\"SELECT * FROM t WHERE name = '%s'\"",
        "\"SELECT * FROM t WHERE name = '{}'\"",
        '"SELECT * FROM " + FROM_ENV',  # the environment
        'f"SELECT * FROM t WHERE {where}"',  # a parameter on one of the paths
        'f"SELECT * FROM {self.table}"',  # an attribute
        'f"SELECT * FROM {table_name()}"',  # a call
        'f"SELECT * FROM t WHERE x = {len}"',  # a name no one binds
    ],
)
def test_a_query_with_anything_from_outside_is_not(fragment: str) -> None:
    row, column = _at(fragment)
    assert not built_from_constants(SOURCE, row, column)


def test_text_that_does_not_parse_or_a_place_outside_it_is_not() -> None:
    assert not built_from_constants("def f(:\n", 1, 1)
    assert not built_from_constants(SOURCE, len(LINES) + 5, 1)
    assert not built_from_constants(SOURCE, 1, 1)  # no query starts there
