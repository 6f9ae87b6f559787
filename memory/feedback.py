"""What a developer's reaction means: the signal table and how outcomes combine.

A signal (👍, a committed suggestion, ``/kaizen bad``, a fix PR closed unmerged...) is
turned into an :class:`Effect`: the outcome it gives the experience and how much evidence
it adds for (``alpha``) and against (``beta``) the pattern. The table is configuration,
not code, so a deployment can re-weigh signals (``load_table``) without touching the
learning math in :mod:`memory.scores`.

Pure: no I/O, nothing happens at import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from memory.types import Outcome

__all__ = [
    "DEFAULT_TABLE",
    "MAX_SIGNAL_WEIGHT",
    "Effect",
    "UnknownSignal",
    "combine",
    "effect_of",
    "load_table",
]

# A weight this large would let one click outvote a hundred others; a typo, not taste.
MAX_SIGNAL_WEIGHT = 100.0


class UnknownSignal(ValueError):
    """A signal kind that is not in the table (a caller bug or a stale config)."""


@dataclass(frozen=True)
class Effect:
    """What one signal does: the experience's outcome and the evidence it adds.

    ``alpha`` is the weight of acceptance evidence, ``beta`` of rejection evidence; both
    are added to the pattern's Beta posterior (after decay) in every scope.
    """

    outcome: Outcome
    alpha: float
    beta: float

    def __post_init__(self) -> None:
        # Validated here so that no Effect, however built, can corrupt the scores.
        if not isinstance(self.outcome, Outcome):
            raise ValueError(f"outcome must be an Outcome, not {self.outcome!r}")
        if self.outcome is Outcome.PENDING:
            raise ValueError("a signal cannot leave an experience pending")
        for name in ("alpha", "beta"):
            object.__setattr__(self, name, _check_weight(name, getattr(self, name)))


def _check_weight(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, not {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
    if number > MAX_SIGNAL_WEIGHT:
        raise ValueError(f"{name} must be at most {MAX_SIGNAL_WEIGHT:g}, not {value!r}")
    return number


# Silence is weaker evidence than a 👎, but not much weaker: most rejections are silent
# (nobody bothers to click 👎), so at the 0.3 once used here a pattern accepted only a
# third of the time still averaged 0.5 and kept being posted. The learning simulation
# (``bench/learning_sim.py``) found 0.6 best both when silence always means no and when
# some accepted comments get no reaction either (1.0 is best only in the first case).
DEFAULT_TABLE: Mapping[str, Effect] = MappingProxyType(
    {
        "thumbs_up": Effect(Outcome.ACCEPTED, 1.0, 0.0),
        "applied": Effect(Outcome.ACCEPTED, 1.0, 0.0),  # suggestion committed
        "good": Effect(Outcome.ACCEPTED, 1.0, 0.0),  # /kaizen good
        "thumbs_down": Effect(Outcome.REJECTED, 0.0, 1.0),
        "bad": Effect(Outcome.REJECTED, 0.0, 1.0),  # /kaizen bad
        "addressed": Effect(Outcome.ADDRESSED, 0.8, 0.0),  # lines changed, then resolved
        "dismissed": Effect(
            Outcome.DISMISSED, 0.0, 0.8
        ),  # resolved with no change: a firmer no than silence
        "ignored": Effect(Outcome.IGNORED, 0.0, 0.6),  # no signal by PR close
        "fix_merged": Effect(Outcome.ACCEPTED, 1.0, 0.0),
        "fix_merged_edited": Effect(Outcome.PARTLY, 0.5, 0.5),  # >= 25 % lines edited
        "fix_closed": Effect(Outcome.REJECTED, 0.0, 1.0),
        # A human review of a fix PR: weaker than the merge or close that usually follows.
        "fix_approved": Effect(Outcome.ACCEPTED, 0.5, 0.0),
        "fix_changes_requested": Effect(Outcome.PARTLY, 0.0, 0.5),
        # The sandbox's verdict on one candidate patch. A failure is weak evidence against
        # the operator (most candidates of a good operator sit at the wrong line), a pass
        # strong evidence for it.
        "tests_passed": Effect(Outcome.ACCEPTED, 1.0, 0.0),
        "tests_failed": Effect(Outcome.REJECTED, 0.0, 0.1),
    }
)

_FIELDS = ("outcome", "alpha", "beta")


def load_table(overrides: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Effect]:
    """The default table with ``overrides`` applied, validated.

    ``overrides`` maps a signal kind to any of ``outcome``, ``alpha``, ``beta``. For a kind
    already in the table the missing fields keep their defaults (``{"ignored": {"beta":
    0.2}}``); a new kind must name its ``outcome`` and its weights default to 0. Anything
    malformed raises ``ValueError`` naming the kind and field, so a bad config fails at
    start-up instead of quietly skewing what Kaizen learns.
    """
    table = dict(DEFAULT_TABLE)
    for kind, fields in (overrides or {}).items():
        if not isinstance(kind, str) or not kind.strip() or kind != kind.strip():
            raise ValueError(f"signal kind must be a non-empty name, not {kind!r}")
        if not isinstance(fields, Mapping):
            raise ValueError(f"signal {kind!r}: expected a mapping of {_FIELDS}, not {fields!r}")
        unknown = sorted(set(fields) - set(_FIELDS))
        if unknown:
            raise ValueError(f"signal {kind!r}: unknown field(s) {unknown}; allowed: {_FIELDS}")
        base = table.get(kind)
        if base is None and "outcome" not in fields:
            raise ValueError(f"signal {kind!r} is new, so it needs an 'outcome'")
        raw_outcome = fields.get("outcome", base.outcome if base else None)
        try:
            outcome = Outcome(raw_outcome)
        except ValueError:
            valid = ", ".join(o.value for o in Outcome if o is not Outcome.PENDING)
            raise ValueError(
                f"signal {kind!r}: unknown outcome {raw_outcome!r}; use one of {valid}"
            ) from None
        try:
            alpha = _check_weight("alpha", fields.get("alpha", base.alpha if base else 0.0))
            beta = _check_weight("beta", fields.get("beta", base.beta if base else 0.0))
            table[kind] = Effect(outcome, alpha, beta)
        except ValueError as exc:
            raise ValueError(f"signal {kind!r}: {exc}") from None
    return table


def effect_of(kind: str, table: Mapping[str, Effect] = DEFAULT_TABLE) -> Effect:
    """The effect of a signal kind; ``UnknownSignal`` (naming the valid kinds) otherwise."""
    try:
        return table[kind]
    except (KeyError, TypeError):
        raise UnknownSignal(
            f"unknown signal {kind!r}; valid signals: {', '.join(sorted(table))}"
        ) from None


# How much an outcome says about the developer's intent. A stronger kind of evidence
# replaces a weaker one; within a tier the latest wins (people change their minds).
_EXPLICIT = frozenset({Outcome.ACCEPTED, Outcome.REJECTED, Outcome.PARTLY})
_INFERRED = frozenset({Outcome.ADDRESSED, Outcome.DISMISSED})


def _tier(outcome: Outcome) -> int:
    if outcome in _EXPLICIT:
        return 3  # someone said so: 👍/👎, /kaizen good|bad, applied, fix merged/closed
    if outcome in _INFERRED:
        return 2  # read from what they did to the thread and the code
    if outcome is Outcome.IGNORED:
        return 1  # silence until the PR closed
    return 0  # pending


def combine(current: Outcome, new: Outcome) -> Outcome:
    """The outcome an experience ends with when ``new`` arrives after ``current``.

    Tiers, strongest first: explicit (accepted, rejected, partly) > inferred from the
    thread (addressed, dismissed) > ignored > pending. A signal of a stronger or equal
    tier replaces the current outcome, so the latest explicit word wins (👍 then 👎 ends
    rejected) and ``ignored`` — which the PR-close sweep may emit after a 👎 — never
    overwrites what a developer actually said. A weaker signal leaves it unchanged.

    This labels the experience only; each signal's evidence still counts in the scores.
    """
    current, new = Outcome(current), Outcome(new)
    if new is Outcome.PENDING:
        return current
    return new if _tier(new) >= _tier(current) else current
