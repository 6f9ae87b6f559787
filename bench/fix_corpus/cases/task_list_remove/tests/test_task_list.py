import pytest
from tasks.task_list import Task, TaskList


def test_add_and_pending_order():
    tasks = TaskList()
    tasks.add("write report", 2)
    tasks.add("pay rent", 1)
    assert [t.title for t in tasks.pending()] == ["pay rent", "write report"]


def test_remove():
    tasks = TaskList()
    task = tasks.add("pay rent", 1)
    tasks.remove(task)
    assert len(tasks) == 0


def test_remove_keeps_equal_twin():
    tasks = TaskList()
    first = tasks.add("water plants", 2)
    tasks.add("water plants", 2)
    tasks.remove(first)
    assert len(tasks) == 1


def test_remove_completed_twin_keeps_pending_one():
    tasks = TaskList()
    first = tasks.add("water plants", 2)
    tasks.add("water plants", 2)
    tasks.complete(first)
    tasks.remove(first)
    assert [t.title for t in tasks.pending()] == ["water plants"]


def test_remove_unknown():
    with pytest.raises(KeyError):
        TaskList().remove(Task(1, "ghost"))


def test_next_task_and_tags():
    tasks = TaskList()
    urgent = tasks.add("fix leak", 1, tags=["home"])
    tasks.add("read", 5)
    assert tasks.next_task() is urgent
    assert tasks.tagged("home") == ["fix leak"]
