"""The vocabulary shared by the fix agent's parts: suspicious lines and candidate patches."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Suspect:
    """A line that may hold the bug, with how suspicious it is and why (for the report)."""

    path: str  # repository-relative, forward slashes
    line: int  # 1-based
    score: float  # higher is more suspicious; comparable within one localisation
    why: str  # "traceback", "ochiai 0.71", "named in the issue", …


@dataclass(frozen=True)
class Patch:
    """One proposed change to one file: the whole text before and after.

    ``operator`` is the pattern it is learned under (``fix:comparison``, ``fix:llm``…).
    """

    operator: str
    path: str
    line: int
    before: str
    after: str
    description: str
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    def diff(self) -> str:
        """A unified diff (``git apply``-able) of this patch."""
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}",
            tofile=f"b/{self.path}",
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )

    @property
    def changed_lines(self) -> int:
        return sum(
            1
            for line in self.diff().splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        )


class RefusedEdit(ValueError):
    """An edit Kaizen will not make: outside the repository, or to CI workflows."""


def check_edit_path(path: str) -> str:
    """The normalised repository path of an edit, or ``RefusedEdit``.

    Workflows are refused because a change there would run with the repository's CI
    secrets on the next push: a fix must never be a way to reach them.
    """
    raw = path.replace("\\", "/").strip()
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not raw or raw.startswith("/") or ".." in parts or "\0" in raw or not parts:
        raise RefusedEdit(f"refused: {path!r} is outside the repository")
    norm = "/".join(parts)
    if norm.lower().startswith(".github/workflows/") or parts[0] == ".git":
        raise RefusedEdit(f"refused: {norm!r} is a CI workflow or git metadata")
    return norm
