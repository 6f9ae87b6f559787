"""Ruff remarks told apart from the code they are on (``workers.review.false_alarms``)."""

from __future__ import annotations

from workers.review.false_alarms import not_djangos_extra, self_assigned_builtin


def test_a_self_assigned_builtin_is_deliberate() -> None:
    assert self_assigned_builtin("Self-assignment of variable `print`")
    assert self_assigned_builtin(
        "Self-assignment of variable `ExceptionGroup`", frozenset({"ExceptionGroup"})
    )
    assert not self_assigned_builtin("Self-assignment of variable `total`")
    assert not self_assigned_builtin("something else entirely")


def test_another_librarys_extra_is_not_djangos() -> None:
    source = (
        "async def serve(stream):\n"
        "    family = stream.extra(SocketAttribute.family)\n"
        "    return stream.extra(\n"
        "        SocketAttribute.local_address,\n"
        "    )\n"
    )
    assert not_djangos_extra(source, 2)
    assert not_djangos_extra(source, 3)
    assert not_djangos_extra(source, 4)  # ruff may report any line of the call


def test_djangos_arguments_keep_the_remark() -> None:
    for call in (
        "qs.extra(where=[clause])",
        "qs.extra(select={'n': sql})",
        "qs.extra({'n': sql})",
        "qs.extra(**options)",
        "qs.extra(tables=names)",
    ):
        assert not not_djangos_extra(f"def f(qs, clause, sql, names, options):\n    {call}\n", 2)


def test_a_file_that_imports_django_keeps_the_remark() -> None:
    source = "from django.db import models\n\n\ndef f(qs, x):\n    return qs.extra(x)\n"
    assert not not_djangos_extra(source, 5)
    assert not not_djangos_extra("import django\n" + source.split("\n", 1)[1], 5)


def test_what_cannot_be_read_keeps_the_remark() -> None:
    assert not not_djangos_extra("def f(:\n    qs.extra(x)\n", 2)  # does not parse
    assert not not_djangos_extra("x = 1\ny = 2\n", 2)  # no extra() call on the row
