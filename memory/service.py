"""Kaizen's memory as one object: experiences, pattern scores, feedback and trajectories.

Callers (the review and fix agents, the feedback task, the CLI) talk to ``Memory``; it
keeps the parts consistent:

- a signal is written to its experience first (Qdrant, idempotent by signal id) and then
  to the pattern scores (atomic, exactly once); if the experience store is unreachable the
  signal is parked and applied by the next sweep, so nothing is lost and nothing doubles;
- scores can always be rebuilt from the signals kept on the experiences.

Embedded Qdrant can be opened by one process only, so the experience store is opened
lazily: commands that only touch scores or trajectories never take the lock.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.activity import ActivityLog, Event
from memory.archive import ArchiveStore, signal_rows
from memory.experiences import ExperienceStore, SignalRefused
from memory.feedback import DEFAULT_TABLE, Effect, UnknownSignal, combine, effect_of
from memory.pending import PendingStore
from memory.scores import RETRACT_PREFIX, InMemoryScoreStore, ScoreStore, validate_repo
from memory.trajectories import TrajectoryStore
from memory.types import GONE_KIND, GONE_PREFIX, Experience, Kind, Outcome, Signal

log = logging.getLogger(__name__)

# The final reward an outcome gives the LLM calls that produced the comment or fix.
OUTCOME_REWARD: Mapping[str, float] = {
    Outcome.ACCEPTED: 1.0,
    Outcome.ADDRESSED: 0.8,
    Outcome.PARTLY: 0.5,
    Outcome.IGNORED: -0.3,
    Outcome.DISMISSED: -0.5,
    Outcome.REJECTED: -1.0,
}


def standing_signals(experience: Experience) -> list[dict[str, Any]]:
    """The signal records on an experience that still speak: neither a retraction nor
    taken back by one (nor a note that their source is gone, which says nothing itself)."""
    records = [dict(r) for r in experience.extra.get("signals", [])]
    taken_back = {str(r.get("retracts")) for r in records if r.get("kind") == "retraction"}
    return [
        r
        for r in records
        if r.get("kind") not in ("retraction", GONE_KIND) and str(r.get("id")) not in taken_back
    ]


def source_of(signal_id: str) -> str:
    """The GitHub object a signal id comes from: ``reply:<id>`` for ``reply:<id>`` and for
    its edits (``reply:<id>@<time>#<digest>``)."""
    return signal_id.split("@", 1)[0]


def _is_gone(experience: Experience, source: str) -> bool:
    """Whether :meth:`Memory.mark_gone` recorded ``source`` (``reply:<id>``) as deleted."""
    wanted = GONE_PREFIX + source
    return any(str(r.get("id")) == wanted for r in experience.extra.get("signals", []))


class UnknownExperience(LookupError):
    """A signal for a finding Kaizen has no record of."""


@dataclass
class ApplyResult:
    status: str  # applied | duplicate | pending | deleted (see mark_gone)
    outcome: str | None = None


@dataclass(frozen=True)
class MoveReport:
    """What :meth:`Memory.move_repo` re-labelled, store by store."""

    old: str
    new: str
    experiences: int = 0
    archived_signals: int = 0
    patterns: int = 0
    events: int = 0
    transitions: int = 0


@dataclass(frozen=True)
class ForgetReport:
    """What :meth:`Memory.forget_repo` deleted, store by store."""

    repo: str
    experiences: int = 0
    transitions: int = 0
    pending_signals: int = 0
    archived_signals: int = 0
    patterns: int = 0
    events: int = 0


@dataclass
class RebuildReport:
    patterns: int
    signals: int
    unchanged: bool
    max_difference: float
    differences: list[str] = field(default_factory=list)


class Memory:
    def __init__(
        self,
        *,
        scores: ScoreStore,
        trajectories: TrajectoryStore,
        pending: PendingStore,
        open_experiences: Callable[[], ExperienceStore],
        archive: ArchiveStore,
        table: Mapping[str, Effect] = DEFAULT_TABLE,
        activity: ActivityLog | None = None,
    ) -> None:
        self.scores = scores
        self.activity = activity
        self.trajectories = trajectories
        self.pending = pending
        self.archive = archive
        self.table = table
        self._open_experiences = open_experiences
        self._experiences: ExperienceStore | None = None
        self._lock = threading.RLock()

    @property
    def experiences(self) -> ExperienceStore:
        with self._lock:
            if self._experiences is None:
                self._experiences = self._open_experiences()
            return self._experiences

    # -- writing ---------------------------------------------------------------------------

    def record_experience(self, experience: Experience) -> str:
        if not experience.created_at:
            experience.created_at = time.time()
        self.experiences.upsert([experience], on_delete=self._retire)
        if experience.kind == Kind.COMMENT:
            extra = experience.extra
            self.note(
                Event(
                    id=f"comment:{experience.id}",
                    kind="comment",
                    repo=experience.repo,
                    at=experience.created_at,
                    pattern=experience.pattern,
                    data={
                        "experience_id": experience.id,
                        "severity": experience.severity,
                        "source": extra.get("source"),
                        "message": str(extra.get("message") or "")[:600],
                        "pr": extra.get("pr"),
                    },
                )
            )
        return experience.id

    def note(self, event: Event) -> None:
        """Append to the activity log for reports; a failure there never fails the work."""
        if self.activity is None:
            return
        try:
            self.activity.add(event)
        except Exception as exc:
            log.warning("activity not recorded", extra={"error": str(exc)})

    def _retire(self, experiences: list[Experience]) -> None:
        """Retention is about to delete these: keep their signals for rebuilds."""
        self.archive.archive(experiences)

    def apply_signal(self, signal: Signal) -> ApplyResult:
        """Experience first, then scores; both idempotent, so any retry order is safe."""
        effect = effect_of(signal.kind, self.table)
        try:
            current = self.experiences.get(signal.experience_id)
            if current is None:
                raise UnknownExperience(
                    f"no finding or fix with id {signal.experience_id} in memory"
                )
            outcome = combine(Outcome(current.outcome), effect.outcome)
            record = {
                "id": signal.id,
                "kind": signal.kind,
                "alpha": effect.alpha,
                "beta": effect.beta,
                "at": signal.at,
                "reason": signal.reason,
                "actor": signal.actor,
            }
            self.experiences.record_signal(
                signal.experience_id,
                record,
                str(outcome),
                signal.reason,
                unless=GONE_PREFIX + source_of(signal.id),
            )
        except SignalRefused:
            # what it came from was deleted (mark_gone) before it could count
            self.pending.done(signal.id)
            return ApplyResult("deleted")
        except UnknownExperience:
            raise
        except Exception as exc:  # Qdrant down or locked: park it, lose nothing
            log.warning("experience store unavailable; signal parked", extra={"error": str(exc)})
            self.pending.park(signal, f"{type(exc).__name__}: {exc}")
            return ApplyResult("pending")
        # The experience's repo, not the signal's: a signal parked before its repository
        # was renamed must count under the new name, as a rebuild would count it.
        applied = self.scores.apply(
            signal.id, current.repo, signal.pattern, effect.alpha, effect.beta, signal.at
        )
        self.pending.done(signal.id)
        if applied:
            self.note(
                Event(
                    id=f"signal:{signal.id}",
                    kind="signal",
                    repo=current.repo,
                    at=signal.at,
                    pattern=signal.pattern,
                    data={
                        "signal": signal.kind,
                        "outcome": str(outcome),
                        "experience_id": signal.experience_id,
                        "experience_kind": str(current.kind),
                        "reason": signal.reason,
                        "actor": signal.actor,
                        "alpha": effect.alpha,
                        "beta": effect.beta,
                        "severity": current.severity,
                        "source": current.extra.get("source"),
                        "message": str(current.extra.get("message") or "")[:600],
                        "pr": current.extra.get("pr"),
                    },
                )
            )
        if outcome in OUTCOME_REWARD:
            self.trajectories.attach_final_reward_for_experience(
                signal.experience_id, OUTCOME_REWARD[outcome]
            )
        return ApplyResult("applied" if applied else "duplicate", str(outcome))

    def retract_signal(self, signal_id: str, experience_id: str) -> ApplyResult:
        """A developer took back what they said (removed their 👍): the signal stops counting.

        The scores lose exactly what it added; the experience keeps it on record beside a
        ``retract:`` record (so a rebuild makes the same numbers) and gets the outcome the
        remaining signals give; reports follow. Taking back a signal twice, or one that
        was never recorded, changes nothing. Store errors propagate: the poller that saw
        the removal sees it again on its next run.
        """
        current = self.experiences.get(experience_id)
        if current is None:
            raise UnknownExperience(f"no finding or fix with id {experience_id} in memory")
        records = current.extra.get("signals", [])
        original = next((r for r in records if str(r.get("id")) == signal_id), None)
        if original is None or signal_id.startswith(RETRACT_PREFIX):
            return ApplyResult("unknown", str(current.outcome))
        rid = RETRACT_PREFIX + signal_id
        outcome = self._outcome_of(
            r for r in standing_signals(current) if str(r.get("id")) != signal_id
        )
        alpha, beta, at = float(original["alpha"]), float(original["beta"]), float(original["at"])
        record = {
            "id": rid,
            "kind": "retraction",
            "retracts": signal_id,
            "alpha": alpha,
            "beta": beta,
            "at": at,
            "retracted_at": time.time(),
        }
        self.experiences.record_signal(experience_id, record, str(outcome), None)
        # apply_signal writes the experience, then the scores: a worker killed between the
        # two leaves a recorded signal the scores never saw. Applying it again is a no-op
        # otherwise, and makes the subtraction below exact either way.
        self.scores.apply(signal_id, current.repo, current.pattern, alpha, beta, at)
        retracted = self.scores.retract(signal_id, current.repo, current.pattern, alpha, beta, at)
        if retracted:
            self.note(
                Event(
                    id=f"signal:{rid}",
                    kind="signal",
                    repo=current.repo,
                    at=time.time(),
                    pattern=current.pattern,
                    data={
                        "signal": "retraction",
                        "retracts": signal_id,
                        "retracted_kind": original.get("kind"),
                        "outcome": str(outcome),
                        "experience_id": experience_id,
                        "experience_kind": str(current.kind),
                        "actor": original.get("actor"),
                        "alpha": -alpha,
                        "beta": -beta,
                    },
                )
            )
        if str(outcome) in OUTCOME_REWARD:
            self.trajectories.attach_final_reward_for_experience(
                experience_id, OUTCOME_REWARD[str(outcome)]
            )
        else:
            self.trajectories.clear_final_reward_for_experience(experience_id)
        return ApplyResult("applied" if retracted else "duplicate", str(outcome))

    def mark_gone(self, experience_id: str, source: str) -> bool:
        """Remember that ``source`` (``reply:<id>``), which spoke about this experience, was
        deleted. GitHub does not promise to deliver events in order, and two workers may
        take a reply's creation and its deletion at once: a creation or edit processed
        after the deletion must not bring deleted words back. The note sits on the
        experience with its signals (kept once, like them) and changes no score; from then
        on :meth:`apply_signal` refuses that reply's signals, in the same compare-and-set
        as their write. A signal written just before the note still stands: the caller
        reads what stands *after* marking and takes it back. False if the note was already
        there. Store errors propagate, so the task is retried.
        """
        current = self.experiences.get(experience_id)
        if current is None:
            raise UnknownExperience(f"no finding or fix with id {experience_id} in memory")
        if _is_gone(current, source):
            return False
        record = {"id": GONE_PREFIX + source, "kind": GONE_KIND, "at": time.time()}
        self.experiences.record_signal(experience_id, record, str(current.outcome), None)
        return True

    def _outcome_of(self, records: Iterable[Mapping[str, Any]]) -> Outcome:
        """The outcome a sequence of signal records gives, as apply_signal combined them."""
        outcome = Outcome.PENDING
        for record in sorted(records, key=lambda r: float(r.get("at") or 0.0)):
            try:
                effect = effect_of(str(record.get("kind")), self.table)
            except UnknownSignal:  # a kind a later feedback table dropped: it said nothing
                continue
            outcome = combine(outcome, effect.outcome)
        return outcome

    def retry_pending(self) -> int:
        """Apply parked signals; returns how many went through this time."""
        done = 0
        for signal in self.pending.all():
            try:
                result = self.apply_signal(signal)
            except UnknownExperience:
                log.error(
                    "parked signal names an unknown finding; dropped", extra={"id": signal.id}
                )
                self.pending.done(signal.id)
                continue
            if result.status != "pending":
                done += 1
        return done

    # -- a repository renamed or transferred -----------------------------------------------

    def move_repo(self, old: str, new: str, *, installation_id: int | None = None) -> MoveReport:
        """Carry everything learned about ``old`` over to ``new`` (GitHub's ``repository``
        renamed and transferred events, or ``kaizen memory move``).

        Experiences first, then what is derived from them, each step idempotent: a failure
        (Qdrant down) raises, and running the move again finishes it. A signal counts under
        its experience's repo, so one applied after the move lands under the new name; only
        one whose experience was read just before the re-labelling and whose score lands
        just after the scores moved is left under the old name, and running the move again
        carries it over.
        """
        old, new = validate_repo(old), validate_repo(new)
        if old == new:
            return MoveReport(old, new)
        experiences = self.experiences.move_repo(old, new, installation_id=installation_id)
        archived = self.archive.move_repo(old, new)
        patterns = self.scores.move_repo(old, new)
        events = self.activity.move_repo(old, new) if self.activity is not None else 0
        transitions = self.trajectories.move_repo(old, new)
        # the merged repo may now hold more than its retention allows
        self.experiences.enforce_retention(new, on_delete=self._retire)
        return MoveReport(old, new, experiences, archived, patterns, events, transitions)

    # -- a repository forgotten ---------------------------------------------------------

    def forget_repo(self, repo: str) -> ForgetReport:
        """Erase everything Kaizen keeps about ``repo`` (``kaizen memory forget``, or the App
        losing the repository when ``KAIZEN_FORGET_REMOVED_REPOS`` is on): its experiences
        with their code and signals, the LLM calls made for it, parked and archived
        signals, its report events, its pattern evidence (taken out of its org and the
        global scope too, so nothing learned from it stays behind), mutes and shadow log.

        Each batch of experiences takes its LLM calls and parked signals with it before it
        goes, so a failure (Qdrant down) leaves nothing orphaned, and running the forget
        again finishes it. A signal whose experience was read just before the deletion and
        whose score lands just after the scores were forgotten is left behind, as in a
        move; running the forget again removes it.
        """
        repo = validate_repo(repo)
        transitions = pending = 0

        def with_their_traces(batch: list[Experience]) -> None:
            nonlocal transitions, pending
            ids = {e.id for e in batch}
            transitions += self.trajectories.forget_repo(repo, ids)
            for parked in self.pending.all():
                if parked.repo == repo or parked.experience_id in ids:
                    self.pending.done(parked.id)
                    pending += 1

        experiences = self.experiences.forget_repo(repo, on_delete=with_their_traces)
        with_their_traces([])  # calls and signals of a repo with no experience left
        return ForgetReport(
            repo,
            experiences,
            transitions,
            pending,
            self.archive.forget_repo(repo),
            self.scores.forget_repo(repo),
            self.activity.forget_repo(repo) if self.activity is not None else 0,
        )

    def repos_of_installation(self, installation_id: int) -> list[str]:
        """Repositories with experiences under this installation (to forget on uninstall)."""
        return self.experiences.repos(installation_id)

    def known_repos(self) -> set[str]:
        """Every repository memory holds anything about. Experiences, report events and LLM
        calls cover the rest: signals, archived ones included, hang off experiences (and
        retention always leaves a repo its newest ones), and watched PRs and fix memos
        come with experiences; what else review state holds expires within 30 days. An
        uninstall listing a thousand repositories then forgets only these, instead of
        scanning every store once per name."""
        known = set(self.experiences.repos()) | set(self.trajectories.repos())
        if self.activity is not None:
            known |= set(self.activity.repos())
        return known

    # -- rebuilding --------------------------------------------------------------------------

    def rebuild(self, *, tolerance: float = 1e-6) -> RebuildReport:
        """Recompute every score from the signals kept on the experiences."""
        self.retry_pending()
        before = self.scores.snapshot()
        before_recent = self.scores.recent_snapshot()
        records = signal_rows(self.experiences.iter_all())
        records.extend(self.archive.iter_signals())
        # Replayed through a store of the same half-life, so the sums are made exactly as
        # the live store made them (long and recent weights, newest times), in one place.
        replay = InMemoryScoreStore(self.scores.half_life_days)
        for record in records:
            if record[0].startswith(RETRACT_PREFIX):
                replay.retract(record[0].removeprefix(RETRACT_PREFIX), *record[1:])
            else:
                replay.apply(*record)
        applied = [record[0] for record in records]
        # a retraction can leave a rounding error below zero where nothing is left
        sums = {k: (max(0.0, a), max(0.0, b)) for k, (a, b) in replay.snapshot().items()}
        recent = {
            k: (max(0.0, a), max(0.0, b), last)
            for k, (a, b, last) in replay.recent_snapshot().items()
        }
        differences, worst = _compare(before, sums, (0.0, 0.0), tolerance)
        recent_lines, recent_worst = _compare(
            before_recent, recent, (0.0, 0.0, -math.inf), tolerance, "recent "
        )
        differences += recent_lines
        worst = max(worst, recent_worst)
        self.scores.replace_all(sums, applied, recent=recent)
        return RebuildReport(
            patterns=len({k[1] for k in sums}),
            signals=len(applied),
            unchanged=not differences,
            max_difference=worst,
            differences=differences[:50],
        )

    # -- reading -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        try:
            experiences: dict[str, Any] = self.experiences.stats()
        except Exception as exc:
            experiences = {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "experiences": experiences,
            "patterns": len(self.scores.patterns("*")),
            "pending_signals": self.pending.count(),
            "trajectories": self.trajectories.stats(),
        }

    def close(self) -> None:
        with self._lock:
            if self._experiences is not None:
                self._experiences.close()
                self._experiences = None


def _compare(
    before: Mapping[tuple[str, str], tuple[float, ...]],
    after: Mapping[tuple[str, str], tuple[float, ...]],
    zero: tuple[float, ...],
    tolerance: float,
    label: str = "",
) -> tuple[list[str], float]:
    """What a rebuild changed: one line per (scope, pattern) whose values moved by more than
    ``tolerance`` relative to their size, and the largest such relative change."""
    lines: list[str] = []
    worst = 0.0
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, zero), after.get(key, zero)
        rel = max(
            0.0 if x == y else abs(x - y) / max(1.0, abs(x)) for x, y in zip(old, new, strict=True)
        )
        worst = max(worst, rel)
        if rel > tolerance:
            lines.append(f"{label}{key[0]} {key[1]}: {old} -> {new}")
    return lines, worst


def default_paths(data_dir: Path) -> dict[str, Path]:
    return {
        "scores": data_dir / "scores.sqlite3",
        "trajectories": data_dir / "trajectories.sqlite3",
        "pending": data_dir / "pending_signals.sqlite3",
        "archive": data_dir / "archived_signals.sqlite3",
        "embeddings": data_dir / "embeddings.sqlite3",
        "activity": data_dir / "activity.sqlite3",
    }
