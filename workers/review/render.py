"""What Kaizen writes on a pull request: inline comments, the review body, the check run.

Every inline comment carries a hidden marker with its experience id and fingerprint, so
feedback on it (a 👍, a reply, a resolved thread) finds the experience it teaches, and a
later review of the same PR knows what was already said without any local bookkeeping.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workers.review.findings import NEIGHBOUR_FILES, NEIGHBOURS_READ, UNCHANGED_PLACES, Finding

# GitHub rejects comment bodies over 65,536 characters; stay well clear of it.
MAX_COMMENT_CHARS = 60_000
MAX_REVIEW_BODY_CHARS = 60_000

_FINDING_MARKER = re.compile(r"<!-- kaizen:finding=([0-9a-f-]{36}) fp=([0-9a-f]{32}) -->")

_SEVERITY_LABEL = {
    "info": "note",
    "low": "minor",
    "medium": "warning",
    "high": "important",
    "security": "security",
}


@dataclass(frozen=True)
class FindingMarker:
    experience_id: str
    fingerprint: str


def finding_marker(experience_id: str, finding_fingerprint: str) -> str:
    return f"<!-- kaizen:finding={experience_id} fp={finding_fingerprint} -->"


def parse_finding_marker(body: str | None) -> FindingMarker | None:
    match = _FINDING_MARKER.search(body or "")
    return FindingMarker(match.group(1), match.group(2)) if match else None


def _fence(text: str) -> str:
    """A code fence longer than any backtick run inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def suggestion_block(replacement: str) -> str:
    fence = _fence(replacement)
    body = replacement if replacement.endswith("\n") or not replacement else replacement + "\n"
    return f"{fence}suggestion\n{body}{fence}"


def comment_body(finding: Finding, experience_id: str, *, app_slug: str) -> str:
    label = _SEVERITY_LABEL.get(finding.severity, finding.severity)
    parts = [f"**{label}** · `{finding.pattern}`", "", finding.message.strip()]
    if finding.suggestion is not None and finding.side == "RIGHT":
        parts += ["", suggestion_block(finding.suggestion)]
    parts += [
        "",
        f"<sub>Useful? React 👍 or 👎, or reply `/{app_slug} good` or "
        f"`/{app_slug} bad <why>`: Kaizen learns what this team wants.</sub>",
        finding_marker(experience_id, finding.fingerprint),
    ]
    text = "\n".join(parts)
    if len(text) > MAX_COMMENT_CHARS:
        keep = MAX_COMMENT_CHARS - 500
        text = (
            f"{text[:keep]}\n\n… (cut to fit GitHub's limit)\n"
            f"{finding_marker(experience_id, finding.fingerprint)}"
        )
    return text


def moved_comment(finding: Finding, experience_id: str) -> str:
    """A finding GitHub would not anchor, listed in the review body instead."""
    where = f"`{finding.path}` line {finding.line}"
    if finding.side == "LEFT":
        where += " (removed)"
    message = finding.message.strip().replace("\n", " ")
    if len(message) > 1000:
        message = message[:1000] + "…"
    hidden = finding_marker(experience_id, finding.fingerprint)
    return f"- {where} · `{finding.pattern}`: {message} {hidden}"


def repeat_lines(repeats: Mapping[str, Sequence[Finding]], limit: int = 30) -> list[str]:
    """One line per pattern held back as repeats: where else the same remark applies,
    by file, in the order given (at most ``limit`` places a pattern)."""
    lines = []
    for pattern, findings in repeats.items():
        by_file: dict[str, list[str]] = {}
        for f in findings[:limit]:
            line = f"{f.line}" if f.side == "RIGHT" else f"{f.line} (removed)"
            by_file.setdefault(f.path, []).append(line)
        places = "; ".join(
            f"`{path}` line{'s' if len(rows) > 1 else ''} {', '.join(rows)}"
            for path, rows in by_file.items()
        )
        more = f"; and {len(findings) - limit} more" if len(findings) > limit else ""
        lines.append(f"- `{pattern}` also at {places}{more}")
    return lines


def convention_lines(held: Sequence[Finding], limit: int = 30) -> list[str]:
    """One line per rule and file left out as the file's convention: where, and how often
    the untouched code of the file does the same (``extra["unchanged_places"]``), or for
    a new file how many of the modules beside it do."""
    by_place: dict[tuple[str, str], list[Finding]] = {}
    for f in held:
        by_place.setdefault((f.pattern, f.path), []).append(f)
    lines = []
    for (pattern, path), findings in list(by_place.items())[:limit]:
        rows = ", ".join(str(f.line) for f in findings[:10])
        rows += ", …" if len(findings) > 10 else ""
        others = max((_count(f.extra.get(UNCHANGED_PLACES)) for f in findings), default=0)
        beside = max((_count(f.extra.get(NEIGHBOUR_FILES)) for f in findings), default=0)
        read = max((_count(f.extra.get(NEIGHBOURS_READ)) for f in findings), default=0)
        why = (
            f"the rest of the file does the same in {others} place{'s' if others != 1 else ''}"
            if others or not beside
            else f"{beside} of {read} modules beside it do the same"
        )
        lines.append(
            f"- `{pattern}` at `{path}` line{'s' if len(findings) > 1 else ''} {rows} ({why})"
        )
    if len(by_place) > limit:
        lines.append(f"- … and {len(by_place) - limit} more")
    return lines


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


@dataclass
class ReviewSummary:
    posted: int
    suppressed: int
    incremental: bool
    reviewed_files: int
    skipped_files: Sequence[tuple[str, str]]  # (path, why)
    notes: Sequence[str]  # LLM trouble, budget, …
    moved: Sequence[str]  # rendered moved_comment lines
    usage: dict[str, Any] | None = None
    repeats: Sequence[str] = ()  # rendered repeat_lines
    conventions: Sequence[str] = ()  # rendered convention_lines


def review_body(summary: ReviewSummary) -> str:
    scope = "the new commits" if summary.incremental else "this pull request"
    head = f"Kaizen reviewed {scope}: {summary.posted} comment"
    head += "" if summary.posted == 1 else "s"
    if summary.suppressed:
        head += f", {summary.suppressed} more held back by what this team accepted before"
    lines = [head + "."]
    if summary.moved:
        lines += ["", "Comments that could not be placed on a diff line:", *summary.moved]
    if summary.repeats:
        lines += ["", "The same remark applies to (one comment each is enough):"]
        lines += summary.repeats
    if summary.conventions:
        lines += [
            "",
            "Not said, because this code is already written that way (`review.convention_places`):",
        ]
        lines += summary.conventions
    if summary.skipped_files:
        lines += ["", "Not reviewed:"]
        for path, why in list(summary.skipped_files)[:50]:
            lines.append(f"- `{path}`: {why}")
        if len(summary.skipped_files) > 50:
            lines.append(f"- … and {len(summary.skipped_files) - 50} more")
    for note in summary.notes:
        lines += ["", f"> {note}"]
    text = "\n".join(lines)
    return (
        text if len(text) <= MAX_REVIEW_BODY_CHARS else text[: MAX_REVIEW_BODY_CHARS - 20] + "\n…"
    )


def check_summary(summary: ReviewSummary) -> str:
    parts = [
        f"Posted {summary.posted} comment(s); {summary.suppressed} held back.",
        f"Files reviewed: {summary.reviewed_files}; skipped: {len(summary.skipped_files)}.",
    ]
    parts += list(summary.notes)
    usage = summary.usage or {}
    if usage.get("llm_calls"):
        line = (
            f"LLM: {usage['llm_calls']} call(s), {usage['prompt_tokens']} prompt and "
            f"{usage['completion_tokens']} completion tokens"
        )
        if usage.get("cost_usd"):
            line += f", ${usage['cost_usd']:.4f}"
        parts.append(line + ".")
    return "\n\n".join(parts)[:60_000]
