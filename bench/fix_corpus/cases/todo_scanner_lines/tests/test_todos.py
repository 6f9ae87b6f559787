from debt.todos import by_owner, count_by_kind, scan

SOURCE = """import os
x = 1
# TODO(ann): remove this hack
def f():  # fixme: handle None
    return os.sep  # just a comment
"""


def test_kinds_and_texts():
    notes = scan("app.py", SOURCE)
    assert [(n.kind, n.text) for n in notes] == [
        ("TODO", "remove this hack"),
        ("FIXME", "handle None"),
    ]


def test_line_numbers_are_one_based():
    assert [n.line for n in scan("app.py", SOURCE)] == [3, 4]


def test_str():
    assert str(scan("app.py", SOURCE)[0]) == "app.py:3: TODO (ann): remove this hack"


def test_owner():
    notes = scan("app.py", SOURCE)
    assert [n.owner for n in notes] == ["ann", None]


def test_count_and_group():
    notes = scan("a.py", "# XXX: one\n# TODO two\n# todo(bo) three\n")
    assert count_by_kind(notes) == {"TODO": 2, "XXX": 1}
    assert sorted(by_owner(notes)) == ["bo", "unassigned"]
