"""What a finding source produces and what the rest of the review pipeline passes along.

A finding is anchored to one line of the diff (``side`` RIGHT for added or context lines
at the new line number, LEFT for removed lines at the old one) and names a *pattern*, the
unit pattern scores learn about. Its fingerprint leaves out line numbers on purpose: the
same remark on the same code must be recognised after a push moved it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from memory.types import SEVERITIES, fingerprint

Side = Literal["RIGHT", "LEFT"]

# Config severities (what users write in .github/kaizen.yml) → memory severities.
CONFIG_SEVERITY = {
    "info": "info",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "critical": "security",
}

_SPACE = re.compile(r"\s+")

# Finding.extra key set by ruff_scan: how often the finding's rule fires on the lines of its
# file that the PR left alone (read by the review selection's ``convention`` gate).
UNCHANGED_PLACES = "unchanged_places"
# Finding.extra keys set by the review pipeline on a ruff remark in a file the PR adds: how
# many of the unchanged modules beside it earn the same rule, of how many read (see
# workers.review.neighbour_convention).
NEIGHBOUR_FILES = "neighbour_files"
NEIGHBOURS_READ = "neighbours_read"
# Finding.extra key set by the review pipeline on a credential found in test code (a key
# made for the tests, as often as not): the selection lists its repeats like a ruff rule's.
IN_TEST_CODE = "in_test_code"


def severity_rank(severity: str) -> int:
    """Lowest first, as ``memory.types.SEVERITIES``; unknown names rank as medium."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else SEVERITIES.index("medium")


@dataclass(frozen=True)
class Finding:
    """One thing Kaizen could say about one line of a pull request."""

    path: str
    line: int
    side: Side
    pattern: str  # e.g. ruff:B006, secrets:aws-access-key, llm:correctness
    severity: str  # one of memory.types.SEVERITIES
    message: str  # Markdown, shown to the developer
    source: str  # ruff | secrets | llm
    code: str = ""  # the anchored line's text, for fingerprints and neighbour votes
    suggestion: str | None = None  # replacement for lines start_line..line (RIGHT side)
    start_line: int | None = None  # first line of a multi-line suggestion
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.side not in ("RIGHT", "LEFT"):
            raise ValueError(f"side must be RIGHT or LEFT, not {self.side!r}")
        if self.line < 1:
            raise ValueError(f"line numbers start at 1, not {self.line}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.start_line is not None and not 1 <= self.start_line < self.line:
            raise ValueError("start_line must come before line")

    @property
    def fingerprint(self) -> str:
        """Stable across pushes: path, pattern, the code (whitespace-normalised) and message."""
        code = _SPACE.sub(" ", self.code).strip()
        message = _SPACE.sub(" ", self.message).strip()
        return fingerprint(self.path, self.pattern, code, message)

    @property
    def key(self) -> str:
        """Unique within one review run: the fingerprint plus where it is anchored."""
        return f"{self.fingerprint[:16]}:{self.side}:{self.line}"

    def context_text(self) -> str:
        """What is embedded for similarity (and so may go to an embeddings endpoint): the
        kind of remark, the code and the remark, with credentials redacted."""
        from workers.review.secrets_scan import redact_secrets

        text = f"{self.pattern}\n{self.path}\n{self.code.strip()}\n{self.message.strip()}"
        return redact_secrets(text)
