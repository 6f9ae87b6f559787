"""The report model: what Kaizen has learned about a team, built from memory alone.

One model, rendered three ways (web dashboard, a Markdown comment, the CLI). It reads
the activity log (posted comments, signals, fix runs), the score store (posteriors,
mutes, the shadow log of held-back findings) and the trajectory store (LLM tokens) —
never the experience store, which in embedded mode belongs to the worker process.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memory.activity import ActivityLog, Event
from memory.feedback import combine
from memory.scores import (
    Mute,
    Prior,
    ScoreStore,
    is_muted,
    mean_and_interval,
    posterior,
    regime_counts,
    shrink,
)
from memory.trajectories import TrajectoryStore
from memory.types import GLOBAL_SCOPE, Outcome

DAY = 86400.0
WEEK = 7 * DAY
ACCEPTED = {"accepted", "addressed", "partly"}
REJECTED = {"rejected", "dismissed"}
MIN_EVIDENCE = 3  # decided comments before a pattern leaves "exploring"
TREND_WINDOW = 30 * DAY


@dataclass
class Example:
    outcome: str
    message: str
    reason: str | None
    pr: str | None
    actor: str | None


@dataclass
class PatternRow:
    pattern: str
    source: str
    severity: str
    posted: int = 0
    accepted: int = 0
    rejected: int = 0
    ignored: int = 0
    pending: int = 0
    rate: float | None = None  # accepted / decided
    interval: tuple[float, float] | None = None  # 90 % credible interval of the rate
    trend: float | None = None  # rate in the last 30 days minus the 30 days before
    score: float | None = None  # the posterior mean selection uses
    status: str = "exploring"  # active | exploring | suppressed | muted
    muted_by: str | None = None
    muted_at: float | None = None
    examples: list[Example] = field(default_factory=list)
    spark: list[float | None] = field(default_factory=list)  # weekly rate, oldest first

    @property
    def decided(self) -> int:
        return self.accepted + self.rejected + self.ignored


@dataclass
class Point:
    at: float  # start of the period
    posted: int
    accepted: int
    rate: float | None


@dataclass
class Suppressed:
    pattern: str
    reason: str
    count: int
    last_at: float


@dataclass
class FixPoint:
    at: float
    runs: int  # fix runs started
    fixed: int
    attempts: int
    sandbox_runs: int
    merged: int
    closed: int


@dataclass
class FixStrategy:
    pattern: str
    tried: int
    passed: int
    merged: int
    closed: int


@dataclass
class UsagePoint:
    at: float
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


@dataclass
class MuteRow:
    scope: str
    pattern: str
    by: str
    at: float


@dataclass
class Report:
    repo: str | None
    generated_at: float
    patterns: list[PatternRow] = field(default_factory=list)
    acceptance: list[Point] = field(default_factory=list)
    acceptance_by_pattern: dict[str, list[Point]] = field(default_factory=dict)
    suppressed: list[Suppressed] = field(default_factory=list)
    mutes: list[MuteRow] = field(default_factory=list)
    fixes: list[FixPoint] = field(default_factory=list)
    strategies: list[FixStrategy] = field(default_factory=list)
    usage: list[UsagePoint] = field(default_factory=list)
    totals: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.patterns or self.fixes or self.usage or self.mutes or self.suppressed)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["empty"] = self.empty
        return data


def _period(at: float, size: float) -> float:
    return math.floor(at / size) * size


def _rate(accepted: int, decided: int) -> float | None:
    return accepted / decided if decided else None


def _source(pattern: str) -> str:
    return pattern.split(":", 1)[0] if ":" in pattern else "other"


def build_report(
    *,
    scores: ScoreStore,
    activity: ActivityLog,
    trajectories: TrajectoryStore | None = None,
    repo: str | None = None,
    now: float | None = None,
    usd_per_million_tokens: tuple[float, float] = (0.0, 0.0),
    max_examples: int = 2,
) -> Report:
    now = time.time() if now is None else now
    report = Report(repo=repo, generated_at=now)
    events = activity.events(repo=repo)
    repos = [repo] if repo is not None else sorted({e.repo for e in events})
    mutes = _mutes(scores, repos)
    report.mutes = [MuteRow(m.scope, m.pattern, m.by, m.at) for m in mutes]
    _comments(report, events, scores, mutes, repos, now, max_examples)
    report.suppressed = _suppressed(scores, repos)
    _fixes(report, events)
    if trajectories is not None:
        report.usage = _usage(trajectories, repo, usd_per_million_tokens)
    report.totals = {
        "posted": sum(p.posted for p in report.patterns),
        "accepted": sum(p.accepted for p in report.patterns),
        "rejected": sum(p.rejected for p in report.patterns),
        "ignored": sum(p.ignored for p in report.patterns),
        "rate": _rate(
            sum(p.accepted for p in report.patterns), sum(p.decided for p in report.patterns)
        ),
        "fix_runs": sum(f.runs for f in report.fixes),
        "fixed": sum(f.fixed for f in report.fixes),
        "prompt_tokens": sum(u.prompt_tokens for u in report.usage),
        "completion_tokens": sum(u.completion_tokens for u in report.usage),
        "cost_usd": round(sum(u.cost_usd for u in report.usage), 4),
        "repos": len(repos),
    }
    return report


def _mutes(scores: ScoreStore, repos: Sequence[str]) -> list[Mute]:
    seen: dict[tuple[str, str], Mute] = {}
    scopes = {GLOBAL_SCOPE}
    for name in repos:
        scopes.add(name)
        scopes.add(name.split("/", 1)[0])
    for scope in sorted(scopes):
        for mute in scores.mutes(scope):
            seen[(mute.scope, mute.pattern)] = mute
    return sorted(seen.values(), key=lambda m: (m.scope, m.pattern))


def _final_outcomes(events: Iterable[Event]) -> dict[str, tuple[str, Event]]:
    """Experience id → (its outcome after all signals, the last signal event)."""
    out: dict[str, tuple[str, Event]] = {}
    for event in events:
        if event.kind != "signal" or event.data.get("experience_kind") not in (None, "comment"):
            continue
        eid = str(event.data.get("experience_id") or "")
        if event.data.get("signal") == "retraction":
            # a 👍 taken back: the outcome is what the remaining signals give, even pending
            out[eid] = (str(event.data.get("outcome") or "pending"), event)
            continue
        current = out.get(eid, (Outcome.PENDING.value, event))[0]
        new = str(combine(Outcome(current), Outcome(str(event.data.get("outcome") or "pending"))))
        out[eid] = (new, event if new != current else out.get(eid, ("", event))[1])
    return out


def _comments(
    report: Report,
    events: list[Event],
    scores: ScoreStore,
    mutes: Sequence[Mute],
    repos: Sequence[str],
    now: float,
    max_examples: int,
) -> None:
    posted = [e for e in events if e.kind == "comment"]
    outcomes = _final_outcomes(events)
    rows: dict[str, PatternRow] = {}
    weekly: dict[str, dict[float, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    overall: dict[float, list[int]] = defaultdict(lambda: [0, 0, 0])
    recent: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for event in posted:
        row = rows.get(event.pattern)
        if row is None:
            row = rows[event.pattern] = PatternRow(
                pattern=event.pattern,
                source=str(event.data.get("source") or _source(event.pattern)),
                severity=str(event.data.get("severity") or "medium"),
            )
        row.posted += 1
        outcome, last = outcomes.get(str(event.data.get("experience_id")), ("pending", event))
        bucket = _period(event.at, WEEK)
        accepted = outcome in ACCEPTED
        decided = outcome in ACCEPTED or outcome in REJECTED or outcome == "ignored"
        for table in (weekly[event.pattern][bucket], overall[bucket]):
            table[0] += 1
            table[1] += accepted
            table[2] += decided
        if outcome in ACCEPTED:
            row.accepted += 1
        elif outcome in REJECTED:
            row.rejected += 1
        elif outcome == "ignored":
            row.ignored += 1
        else:
            row.pending += 1
        if decided and now - event.at <= 2 * TREND_WINDOW:
            half = 0 if now - event.at <= TREND_WINDOW else 2
            recent[event.pattern][half] += accepted
            recent[event.pattern][half + 1] += 1
        if decided and last is not event and len(row.examples) < 4 * max_examples:
            row.examples.append(
                Example(
                    outcome="accepted" if accepted else outcome,
                    message=str(event.data.get("message") or "")[:400],
                    reason=last.data.get("reason"),
                    pr=str(event.data.get("pr")) if event.data.get("pr") is not None else None,
                    actor=last.data.get("actor"),
                )
            )
    weeks = sorted(overall)
    report.acceptance = [
        Point(w, overall[w][0], overall[w][1], _rate(overall[w][1], overall[w][2])) for w in weeks
    ]
    for pattern, row in rows.items():
        series = weekly[pattern]
        report.acceptance_by_pattern[pattern] = [
            Point(w, series[w][0], series[w][1], _rate(series[w][1], series[w][2]))
            for w in sorted(series)
        ]
        row.spark = [
            _rate(series[w][1], series[w][2]) if w in series else None for w in weeks[-12:]
        ]
        row.rate = _rate(row.accepted, row.decided)
        if row.decided:
            _, low, high = mean_and_interval(1 + row.accepted, 1 + row.rejected + row.ignored)
            row.interval = (low, high)
        new_acc, new_n, old_acc, old_n = recent[pattern]
        if new_n >= 2 and old_n >= 2:
            row.trend = new_acc / new_n - old_acc / old_n
        row.score = _score(scores, repos, pattern, now)
        muted = next((m for m in mutes if any(is_muted(pattern, r, [m]) for r in repos)), None)
        if muted is not None:
            row.status, row.muted_by, row.muted_at = "muted", muted.by, muted.at
        elif row.severity != "security" and row.score is not None and row.score < 0.5:
            row.status = "suppressed"
        elif row.decided < MIN_EVIDENCE:
            row.status = "exploring"
        else:
            row.status = "active"
        good = [x for x in row.examples if x.outcome == "accepted"][:max_examples]
        bad = [x for x in row.examples if x.outcome != "accepted"][:max_examples]
        row.examples = good + bad
    order = {"muted": 3, "suppressed": 2, "exploring": 1, "active": 0}
    report.patterns = sorted(rows.values(), key=lambda r: (order[r.status], -r.posted, r.pattern))


def _score(scores: ScoreStore, repos: Sequence[str], pattern: str, now: float) -> float | None:
    try:
        if len(repos) == 1:
            a, b = posterior(scores, repos[0], pattern, now, Prior())
        else:  # every repository: the global evidence, read as selection reads a level
            evidence = scores.evidence(GLOBAL_SCOPE, pattern, now)
            g, _ = regime_counts(evidence, now, scores.half_life_days, scores.recent_half_life_days)
            a, b = shrink(g, g, g, Prior())
    except ValueError:
        return None
    return a / (a + b)


def _suppressed(scores: ScoreStore, repos: Sequence[str]) -> list[Suppressed]:
    grouped: dict[tuple[str, str], Suppressed] = {}
    for name in repos:
        try:
            entries = scores.shadow(name, limit=1000)
        except ValueError:
            continue
        for entry in entries:
            key = (entry.pattern, entry.reason)
            found = grouped.get(key)
            if found is None:
                grouped[key] = Suppressed(entry.pattern, entry.reason, 1, entry.at)
            else:
                found.count += 1
                found.last_at = max(found.last_at, entry.at)
    return sorted(grouped.values(), key=lambda s: (-s.count, s.pattern, s.reason))


def _fixes(report: Report, events: list[Event]) -> None:
    points: dict[float, FixPoint] = {}
    strategies: dict[str, FixStrategy] = {}

    def point(at: float) -> FixPoint:
        bucket = _period(at, WEEK)
        if bucket not in points:
            points[bucket] = FixPoint(bucket, 0, 0, 0, 0, 0, 0)
        return points[bucket]

    for event in events:
        if event.kind == "fix":
            p = point(event.at)
            p.runs += 1
            p.fixed += bool(event.data.get("fixed"))
            p.attempts += int(event.data.get("attempts") or 0)
            p.sandbox_runs += int(event.data.get("sandbox_runs") or 0)
        elif event.kind == "signal" and event.data.get("experience_kind") == "fix":
            kind = str(event.data.get("signal"))
            strategy = strategies.setdefault(event.pattern, FixStrategy(event.pattern, 0, 0, 0, 0))
            if kind in ("tests_passed", "tests_failed"):
                strategy.tried += 1
                strategy.passed += kind == "tests_passed"
            elif kind in ("fix_merged", "fix_merged_edited"):
                strategy.merged += 1
                point(event.at).merged += 1
            elif kind == "fix_closed":
                strategy.closed += 1
                point(event.at).closed += 1
    report.fixes = [points[k] for k in sorted(points)]
    report.strategies = sorted(strategies.values(), key=lambda s: (-s.passed, -s.tried, s.pattern))


def _usage(
    trajectories: TrajectoryStore, repo: str | None, prices: tuple[float, float]
) -> list[UsagePoint]:
    per_day: dict[float, UsagePoint] = {}
    for day, _kind, calls, prompt, completion in trajectories.usage_by_day(repo=repo):
        p = per_day.setdefault(day, UsagePoint(day, 0, 0, 0, 0.0))
        p.calls += calls
        p.prompt_tokens += prompt
        p.completion_tokens += completion
    for p in per_day.values():
        p.cost_usd = round((p.prompt_tokens * prices[0] + p.completion_tokens * prices[1]) / 1e6, 6)
    return [per_day[d] for d in sorted(per_day)]


__all__ = ["Report", "build_report"]
