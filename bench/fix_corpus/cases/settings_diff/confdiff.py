"""Compare two flat settings dictionaries for the deploy preview."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SECRET_MARKERS = ("password", "secret", "token")


@dataclass
class Diff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff(old: dict[str, Any], new: dict[str, Any]) -> Diff:
    added = sorted(new.keys() - old.keys())
    removed = sorted(old.keys() - new.keys())
    changed = sorted(k for k in old.keys() & new.keys() if old[k] == new[k])
    return Diff(added, removed, changed)


def _shown(key: str, value: Any) -> str:
    if any(marker in key.lower() for marker in SECRET_MARKERS):
        return "***"
    return repr(value)


def render(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per difference: "+ key = value", "- key" or "~ key: old -> new"."""
    d = diff(old, new)
    lines = [f"+ {k} = {_shown(k, new[k])}" for k in d.added]
    lines += [f"- {k}" for k in d.removed]
    lines += [f"~ {k}: {_shown(k, old[k])} -> {_shown(k, new[k])}" for k in d.changed]
    return lines
