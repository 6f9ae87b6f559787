"""How near-identical past comments vote: by outcome, fading with the time since judged."""

from __future__ import annotations

import pytest

from memory.experiences import decided_at, tally_vote
from memory.types import Experience, Kind, Outcome

DAY = 86_400.0
NOW = 1_800_000_000.0


def test_outcomes_weigh_as_the_vote_table_says_without_decay() -> None:
    votes = [
        (Outcome.ACCEPTED, 0.0),
        (Outcome.PARTLY, 0.0),
        (Outcome.REJECTED, 0.0),
        (Outcome.IGNORED, 0.0),
        (Outcome.PENDING, 0.0),  # not evidence yet
        ("no-such-outcome", 0.0),
    ]
    assert tally_vote(votes) == pytest.approx((1.5, 1.3))


def test_a_neighbour_judged_one_half_life_ago_weighs_half() -> None:
    votes = [(Outcome.REJECTED, NOW - 30 * DAY), (Outcome.ACCEPTED, NOW)]
    assert tally_vote(votes, now=NOW, half_life_days=30.0) == pytest.approx((1.0, 0.5))


def test_old_rejections_fade_so_recent_acceptances_outvote_them() -> None:
    old = [(Outcome.REJECTED, NOW - 120 * DAY)] * 8  # the team's view four half-lives ago
    new = [(Outcome.ACCEPTED, NOW - 2 * DAY)] * 2
    undecayed = tally_vote(old + new)
    decayed = tally_vote(old + new, now=NOW, half_life_days=30.0)
    assert undecayed[1] > undecayed[0]
    assert decayed[0] > decayed[1]


def test_a_verdict_from_the_future_counts_whole() -> None:
    # clocks of GitHub and the worker differ by a little: never weigh more than 1
    assert tally_vote([(Outcome.ACCEPTED, NOW + 60)], now=NOW, half_life_days=30.0) == (1.0, 0.0)


@pytest.mark.parametrize("half_life", [0.0, -1.0, float("nan")])
def test_a_half_life_that_is_not_positive_is_refused(half_life: float) -> None:
    with pytest.raises(ValueError, match="half_life_days"):
        tally_vote([], now=NOW, half_life_days=half_life)


def _experience(created_at: float, signals: list[object]) -> Experience:
    return Experience(
        kind=Kind.COMMENT,
        repo="acme/api",
        pattern="ruff:B006",
        fingerprint="f",
        text="t",
        created_at=created_at,
        extra={"signals": signals},
    )


def test_decided_at_is_the_newest_signal() -> None:
    e = _experience(100.0, [{"id": "a", "at": 500.0}, {"id": "b", "at": 300.0}])
    assert decided_at(e) == 500.0


def test_decided_at_falls_back_to_creation_and_skips_malformed_records() -> None:
    e = _experience(100.0, [{"id": "a"}, {"id": "b", "at": "yesterday"}, "junk", {"at": True}])
    assert decided_at(e) == 100.0
    assert decided_at(_experience(100.0, [])) == 100.0
