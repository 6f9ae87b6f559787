"""A simulated team, to measure how well Kaizen learns which review comments it wants.

The team has 40 finding patterns, each with a hidden probability that the team accepts a
comment of that pattern (security ~0.9-0.97, bugs and performance 0.7-0.95, style
0.02-0.25, six in between). Every PR offers about ten candidate findings; each policy
decides which to post (at most ``BUDGET`` per PR, plus every security finding), and the
team reacts to what was posted: an accepted comment gets a 👍 or has its suggestion
applied, a rejected one gets a 👎 or, more often, no reaction at all ("ignored", known
when the PR closes). At PR ``prs // 2`` the team changes its mind about five patterns.

Policies see the same PRs and, for a finding they both post, the same reaction (common
random numbers), so differences between them are differences of policy, not of luck:

- ``post_all``: posts every finding (no budget), as most review bots do;
- ``eps_greedy``: per-pattern empirical acceptance rates, posts those ≥ 0.5, and posts a
  random finding regardless with probability ε = 0.2;
- ``eps_decay``: the same with ε = min(1, c/√t);
- ``kaizen``: Kaizen's real learning code: ``memory.scores.select`` (optimistic, tempered
  Thompson sampling, neighbour votes) over an ``InMemoryScoreStore`` (decay), each
  reaction applied through ``memory.feedback``'s table, with the parameters of
  :class:`KaizenParams`;
- ``oracle``: knows the hidden probabilities, posts exactly the valuable findings.

Metrics (:func:`metrics`): precision, recall of valuable findings, security recall,
regret (expected utility, +1 accepted / -1 not, behind the oracle; split into ``noise``,
unwanted findings posted, and ``missed``, valuable ones not posted), precision after the
first 100 PRs, and PRs until the rolling precision is back within 5 points of the
oracle's after the drift. :func:`check_targets` holds them against the product targets.

Time scale. Kaizen forgets by the clock (a half-life in days), the targets count PRs, so
the team's pace links the two: ``make_stream(prs_per_day=4)`` by default, a PR every six
hours, which puts the default 30-day half-life at 120 PRs and the drift target (back
within 100 PRs) at 25 days. Every result states it (``result["time_scale"]``).

Recovery after the drift. With one decayed sum per pattern, a pattern the team valued
for months keeps its decayed acceptances until enough new rejections outweigh them,
roughly one half-life: 284 PRs on average over 10 seeds. A shorter half-life did not get
there either (15 days: about 320 PRs, 10 days: about 265, 4 seeds), because forgotten
rejections of unwanted patterns are re-tried more often. The stores now also keep recent
sums (a quarter of the half-life) and each pattern's newest signal time, and
``memory.scores.regime_counts`` reads the evidence at the recent acceptance share when
it differs from the long one by more than ``CHANGE_Z`` standard errors: 111 PRs on
average (10 seeds), regret 304 → 263. ``kaizen_no_change_detection`` runs the old rule
alongside. What is left is mostly patterns the team *started* to want: Kaizen only
learns that from a try-out, and try-outs of patterns it has seen rejected are rare by
design (each one costs precision on a steady team), while the oracle posts them from the
first PR after the drift; and patterns that cross the line only just (0.55 → 0.45), which
no test on a few dozen signals can tell from noise. Tempering the sampling by how often
the team has judged a pattern (``memory.scores.tempering``) rather than by a fixed amount
took recovery to 115 PRs and regret to 0.285 of ε-greedy's (40 seeds; 141 and 0.295
before).

Places and neighbour votes. Every finding sits in one of ``PLACES`` of the repository,
and its candidate's text names pattern and place: two comments on the same pattern in the
same place are the near-identical ones a neighbour vote counts (``Kaizen`` gives each
candidate the votes ``ExperienceStore.neighbour_vote`` would: up to ten judged comments,
fading with the half-life, :func:`memory.experiences.tally_vote`). By default the team
judges a pattern the same everywhere, as the targets assume; ``context_spread`` makes the
place sway it too (:func:`make_team`), and the oracle then knows each place's
probability. Running the votes here is what showed that the review pipeline's old rule
(every vote ever cast added to the pattern's evidence; ``kaizen_undecayed_votes``) held
a team's change of mind back: drift recovery 79 → 307 PRs on seeds 0-9.

Precision and the oracle. "Precision" is what a team sees: the share of posted comments
it accepted. The oracle posts exactly the findings whose hidden acceptance probability
is at least 0.5, so its precision is the mean probability of those, about 0.79 on these
teams (valued patterns are accepted 55-97 % of the time, not always). No policy can reach
a precision the oracle does not, so ``precision_after_100`` ≥ 0.85 cannot be met on this
team; ``valuable_precision`` (the share of posted comments that were valuable findings,
the same ground truth as ``recall``; the oracle's is 1.0) is reported beside it.
:func:`precision_frontier` shows what a higher bar costs: an oracle posting only findings
accepted at least 72 % of the time reaches 0.85, and its regret is then already 0.30 of
ε-greedy's on seeds 0-9 and 0.316 on seeds 0-39: the whole regret target or more, before
any cost of learning. So no policy meets both targets on these teams. On a team that
also judges by place (``context_spread=1``, seeds 0-9) they are consistent for an oracle
that knows every place: it reaches 0.811 and buys 0.85 for 0.047 of ε-greedy's regret.
A learner would then have to learn each pattern in each place: Kaizen, which learns per
pattern (its votes only catch places judged clearly apart), stays at 0.760 and 0.377,
where an oracle that knows only the patterns already pays 0.104.

Pure and seeded: the same ``(prs, seed)`` gives the same numbers. Only ``memory`` is
imported, never ``bot`` or ``workers``.
"""

from __future__ import annotations

import collections
import itertools
import math
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from memory import feedback, scores  # Kaizen's real learning code, not a re-implementation
from memory.experiences import tally_vote, vote_horizon
from memory.types import Candidate

BUDGET = 5
VALUABLE = 0.5  # a finding is valuable when its hidden acceptance probability is ≥ this
ROLLING = 50  # PRs in the rolling precision window
RECOVERY_GAP = 0.05  # "back within 5 points of the oracle"
WARMUP = 100  # precision_after_100 counts PRs from this index on
REPO = "acme/shop"
START = 1_736_150_400.0  # unix time of the first PR (2025-01-06)

POLICIES = ("post_all", "eps_greedy", "eps_decay", "kaizen", "oracle")
# Not in the default line-up: Kaizen with the code's own defaults, and ε-greedy with
# exploration taking greedy picks' places (see ``EpsilonGreedy``).
# Also Kaizen with plain (not optimistic) tempered sampling: the selection rule before
# ``memory.scores.choose(optimistic=True)``, to show what optimism is worth.
# And Kaizen without change detection (``memory.scores.regime_counts``): the long decayed
# sums alone, as before the recent sums were kept.
# And Kaizen without neighbour votes, and with votes that never fade (the review
# pipeline's rule before they did).
EXTRA_POLICIES = (
    "kaizen_code_defaults",
    "eps_greedy_explore_first",
    "kaizen_not_optimistic",
    "kaizen_no_change_detection",
    "kaizen_no_votes",
    "kaizen_undecayed_votes",
)

# --------------------------------------------------------------------------- the team

# (name, group, severity, relative frequency). Acceptance probabilities are drawn per seed
# from the group's range, so several seeds are several teams.
PATTERN_TABLE: tuple[tuple[str, str, str, float], ...] = (
    # security: rare, always valuable, never change
    ("sec/sql-injection", "security", "security", 0.10),
    ("sec/hardcoded-secret", "security", "security", 0.08),
    ("sec/path-traversal", "security", "security", 0.06),
    ("sec/unsafe-deserialization", "security", "security", 0.06),
    # bugs and performance problems the team values
    ("bug/null-dereference", "bug", "high", 0.35),
    ("bug/off-by-one", "bug", "high", 0.25),
    ("bug/resource-leak", "bug", "high", 0.25),
    ("bug/race-condition", "bug", "high", 0.12),
    ("bug/unchecked-error", "bug", "medium", 0.35),
    ("bug/missing-await", "bug", "high", 0.15),
    ("bug/wrong-comparison", "bug", "medium", 0.20),
    ("perf/n-plus-one-query", "perf", "medium", 0.25),
    ("perf/quadratic-loop", "perf", "medium", 0.20),
    ("perf/blocking-io-in-async", "perf", "medium", 0.15),
    # in between: some just worth it, some just not
    ("maint/missing-test", "mixed", "medium", 0.30),
    ("maint/broad-except", "mixed", "medium", 0.25),
    ("maint/magic-number", "mixed", "low", 0.30),
    ("maint/long-function", "mixed", "low", 0.25),
    ("maint/missing-docstring", "mixed", "low", 0.35),
    ("maint/duplicate-code", "mixed", "low", 0.20),
    # style: common, rarely wanted
    ("style/line-length", "style", "info", 0.60),
    ("style/trailing-whitespace", "style", "info", 0.45),
    ("style/import-order", "style", "info", 0.50),
    ("style/quote-style", "style", "info", 0.40),
    ("style/naming-convention", "style", "low", 0.40),
    ("style/missing-type-hint", "style", "low", 0.50),
    ("style/f-string-preferred", "style", "info", 0.30),
    ("style/comment-typo", "style", "info", 0.30),
    ("style/blank-lines", "style", "info", 0.35),
    ("style/unused-import", "style", "low", 0.45),
    ("style/unused-variable", "style", "low", 0.30),
    ("style/prefer-comprehension", "style", "info", 0.25),
    ("style/redundant-else", "style", "info", 0.25),
    ("style/boolean-simplify", "style", "info", 0.20),
    ("style/docstring-format", "style", "info", 0.30),
    ("style/todo-comment", "style", "info", 0.20),
    ("style/prefer-pathlib", "style", "info", 0.20),
    ("style/too-many-arguments", "style", "low", 0.20),
    ("style/nested-ternary", "style", "low", 0.15),
    ("style/print-statement", "style", "low", 0.25),
)

P_RANGE = {
    "security": (0.90, 0.97),
    "bug": (0.70, 0.95),
    "perf": (0.70, 0.95),
    "style": (0.02, 0.25),
}
# in-between patterns: half just above the line, half just below
MIXED_RANGES = ((0.55, 0.70), (0.30, 0.45))

# Among accepted comments, how many get their suggestion applied (rest: 👍); among
# rejected ones, how many get a 👎 (rest: no reaction at all).
APPLIED_SHARE = 0.4
THUMBS_DOWN_SHARE = 0.3

# Where in the repository a finding is, and how often findings land there. Comments on the
# same pattern in the same place are the "near-identical past comments" of a neighbour
# vote. With ``context_spread`` > 0 the team also judges a pattern differently by place
# (a magic number in tests is fine, in billing code it is not).
PLACES: tuple[tuple[str, float], ...] = (
    ("src/core", 0.30),
    ("src/api", 0.20),
    ("tests", 0.15),
    ("src/models", 0.10),
    ("scripts", 0.10),
    ("migrations", 0.07),
    ("docs/examples", 0.05),
    ("tools", 0.03),
)
NEIGHBOUR_LIMIT = 10  # ``ExperienceStore.neighbour_vote``'s limit


@dataclass(frozen=True)
class Pattern:
    name: str
    group: str
    severity: str
    weight: float
    p_before: float
    p_after: float

    @property
    def flipped(self) -> bool:
        return (self.p_before >= VALUABLE) != (self.p_after >= VALUABLE)


@dataclass(frozen=True)
class Team:
    patterns: tuple[Pattern, ...]
    drift_at: int  # PR index from which ``p_after`` holds
    # acceptance by (pattern, place), before and after the drift; empty: the pattern's own
    by_place_before: tuple[tuple[float, ...], ...] = ()
    by_place_after: tuple[tuple[float, ...], ...] = ()
    context_spread: float = 0.0

    def p(self, pr: int) -> np.ndarray:
        after = pr >= self.drift_at
        return np.array([pt.p_after if after else pt.p_before for pt in self.patterns])

    def p_at(self, pr: int, pattern: int, place: int) -> float:
        """The hidden acceptance probability of a finding of ``pattern`` in ``place``."""
        table = self.by_place_after if pr >= self.drift_at else self.by_place_before
        if not table:
            pt = self.patterns[pattern]
            return pt.p_after if pr >= self.drift_at else pt.p_before
        return table[pattern][place]

    @property
    def flipped(self) -> list[str]:
        return [pt.name for pt in self.patterns if pt.flipped]


def _spread_over_places(p: float, z: np.ndarray, spread: float) -> tuple[float, ...]:
    """Per-place probabilities ``sigmoid(c + spread * z)`` whose place-weighted mean is ``p``.

    ``c`` is found by bisection, so the pattern's overall acceptance is the one drawn for
    it and only how it is spread over places depends on ``spread`` (logit standard
    deviation between places).
    """
    weights = np.array([w for _, w in PLACES])
    weights = weights / weights.sum()
    lo, hi = -30.0, 30.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        mean = float(weights @ (1.0 / (1.0 + np.exp(-(mid + spread * z)))))
        lo, hi = (mid, hi) if mean < p else (lo, mid)
    c = (lo + hi) / 2.0
    return tuple(round(float(v), 4) for v in 1.0 / (1.0 + np.exp(-(c + spread * z))))


def make_team(seed: int, prs: int, context_spread: float = 0.0) -> Team:
    """Forty patterns with hidden acceptance probabilities; several flip at ``prs // 2``.

    The flips: two valued bug/perf patterns become unwanted (say the ORM now batches
    queries and the team stopped caring), two style patterns become wanted (say the team
    adopted strict typing), and one in-between pattern crosses the line.

    ``context_spread`` (logit standard deviation, 0 by default) makes acceptance depend
    on the place too, around each pattern's own probability; how each place leans for a
    pattern stays the same across the drift. 0 is the team the targets are set on.
    """
    if not (math.isfinite(context_spread) and context_spread >= 0.0):
        raise ValueError(f"context_spread must be a non-negative number, not {context_spread!r}")
    rng = np.random.default_rng([seed, 1])
    before: list[float] = []
    mixed_seen = 0
    for _, group, _, _ in PATTERN_TABLE:
        if group == "mixed":
            lo, hi = MIXED_RANGES[mixed_seen % 2]
            mixed_seen += 1
        else:
            lo, hi = P_RANGE[group]
        before.append(float(rng.uniform(lo, hi)))
    after = list(before)
    groups = [g for _, g, _, _ in PATTERN_TABLE]
    valued = [i for i, g in enumerate(groups) if g in ("bug", "perf")]
    style = [i for i, g in enumerate(groups) if g == "style"]
    mixed = [i for i, g in enumerate(groups) if g == "mixed"]
    for i in rng.choice(valued, size=2, replace=False):
        after[int(i)] = float(rng.uniform(*P_RANGE["style"]))
    for i in rng.choice(style, size=2, replace=False):
        after[int(i)] = float(rng.uniform(*P_RANGE["bug"]))
    j = int(rng.choice(mixed))
    after[j] = 1.0 - before[j]
    patterns = tuple(
        Pattern(name, group, severity, weight, round(b, 4), round(a, 4))
        for (name, group, severity, weight), b, a in zip(PATTERN_TABLE, before, after, strict=True)
    )
    if context_spread == 0.0:
        return Team(patterns=patterns, drift_at=prs // 2)
    # its own stream, so the patterns and the PRs are the same teams' at every spread
    lean = np.random.default_rng([seed, 4]).standard_normal((len(patterns), len(PLACES)))
    return Team(
        patterns=patterns,
        drift_at=prs // 2,
        by_place_before=tuple(
            _spread_over_places(pt.p_before, lean[j], context_spread)
            for j, pt in enumerate(patterns)
        ),
        by_place_after=tuple(
            _spread_over_places(pt.p_after, lean[j], context_spread)
            for j, pt in enumerate(patterns)
        ),
        context_spread=context_spread,
    )


# --------------------------------------------------------------------------- the PR stream


@dataclass(frozen=True)
class Finding:
    """One candidate finding in one PR, with the team's reaction drawn in advance."""

    key: str
    pattern: int  # index into ``Team.patterns``
    p: float  # hidden acceptance probability at this PR (of its pattern in its place)
    accepted: bool  # what the team does if it is posted
    signal: str  # the signal that reaction produces
    delay_s: float  # how long after the PR opened the signal arrives


@dataclass(frozen=True)
class PR:
    index: int
    at: float
    findings: tuple[Finding, ...]
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class Stream:
    team: Team
    prs: tuple[PR, ...]
    prs_per_day: float


def make_stream(
    prs: int,
    seed: int,
    *,
    findings_per_pr: float = 10.0,
    prs_per_day: float = 4.0,
    applied_share: float = APPLIED_SHARE,
    thumbs_down_share: float = THUMBS_DOWN_SHARE,
    silent_accept_share: float = 0.0,
    context_spread: float = 0.0,
) -> Stream:
    """The PRs every policy sees: findings, and how the team would react to each.

    Each finding sits in one of ``PLACES`` (drawn from a stream of its own, so the PRs
    are the same at every ``context_spread``); its candidate's text names pattern and
    place, which is what makes two comments near-identical for a neighbour vote.
    A posted finding is accepted with its probability (its pattern's, in its place with
    ``context_spread``, see :func:`make_team`): its suggestion is then
    applied (``applied_share``) or it gets a 👍. Otherwise it gets a 👎
    (``thumbs_down_share``) or, more often, no reaction at all ("ignored", known when the
    PR closes about a day later). ``silent_accept_share`` (default 0) makes some accepted
    comments silent too, to test how much Kaizen relies on silence meaning "no".
    """
    team = make_team(seed, prs, context_spread)
    rng = np.random.default_rng([seed, 2])
    place_rng = np.random.default_rng([seed, 5])
    place_weights = np.array([w for _, w in PLACES])
    place_weights = place_weights / place_weights.sum()
    weights = np.array([pt.weight for pt in team.patterns])
    weights = weights / weights.sum()
    gap = 86_400.0 / prs_per_day
    out: list[PR] = []
    for i in range(prs):
        n = max(1, int(rng.poisson(findings_per_pr)))
        idx = rng.choice(len(weights), size=n, p=weights)
        u = rng.random(n)
        kind_u = rng.random(n)
        quick = rng.uniform(0.5, 8.0, n) * 3600.0  # reactions come within hours
        places = place_rng.choice(len(PLACES), size=n, p=place_weights)
        findings: list[Finding] = []
        candidates: list[Candidate] = []
        for k in range(n):
            j = int(idx[k])
            pt = team.patterns[j]
            place = int(places[k])
            p = team.p_at(i, j, place)
            accepted = bool(u[k] < p)
            if accepted and kind_u[k] < silent_accept_share:
                signal, delay = "ignored", 86_400.0
            elif accepted:
                loud = (kind_u[k] - silent_accept_share) / (1.0 - silent_accept_share)
                signal = "applied" if loud < applied_share else "thumbs_up"
                delay = float(quick[k])
            elif kind_u[k] < thumbs_down_share:
                signal, delay = "thumbs_down", float(quick[k])
            else:
                # "ignored" is only known when the PR closes, about a day later
                signal, delay = "ignored", 86_400.0
            key = f"pr{i}-f{k}"
            findings.append(Finding(key, j, p, accepted, signal, delay))
            candidates.append(
                Candidate(
                    key=key,
                    repo=REPO,
                    pattern=pt.name,
                    severity=pt.severity,
                    text=f"{pt.name} in {PLACES[place][0]}",
                )
            )
        out.append(PR(i, START + i * gap, tuple(findings), tuple(candidates)))
    return Stream(team=team, prs=tuple(out), prs_per_day=prs_per_day)


# --------------------------------------------------------------------------- policies


class Policy(Protocol):
    name: str

    def choose(self, pr: PR) -> list[int]:
        """Indices (into ``pr.findings``) of the findings to post."""
        ...

    def observe(self, candidate: Candidate, finding: Finding, signal_id: str, at: float) -> None:
        """The team reacted to a posted finding (``finding.signal``) at ``at``."""
        ...


def _is_security(pr: PR, i: int) -> bool:
    return pr.candidates[i].severity == "security"


def _fill(pr: PR, ranked: Sequence[int], budget: int) -> list[int]:
    """Every security finding, then up to ``budget`` of ``ranked`` (best first).

    Security findings are posted outside the budget, as ``memory.scores.select`` does: a
    team must hear about a leaked key even on a PR with five other good comments.
    """
    chosen = [i for i in range(len(pr.findings)) if _is_security(pr, i)]
    taken = set(chosen)
    others = 0
    for i in ranked:
        if others >= budget:
            break
        if i not in taken:
            chosen.append(i)
            taken.add(i)
            others += 1
    return chosen


class PostAll:
    name = "post_all"

    def choose(self, pr: PR) -> list[int]:
        return list(range(len(pr.findings)))

    def observe(self, candidate: Candidate, finding: Finding, signal_id: str, at: float) -> None:
        return None


class Oracle:
    """Knows the hidden probabilities: posts the valuable findings, best first."""

    name = "oracle"

    def __init__(self, budget: int = BUDGET) -> None:
        self.budget = budget

    def choose(self, pr: PR) -> list[int]:
        valuable = [i for i, f in enumerate(pr.findings) if f.p >= VALUABLE]
        valuable.sort(key=lambda i: -pr.findings[i].p)
        return _fill(pr, valuable, self.budget)

    def observe(self, candidate: Candidate, finding: Finding, signal_id: str, at: float) -> None:
        return None


class OracleAt(Oracle):
    """The oracle with a higher bar: posts only the findings accepted at least ``bar`` of the
    time, most likely first.

    For a given share of posted comments accepted, posting the likeliest findings first
    loses the least utility, so these policies trace the best precision any policy can buy
    with a given regret (:func:`precision_frontier`). ``bar`` 0.5 is the oracle itself.
    """

    def __init__(self, bar: float, budget: int = BUDGET) -> None:
        super().__init__(budget)
        if not VALUABLE <= bar <= 1.0:
            raise ValueError(f"bar must be between {VALUABLE} and 1, not {bar!r}")
        self.bar = bar
        self.name = f"oracle_at_{bar:g}"

    def choose(self, pr: PR) -> list[int]:
        chosen = [i for i, f in enumerate(pr.findings) if f.p >= self.bar]
        chosen.sort(key=lambda i: -pr.findings[i].p)
        return _fill(pr, chosen, self.budget)


class EpsilonGreedy:
    """Per-pattern empirical acceptance rates; explores each finding with probability ε.

    A finding is posted when its pattern's rate is ≥ 0.5 (an unseen pattern counts as 0.5)
    or when it is explored; within the budget, security first, then the greedy picks by
    rate, then the explored ones: the kinder order for this baseline, since exploring
    never displaces a finding it believes in (``explore_first`` gives the textbook order,
    where an explored finding takes a greedy pick's place). Learns from the true
    accept/reject, which is more than Kaizen sees: Kaizen only has the signals.
    """

    def __init__(
        self,
        name: str,
        epsilon: Callable[[int], float],
        seed: int,
        budget: int = BUDGET,
        *,
        explore_first: bool = False,
    ) -> None:
        self.name = name
        self.epsilon = epsilon
        self.rng = np.random.default_rng([seed, 3, zlib.crc32(name.encode())])
        self.budget = budget
        self.explore_first = explore_first
        self.posted: dict[str, int] = {}
        self.accepted: dict[str, int] = {}
        self.t = 0

    def estimate(self, pattern: str) -> float:
        n = self.posted.get(pattern, 0)
        return 0.5 if n == 0 else self.accepted.get(pattern, 0) / n

    def choose(self, pr: PR) -> list[int]:
        self.t += 1
        eps = self.epsilon(self.t)
        explore = self.rng.random(len(pr.findings)) < eps
        estimates = [self.estimate(c.pattern) for c in pr.candidates]
        explored = [i for i in range(len(pr.findings)) if explore[i]]
        greedy = [i for i in range(len(pr.findings)) if estimates[i] >= VALUABLE]
        greedy.sort(key=lambda i: -estimates[i])
        order = explored + greedy if self.explore_first else greedy + explored
        return _fill(pr, order, self.budget)

    def observe(self, candidate: Candidate, finding: Finding, signal_id: str, at: float) -> None:
        pattern = candidate.pattern
        self.posted[pattern] = self.posted.get(pattern, 0) + 1
        if finding.accepted:
            self.accepted[pattern] = self.accepted.get(pattern, 0) + 1


# How the Kaizen policy consults near-identical past comments, as the review pipeline
# does (``workers.review.selection``): ``decayed`` (they fade with the scores' half-life,
# :func:`memory.experiences.tally_vote`), ``undecayed`` (every one counts whole, the rule
# before votes faded), ``off`` (pattern scores alone).
NEIGHBOUR_VOTES = ("decayed", "undecayed", "off")

# The code's own defaults (memory.scores.Prior, memory.feedback.DEFAULT_TABLE and
# memory.scores.DEFAULT_HALF_LIFE_DAYS) are what this simulation chose; see KaizenParams.
_DEFAULT_PRIOR = scores.Prior()
CHOSEN_PRIOR: Mapping[str, float] = {
    "alpha": _DEFAULT_PRIOR.alpha,
    "beta": _DEFAULT_PRIOR.beta,
    "strength": _DEFAULT_PRIOR.strength,
    "confidence": _DEFAULT_PRIOR.confidence,
    "confidence_signals": _DEFAULT_PRIOR.confidence_signals,
}


@dataclass(frozen=True)
class KaizenParams:
    """The knobs of Kaizen's learning code that the simulation chooses.

    ``prior`` holds keyword arguments for ``memory.scores.Prior`` (empty: the code's
    default ``Prior()``); ``ignored_beta`` overrides the feedback table's weight for a
    comment nobody reacted to (``None``: ``memory.feedback.DEFAULT_TABLE``'s);
    ``optimistic`` is ``memory.scores.select``'s (``False``: the plain tempered draw);
    ``change_z`` too (``None``: no change detection, the long sums alone).

    The defaults are the code's defaults, and those are the best of sweeps over
    threshold, half-life, ignored weight, prior strength and sampling confidence
    (``bench/learning_sim.py --sweep``), chosen to stay good when some accepted comments
    get no reaction either (``silent_accept_share``):

    - ``ignored_beta`` 0.6: most rejections are silent, and at 0.3 a pattern accepted
      only 34 % of the time still scores 0.5 (rejections count half), so unwanted
      patterns keep being posted. 1.0 is best when silence always means no, and bad as
      soon as some silence means yes; 0.6 is good either way;
    - ``Prior(strength=2)``: the levels now shrink towards the *other* repos' evidence,
      so with one repo the posterior is the plain Beta(1 + accepts, 1 + rejects) instead
      of counting every signal three times (the old ``strength=64`` only looked good
      because that double count sharpened the posterior);
    - ``Prior(confidence=1536, confidence_signals=15)`` and one try-out per PR
      (``memory.scores.choose``, ``memory.scores.tempering``): θ is sampled around the
      posterior mean as if it rested on more signals the more the repository has given
      on the pattern, about 100 per signal at first and 1536 at most. Unwanted style
      patterns made most of the regret, re-tried each time their evidence decayed; now
      the mean decides and only patterns near the line are tried. The earlier rule was a
      fixed amount; relative to a fixed 256, plain Thompson sampling (0) had 1.7x the
      regret, 64 1.1x, 1024 1.25x (it buries valuable patterns after a few unlucky
      rejections). Growing with the signals keeps a valued pattern buried by two unlucky
      rejections in play and one turned down twenty times quiet: seeds 0-39, regret
      286 → 276 (ratio to ε-greedy 0.295 → 0.285), drift recovery 141 → 115 PRs; seeds
      40-79 and 80-119, which played no part in choosing, 0.325 → 0.305 and 173 → 143,
      0.323 → 0.290 and 176 → 128. From 10 to 30
      signals at about 100 per signal did about as well; a cap of 4096 recovered faster
      (93 PRs) at 0.317 of ε-greedy's regret;
    - half-life 30 days (at 4 PRs a day: 120 PRs): shorter forgets rejections and
      re-posts noise, longer is slower to follow the team's change of mind;
    - ``optimistic`` (θ = max(draw, posterior mean)): a finding the posterior already
      favours is never held back by an unlucky draw, which teaches nothing since only
      posted comments get reactions. On a cold start every unseen pattern (mean 1/2) is
      offered instead of a random half, so valued patterns gather evidence at once rather
      than some being buried by one early rejection: over 1,000 PRs and 10 seeds regret
      fell from 339 to 304 (ratio to ε-greedy 0.335 → 0.301; lower in 9 seeds of 10),
      mostly valuable findings no longer missed before the drift
      (``kaizen_not_optimistic`` runs the old rule alongside);
    - ``change_z`` 2.5 with recent sums at a quarter of the half-life
      (``memory.scores.RECENT_SHARE``): over 10 seeds, drift recovery 284 → 111 PRs and
      regret 304 → 263 (ratio to ε-greedy 0.301 → 0.260). 2.0 and 2.25 did as well
      (110 PRs); 3.0 was slower (152); recent sums at a third or 0.4 of the half-life were
      slower too (121, 181). A quarter is also as short as the float64 window allows at the
      default half-life (the 7-day floor).
    """

    threshold: float = 0.5
    half_life_days: float = scores.DEFAULT_HALF_LIFE_DAYS
    prior: Mapping[str, float] = field(default_factory=lambda: dict(CHOSEN_PRIOR))
    ignored_beta: float | None = None
    budget: int = BUDGET
    optimistic: bool = True
    change_z: float | None = scores.CHANGE_Z
    neighbour_votes: str = "decayed"
    neighbour_z: float | None = scores.NEIGHBOUR_Z

    def __post_init__(self) -> None:
        if self.neighbour_votes not in NEIGHBOUR_VOTES:
            raise ValueError(
                f"neighbour_votes must be one of {', '.join(NEIGHBOUR_VOTES)},"
                f" not {self.neighbour_votes!r}"
            )

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["prior"] = dict(self.prior)
        if d["ignored_beta"] is None:
            d["ignored_beta"] = feedback.DEFAULT_TABLE["ignored"].beta
        return d


# What memory.scores and memory.feedback do with no arguments. Now that the chosen
# parameters are the code's defaults this is the same as ``KaizenParams()``: a check.
CODE_DEFAULTS = KaizenParams(
    threshold=0.5, half_life_days=scores.DEFAULT_HALF_LIFE_DAYS, prior={}, ignored_beta=None
)


class Kaizen:
    """Kaizen's real learning code: ``memory.scores`` fed by ``memory.feedback``."""

    def __init__(self, params: KaizenParams, seed: int, name: str = "kaizen") -> None:
        self.name = name
        self.params = params
        self.store = scores.InMemoryScoreStore(half_life_days=params.half_life_days)
        self.prior = scores.Prior(**params.prior) if params.prior else scores.Prior()
        self.table = (
            feedback.DEFAULT_TABLE
            if params.ignored_beta is None
            else feedback.load_table({"ignored": {"beta": params.ignored_beta}})
        )
        self.rng = random.Random(f"kaizen-{seed}")  # noqa: S311 - a simulation, not crypto
        self.posted_keys: set[str] = set()
        # per candidate text: (outcome, when judged) of the latest judged comments
        self.judged: dict[str, collections.deque[tuple[str, float]]] = {}

    def _with_votes(self, candidates: Sequence[Candidate], now: float) -> list[Candidate]:
        """The candidates with their neighbour votes, as ``ExperienceStore.neighbour_vote``
        gives them: up to ``NEIGHBOUR_LIMIT`` judged comments on the same pattern in the
        same place (the near-identical ones), within the vote horizon when they fade."""
        mode = self.params.neighbour_votes
        if mode == "off":
            return list(candidates)
        decayed = mode == "decayed"
        half_life = self.params.half_life_days
        since = vote_horizon(now, half_life)
        out = []
        for c in candidates:
            judged = [
                (outcome, at)
                for outcome, at in self.judged.get(c.text, ())
                if not decayed or at >= since
            ]
            accepts, rejects = tally_vote(
                judged, now=now, half_life_days=half_life if decayed else None
            )
            out.append(replace(c, neighbour_accepts=accepts, neighbour_rejects=rejects))
        return out

    def choose(self, pr: PR) -> list[int]:
        selection = scores.select(
            self._with_votes(pr.candidates, pr.at),
            store=self.store,
            now=pr.at,
            rng=self.rng,
            budget=self.params.budget,
            threshold=self.params.threshold,
            prior=self.prior,
            optimistic=self.params.optimistic,
            change_z=self.params.change_z,
            neighbour_z=self.params.neighbour_z,
        )
        index = {c.key: i for i, c in enumerate(pr.candidates)}
        self.posted_keys.update(d.candidate.key for d in selection.posted)
        return [index[d.candidate.key] for d in selection.posted]

    def observe(self, candidate: Candidate, finding: Finding, signal_id: str, at: float) -> None:
        effect = feedback.effect_of(finding.signal, self.table)
        self.store.apply(
            signal_id, candidate.repo, candidate.pattern, effect.alpha, effect.beta, at
        )
        judged = self.judged.setdefault(candidate.text, collections.deque(maxlen=NEIGHBOUR_LIMIT))
        judged.append((str(effect.outcome), at))


def eps_decay_schedule(c: float) -> Callable[[int], float]:
    return lambda t: min(1.0, c / math.sqrt(t))


def make_policies(
    seed: int,
    *,
    kaizen: KaizenParams | None = None,
    epsilon: float = 0.2,
    decay_c: float = 1.0,
    include: Sequence[str] = POLICIES,
) -> list[Policy]:
    makers: dict[str, Callable[[], Policy]] = {
        "post_all": PostAll,
        "eps_greedy": lambda: EpsilonGreedy("eps_greedy", lambda t: epsilon, seed),
        "eps_decay": lambda: EpsilonGreedy("eps_decay", eps_decay_schedule(decay_c), seed),
        "kaizen": lambda: Kaizen(kaizen or KaizenParams(), seed),
        "oracle": Oracle,
        "kaizen_code_defaults": lambda: Kaizen(CODE_DEFAULTS, seed, "kaizen_code_defaults"),
        "kaizen_not_optimistic": lambda: Kaizen(
            replace(kaizen or KaizenParams(), optimistic=False), seed, "kaizen_not_optimistic"
        ),
        "kaizen_no_change_detection": lambda: Kaizen(
            replace(kaizen or KaizenParams(), change_z=None), seed, "kaizen_no_change_detection"
        ),
        "kaizen_no_votes": lambda: Kaizen(
            replace(kaizen or KaizenParams(), neighbour_votes="off"), seed, "kaizen_no_votes"
        ),
        "kaizen_undecayed_votes": lambda: Kaizen(
            replace(kaizen or KaizenParams(), neighbour_votes="undecayed", neighbour_z=None),
            seed,
            "kaizen_undecayed_votes",
        ),
        "eps_greedy_explore_first": lambda: EpsilonGreedy(
            "eps_greedy_explore_first", lambda t: epsilon, seed, explore_first=True
        ),
    }
    return [makers[name]() for name in include]


# --------------------------------------------------------------------------- running


@dataclass
class Trace:
    """Per-PR counts for one policy."""

    posted: np.ndarray
    accepted: np.ndarray
    utility: np.ndarray  # expected utility: sum of (2p - 1) over posted findings
    noise: np.ndarray  # expected utility lost to posting unwanted findings: sum of (1 - 2p)
    valuable_offered: np.ndarray
    valuable_posted: np.ndarray
    security_offered: np.ndarray
    security_posted: np.ndarray

    @classmethod
    def empty(cls, n: int) -> Trace:
        return cls(*(np.zeros(n) for _ in range(8)))


def play(stream: Stream, policy: Policy) -> Trace:
    """Run one policy over the stream; feedback arrives when the team gives it."""
    prs = stream.prs
    trace = Trace.empty(len(prs))
    pending: list[tuple[float, int, Candidate, Finding, str]] = []  # (at, seq, ...)
    seq = 0
    for pr in prs:
        # deliver every reaction that has happened by now, oldest first
        if pending:
            pending.sort(key=lambda e: (e[0], e[1]))
            due = [e for e in pending if e[0] <= pr.at]
            pending = [e for e in pending if e[0] > pr.at]
            for at, _, candidate, finding, signal_id in due:
                policy.observe(candidate, finding, signal_id, at)
        chosen = policy.choose(pr)
        i = pr.index
        for k, f in enumerate(pr.findings):
            valuable = f.p >= VALUABLE
            security = pr.candidates[k].severity == "security"
            trace.valuable_offered[i] += valuable
            trace.security_offered[i] += security
        for k in chosen:
            f = pr.findings[k]
            trace.posted[i] += 1
            trace.accepted[i] += f.accepted
            trace.utility[i] += 2.0 * f.p - 1.0
            if f.p < VALUABLE:
                trace.noise[i] += 1.0 - 2.0 * f.p
            trace.valuable_posted[i] += f.p >= VALUABLE
            trace.security_posted[i] += pr.candidates[k].severity == "security"
            pending.append((pr.at + f.delay_s, seq, pr.candidates[k], f, f"{f.key}:{f.signal}"))
            seq += 1
    return trace


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else float(num / den)


def rolling_precision(trace: Trace, window: int = ROLLING) -> np.ndarray:
    """Accepted / posted over the last ``window`` PRs (fewer at the start)."""
    acc = np.cumsum(trace.accepted)
    post = np.cumsum(trace.posted)
    acc_prev = np.concatenate([np.zeros(window), acc[:-window]])[: len(acc)]
    post_prev = np.concatenate([np.zeros(window), post[:-window]])[: len(post)]
    a, p = acc - acc_prev, post - post_prev
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p > 0, a / np.maximum(p, 1), np.nan)


def prs_to_recover(
    policy: np.ndarray, oracle: np.ndarray, drift_at: int, window: int = ROLLING
) -> int | None:
    """PRs after the drift until the policy's rolling precision is back within 5 points.

    "Back" means: from that PR on, for a whole window of PRs, the policy's rolling
    precision is at most 5 points below the oracle's (being above it counts as within).
    0 means the drift never cost the policy more than 5 points.
    """
    n = len(policy)
    gap = oracle - policy
    ok = ~(gap > RECOVERY_GAP + 1e-12)  # NaN (nothing posted by either) counts as ok
    for t in range(drift_at, n):
        end = min(n, t + window)
        if bool(ok[t:end].all()):
            return t - drift_at
    return None


def metrics(trace: Trace, oracle: Trace, drift_at: int) -> dict[str, Any]:
    posted, accepted = trace.posted.sum(), trace.accepted.sum()
    regret = np.cumsum(oracle.utility - trace.utility)
    roll = rolling_precision(trace)
    return {
        "precision": _ratio(accepted, posted),
        "recall": _ratio(trace.valuable_posted.sum(), trace.valuable_offered.sum()),
        "security_recall": _ratio(trace.security_posted.sum(), trace.security_offered.sum()),
        "regret": float(regret[-1]) if len(regret) else 0.0,
        # regret = noise (unwanted findings posted) + missed (valuable findings not posted)
        "regret_noise": float(trace.noise.sum()),
        "regret_missed": float(regret[-1] - trace.noise.sum()) if len(regret) else 0.0,
        "precision_after_100": _ratio(trace.accepted[WARMUP:].sum(), trace.posted[WARMUP:].sum()),
        # the share of posted findings that were valuable (hidden p >= 0.5): recall's truth
        "valuable_precision": _ratio(trace.valuable_posted.sum(), posted),
        "prs_to_recover_after_drift": prs_to_recover(roll, rolling_precision(oracle), drift_at),
        "posted_per_pr": float(posted / len(trace.posted)) if len(trace.posted) else 0.0,
        "utility": float(trace.utility.sum()),
        "expected_precision": _ratio(
            float((trace.utility.sum() + posted) / 2.0), posted
        ),  # mean hidden p of what was posted: precision without the reaction noise
    }


TARGETS = {
    "kaizen_regret_le_30pct_of_eps_greedy": 0.30,
    "kaizen_precision_after_100_ge": 0.85,
    "kaizen_security_recall_eq": 1.0,
    "kaizen_recovers_within_prs": 100,
}


def check_targets(policies: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The four targets, from one run's (or the seed-averaged) policy metrics."""
    k = policies.get("kaizen")
    if k is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    eg = policies.get("eps_greedy")
    if eg is not None:
        ratio = _ratio(k["regret"], eg["regret"]) if eg["regret"] > 0 else None
        out["kaizen_regret_le_30pct_of_eps_greedy"] = {
            "value": ratio,
            "target": TARGETS["kaizen_regret_le_30pct_of_eps_greedy"],
            "met": ratio is not None and ratio <= TARGETS["kaizen_regret_le_30pct_of_eps_greedy"],
        }
    pa = k["precision_after_100"]
    out["kaizen_precision_after_100_ge"] = {
        "value": pa,
        "target": TARGETS["kaizen_precision_after_100_ge"],
        "met": pa is not None and pa >= TARGETS["kaizen_precision_after_100_ge"],
    }
    sr = k["security_recall"]
    out["kaizen_security_recall_eq"] = {
        "value": sr,
        "target": TARGETS["kaizen_security_recall_eq"],
        "met": sr is None or sr >= 1.0,
    }
    rec = k["prs_to_recover_after_drift"]
    out["kaizen_recovers_within_prs"] = {
        "value": rec,
        "target": TARGETS["kaizen_recovers_within_prs"],
        "met": rec is not None and rec <= TARGETS["kaizen_recovers_within_prs"],
    }
    return out


def time_scale(prs_per_day: float, half_life_days: float) -> dict[str, float]:
    """How simulated PRs map to the clock Kaizen forgets by (its half-life is in days)."""
    return {
        "prs_per_day": prs_per_day,
        "half_life_days": half_life_days,
        "half_life_prs": half_life_days * prs_per_day,
        "recovery_target_days": TARGETS["kaizen_recovers_within_prs"] / prs_per_day,
    }


def run_simulation_with_curves(
    prs: int = 1000,
    seed: int = 0,
    *,
    kaizen: KaizenParams | None = None,
    include: Sequence[str] = POLICIES,
    **stream_options: float,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``run_simulation``'s result, plus per-PR curves for each policy."""
    if prs < 2:
        raise ValueError("need at least 2 PRs")
    names = list(dict.fromkeys([*include, "oracle"]))  # regret needs the oracle
    stream = make_stream(prs, seed, **stream_options)
    traces = {p.name: play(stream, p) for p in make_policies(seed, kaizen=kaizen, include=names)}
    oracle = traces["oracle"]
    drift = stream.team.drift_at
    policies = {name: metrics(t, oracle, drift) for name, t in traces.items()}
    params = kaizen or KaizenParams()
    result = {
        "prs": prs,
        "seed": seed,
        "drift_at": drift,
        "budget": BUDGET,
        "time_scale": time_scale(stream.prs_per_day, params.half_life_days),
        "kaizen_params": params.as_dict(),
        "team": {
            "patterns": len(stream.team.patterns),
            "context_spread": stream.team.context_spread,
            "flipped": stream.team.flipped,
            "findings_per_pr": float(np.mean([len(pr.findings) for pr in stream.prs])),
            "valuable_share": float(oracle.valuable_offered.sum())
            / max(1, sum(len(pr.findings) for pr in stream.prs)),
        },
        "policies": policies,
        "targets": check_targets(policies),
    }
    curves: dict[str, Any] = {
        "drift_at": drift,
        "policies": {
            name: {
                "cumulative_regret": np.cumsum(oracle.utility - t.utility).tolist(),
                "rolling_precision": [
                    None if math.isnan(x) else float(x) for x in rolling_precision(t)
                ],
                "posted": t.posted.tolist(),
                "accepted": t.accepted.tolist(),
            }
            for name, t in traces.items()
        },
    }
    return result, curves


def run_simulation(prs: int = 1000, seed: int = 0, **options: Any) -> dict[str, Any]:
    """Every policy over the same simulated team; metrics and targets, JSON-serialisable."""
    return run_simulation_with_curves(prs, seed, **options)[0]


FRONTIER_BARS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def precision_frontier(
    prs: int = 1000,
    seeds: Sequence[int] = range(10),
    bars: Sequence[float] = FRONTIER_BARS,
    **stream_options: float,
) -> dict[str, Any]:
    """What the precision target costs even a policy that knows the team: per bar, the mean
    over ``seeds`` of :class:`OracleAt`'s precision after the warm-up and its regret, and
    that regret over ε-greedy's (the regret target's ratio, as :func:`check_targets` takes
    it from the averages).

    ``at_precision_target`` interpolates between the bars to where the precision after
    the warm-up reaches ``TARGETS["kaizen_precision_after_100_ge"]``: the regret ratio
    there is the least any policy, learning or not, pays for that precision on these
    teams. ``None`` if no bar reaches it.
    """
    rows: dict[float, list[dict[str, Any]]] = {bar: [] for bar in bars}
    eg_regret: list[float] = []
    for seed in seeds:
        stream = make_stream(prs, seed, **stream_options)
        drift = stream.team.drift_at
        oracle = play(stream, Oracle())
        (eg,) = make_policies(seed, include=("eps_greedy",))
        eg_regret.append(metrics(play(stream, eg), oracle, drift)["regret"])
        for bar in bars:
            rows[bar].append(metrics(play(stream, OracleAt(bar)), oracle, drift))
    eg_mean = float(np.mean(eg_regret))
    table: list[dict[str, Any]] = []
    for bar in bars:
        m = rows[bar]
        regret = float(np.mean([r["regret"] for r in m]))
        table.append(
            {
                "bar": bar,
                "precision_after_100": float(np.mean([r["precision_after_100"] for r in m])),
                "expected_precision": float(np.mean([r["expected_precision"] for r in m])),
                "recall": float(np.mean([r["recall"] for r in m])),
                "regret": regret,
                "regret_ratio": _ratio(regret, eg_mean) if eg_mean > 0 else None,
            }
        )
    goal = TARGETS["kaizen_precision_after_100_ge"]
    crossing: dict[str, float | None] | None = None
    for lo, hi in itertools.pairwise(table):
        a, b = lo["precision_after_100"], hi["precision_after_100"]
        if a < goal <= b and lo["regret_ratio"] is not None and hi["regret_ratio"] is not None:
            w = (goal - a) / (b - a)
            crossing = {
                "bar": lo["bar"] + w * (hi["bar"] - lo["bar"]),
                "regret_ratio": lo["regret_ratio"] + w * (hi["regret_ratio"] - lo["regret_ratio"]),
            }
            break
    if crossing is None and table and table[0]["precision_after_100"] >= goal:
        crossing = {"bar": table[0]["bar"], "regret_ratio": table[0]["regret_ratio"]}
    return {
        "prs": prs,
        "seeds": list(seeds),
        "eps_greedy_regret": eg_mean,
        "rows": table,
        "at_precision_target": crossing,
    }


def average(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Metrics averaged over runs (seeds); targets checked on the averages and per seed."""
    names = list(results[0]["policies"])
    keys = list(results[0]["policies"][names[0]])
    policies: dict[str, dict[str, Any]] = {}
    for name in names:
        row: dict[str, Any] = {}
        for key in keys:
            values = [r["policies"][name][key] for r in results]
            if key == "prs_to_recover_after_drift":
                recovered = [v for v in values if v is not None]
                # never recovering counts as the whole post-drift stretch
                horizon = [r["prs"] - r["drift_at"] for r in results]
                row[key] = float(
                    np.mean([h if v is None else v for v, h in zip(values, horizon, strict=True)])
                )
                row["recovered_runs"] = len(recovered)
            else:
                present = [v for v in values if v is not None]
                row[key] = float(np.mean(present)) if present else None
        policies[name] = row
    per_seed_met: dict[str, int] = {}
    for r in results:
        for target, verdict in r["targets"].items():
            per_seed_met[target] = per_seed_met.get(target, 0) + int(verdict["met"])
    avg_targets = check_targets(policies)
    for target, verdict in avg_targets.items():
        verdict["seeds_met"] = per_seed_met.get(target, 0)
        verdict["seeds"] = len(results)
    return {
        "prs": results[0]["prs"],
        "seeds": [r["seed"] for r in results],
        "time_scale": results[0].get("time_scale"),
        "policies": policies,
        "targets": avg_targets,
    }
