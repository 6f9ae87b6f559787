"""Pattern scores follow a team that changes its mind, and leave a steady team alone."""

from __future__ import annotations

import random

import pytest

from memory.scores import (
    DAY,
    EPOCH,
    Evidence,
    InMemoryScoreStore,
    posterior,
    regime_counts,
    shrink,
)

REPO = "acme/shop"
PATTERN = "ruff:B006"
NOW = EPOCH + 700 * DAY
HALF_LIFE = 30.0


def mean(ab: tuple[float, float]) -> float:
    return ab[0] / (ab[0] + ab[1])


class Team:
    """One signal a day on one pattern, accepted with a probability that may change."""

    def __init__(self, seed: int = 0) -> None:
        self.store = InMemoryScoreStore(HALF_LIFE)
        self.rng = random.Random(seed)
        self.n = 0

    def days(self, start: float, days: int, p_accept: float) -> None:
        for day in range(days):
            accepted = self.rng.random() < p_accept
            self.store.apply(
                f"s{self.n}", REPO, PATTERN, float(accepted), float(not accepted), start + day * DAY
            )
            self.n += 1

    def score(self, at: float) -> float:
        """What selection sees: the posterior mean, change detection included."""
        return mean(posterior(self.store, REPO, PATTERN, at))

    def long_only(self, at: float) -> float:
        """The same posterior from the long sums alone (no change detection)."""
        counts = [self.store.counts(s, PATTERN, at) for s in (REPO, "acme", "*")]
        return mean(shrink(counts[0], counts[1], counts[2]))

    def changed(self, at: float) -> bool:
        evidence = self.store.evidence(REPO, PATTERN, at)
        return regime_counts(evidence, at, HALF_LIFE, self.store.recent_half_life_days)[1]


def first_day(
    team: Team, p_after: float, *, below: bool, use_detection: bool = True, days: int = 60
) -> int:
    """Days after the change until the score crosses 0.5 (signals keep coming daily)."""
    for day in range(days):
        team.days(NOW + day * DAY, 1, p_after)
        at = NOW + day * DAY + DAY / 2
        score = team.score(at) if use_detection else team.long_only(at)
        if (score < 0.5) == below:
            return day
    return days


def test_a_team_that_stops_liking_a_pattern_is_followed_in_days_not_a_half_life() -> None:
    with_detection, without = Team(), Team()
    for team in (with_detection, without):
        team.days(NOW - 150 * DAY, 150, 0.8)
    assert with_detection.score(NOW) == pytest.approx(with_detection.long_only(NOW))  # steady
    detected = first_day(with_detection, 0.1, below=True)
    plain = first_day(without, 0.1, below=True, use_detection=False)
    assert detected <= 8
    assert plain >= 15  # what one decayed sum alone needs
    assert with_detection.changed(NOW + detected * DAY + DAY / 2)


def test_a_team_that_starts_liking_a_pattern_is_followed_too() -> None:
    with_detection, without = Team(1), Team(1)
    for team in (with_detection, without):
        team.days(NOW - 150 * DAY, 150, 0.1)
    assert first_day(with_detection, 0.85, below=False) <= 10
    assert first_day(without, 0.85, below=False, use_detection=False) >= 20


@pytest.mark.parametrize("p_accept", [0.8, 0.65])
def test_a_steady_team_is_rarely_taken_for_a_change_of_mind(p_accept: float) -> None:
    below = flagged = checks = 0
    for seed in range(10):
        team = Team(seed)
        team.days(NOW - 150 * DAY, 150, p_accept)
        for day in range(200):
            team.days(NOW + day * DAY, 1, p_accept)
            at = NOW + day * DAY + DAY / 2
            below += team.score(at) < 0.5
            flagged += team.changed(at)
            checks += 1
    assert flagged / checks < 0.05
    assert below / checks < 0.03  # a liked pattern is almost never held back by noise


def test_held_back_after_a_change_it_stays_so_while_nothing_arrives_then_fades() -> None:
    team = Team(2)
    team.days(NOW - 150 * DAY, 150, 0.85)
    team.days(NOW, 10, 0.0)  # ten rejections in a row, then Kaizen stops posting it
    last = NOW + 9 * DAY
    assert team.score(last) < 0.5
    # no new signals: the recent sums fade within days, the verdict must not
    for days_later in (7, 15, 30, 45):
        at = last + days_later * DAY
        assert team.changed(at)
        assert team.score(at) < team.long_only(at)
    assert team.score(last + 30 * DAY) < 0.5
    # its evidence still fades at the long half-life, so it is tried again in time
    assert team.score(last + 365 * DAY) > 0.45


def test_without_recent_evidence_or_a_shorter_half_life_the_long_counts_are_used() -> None:
    long = (5.0, 1.0)
    assert regime_counts(Evidence(long, (0.0, 0.0), None), NOW, 30.0, 7.5) == (long, False)
    # recent evidence that disagrees, but h == H: nothing to compare
    disagree = Evidence(long, (0.0, 4.0), NOW)
    assert regime_counts(disagree, NOW, 7.0, 7.0) == (long, False)
    counts, changed = regime_counts(disagree, NOW, 30.0, 7.5)
    assert changed and mean(counts) < 0.5


def test_evidence_from_decades_ago_neither_overflows_nor_decides() -> None:
    store = InMemoryScoreStore(HALF_LIFE)
    years = 365.25 * DAY
    for i in range(5):
        store.apply(f"a{i}", REPO, PATTERN, 0.0, 1.0, EPOCH - 19 * years + i * DAY)
    store.apply("b", REPO, PATTERN, 1.0, 0.0, EPOCH - 19 * years + 10 * DAY)
    at = EPOCH + 19 * years
    counts, _ = regime_counts(
        store.evidence(REPO, PATTERN, at), at, HALF_LIFE, store.recent_half_life_days
    )
    assert all(0.0 <= c < 1e-100 for c in counts)
    assert mean(posterior(store, REPO, PATTERN, at)) == pytest.approx(0.5)


def test_the_floor_keeps_the_recent_half_life_in_the_float_range() -> None:
    assert InMemoryScoreStore(30.0).recent_half_life_days == 7.5
    assert InMemoryScoreStore(7.0).recent_half_life_days == 7.0  # detection off
    assert InMemoryScoreStore(365.0).recent_half_life_days == pytest.approx(91.25)
