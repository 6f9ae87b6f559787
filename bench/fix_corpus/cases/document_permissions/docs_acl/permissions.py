"""Who may view, edit and delete documents in the wiki."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class User:
    name: str
    roles: frozenset[str] = frozenset()

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles


@dataclass
class Document:
    title: str
    owner: str
    shared_with: set[str] = field(default_factory=set)
    public: bool = False
    locked: bool = False


def can_view(user: User, doc: Document) -> bool:
    return doc.public or user.is_admin or user.name == doc.owner or user.name in doc.shared_with


def can_edit(user: User, doc: Document) -> bool:
    """Owners and admins may edit; a locked document only by admins."""
    if doc.locked:
        return user.is_admin
    return user.is_admin and user.name == doc.owner


def can_delete(user: User, doc: Document) -> bool:
    return user.is_admin or (user.name == doc.owner and not doc.locked)


def visible_titles(user: User, docs: Iterable[Document]) -> list[str]:
    return sorted(doc.title for doc in docs if can_view(user, doc))
