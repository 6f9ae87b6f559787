"""What developers do with Kaizen's fix PRs, and with human fixes of issues it failed on.

- the fix PR merged as is → ``fix_merged``; merged after humans changed at least a quarter
  as many lines as Kaizen's patch had → ``fix_merged_edited`` (partly); closed unmerged →
  ``fix_closed``. The signal lands on the winning attempt's experience, so the strategy's
  score learns what developers keep, not only what the tests accept.
- a human PR that fixes an issue Kaizen failed on is stored as an expert example: an
  accepted fix experience that later fixes of similar issues retrieve.
"""

from __future__ import annotations

import re
import time
from typing import Any, Protocol

from memory.service import Memory
from memory.types import Experience, Kind, Outcome, Signal
from workers.fix.github_fix import FIX_BRANCH_PREFIX, parse_fix_marker
from workers.review.feedback import Applied, apply
from workers.review.secrets_scan import redact_secrets
from workers.review.state import ReviewState

EDITED_SHARE = 0.25
_FIXES = re.compile(r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b")


class AcceptanceAPI(Protocol):
    def list_pull_commits(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def compare(self, repo: str, base: str, head: str) -> dict[str, Any]: ...
    def list_pull_files(self, repo: str, number: int) -> list[dict[str, Any]]: ...


def failed_key(repo: str, issue: int) -> str:
    return f"fix-failed:{repo}#{issue}"


def on_fix_pull_closed(
    gh: AcceptanceAPI, memory: Memory, repo: str, pull: dict[str, Any], *, bot_login: str
) -> Applied | None:
    head = str((pull.get("head") or {}).get("ref") or "")
    if not head.startswith(FIX_BRANCH_PREFIX) or (pull.get("user") or {}).get("login") != bot_login:
        return None
    marker = parse_fix_marker(pull.get("body"))
    if marker is None or marker["experience"] == "none":
        return None
    kind = "fix_closed"
    if pull.get("merged"):
        kind = "fix_merged"
        commits = gh.list_pull_commits(repo, int(pull["number"]))
        ours = [c for c in commits if _author(c) == bot_login]
        humans = [c for c in commits if _author(c) != bot_login]
        if ours and humans:
            changed = gh.compare(repo, str(ours[-1]["sha"]), str(pull["head"]["sha"]))
            lines = sum(
                int(f.get("additions") or 0) + int(f.get("deletions") or 0)
                for f in changed.get("files") or []
            )
            if lines >= EDITED_SHARE * max(1, int(marker["lines"])):
                kind = "fix_merged_edited"
    return apply(
        memory,
        signal_id=f"fix-outcome:{repo}#{pull['number']}",
        kind=kind,
        experience_id=marker["experience"],
        at=time.time(),
        actor=(pull.get("merged_by") or {}).get("login"),
    )


def on_fix_pull_reviewed(
    memory: Memory, pull: dict[str, Any], review: dict[str, Any], *, bot_login: str
) -> Applied | None:
    """A human approving or asking for changes on a fix PR: evidence for the strategy."""
    head = str((pull.get("head") or {}).get("ref") or "")
    reviewer = (review.get("user") or {}).get("login")
    if (
        not head.startswith(FIX_BRANCH_PREFIX)
        or (pull.get("user") or {}).get("login") != bot_login
        or reviewer == bot_login
    ):
        return None
    state = str(review.get("state") or "").lower()
    kind = {"approved": "fix_approved", "changes_requested": "fix_changes_requested"}.get(state)
    marker = parse_fix_marker(pull.get("body"))
    if kind is None or marker is None or marker["experience"] == "none":
        return None
    return apply(
        memory,
        signal_id=f"fix-review:{review['id']}",
        kind=kind,
        experience_id=marker["experience"],
        at=time.time(),
        reason=str(review.get("body") or "")[:2000] or None,
        actor=reviewer,
    )


def on_human_fix_merged(
    gh: AcceptanceAPI,
    memory: Memory,
    state: ReviewState,
    repo: str,
    pull: dict[str, Any],
    *,
    bot_login: str,
) -> list[str]:
    """Store a merged human PR as an expert example for each issue Kaizen failed on."""
    if not pull.get("merged") or (pull.get("user") or {}).get("login") == bot_login:
        return []
    text = f"{pull.get('title') or ''}\n{pull.get('body') or ''}"
    issues = [int(n) for n in dict.fromkeys(_FIXES.findall(text))]
    failed = [n for n in issues if state.recall(failed_key(repo, n))]
    if not failed:
        return []
    files = gh.list_pull_files(repo, int(pull["number"]))
    diff = "\n".join(
        f"--- a/{f['filename']}\n+++ b/{f['filename']}\n{f.get('patch') or ''}"
        for f in files
        if f.get("patch")
    )[:20000]
    stored = []
    for number in failed:
        issue_text = state.recall(f"fix-issue-text:{repo}#{number}") or ""
        experience = Experience(
            kind=Kind.FIX,
            repo=repo,
            pattern="fix:expert",
            fingerprint=f"expert:{number}:{pull['number']}",
            text=redact_secrets(f"expert\n{issue_text[:1500]}\n{diff[:2500]}"),
            outcome=Outcome.PENDING,
            created_at=time.time(),
            extra={
                "operator": "fix:expert",
                "policy": "human",
                "issue": str(number),
                "patch": diff,
                "pull": pull["number"],
            },
        )
        exp_id = memory.record_experience(experience)
        memory.apply_signal(
            Signal(
                id=f"expert:{repo}#{pull['number']}:{number}",
                kind="fix_merged",
                experience_id=exp_id,
                repo=repo,
                pattern="fix:expert",
                at=time.time(),
            )
        )
        stored.append(exp_id)
    return stored


def _author(commit: dict[str, Any]) -> str:
    author = (commit.get("author") or {}).get("login")
    if author:
        return str(author)
    return str(((commit.get("commit") or {}).get("author") or {}).get("name") or "")
