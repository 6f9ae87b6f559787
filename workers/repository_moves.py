"""Which repository a ``repository`` renamed or transferred event moves, and where to.

GitHub sends the repository as it is now; the old name has to be put back together from
``changes``: a rename gives the old name (``changes.repository.name.from``), a transfer
the old owner (``changes.owner.from.user`` or ``.organization``). Pure, so every shape a
payload can take is unit-tested.
"""

from __future__ import annotations

from typing import Any

from memory.scores import validate_repo

MOVING_TTL_S = 86_400
"""How long a move under way keeps its old name from being forgotten: far longer than the
move task's retries (40 of 30 s each), so only a move that gave up for good stops protecting it."""


def moving_key(old: str) -> str:
    """The review-state memo saying ``old`` is being moved (its value is the new name).

    The key ends with the name, so :func:`workers.review.state.names_repo` never takes it
    for one of the repository's own keys: a move does not carry it along and forgetting
    the repository does not drop it."""
    return f"moving:{old}"


class NotAMove(ValueError):
    """The payload does not say where the repository came from."""


def repository_move(action: str | None, payload: dict[str, Any]) -> tuple[str, str]:
    """(old full name, new full name) of a renamed or transferred repository, both names
    memory can keep (``ValueError`` otherwise, as ``NotAMove`` is one)."""
    old, new = _names(action, payload)
    return validate_repo(old), validate_repo(new)


def _names(action: str | None, payload: dict[str, Any]) -> tuple[str, str]:
    repository = payload.get("repository") or {}
    new = repository.get("full_name")
    if not isinstance(new, str) or new.count("/") != 1:
        raise NotAMove("the payload has no repository.full_name")
    owner, name = new.split("/")
    changes = payload.get("changes") or {}
    if action == "renamed":
        old_name = ((changes.get("repository") or {}).get("name") or {}).get("from")
        if not isinstance(old_name, str) or not old_name:
            raise NotAMove("a rename without changes.repository.name.from")
        return f"{owner}/{old_name}", new
    if action == "transferred":
        source = (changes.get("owner") or {}).get("from") or {}
        account = source.get("organization") or source.get("user") or {}
        old_owner = account.get("login") if isinstance(account, dict) else None
        if not isinstance(old_owner, str) or not old_owner:
            raise NotAMove("a transfer without changes.owner.from's login")
        return f"{old_owner}/{name}", new
    raise NotAMove(f"repository.{action} does not move a repository")
