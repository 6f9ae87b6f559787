"""The shared vocabulary of Kaizen's memory: outcomes, signals, experiences, candidates.

Plain data only, so every part of memory (scores, feedback, experiences, trajectories)
and every caller (review, fix, reports) speaks the same language without importing each
other's machinery.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# Namespace for deterministic point ids: the same experience written twice is one point.
EXPERIENCE_NAMESPACE = uuid.UUID("6f1d3c52-52a4-4f38-9a0c-6b1f3f0a7e11")

GLOBAL_SCOPE = "*"

# A record on an experience saying that a GitHub object which spoke about it is gone (a
# deleted reply). It carries no weights: rebuilds, archives and outcomes skip it, and the
# feedback handlers refuse that object's words when its creation is processed late.
GONE_KIND = "gone"
GONE_PREFIX = "gone:"

SEVERITIES = ("info", "low", "medium", "high", "security")
SEVERITY_WEIGHT = {"info": 0.5, "low": 0.75, "medium": 1.0, "high": 1.5, "security": 3.0}


class Outcome(StrEnum):
    PENDING = "pending"  # posted, no signal yet
    ACCEPTED = "accepted"  # 👍, suggestion applied, /kaizen good, fix merged
    ADDRESSED = "addressed"  # lines changed at the anchor, then thread resolved
    PARTLY = "partly"  # fix merged after substantial human edits
    REJECTED = "rejected"  # 👎, /kaizen bad, fix PR closed unmerged
    DISMISSED = "dismissed"  # thread resolved with no change
    IGNORED = "ignored"  # no signal by the time the PR closed


class Kind(StrEnum):
    COMMENT = "comment"  # a review comment Kaizen posted (or held back)
    FIX = "fix"  # a fix attempt
    ISSUE = "issue"  # an issue Kaizen tried to fix (for retrieving similar issues)


def scopes_for(repo: str) -> tuple[str, str, str]:
    """(repo, org, global): every signal counts at all three levels."""
    org = repo.split("/", 1)[0] if "/" in repo else repo
    return (repo, org, GLOBAL_SCOPE)


def fingerprint(*parts: str) -> str:
    """A stable id for a finding or fix from the parts that identify it."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()
    return digest[:32]


def experience_id(kind: str, repo: str, finding_fingerprint: str) -> str:
    return str(uuid.uuid5(EXPERIENCE_NAMESPACE, f"{kind}:{repo}:{finding_fingerprint}"))


@dataclass(frozen=True)
class Signal:
    """One developer reaction to one of Kaizen's comments or fixes.

    ``id`` makes it idempotent: GitHub redelivers and pollers repeat, so the same
    reaction (reaction id), reply (comment id) or event (delivery id) must count once.
    """

    id: str
    kind: str  # a key of the feedback table, e.g. "thumbs_up", "applied", "ignored"
    experience_id: str
    repo: str
    pattern: str
    at: float  # unix time the developer acted
    reason: str | None = None  # free text ("/kaizen bad too noisy") → kept as a reflection
    actor: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A finding that could be posted; selection decides whether it is."""

    key: str  # unique within one PR
    repo: str
    pattern: str
    severity: str = "medium"
    text: str = ""  # what would be posted, with its code context (for neighbour votes)
    neighbour_accepts: float = 0.0  # similar past comments in this repo that were accepted
    neighbour_rejects: float = 0.0  # ... and rejected


@dataclass
class Experience:
    """A comment Kaizen posted or a fix it tried, with everything needed to learn from it."""

    kind: str
    repo: str
    pattern: str
    fingerprint: str
    text: str  # the embedded context: pattern, code, comment or patch, issue text
    installation_id: int | None = None
    severity: str = "medium"
    outcome: str = Outcome.PENDING
    reward: float | None = None
    reflection: str | None = None
    created_at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    # The id it is stored under, when read back: a renamed repository's experiences keep
    # the ids they were written with (comment markers on GitHub carry them).
    stored_id: str | None = field(default=None, compare=False, repr=False)

    @property
    def org(self) -> str:
        return scopes_for(self.repo)[1]

    @property
    def id(self) -> str:
        return self.stored_id or experience_id(self.kind, self.repo, self.fingerprint)
