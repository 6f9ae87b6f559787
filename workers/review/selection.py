"""Which findings are posted: repo config, what was said before, and what was learned.

Order of the gates, each recorded as the finding's ``reason``:

1. ``below min_severity`` — the repo's config (security always passes);
2. ``duplicate`` — the same fingerprint twice in one place, or ruff's hardcoded-password
   rules on a line where the secret scanner already found the credential (one warning
   per leak, the one that says what leaked and what to do), or a ruff rule whose advice
   another rule on the same line gives more fully (:data:`SAID_BETTER_BY`: addict 2.4's
   ``for key, val in self.items():`` drew B007, ``key`` unused, and PERF102, use
   ``.values()``); the same remark on the same
   code at another line of the file (djangorestframework's ``warnings.warn(...)`` without
   ``stacklevel`` three times in ``pagination.py``) is a ``repeat``: one comment, the
   other places listed, as for ``review.max_per_pattern`` below;
3. ``already posted`` — said on an earlier commit of this PR (and, if it was rejected,
   certainly not again);
   ``critic`` — the optional LLM critic predicted the team would not act on it (only when
   ``review.critic.decide`` is on);
   ``convention`` — a ruff remark (neither high nor security) whose rule the same file
   breaks in at least ``review.convention_places`` places the PR left alone: the team has
   merged that code, so it is how they write it (werkzeug's tests use
   ``pytest.raises(E, lambda: …)`` twenty times; marshmallow's tests build naive
   datetimes on purpose). For how typing names are spelled (UP006, UP007, UP035, UP045)
   one such place is enough: ezdxf's new ``DEBUG_SHAPE_NUMBERS: Set[int]`` under its
   ``DEBUG_CODES: Set[int]`` is written like its file. A file the PR adds has no
   untouched code: there, the rule is the convention when at least two of the modules
   beside it, and half of those read, earn it (see workers.review.neighbour_convention).
   Made anyway once the team has accepted the rule in this repo;
   ``repeat`` — more of one rule than ``review.max_per_pattern``: the first places make
   the point, the others are listed in the review body. Nine comments of one rule on one
   PR (anyio's S610, typer's PLW1510) fill the budget with one remark, and the team's
   reaction to them is one judgement, not nine. Never the LLM's: its pattern is a
   category (``llm:correctness``), and two bugs of one category are two remarks. Never
   security findings either, each a leak to rotate, except in test code: paho-mqtt 2.0
   adds nine private keys under ``tests/ssl/``, keys made for its TLS tests, and nine
   "security" comments on them bury the review; two make the point and the body lists
   the other seven, still said, never held back by learning;
4. learning (:func:`memory.scores.select`): mutes, pattern scores by Thompson sampling,
   neighbour votes from the repo's most similar past comments, and the per-PR budget.
   Security findings are never held back by learning, only by an explicit mute.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from bot.repo_config import RepoConfig
from memory.scores import Mute, Prior, mutes_for, select
from memory.service import Memory
from memory.types import Candidate, Kind, experience_id
from workers.review.critic import critic_gate
from workers.review.findings import (
    CONFIG_SEVERITY,
    IN_TEST_CODE,
    NEIGHBOUR_FILES,
    NEIGHBOURS_READ,
    UNCHANGED_PLACES,
    Finding,
    severity_rank,
)

log = logging.getLogger(__name__)

# ruff's flake8-bandit rules for a password or token literal in the code: on a line where
# the secret scanner found the credential itself, they say the same thing a second time.
CREDENTIAL_RULES = frozenset({"ruff:S105", "ruff:S106", "ruff:S107"})
# A ruff rule → the rule that, on the same line, gives the same advice and more: a loop
# variable unused because only a dict's values are wanted (use ``.values()``); numbered
# format fields in a ``.format`` call that should be an f-string anyway; a ``return None``
# that is the function's last statement (simplejson 4.3's tests drew both); a loop
# variable named like a parameter the loop's own iterable reads (intelhex 2.3's
# ``for start, end in self[slice(start, end)].segments():`` drew PLR1704 and B020).
SAID_BETTER_BY: dict[str, str] = {
    "ruff:B007": "ruff:PERF102",
    "ruff:UP030": "ruff:UP032",
    "ruff:RET501": "ruff:PLR1711",
    "ruff:PLR1704": "ruff:B020",
    "ruff:SIM109": "ruff:PLR1714",
    "ruff:B905": "ruff:RUF007",
}
_HIGH = severity_rank("high")


@dataclass
class Choice:
    finding: Finding
    posted: bool
    reason: str  # posted: selected | security | unscored; suppressed: see module docstring
    score: float | None = None  # the Thompson sample θ, when learning decided
    experience_id: str = ""
    neighbours: tuple[float, float] = (0.0, 0.0)  # (accepts, rejects) of similar comments


@dataclass
class Chosen:
    choices: list[Choice] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def posted(self) -> list[Choice]:
        return [c for c in self.choices if c.posted]

    @property
    def suppressed(self) -> list[Choice]:
        return [c for c in self.choices if not c.posted]


def _below(finding: Finding, floor: int) -> bool:
    """Under the repository's ``min_severity`` (security findings never are)."""
    return finding.severity != "security" and severity_rank(finding.severity) < floor


def pr_experience_id(repo: str, pr: str, finding: Finding) -> str:
    """One experience per finding per PR: the same remark on another PR is new evidence."""
    return experience_id(Kind.COMMENT, repo, f"{pr}:{finding.fingerprint}")


def choose_findings(
    findings: Sequence[Finding],
    *,
    repo: str,
    pr: str,
    config: RepoConfig,
    memory: Memory | None,
    already_posted: Collection[str] = (),
    rng: random.Random | None = None,
    now: float | None = None,
    critic: Mapping[str, float] | None = None,
) -> Chosen:
    now = time.time() if now is None else now
    rng = rng or random.Random()  # noqa: S311 - Thompson sampling, not cryptography
    out = Chosen()
    floor = severity_rank(CONFIG_SEVERITY[config.review.min_severity])
    seen: dict[str, tuple[str, str, int]] = {}  # fingerprint → where it is said
    live: list[Finding] = []
    said: dict[str, int] = {}  # comments of each pattern already on this PR
    leaks = {(f.path, f.side, f.line) for f in findings if f.source == "secrets"}
    said_at = {(f.path, f.side, f.line, f.pattern) for f in findings if not _below(f, floor)}
    for finding in findings:
        eid = pr_experience_id(repo, pr, finding)
        if _below(finding, floor):
            out.choices.append(Choice(finding, False, "below min_severity", experience_id=eid))
        elif finding.fingerprint in seen and seen[finding.fingerprint] != _where(finding):
            out.choices.append(Choice(finding, False, "repeat", experience_id=eid))
        elif (
            finding.fingerprint in seen
            or (
                finding.pattern in CREDENTIAL_RULES
                and (finding.path, finding.side, finding.line) in leaks
            )
            or (
                finding.pattern in SAID_BETTER_BY
                and (finding.path, finding.side, finding.line, SAID_BETTER_BY[finding.pattern])
                in said_at
            )
        ):
            out.choices.append(Choice(finding, False, "duplicate", experience_id=eid))
        elif finding.fingerprint in already_posted:
            out.choices.append(Choice(finding, False, "already posted", experience_id=eid))
            said[finding.pattern] = said.get(finding.pattern, 0) + 1
        elif (
            critic is not None
            and finding.severity != "security"
            and finding.key in critic
            and not critic_gate(critic[finding.key], config.review.critic.threshold)
        ):
            out.choices.append(
                Choice(finding, False, "critic", critic[finding.key], experience_id=eid)
            )
        elif follows_convention(finding, config.review.convention_places) and not (
            _wanted_here(finding.pattern, repo, memory if config.learning.enabled else None, now)
        ):
            out.choices.append(Choice(finding, False, "convention", experience_id=eid))
        else:
            seen[finding.fingerprint] = _where(finding)
            live.append(finding)
    live = _cap_repeats(live, config.review.max_per_pattern, out, repo, pr, said)
    if not live:
        return out
    if memory is None or not config.learning.enabled:
        ranked = sorted(live, key=lambda f: -severity_rank(f.severity))
        budget = config.review.max_comments
        kept = 0
        for finding in ranked:
            eid = pr_experience_id(repo, pr, finding)
            if finding.severity == "security" or kept < budget:
                kept += finding.severity != "security"
                out.choices.append(Choice(finding, True, "unscored", experience_id=eid))
            else:
                out.choices.append(Choice(finding, False, "budget", experience_id=eid))
        return out

    votes = _neighbour_votes(live, repo, memory, out.notes, now)
    candidates = [
        Candidate(
            key=finding.key,
            repo=repo,
            pattern=finding.pattern,
            severity=finding.severity,
            text=finding.context_text(),
            neighbour_accepts=votes[i][0],
            neighbour_rejects=votes[i][1],
        )
        for i, finding in enumerate(live)
    ]
    mutes = mutes_for(memory.scores, repo) + [
        Mute(repo, pattern, by=".github/kaizen.yml", at=0.0) for pattern in config.mutes
    ]
    selection = select(
        candidates,
        store=memory.scores,
        now=now,
        rng=rng,
        budget=config.review.max_comments,
        prior=Prior(),
        mutes=mutes,
        min_neighbours=config.learning.min_evidence,
    )
    by_key = {f.key: (f, votes[i]) for i, f in enumerate(live)}
    for decision in selection.posted:
        finding, vote = by_key[decision.candidate.key]
        out.choices.append(
            Choice(
                finding,
                True,
                decision.reason,
                decision.sampled,
                pr_experience_id(repo, pr, finding),
                vote,
            )
        )
    for decision in selection.suppressed:
        finding, vote = by_key[decision.candidate.key]
        out.choices.append(
            Choice(
                finding,
                False,
                decision.reason,
                decision.sampled,
                pr_experience_id(repo, pr, finding),
                vote,
            )
        )
    for entry in selection.shadow_entries(now):
        try:
            memory.scores.log_shadow(entry)
        except Exception as exc:  # the shadow log is for audits; never fail a review on it
            log.warning("shadow log write failed", extra={"error": str(exc)})
    return out


def _where(finding: Finding) -> tuple[str, str, int]:
    return (finding.path, finding.side, finding.line)


# How the file spells its typing names (``Set[int]``, ``Optional[X]``, ``typing.Callable``):
# one untouched place is already its spelling. A new annotation written like the line
# above it is consistent; moving the file to ``set[int]`` is a change of its own.
_ANNOTATION_SPELLINGS = frozenset({"ruff:UP006", "ruff:UP007", "ruff:UP035", "ruff:UP045"})


def follows_convention(finding: Finding, places: int) -> bool:
    """A ruff remark the file's untouched code already earns ``places`` times or more (see
    the module docstring). High and security remarks are never a matter of convention."""
    if places <= 0 or finding.source != "ruff" or severity_rank(finding.severity) >= _HIGH:
        return False
    if finding.pattern in _ANNOTATION_SPELLINGS:
        places = 1
    count = finding.extra.get(UNCHANGED_PLACES)
    return (isinstance(count, int) and count >= places) or written_like_its_neighbours(finding)


# A new module's rule is its folder's way when this many modules beside it earn it, and
# at least half of those read.
MIN_NEIGHBOURS = 2


def written_like_its_neighbours(finding: Finding) -> bool:
    """Whether the modules beside a new file mostly earn the finding's rule too."""
    earned = finding.extra.get(NEIGHBOUR_FILES)
    read = finding.extra.get(NEIGHBOURS_READ)
    return (
        isinstance(earned, int)
        and isinstance(read, int)
        and earned >= MIN_NEIGHBOURS
        and 2 * earned >= read
    )


def _wanted_here(pattern: str, repo: str, memory: Memory | None, now: float) -> bool:
    """Whether the team has accepted this pattern in this repository more than it has
    turned it down, and lately (one acceptance counts for half after a half-life): then a
    convention in old code is not what they want in new code."""
    if memory is None:
        return False
    try:
        accepts, rejects = memory.scores.counts(repo, pattern, now)
    except Exception as exc:  # scores unavailable: the convention stands
        log.warning("pattern score unavailable", extra={"error": str(exc)})
        return False
    return accepts >= 0.5 and accepts > rejects


def _cap_repeats(
    findings: Sequence[Finding],
    cap: int,
    out: Chosen,
    repo: str,
    pr: str,
    said: Mapping[str, int],
) -> list[Finding]:
    """The first ``cap`` findings of each rule, most severe first and then in the order
    given (0: all), counting the comments ``said`` on this PR before (so ``/kaizen
    review`` again does not post the next two); the others go to ``out`` as "repeat".
    Security findings outside test code and LLM findings are all kept (see the module
    docstring)."""
    if cap <= 0:
        return list(findings)
    order = sorted(range(len(findings)), key=lambda i: (-severity_rank(findings[i].severity), i))
    counts: dict[str, int] = dict(said)
    dropped: set[int] = set()
    for i in order:
        finding = findings[i]
        if finding.source == "llm" or (
            finding.severity == "security" and not finding.extra.get(IN_TEST_CODE)
        ):
            continue
        counts[finding.pattern] = counts.get(finding.pattern, 0) + 1
        if counts[finding.pattern] > cap:
            dropped.add(i)
    for i in sorted(dropped):
        eid = pr_experience_id(repo, pr, findings[i])
        out.choices.append(Choice(findings[i], False, "repeat", experience_id=eid))
    return [f for i, f in enumerate(findings) if i not in dropped]


def repeats_of_posted(chosen: Chosen) -> dict[str, list[Finding]]:
    """The findings held back as repeats of a pattern that is posted (now or on an earlier
    commit of the PR), by pattern: what the review body lists as "the same applies to". A
    pattern learning held back entirely is not listed (its first places were not said
    either)."""
    posted = {c.finding.pattern for c in chosen.choices if c.posted or c.reason == "already posted"}
    out: dict[str, list[Finding]] = {}
    for c in chosen.suppressed:
        if c.reason == "repeat" and c.finding.pattern in posted:
            out.setdefault(c.finding.pattern, []).append(c.finding)
    return out


def _neighbour_votes(
    findings: Sequence[Finding], repo: str, memory: Memory, notes: list[str], now: float
) -> list[tuple[float, float]]:
    """(accepts, rejects) of near-identical past comments in this repo, per finding.

    They fade with the pattern scores' half-life: votes that never aged would outweigh
    a change of mind the scores had already followed.
    """
    try:
        store = memory.experiences
        texts = [f.context_text() for f in findings]
        store.embedder.embed(texts)  # one batch; the per-finding searches hit the cache
        half_life = memory.scores.half_life_days
        out = []
        for text in texts:
            vote = store.neighbour_vote(text, repo=repo, now=now, half_life_days=half_life)
            out.append((vote.accepts, vote.rejects))
        return out
    except Exception as exc:  # memory down: pattern scores still decide
        log.warning("neighbour votes unavailable", extra={"error": str(exc)})
        notes.append("Similar past comments could not be consulted; pattern scores decided.")
        return [(0.0, 0.0)] * len(findings)
