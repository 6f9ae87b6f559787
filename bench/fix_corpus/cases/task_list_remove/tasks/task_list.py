"""A to-do list ordered by priority."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(order=True)
class Task:
    priority: int
    title: str
    done: bool = field(default=False, compare=False)
    tags: list[str] = field(default_factory=list, compare=False)


class TaskList:
    def __init__(self) -> None:
        self._tasks: list[Task] = []

    def add(self, title: str, priority: int = 3, tags: list[str] | None = None) -> Task:
        task = Task(priority, title, tags=list(tags or []))
        self._tasks.append(task)
        return task

    def remove(self, task: Task) -> None:
        """Remove exactly this task (equal-looking tasks stay)."""
        before = len(self._tasks)
        self._tasks = [t for t in self._tasks if t != task]
        if len(self._tasks) == before:
            raise KeyError(task.title)

    def complete(self, task: Task) -> None:
        task.done = True

    def pending(self) -> list[Task]:
        return sorted(t for t in self._tasks if not t.done)

    def next_task(self) -> Task | None:
        pending = self.pending()
        return pending[0] if pending else None

    def tagged(self, tag: str) -> list[str]:
        return [t.title for t in self._tasks if tag in t.tags]

    def __len__(self) -> int:
        return len(self._tasks)
