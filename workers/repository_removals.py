"""Which repositories a GitHub event says the App has lost, for forgetting them.

Three events take repositories away: ``repository.deleted`` (the repository is gone),
``installation_repositories.removed`` (the owner took it out of the App's reach) and
``installation.deleted`` (the App was uninstalled, with every repository it could see).
Pure, so every payload shape is unit-tested; the names returned are ones memory can keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.scores import validate_repo

# (event, action) pairs that take repositories away from the App.
REMOVALS: frozenset[tuple[str, str]] = frozenset(
    {
        ("repository", "deleted"),
        ("installation_repositories", "removed"),
        ("installation", "deleted"),
    }
)


@dataclass(frozen=True)
class Removal:
    """Repositories the App lost. ``whole_installation``: the App was uninstalled, so the
    installation's other repositories in memory go too (a payload may not list them all)."""

    repos: tuple[str, ...]
    installation_id: int | None
    whole_installation: bool


def repositories_removed(event: str, action: str | None, payload: dict[str, Any]) -> Removal:
    """The repositories an event removes (``ValueError`` when it removes none or names one
    memory could not hold)."""
    if (event, action) not in REMOVALS:
        raise ValueError(f"{event}.{action} does not remove repositories")
    installation = (payload.get("installation") or {}).get("id")
    installation_id = installation if isinstance(installation, int) else None
    if event == "repository":
        listed: Any = [payload.get("repository")]
    elif event == "installation_repositories":
        listed = payload.get("repositories_removed")
    else:
        listed = payload.get("repositories") or []
    if not isinstance(listed, list):
        raise ValueError(f"{event}.{action} has no list of repositories")
    names = []
    for entry in listed:
        name = entry.get("full_name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            raise ValueError(f"{event}.{action} names a repository without full_name")
        names.append(validate_repo(name))
    whole = event == "installation"
    if whole and installation_id is None:
        raise ValueError("installation.deleted without installation.id")
    if not names and not whole:
        raise ValueError(f"{event}.{action} names no repository")
    return Removal(tuple(dict.fromkeys(names)), installation_id, whole)
