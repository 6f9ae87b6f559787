"""One review, from a diff to chosen findings; the same for GitHub and local mode.

The sources run in order of cost: secrets and ruff (milliseconds, always available), then
the LLM reviewer when an endpoint is configured and the repo's budget allows. A source
that fails leaves a note and the others still count: a review with ruff findings and a
line saying the LLM was unavailable beats no review.
"""

from __future__ import annotations

import functools
import logging
import random
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from bot.repo_config import RepoConfig
from memory.service import Memory
from memory.trajectories import Transition
from memory.types import Experience, Kind, Outcome
from workers.code_paths import is_test_path
from workers.llm import ChatModel
from workers.review.copied_conditions import copied_condition_findings
from workers.review.critic import CriticExample, critic_scores
from workers.review.diff_model import NOTHING_TO_REVIEW, DiffModel
from workers.review.findings import IN_TEST_CODE, Finding
from workers.review.generated import generated_by, named_as_generated
from workers.review.lint_excludes import LintExcludes, lint_excludes
from workers.review.llm_reviewer import LlmCall, LlmReviewResult, PastComment, llm_review
from workers.review.neighbour_convention import with_neighbours
from workers.review.python_version import DeclaredPython, declared_in_folder, declared_python
from workers.review.repo_files import pytest_testpaths
from workers.review.ruff_scan import rules_by_file, run_ruff
from workers.review.ruff_team_config import TeamRuffConfig, team_config
from workers.review.secrets_scan import redact_secrets, scan_secrets
from workers.review.selection import Chosen, choose_findings
from workers.review.state import ReviewState
from workers.review.stray_copies import copy_of, left_by_a_tool
from workers.review.version_guards import collected_from

log = logging.getLogger(__name__)
T = TypeVar("T")

PYTHON_SUFFIXES = (".py", ".pyi")
ACCEPTED = ("accepted", "addressed", "partly")


@dataclass
class ReviewRequest:
    repo: str
    pr: str  # the PR number, or "local"
    diff: DiffModel
    file_text: Callable[[str], str | None]  # a file at the head, None if absent
    config: RepoConfig
    trajectory_id: str = field(default_factory=lambda: f"review:{uuid.uuid4()}")
    installation_id: int | None = None
    usd_per_million_tokens: tuple[float, float] = (0.0, 0.0)  # (prompt, completion)
    # the paths of the files in a folder at the head ("" the root), None if unknown
    folder_files: Callable[[str], Sequence[str] | None] | None = None


@dataclass
class ReviewOutcome:
    chosen: Chosen
    notes: list[str]
    findings: int
    llm: LlmReviewResult | None = None
    seconds: float = 0.0
    usd_per_million_tokens: tuple[float, float] = (0.0, 0.0)
    # (path, why) of the changed files left out: generated, a copy, too large, filtered
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def usage(self) -> dict[str, Any]:
        llm = self.llm
        prompt = llm.prompt_tokens if llm else 0
        completion = llm.completion_tokens if llm else 0
        price_in, price_out = self.usd_per_million_tokens
        return {
            "llm_calls": len(llm.calls) if llm else 0,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost_usd": round((prompt * price_in + completion * price_out) / 1e6, 6),
            "findings": self.findings,
            "seconds": round(self.seconds, 3),
        }


def _from_repo(
    request: ReviewRequest,
    read: Callable[[Callable[[str], str | None]], T],
    fallback: T,
    what: str,
) -> T:
    """What ``read`` finds in the repository's own files (its ruff config, lint excludes,
    Python version); ``fallback`` when they cannot be read, and the review goes on as if
    the repository said nothing."""
    try:
        return read(request.file_text)
    except Exception as exc:
        log.warning(f"the repository's {what} could not be read", extra={"error": str(exc)})
        return fallback


def _leave_out_generated(request: ReviewRequest) -> None:
    """Mark the changed Python files a tool wrote (see ``workers.review.generated``) as not
    reviewed, saying which header line (or the file's name) told."""
    for entry in request.diff.reviewable():
        if not entry.added or not entry.path.endswith(PYTHON_SUFFIXES):
            continue
        if named_as_generated(entry.path):
            entry.skipped = "generated, as its name says"
            continue
        text = request.file_text(entry.path)
        header = generated_by(text) if text else None
        if header is not None:
            shown = header.replace("`", "'")  # the review body puts paths in backticks
            entry.skipped = f"generated, as its header says: {shown}"


def _leave_out_copies(request: ReviewRequest) -> None:
    """Mark the changed Python files named as a copy of another, and the files an editor
    or a tool leaves behind (see ``workers.review.stray_copies``), as not reviewed,
    saying which file they copy or what left them."""
    for entry in request.diff.files:
        if entry.status == "removed":
            continue
        leftover = left_by_a_tool(entry.path)
        if leftover is not None:
            entry.skipped = f"{leftover}: left in the change by accident?"
            continue
        if entry.skipped or not entry.added or not entry.path.endswith(PYTHON_SUFFIXES):
            continue
        original = copy_of(entry.path, lambda path: request.file_text(path) is not None)
        if original is not None:
            entry.skipped = f"named as a copy of `{original}`: left in the change by accident?"


def _ruff_sources(request: ReviewRequest, notes: list[str]) -> dict[str, str]:
    """The changed Python files ruff should check, by path, with their text at the head;
    what is left out, and why, goes into ``notes``."""
    python_files = [
        e.path for e in request.diff.reviewable() if e.path.endswith(PYTHON_SUFFIXES) and e.added
    ]
    excludes = (
        _from_repo(request, lint_excludes, lint_excludes(lambda path: None), "lint excludes")
        if python_files
        else LintExcludes()
    )
    skipped = [path for path in python_files if excludes.excludes(path)]
    if skipped:
        where = ", ".join(f"`{s}`" for s in excludes.sources) or "ruff's default excludes"
        shown = ", ".join(f"`{p}`" for p in skipped[:5]) + (", …" if len(skipped) > 5 else "")
        notes.append(
            f"{len(skipped)} changed Python file(s) not checked by ruff: the repository's own "
            f"lint configuration leaves them out ({where}): {shown}"
        )
    sources = {}
    for path in python_files:
        if path in skipped:
            continue
        text = request.file_text(path)
        if text is not None:
            sources[path] = text
        else:  # said, not silently skipped
            notes.append(
                f"`{path}`: not checked by ruff: its text could not be read at "
                "the head commit (a file over GitHub's 1 MB, or a symbolic link)."
            )
    if sources:  # what the change only took lines from: code moved from there is not new
        for entry in request.diff.reviewable():
            if entry.path.endswith(PYTHON_SUFFIXES) and entry.removed and not entry.added:
                donor = request.file_text(entry.path)
                if donor is not None:
                    sources[entry.path] = donor
    return sources


def _by_declared_python(
    request: ReviewRequest, sources: dict[str, str]
) -> dict[DeclaredPython | None, dict[str, str]]:
    """The files to lint, by the oldest Python declared for each: the root's, or a nested
    project's (see :mod:`workers.review.python_version`), each read once per folder."""
    root = _from_repo(request, declared_python, None, "Python version")

    @functools.cache
    def of_folder(folder: str) -> DeclaredPython | None:
        nested = functools.partial(declared_in_folder, folder)
        return _from_repo(request, nested, None, "Python version") or root

    groups: dict[DeclaredPython | None, dict[str, str]] = {}
    for path, text in sources.items():
        groups.setdefault(of_folder(path.rpartition("/")[0]), {})[path] = text
    return groups


def _beside_new_files(
    request: ReviewRequest, found: list[Finding], python: DeclaredPython | None
) -> list[Finding]:
    """``found``, each ruff remark on a file the change adds marked with how the modules
    beside it are written (see workers.review.neighbour_convention)."""
    config = request.config.review
    if request.folder_files is None or config.convention_places <= 0:
        return found
    ruff = config.ruff
    return with_neighbours(
        found,
        request.diff,
        request.folder_files,
        request.file_text,
        lambda texts: rules_by_file(texts, select=ruff.select, ignore=ruff.ignore, python=python),
    )


def collect_findings(
    request: ReviewRequest,
    *,
    chat: ChatModel | None,
    memory: Memory | None,
    state: ReviewState | None,
    notes: list[str],
) -> tuple[list[Finding], LlmReviewResult | None]:
    config = request.config.review
    diff = request.diff
    findings: list[Finding] = []
    no_roots: tuple[str, ...] = ()
    test_roots = _from_repo(request, pytest_testpaths, no_roots, "pytest config")
    if config.secrets.enabled:
        findings += [
            replace(f, extra={**f.extra, IN_TEST_CODE: True})
            if is_test_path(f.path, test_roots)
            else f
            for f in scan_secrets(diff)
        ]
    if config.skip_generated:
        _leave_out_generated(request)
    _leave_out_copies(request)
    if config.ruff.enabled:
        sources = _ruff_sources(request, notes)
        if sources:
            try:
                found = []
                for python, group in _by_declared_python(request, sources).items():
                    in_group = run_ruff(
                        group,
                        diff,
                        select=config.ruff.select,
                        ignore=config.ruff.ignore,
                        python=python,
                        test_roots=test_roots,
                        collected_from=lambda path: _from_repo(
                            request,
                            functools.partial(collected_from, path),
                            None,
                            "conftest.py files",
                        ),
                    )
                    found += _beside_new_files(request, in_group, python)
                team = _from_repo(request, team_config, TeamRuffConfig(), "ruff config")
                keep = config.ruff.select
                findings += [f for f in found if not team.ignores_finding(f.pattern, f.path, keep)]
            except Exception as exc:
                log.warning("ruff failed", extra={"error": str(exc)})
                notes.append(f"Static analysis (ruff) could not run: {exc}")
            # a condition copied from its neighbour and edited half-way, which no ruff
            # rule sees (see workers.review.copied_conditions)
            findings += copied_condition_findings(sources, diff)
    llm_result = None
    if chat is not None and config.llm.enabled and diff.changed_lines:
        llm_result = _llm_findings(request, chat, memory, state, notes)
        if llm_result is not None:
            findings += llm_result.findings
    return findings, llm_result


def _llm_findings(
    request: ReviewRequest,
    chat: ChatModel,
    memory: Memory | None,
    state: ReviewState | None,
    notes: list[str],
) -> LlmReviewResult | None:
    llm_config = request.config.review.llm
    budget = llm_config.max_tokens_per_pr
    if state is not None:
        used_today = state.add_tokens(request.repo, 0)
        budget = min(budget, max(0, llm_config.max_tokens_per_day - used_today))
    if budget <= 0:
        notes.append("The LLM reviewer was skipped: this repository's daily token budget is spent.")
        return None
    step = 0

    def record(call: LlmCall) -> None:
        nonlocal step
        if memory is None or call.answer is None:
            return
        try:
            memory.trajectories.record(
                Transition(
                    trajectory_id=request.trajectory_id,
                    step=step,
                    messages=call.messages,
                    generation=call.answer.text,
                    model=call.answer.model,
                    prompt_tokens=call.answer.prompt_tokens,
                    completion_tokens=call.answer.completion_tokens,
                    latency_s=call.answer.latency_s,
                    repo=request.repo,
                    kind="review",
                    metadata={"pr": request.pr, "paths": call.paths, "findings": call.findings},
                )
            )
            step += 1
        except Exception as exc:
            log.warning("trajectory not recorded", extra={"error": str(exc)})

    try:
        result = llm_review(
            request.diff,
            chat=chat,
            file_text=request.file_text,
            past_comments=_past_comments(request.repo, memory),
            instructions=[
                (p.path, p.instructions) for p in request.config.review.path_instructions
            ],
            max_total_tokens=budget,
            on_call=record,
        )
    except Exception as exc:
        log.warning("LLM review failed", extra={"error": str(exc)})
        notes.append(
            f"The LLM reviewer failed ({type(exc).__name__}); only static findings were posted."
        )
        return None
    if state is not None:
        state.add_tokens(request.repo, result.prompt_tokens + result.completion_tokens)
    if result.errors:
        notes.append(
            "The LLM reviewer's answers could not be used for part of the diff "
            f"({len(result.errors)} of {len(result.calls) or 1} calls); those parts have "
            "static findings only."
        )
    if result.not_reviewed:
        shown = ", ".join(f"`{p}`" for p in result.not_reviewed[:20])
        more = (
            "" if len(result.not_reviewed) <= 20 else f" and {len(result.not_reviewed) - 20} more"
        )
        notes.append(f"The LLM token budget ran out before {shown}{more}.")
    return result


def _past_comments(repo: str, memory: Memory | None) -> Callable[[str], list[PastComment]] | None:
    if memory is None:
        return None

    def lookup(text: str) -> list[PastComment]:
        try:
            hits = memory.experiences.search_similar(
                text,
                repo=repo,
                kind=Kind.COMMENT,
                limit=4,
                balanced=True,
                outcome=["accepted", "addressed", "partly", "rejected", "dismissed"],
            )
        except Exception as exc:
            log.warning("past comments unavailable", extra={"error": str(exc)})
            return []
        return [
            PastComment(
                pattern=h.experience.pattern,
                body=str(h.experience.extra.get("message") or h.experience.text)[:500],
                code=str(h.experience.extra.get("code") or "")[:200],
                outcome="accepted" if h.experience.outcome in ACCEPTED else "rejected",
                reason=h.experience.reflection,
            )
            for h in hits
        ]

    return lookup


def run_review(
    request: ReviewRequest,
    *,
    chat: ChatModel | None,
    memory: Memory | None,
    state: ReviewState | None = None,
    already_posted: Collection[str] = (),
    rng: random.Random | None = None,
) -> ReviewOutcome:
    started = time.perf_counter()
    notes: list[str] = []
    findings, llm_result = collect_findings(
        request, chat=chat, memory=memory, state=state, notes=notes
    )
    critic = None
    if chat is not None and request.config.review.critic.enabled and findings:
        critic = _critic(request, findings, chat, memory, state, notes)
    chosen = choose_findings(
        findings,
        repo=request.repo,
        pr=request.pr,
        config=request.config,
        memory=memory,
        already_posted=already_posted,
        rng=rng,
        critic=critic if request.config.review.critic.decide else None,
    )
    if critic:
        for choice in chosen.choices:
            choice.finding.extra["critic_score"] = critic.get(choice.finding.key)
    notes += chosen.notes
    return ReviewOutcome(
        chosen,
        notes,
        len(findings),
        llm_result,
        seconds=time.perf_counter() - started,
        usd_per_million_tokens=request.usd_per_million_tokens,
        skipped=[
            (f.path, f.skipped or "")
            for f in request.diff.skipped()
            if f.skipped not in NOTHING_TO_REVIEW
        ],
    )


def _critic(
    request: ReviewRequest,
    findings: list[Finding],
    chat: ChatModel,
    memory: Memory | None,
    state: ReviewState | None,
    notes: list[str],
) -> dict[str, float]:
    """Critic scores by finding key; kept on the experiences whether or not they decide."""
    lookup = _past_comments(request.repo, memory)

    def examples(finding: Finding) -> list[CriticExample]:
        if lookup is None:
            return []
        return [
            CriticExample(p.pattern, p.body, p.code, p.outcome, p.reason)
            for p in lookup(finding.context_text())
        ]

    try:
        result = critic_scores(
            [f for f in findings if f.severity != "security"], chat=chat, examples=examples
        )
    except Exception as exc:
        log.warning("critic failed", extra={"error": str(exc)})
        notes.append(f"The critic could not run ({type(exc).__name__}).")
        return {}
    if state is not None:
        state.add_tokens(request.repo, result.prompt_tokens + result.completion_tokens)
    if memory is not None:
        for step, call in enumerate(c for c in result.calls if c.answer is not None):
            assert call.answer is not None
            try:
                memory.trajectories.record(
                    Transition(
                        trajectory_id=f"{request.trajectory_id}:critic",
                        step=step,
                        messages=call.messages,
                        generation=call.answer.text,
                        model=call.answer.model,
                        prompt_tokens=call.answer.prompt_tokens,
                        completion_tokens=call.answer.completion_tokens,
                        latency_s=call.answer.latency_s,
                        repo=request.repo,
                        kind="critic",
                        metadata={"pr": request.pr, "keys": call.keys},
                    )
                )
            except Exception as exc:
                log.warning("critic trajectory not recorded", extra={"error": str(exc)})
    if result.errors:
        notes.append(f"The critic could not score every comment ({len(result.errors)} error(s)).")
    return {key: score.score for key, score in result.scores.items()}


def remember_posted(
    memory: Memory, request: ReviewRequest, outcome: ReviewOutcome, extra: dict[str, Any]
) -> None:
    """Every posted comment becomes a pending experience that feedback will settle."""
    now = time.time()
    for choice in outcome.chosen.posted:
        f = choice.finding
        memory.record_experience(
            Experience(
                kind=Kind.COMMENT,
                repo=request.repo,
                pattern=f.pattern,
                fingerprint=f"{request.pr}:{f.fingerprint}",
                text=f.context_text(),
                installation_id=request.installation_id,
                severity=f.severity,
                outcome=Outcome.PENDING,
                created_at=now,
                extra={
                    **extra,
                    "pr": request.pr,
                    "path": f.path,
                    "line": f.line,
                    "side": f.side,
                    "message": f.message[:2000],
                    "code": redact_secrets(f.code)[:500],
                    "suggestion": f.suggestion,
                    "source": f.source,
                    "finding_fingerprint": f.fingerprint,
                    "score": choice.score,
                    "critic_score": f.extra.get("critic_score"),
                    "trajectory_id": request.trajectory_id,
                },
            )
        )
