"""``kaizen review`` on a local git repository: the same pipeline, printed, not posted.

For trying Kaizen without GitHub and for teaching it locally: every finding that would be
posted is recorded as an experience, so ``kaizen feedback --finding ID`` on it moves the
pattern scores and the next local review reflects it.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.repo_config import CONFIG_PATH, load_repo_config
from memory.service import Memory
from workers.llm import ChatModel
from workers.review.diff_model import DiffModel
from workers.review.findings import UNCHANGED_PLACES
from workers.review.pipeline import ReviewOutcome, ReviewRequest, remember_posted, run_review
from workers.review.render import comment_body
from workers.review.selection import Choice


class LocalReviewError(RuntimeError):
    """Not a git repository, an unknown ref, …: said plainly, nothing reviewed."""


# A developer's own git config must not change what is read: diff.noprefix drops the
# a/ b/ prefixes (the diff would not parse), mnemonicPrefix renames them, relative
# narrows a diff run from a subfolder and rewrites its paths, suppressBlankEmpty changes
# context lines, and textconv/external drivers replace the text itself.
_PLAIN_GIT = (
    *("-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false"),
    *("-c", "diff.relative=false", "-c", "diff.suppressBlankEmpty=false"),
    *("-c", "color.ui=never"),
)


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        done = subprocess.run(
            ["git", *_PLAIN_GIT, "-C", str(repo), *args],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except FileNotFoundError as exc:
        raise LocalReviewError("git is not installed") from exc
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LocalReviewError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return done


@dataclass
class _LocalSource:
    """Reads the repo's config from the reviewed head (there is no owner/.github here)."""

    path: Path
    head: str

    def read_file(self, repo: str, path: str) -> str | None:
        if repo.endswith("/.github"):
            return None
        done = _git(self.path, "show", "--no-textconv", f"{self.head}:{path}", check=False)
        return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def local_repo_name(path: Path) -> str:
    """``local/<folder>``, made safe for a repo name."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", path.resolve().name).strip("-") or "repo"
    return f"local/{name}"


def review_local(
    path: Path,
    *,
    base: str,
    head: str,
    memory: Memory | None,
    chat: ChatModel | None,
    repo_name: str | None = None,
) -> tuple[ReviewOutcome, str]:
    path = Path(path)
    if not path.is_dir():
        raise LocalReviewError(f"{path} is not a directory")
    _git(path, "rev-parse", "--git-dir")
    for ref in (base, head):
        if ref.startswith("-"):
            raise LocalReviewError(f"{ref!r} is not a git ref")
        if _git(
            path, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False
        ).returncode:
            raise LocalReviewError(f"{ref!r} is not a branch, tag or commit of {path}")
    text = _git(
        path, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", f"{base}...{head}", "--"
    ).stdout.decode("utf-8", "replace")
    diff = DiffModel.from_unified(text) if text.strip() else DiffModel([])
    repo = repo_name or local_repo_name(path)
    owner, _, name = repo.partition("/")
    loaded = load_repo_config(_LocalSource(path, head), owner, name)
    config = loaded.config
    diff.apply_path_filters(config.review.paths.include, config.review.paths.exclude)

    def file_text(file_path: str) -> str | None:
        done = _git(path, "show", "--no-textconv", f"{head}:{file_path}", check=False)
        return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None

    def folder_files(folder: str) -> list[str] | None:
        tree = f"{head}:{folder}" if folder else f"{head}^{{tree}}"
        done = _git(path, "ls-tree", "-z", tree, check=False)
        if done.returncode != 0:
            return None
        listed = []
        for entry in done.stdout.decode("utf-8", "replace").split("\0"):
            info, _, name = entry.partition("\t")
            if info.split(" ")[1:2] == ["blob"] and not info.startswith("120000"):
                listed.append(f"{folder}/{name}" if folder else name)
        return listed

    request = ReviewRequest(
        repo=repo,
        pr="local",
        diff=diff,
        file_text=file_text,
        config=config,
        folder_files=folder_files,
    )
    outcome = run_review(request, chat=chat, memory=memory)
    if memory is not None:
        remember_posted(memory, request, outcome, {"local_path": str(path.resolve())})
    return outcome, repo


def _row(choice: Choice, app_slug: str) -> dict[str, Any]:
    f = choice.finding
    row: dict[str, Any] = {
        "id": choice.experience_id,
        "path": f.path,
        "line": f.line,
        "side": f.side,
        "pattern": f.pattern,
        "severity": f.severity,
        "body": comment_body(f, choice.experience_id, app_slug=app_slug),
        "suggestion": f.suggestion,
        "posted": choice.posted,
        "score": choice.score,
    }
    if not choice.posted:
        row["reason"] = choice.reason
    if UNCHANGED_PLACES in f.extra:  # how often the rest of the file does the same
        row[UNCHANGED_PLACES] = f.extra[UNCHANGED_PLACES]
    return row


def as_json(outcome: ReviewOutcome, app_slug: str = "kaizen") -> dict[str, Any]:
    return {
        "findings": [_row(c, app_slug) for c in outcome.chosen.posted],
        "suppressed": [_row(c, app_slug) for c in outcome.chosen.suppressed],
        "usage": outcome.usage,
        "notes": outcome.notes,
        "not_reviewed": [{"path": path, "why": why} for path, why in outcome.skipped],
    }


def as_text(outcome: ReviewOutcome, repo: str) -> str:
    lines = [f"Kaizen review of {repo}: {len(outcome.chosen.posted)} comment(s) would be posted."]
    for c in outcome.chosen.posted:
        f = c.finding
        lines.append(f"\n{f.path}:{f.line} [{f.severity}] {f.pattern}  (id {c.experience_id})")
        lines.extend(f"    {ln}" for ln in f.message.strip().splitlines()[:6])
        if f.suggestion is not None:
            lines.append("    suggestion:")
            lines.extend(f"      {ln}" for ln in f.suggestion.splitlines()[:10])
    if outcome.chosen.suppressed:
        lines.append(f"\nHeld back ({len(outcome.chosen.suppressed)}):")
        for c in outcome.chosen.suppressed:
            f = c.finding
            lines.append(f"  {f.path}:{f.line} {f.pattern}: {c.reason}")
    if outcome.skipped:
        lines.append(f"\nNot reviewed ({len(outcome.skipped)}):")
        lines.extend(f"  {path}: {why}" for path, why in outcome.skipped)
    lines.extend(f"\nnote: {note}" for note in outcome.notes)
    usage = outcome.usage
    lines.append(
        f"\n{usage['findings']} finding(s), {usage['llm_calls']} LLM call(s), "
        f"{usage['prompt_tokens']} prompt tokens, {usage['seconds']}s"
    )
    return "\n".join(lines)


__all__ = ["CONFIG_PATH", "LocalReviewError", "as_json", "as_text", "review_local"]
