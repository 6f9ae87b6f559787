"""Reviewing a pull request on GitHub: fetch, review, publish once, report in a check run.

Concurrency rules (several workers, several pushes):

- the newest head asked for is recorded first; a review whose head is no longer the
  newest stops at its next checkpoint and posts nothing (a newer push supersedes it);
- one review per PR at a time (a lock with a time limit); a task that finds the PR busy
  is retried a little later by the caller;
- the review is posted with a marker derived from the task's delivery, so a retried task
  finds its own review instead of posting a second one.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.github import GitHubError
from bot.repo_config import ConfigSource, LoadedConfig, load_repo_config
from memory.service import Memory
from workers.llm import ChatModel
from workers.review.diff_model import DiffModel, only_new
from workers.review.findings import Finding
from workers.review.pipeline import ReviewOutcome, ReviewRequest, remember_posted, run_review
from workers.review.render import (
    ReviewSummary,
    check_summary,
    comment_body,
    convention_lines,
    moved_comment,
    parse_finding_marker,
    repeat_lines,
    review_body,
)
from workers.review.selection import Choice, repeats_of_posted
from workers.review.state import ReviewState

log = logging.getLogger(__name__)

COMPARE_FILES_LIMIT = 300
"""GitHub's compare lists at most this many changed files (``GET .../compare``)."""

CHECK_NAME = "Kaizen review"
LOCK_TTL_S = 15 * 60


class PullRequestAPI(ConfigSource, Protocol):
    """The GitHub calls a review makes (``bot.github.InstallationClient`` has them)."""

    def get_pull(self, repo: str, number: int) -> dict[str, Any]: ...
    def list_pull_files(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def compare(self, repo: str, base: str, head: str) -> dict[str, Any]: ...
    def file_at(self, repo: str, path: str, ref: str) -> str | None: ...
    def folder_at(self, repo: str, path: str, ref: str) -> list[str] | None: ...
    def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def list_review_comments(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def create_review(
        self,
        repo: str,
        number: int,
        *,
        commit_id: str,
        body: str,
        comments: list[dict[str, Any]],
        key: str,
    ) -> int: ...
    def create_check_run(
        self, repo: str, *, name: str, head_sha: str, external_id: str, title: str, summary: str
    ) -> int: ...
    def update_check_run(self, repo: str, check_run_id: int, **fields: Any) -> None: ...


class Busy(RuntimeError):
    """Another worker is reviewing this PR right now; try again shortly."""


@dataclass
class ReviewJob:
    repo: str
    number: int
    installation_id: int
    delivery_id: str
    trigger: str  # opened | reopened | ready_for_review | synchronize | command
    bot_login: str
    app_slug: str
    usd_per_million_tokens: tuple[float, float] = (0.0, 0.0)


@dataclass
class JobResult:
    status: str  # posted | nothing to post | skipped | superseded
    reason: str = ""
    review_id: int | None = None
    posted: int = 0
    suppressed: int = 0
    incremental: bool = False
    notes: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "review_id": self.review_id,
            "posted": self.posted,
            "suppressed": self.suppressed,
            "incremental": self.incremental,
            "notes": self.notes,
            "usage": self.usage,
        }


def bot_history(
    gh: PullRequestAPI, job: ReviewJob
) -> tuple[str | None, set[str], list[dict[str, Any]]]:
    """(head Kaizen last reviewed, fingerprints it already said, its inline comments)."""
    last: str | None = None
    said: set[str] = set()
    for review in gh.list_reviews(job.repo, job.number):
        if (review.get("user") or {}).get("login") != job.bot_login:
            continue
        last = review.get("commit_id") or last
        for line in str(review.get("body") or "").splitlines():
            found = parse_finding_marker(line)
            if found:
                said.add(found.fingerprint)
    comments = []
    for comment in gh.list_review_comments(job.repo, job.number):
        if (comment.get("user") or {}).get("login") != job.bot_login:
            continue
        found = parse_finding_marker(comment.get("body"))
        if found:
            said.add(found.fingerprint)
            comments.append(comment)
    return last, said, comments


def review_pull_request(
    gh: PullRequestAPI,
    job: ReviewJob,
    *,
    memory: Memory | None,
    state: ReviewState,
    chat: ChatModel | None,
    before_review: Callable[[dict[str, Any], list[dict[str, Any]]], None] | None = None,
    rng: random.Random | None = None,
) -> JobResult:
    pull = gh.get_pull(job.repo, job.number)
    if pull.get("state") != "open":
        return JobResult("skipped", "the pull request is closed")
    owner, _, name = job.repo.partition("/")
    loaded: LoadedConfig = load_repo_config(gh, owner, name)
    config = loaded.config
    command = job.trigger == "command"
    if not config.review.enabled and not command:
        return JobResult("skipped", f"reviews are disabled by {loaded.source_path}")
    if pull.get("draft") and not config.review.drafts and not command:
        return JobResult("skipped", "draft pull request (review.drafts is off)")
    head = str(pull["head"]["sha"])
    pr_key = f"{job.repo}#{job.number}"
    state.set_latest(pr_key, head)
    holder = f"{job.delivery_id}:{head}"
    if not state.claim(pr_key, holder, LOCK_TTL_S):
        raise Busy(f"{pr_key} is being reviewed by another worker")
    try:
        return _review_locked(
            gh,
            job,
            pull,
            config_loaded=loaded,
            head=head,
            memory=memory,
            state=state,
            chat=chat,
            before_review=before_review,
            rng=rng,
        )
    finally:
        state.release(pr_key, holder)


def _review_locked(
    gh: PullRequestAPI,
    job: ReviewJob,
    pull: dict[str, Any],
    *,
    config_loaded: LoadedConfig,
    head: str,
    memory: Memory | None,
    state: ReviewState,
    chat: ChatModel | None,
    before_review: Callable[[dict[str, Any], list[dict[str, Any]]], None] | None,
    rng: random.Random | None,
) -> JobResult:
    config = config_loaded.config
    pr_key = f"{job.repo}#{job.number}"
    last, said, bot_comments = bot_history(gh, job)
    if before_review is not None:
        before_review(pull, bot_comments)
    if last == head and job.trigger != "command":
        return JobResult("skipped", "this head was already reviewed")
    check_id = gh.create_check_run(
        job.repo,
        name=CHECK_NAME,
        head_sha=head,
        external_id=f"review:{job.delivery_id}",
        title="Queued",
        summary="Kaizen is reading the diff.",
    )

    def progress(title: str, summary: str) -> None:
        gh.update_check_run(
            job.repo, check_id, status="in_progress", output={"title": title, "summary": summary}
        )

    listed = gh.list_pull_files(job.repo, job.number)
    unlisted = int(pull.get("changed_files") or 0) - len(listed)  # GitHub lists 3,000
    diff = DiffModel.from_github_files(listed)
    diff.apply_path_filters(config.review.paths.include, config.review.paths.exclude)
    incremental = False
    if config.review.incremental and last and last != head and job.trigger != "command":
        comparison = gh.compare(job.repo, last, head)
        changed = comparison.get("files") or []
        # A push of more files than compare lists is reviewed whole: the files it leaves
        # out would otherwise pass for unchanged since the last review.
        if comparison.get("status") == "ahead" and len(changed) < COMPARE_FILES_LIMIT:
            diff = only_new(diff, DiffModel.from_github_files(changed))
            incremental = True
    cache: dict[str, str | None] = {}

    def file_text(path: str) -> str | None:
        if path not in cache:
            cache[path] = gh.file_at(job.repo, path, head)
        return cache[path]

    request = ReviewRequest(
        repo=job.repo,
        pr=str(job.number),
        diff=diff,
        file_text=file_text,
        folder_files=lambda folder: gh.folder_at(job.repo, folder, head),
        config=config,
        trajectory_id=f"review:{job.repo}#{job.number}@{head[:12]}:{job.delivery_id}",
        installation_id=job.installation_id,
        usd_per_million_tokens=job.usd_per_million_tokens,
    )
    progress(
        "Reviewing", f"{len(diff.reviewable())} file(s), {diff.changed_lines} changed line(s)."
    )
    outcome = run_review(
        request, chat=chat, memory=memory, state=state, already_posted=said, rng=rng
    )
    if unlisted > 0:  # said, not silently pruned
        outcome.notes.append(
            f"This pull request changes {len(listed) + unlisted:,} files and GitHub lists "
            f"only the first {len(listed):,} to apps: the other {unlisted:,} were not reviewed."
        )
    if state.latest(pr_key) != head:
        _complete(gh, job, check_id, "neutral", "Superseded", "A newer push is being reviewed.")
        return JobResult("superseded", "a newer push arrived during the review")
    result = _publish(gh, job, head, request, outcome, incremental)
    if memory is not None and result.review_id is not None and outcome.chosen.posted:
        try:
            remember_posted(memory, request, outcome, {"review_id": result.review_id})
        except Exception as exc:  # the review is out; learning from it can be rebuilt later
            log.error("posted comments not remembered", extra={"error": str(exc)})
            result.notes.append("memory unavailable: comments not recorded")
    if result.review_id is not None:
        state.watch(job.repo, job.number, job.installation_id, time.time())
    summary = _summary(outcome, diff, incremental, moved=[])
    result.usage = outcome.usage
    conclusion = "success" if not outcome.chosen.posted else "neutral"
    title = f"{result.posted} comment(s)" if result.posted else "No comments"
    if outcome.notes:
        title += " (with notes)"
    _complete(gh, job, check_id, conclusion, title, check_summary(summary))
    return result


def _complete(
    gh: PullRequestAPI, job: ReviewJob, check_id: int, conclusion: str, title: str, summary: str
) -> None:
    gh.update_check_run(
        job.repo,
        check_id,
        status="completed",
        conclusion=conclusion,
        output={"title": title, "summary": summary},
    )


def _summary(
    outcome: ReviewOutcome, diff: DiffModel, incremental: bool, moved: list[str]
) -> ReviewSummary:
    return ReviewSummary(
        posted=len(outcome.chosen.posted),
        suppressed=sum(
            1
            for c in outcome.chosen.suppressed
            if c.reason not in ("already posted", "duplicate", "repeat", "convention")
        ),
        incremental=incremental,
        reviewed_files=len(diff.reviewable()),
        skipped_files=outcome.skipped,
        notes=outcome.notes,
        moved=moved,
        usage=outcome.usage,
        repeats=repeat_lines(repeats_of_posted(outcome.chosen)),
        conventions=convention_lines(
            [c.finding for c in outcome.chosen.suppressed if c.reason == "convention"]
        ),
    )


def _inline(choice: Choice, app_slug: str) -> dict[str, Any]:
    f: Finding = choice.finding
    spec: dict[str, Any] = {
        "path": f.path,
        "line": f.line,
        "side": f.side,
        "body": comment_body(f, choice.experience_id, app_slug=app_slug),
    }
    if f.start_line is not None:
        spec["start_line"] = f.start_line
        spec["start_side"] = f.side
    return spec


def _publish(
    gh: PullRequestAPI,
    job: ReviewJob,
    head: str,
    request: ReviewRequest,
    outcome: ReviewOutcome,
    incremental: bool,
) -> JobResult:
    posted = outcome.chosen.posted
    inline = [
        c
        for c in posted
        if request.diff.can_comment(
            c.finding.path, c.finding.side, c.finding.line, c.finding.start_line
        )
    ]
    moved = [c for c in posted if c not in inline]
    result = JobResult(
        "posted",
        posted=len(posted),
        suppressed=len(outcome.chosen.suppressed),
        incremental=incremental,
        notes=list(outcome.notes),
    )
    if not posted and job.trigger != "command":
        result.status = "nothing to post"
        return result
    key = f"review:{job.delivery_id}:{head[:12]}"
    for attempt in range(3):
        summary = _summary(
            outcome,
            request.diff,
            incremental,
            moved=[moved_comment(c.finding, c.experience_id) for c in moved],
        )
        try:
            result.review_id = gh.create_review(
                job.repo,
                job.number,
                commit_id=head,
                body=review_body(summary),
                comments=[_inline(c, job.app_slug) for c in inline],
                key=key,
            )
            return result
        except GitHubError as exc:
            if exc.status != 422 or not inline:
                raise
            log.warning("GitHub refused review anchors", extra={"error": str(exc)})
            if attempt == 0:
                # The diff may have changed under us: re-check every anchor against a
                # fresh copy and move the ones GitHub would refuse into the body.
                fresh = DiffModel.from_github_files(gh.list_pull_files(job.repo, job.number))
                keep = [
                    c
                    for c in inline
                    if fresh.can_comment(
                        c.finding.path, c.finding.side, c.finding.line, c.finding.start_line
                    )
                ]
            else:
                keep = []
            moved += [c for c in inline if c not in keep]
            inline = keep
    raise AssertionError("unreachable")  # pragma: no cover
