"""The optional weekly digest: one issue per repository ("Kaizen weekly report") kept up
to date with the Markdown report, for teams that want what Kaizen learned in front of
them without asking. Off unless ``KAIZEN_WEEKLY_DIGEST`` is set."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from bot.report_markdown import render_markdown
from memory.report import build_report
from memory.service import Memory

log = logging.getLogger(__name__)

TITLE = "Kaizen weekly report"
KEY = "weekly-report"


class DigestAPI(Protocol):
    def installation_repos(self) -> list[str]: ...
    def upsert_issue(self, repo: str, *, title: str, body: str, key: str) -> int: ...


def update_digests(
    installations: dict[int, DigestAPI], memory: Memory, *, public_url: str | None = None
) -> dict[str, Any]:
    """Refresh the digest issue of every installed repository Kaizen has activity in."""
    assert memory.activity is not None
    active = set(memory.activity.repos())
    updated: dict[str, int] = {}
    failed: dict[str, str] = {}
    for installation_id, gh in installations.items():
        try:
            repos = gh.installation_repos()
        except Exception as exc:
            failed[f"installation {installation_id}"] = str(exc)
            continue
        for repo in repos:
            if repo not in active:
                continue
            report = build_report(
                scores=memory.scores,
                activity=memory.activity,
                trajectories=memory.trajectories,
                repo=repo,
            )
            url = f"{public_url.rstrip('/')}/reports/{repo}" if public_url else None
            body = render_markdown(report, url=url)
            try:
                updated[repo] = gh.upsert_issue(repo, title=TITLE, body=body, key=KEY)
            except Exception as exc:  # one repository's trouble must not stop the others
                log.warning("digest not updated", extra={"repo": repo, "error": str(exc)})
                failed[repo] = str(exc)
    return {"updated": updated, "failed": failed}
