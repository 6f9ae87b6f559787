"""``/kaizen fix`` on GitHub: clone, run the fix loop in the sandbox, open a draft PR or
explain what was tried, and keep one comment on the issue up to date meanwhile.

Safety first: only people with write access (checked by the caller), never on a fork,
one fix per issue at a time, ``/kaizen cancel`` honoured between attempts, and the token
only ever in git's environment for clone and push.
"""

from __future__ import annotations

import logging
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot.github import marker
from workers.fix.environment import describe
from workers.fix.git_ops import clone, commit_and_push
from workers.fix.loop import FixLoop, FixResult
from workers.review.state import ReviewState

log = logging.getLogger(__name__)

FIX_BRANCH_PREFIX = "kaizen/fix-"
MARKER = "<!-- kaizen:fix issue={issue} experience={experience} patch_lines={lines} -->"


class FixAPI(Protocol):
    def get_repo(self, repo: str) -> dict[str, Any]: ...
    def git_token(self) -> str: ...
    def post_issue_comment(self, repo: str, number: int, body: str, *, key: str) -> int: ...
    def edit_issue_comment(self, repo: str, comment_id: int, body: str) -> None: ...
    def open_pull(
        self, repo: str, *, head: str, base: str, title: str, body: str, draft: bool
    ) -> dict[str, Any]: ...


@dataclass
class FixJob:
    repo: str
    issue: int
    title: str
    body: str
    delivery_id: str
    requested_by: str
    hint: str = ""
    bot_login: str = "kaizen[bot]"
    test_command: str | None = None
    install_command: str | None = None
    allow_network_install: bool = False


def cancel_key(repo: str, issue: int) -> str:
    return f"cancel:fix:{repo}#{issue}"


def lock_key(repo: str, issue: int) -> str:
    return f"fix:{repo}#{issue}"


def fix_issue(
    gh: FixAPI,
    job: FixJob,
    *,
    loop: FixLoop,
    state: ReviewState,
    lock_ttl_s: float,
    work_dir: Path | None = None,
) -> dict[str, Any]:
    repo_info = gh.get_repo(job.repo)
    if repo_info.get("fork"):
        gh.post_issue_comment(
            job.repo,
            job.issue,
            "Kaizen does not run fixes in forks: open the issue on the upstream repository.",
            key=f"fix-refused:{job.delivery_id}",
        )
        return {"status": "refused", "reason": "fork"}
    holder = job.delivery_id
    if not state.claim(lock_key(job.repo, job.issue), holder, lock_ttl_s):
        gh.post_issue_comment(
            job.repo,
            job.issue,
            "Kaizen is already working on a fix for this issue; `/kaizen cancel` stops it.",
            key=f"fix-busy:{job.delivery_id}",
        )
        return {"status": "busy"}
    state.remember(cancel_key(job.repo, job.issue), "", 1.0)  # a new run clears old cancels
    progress_key = f"fix-progress:{job.delivery_id}"
    progress_id = gh.post_issue_comment(
        job.repo,
        job.issue,
        f"Working on a fix (asked by @{job.requested_by}).",
        key=progress_key,
    )
    lines: list[str] = []

    def progress(text: str) -> None:
        lines.append(text)
        shown = "\n".join(f"- {line}" for line in lines[-15:])
        try:
            gh.edit_issue_comment(
                job.repo,
                progress_id,
                # The marker stays, so a re-run of this task finds this comment again.
                f"Working on a fix (asked by @{job.requested_by}):\n\n{shown}\n\n"
                f"{marker(progress_key)}",
            )
        except Exception as exc:  # progress is a courtesy; the fix goes on
            log.warning("progress comment not updated", extra={"error": str(exc)})

    loop.progress = progress
    loop.cancelled = lambda: bool(state.recall(cancel_key(job.repo, job.issue)))
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="kaizen-fix-", dir=work_dir) as tmp:
            token = gh.git_token()
            base = str(repo_info.get("default_branch") or "main")
            checkout = clone(
                str(repo_info["clone_url"]), Path(tmp) / "repo", branch=base, token=token
            )
            issue_text = f"{job.title}\n\n{job.body}\n\n{job.hint}".strip()
            result = loop.run(
                repo=job.repo,
                issue_id=str(job.issue),
                issue_text=issue_text,
                checkout=checkout,
                test_command=job.test_command,
                install_command=job.install_command,
                allow_network_install=job.allow_network_install,
            )
            if loop.cancelled():
                progress("Cancelled.")
                return {"status": "cancelled", "attempts": len(result.attempts)}
            if not result.fixed:
                # Remembered so that a human fix of this issue becomes an expert example.
                state.remember(f"fix-failed:{job.repo}#{job.issue}", "1", 180 * 86400)
                state.remember(
                    f"fix-issue-text:{job.repo}#{job.issue}", issue_text[:4000], 180 * 86400
                )
                gh.post_issue_comment(
                    job.repo,
                    job.issue,
                    failure_comment(result),
                    key=f"fix-result:{job.delivery_id}",
                )
                return {"status": "not fixed", **result.as_json()}
            branch = f"{FIX_BRANCH_PREFIX}{job.issue}"
            login = job.bot_login
            commit_and_push(
                checkout,
                result.patches,
                branch=branch,
                message=f"Fix #{job.issue}: {job.title}"[:200],
                author=(login, f"{login}@users.noreply.github.com"),
                token=gh.git_token(),
            )
            pull = gh.open_pull(
                job.repo,
                head=branch,
                base=base,
                title=f"Fix #{job.issue}: {job.title}"[:240],
                body=pull_body(job, result),
                draft=True,
            )
            gh.post_issue_comment(
                job.repo,
                job.issue,
                f"Opened draft pull request #{pull['number']} with a fix: {result.message} "
                "Please review it; merging or closing it teaches Kaizen.",
                key=f"fix-result:{job.delivery_id}",
            )
            return {"status": "fixed", "pull_request": pull["number"], **result.as_json()}
    except Exception as exc:
        # Say so on the issue: a progress comment that stops mid-way looks like a hang.
        progress(f"Stopped by an error ({type(exc).__name__}); it will be retried if it can be.")
        raise
    finally:
        state.release(lock_key(job.repo, job.issue), holder)


def pull_body(job: FixJob, result: FixResult) -> str:
    winner = result.attempts[-1] if result.attempts else None
    before = "\n".join(f"- `{t}`" for t in result.baseline_failed[:20])
    tried = "\n".join(
        f"{i}. `{a.pattern}`: {a.description} → {a.summary}"
        for i, a in enumerate(result.attempts[-10:], 1)
    )
    asides = []
    if result.environment_failed:
        asides.append(f"{describe(result.environment_failed)}: set aside, not judged")
    if result.other_failed:
        asides.append(
            f"{len(result.other_failed)} other test(s) the issue does not name failed before "
            "this change and were not judged"
        )
    aside = f" ({'; '.join(asides)})" if asides else ""
    flaky = (
        "**Flaky?** failed once with this change and passed when the whole suite ran again: "
        + ", ".join(f"`{t}`" for t in result.flaky[:10])
        + ".\n\n"
        if result.flaky
        else ""
    )
    marker = MARKER.format(
        issue=job.issue,
        experience=result.winning_experience or "none",
        lines=sum(p.changed_lines for p in result.patches),
    )
    return (
        f"Fixes #{job.issue}.\n\n**What changed:** {winner.description if winner else ''} "
        f"(`{winner.pattern if winner else ''}`).\n\n"
        f"**Before:** {len(result.baseline_failed)} failing test(s):\n{before}\n\n"
        f"**After:** {'' if asides else 'all '}{result.after_passed} tests pass in the "
        f"sandbox{aside}; "
        f"{result.sandbox_runs} sandbox run(s), {result.duration_s:.0f} s.\n\n{flaky}"
        f"<details><summary>Attempts</summary>\n\n{tried}\n\n</details>\n\n"
        "This is a draft: review it like any other change. Merging it, editing it or "
        f"closing it teaches Kaizen which strategies work here.\n\n{marker}"
    )


def failure_comment(result: FixResult) -> str:
    lines = [f"Kaizen could not fix this automatically. {result.message}"]
    if result.baseline_failed:
        lines.append("\nFailing tests: " + ", ".join(f"`{t}`" for t in result.baseline_failed[:10]))
    if result.other_failed:
        others = ", ".join(f"`{t}`" for t in result.other_failed[:10])
        lines.append(f"\nAlso failing before, but not named by the issue (not targets): {others}")
    said = describe(result.environment_failed) if result.environment_failed else ""
    if said and said not in result.message:  # a message about only those already says it
        aside = ", ".join(f"`{t}`" for t in list(result.environment_failed)[:10])
        lines.append(f"\n{said}, set aside: {aside}")
    if result.suspects:
        lines.append(
            "\nMost suspicious lines: "
            + ", ".join(f"`{s.path}:{s.line}`" for s in result.suspects[:5])
        )
    if result.attempts:
        lines.append("\nWhat was tried:")
        lines += [f"- `{a.pattern}`: {a.description} → {a.summary}" for a in result.attempts[-10:]]
        reflections = [a.reflection for a in result.attempts if a.reflection]
        if reflections:
            lines.append("\nWhat was learned:")
            lines += [f"- {r}" for r in reflections[-3:]]
    return "\n".join(lines)[:60000]


def parse_fix_marker(body: str | None) -> dict[str, str] | None:
    found = re.search(
        r"<!-- kaizen:fix issue=(\d+) experience=([0-9a-f-]{36}|none) patch_lines=(\d+) -->",
        body or "",
    )
    if not found:
        return None
    return {"issue": found.group(1), "experience": found.group(2), "lines": found.group(3)}


__all__ = ["FixJob", "fix_issue", "parse_fix_marker"]
