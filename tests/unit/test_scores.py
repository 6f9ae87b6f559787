from __future__ import annotations

import itertools
import math
import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import memory.scores as scores_module
from memory.scores import (
    DAY,
    EPOCH,
    MAX_NAME_LEN,
    SHADOW_KEEP,
    Evidence,
    InMemoryScoreStore,
    Mute,
    NeedsRebuild,
    Prior,
    RedisScoreStore,
    ScoreStore,
    Selection,
    ShadowEntry,
    SqliteScoreStore,
    Totals,
    beta_cdf,
    beta_quantile,
    choose,
    decay_factor,
    decay_weight,
    is_muted,
    mean_and_interval,
    mutes_for,
    neighbours_differ,
    posterior,
    select,
    shrink,
    tempering,
)
from memory.types import SEVERITY_WEIGHT, Candidate

H_DAYS = 30.0
H = H_DAYS * DAY
NOW = EPOCH + 700 * DAY  # late 2025
REPO = "acme/shop"
ORG = "acme"

MakeStore = Callable[..., ScoreStore]
_ids = itertools.count()


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Builds stores of one kind; every store-level test runs against all three."""
    opened: list[ScoreStore] = []

    def make(half_life_days: float = H_DAYS) -> ScoreStore:
        store: ScoreStore
        if request.param == "memory":
            store = InMemoryScoreStore(half_life_days)
        elif request.param == "sqlite":
            store = SqliteScoreStore(tmp_path / "scores.sqlite3", half_life_days)
        else:
            url = request.getfixturevalue("redis_url")
            store = RedisScoreStore(url, half_life_days, prefix="kaizen-test")
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: MakeStore) -> ScoreStore:
    return make_store()


def feed(
    store: ScoreStore,
    accepts: int,
    rejects: int,
    *,
    repo: str = REPO,
    pattern: str = "ruff:B006",
    at: float = NOW,
) -> None:
    for _ in range(accepts):
        assert store.apply(f"s{next(_ids)}", repo, pattern, 1.0, 0.0, at)
    for _ in range(rejects):
        assert store.apply(f"s{next(_ids)}", repo, pattern, 0.0, 1.0, at)


def mean(ab: tuple[float, float]) -> float:
    return ab[0] / (ab[0] + ab[1])


def cand(key: str, pattern: str = "ruff:B006", **kw: object) -> Candidate:
    return Candidate(key=key, repo=str(kw.pop("repo", REPO)), pattern=pattern, **kw)  # type: ignore[arg-type]


# --- decay ----------------------------------------------------------------------------------


def test_decay_weight_is_a_power_of_two_of_half_lives_since_the_epoch() -> None:
    assert decay_weight(EPOCH, H) == 1.0
    assert decay_weight(EPOCH + 3 * H, H) == 8.0
    assert decay_weight(EPOCH - H, H) == 0.5
    assert decay_factor(EPOCH + 3 * H, H) == 1 / 8


def test_signal_one_half_life_old_counts_half(store: ScoreStore) -> None:
    store.apply("old", REPO, "ruff:B006", 1.0, 0.0, NOW - H)
    store.apply("new", REPO, "ruff:B006", 0.0, 1.0, NOW)
    a, b = store.counts(REPO, "ruff:B006", NOW)
    assert a == pytest.approx(0.5, rel=1e-12)
    assert b == pytest.approx(1.0, rel=1e-12)
    # ...and a quarter one half-life later
    assert store.counts(REPO, "ruff:B006", NOW + H)[0] == pytest.approx(0.25, rel=1e-12)


def test_order_of_signals_does_not_matter() -> None:
    times = [NOW - 90 * DAY, NOW - 3 * DAY, NOW - 41 * DAY, NOW]
    first, second = InMemoryScoreStore(H_DAYS), InMemoryScoreStore(H_DAYS)
    for i, t in enumerate(times):
        first.apply(f"s{i}", REPO, "ruff:E501", 1.0, 0.3, t)
    for i, t in reversed(list(enumerate(times))):
        second.apply(f"s{i}", REPO, "ruff:E501", 1.0, 0.3, t)
    assert first.counts(REPO, "ruff:E501", NOW) == pytest.approx(
        second.counts(REPO, "ruff:E501", NOW), rel=1e-12
    )


@pytest.mark.parametrize("days", [0.5, 1.0, 6.9, 0, -30, float("nan"), float("inf"), 4000])
def test_half_life_outside_the_safe_range_is_refused(days: float) -> None:
    with pytest.raises(ValueError, match="half_life_days"):
        InMemoryScoreStore(days)


def test_times_beyond_float64_range_are_refused_not_overflowed(store: ScoreStore) -> None:
    far = EPOCH + 961 * H
    with pytest.raises(ValueError, match="half-lives"):
        store.apply("far", REPO, "ruff:B006", 1.0, 0.0, far)
    with pytest.raises(ValueError, match="half-lives"):
        store.counts(REPO, "ruff:B006", far)
    assert store.applied_count() == 0


# --- applying signals -----------------------------------------------------------------------


def test_a_signal_counts_in_repo_org_and_global_scopes(store: ScoreStore) -> None:
    store.apply("s1", REPO, "ruff:B006", 1.0, 0.0, NOW)
    store.apply("s2", "acme/api", "ruff:B006", 0.0, 1.0, NOW)
    store.apply("s3", "other/x", "ruff:B006", 0.0, 0.5, NOW)
    assert store.counts(REPO, "ruff:B006", NOW) == pytest.approx((1.0, 0.0))
    assert store.counts(ORG, "ruff:B006", NOW) == pytest.approx((1.0, 1.0))
    assert store.counts("*", "ruff:B006", NOW) == pytest.approx((1.0, 1.5))
    assert store.patterns(ORG) == ["ruff:B006"]
    assert store.totals("*", "ruff:B006") == Totals(3, 1.0, 1.5)


def test_the_same_signal_applied_five_times_counts_once(store: ScoreStore) -> None:
    results = [store.apply("reaction:42", REPO, "ruff:B006", 1.0, 0.0, NOW) for _ in range(5)]
    assert results == [True, False, False, False, False]
    assert store.counts(REPO, "ruff:B006", NOW) == pytest.approx((1.0, 0.0))
    assert store.counts("*", "ruff:B006", NOW) == pytest.approx((1.0, 0.0))
    assert store.totals(REPO, "ruff:B006") == Totals(1, 1.0, 0.0)
    assert store.applied_count() == 1


def test_a_retracted_signal_leaves_the_evidence_as_if_it_never_came(store: ScoreStore) -> None:
    store.apply("reaction:1", REPO, "ruff:B006", 1.0, 0.0, NOW - 3 * DAY)
    store.apply("reaction:2", REPO, "ruff:B006", 0.0, 1.0, NOW - DAY)
    before = store.evidence(REPO, "ruff:B006", NOW)
    store.apply("reaction:3", REPO, "ruff:B006", 1.0, 0.0, NOW - 2 * DAY)
    assert store.retract("reaction:3", REPO, "ruff:B006", 1.0, 0.0, NOW - 2 * DAY)
    for scope in (REPO, ORG, "*"):
        after = store.evidence(scope, "ruff:B006", NOW)
        assert after.long == pytest.approx(before.long, abs=1e-12)
        assert after.recent == pytest.approx(before.recent, abs=1e-12)
        assert after.last == before.last
        assert store.totals(scope, "ruff:B006") == Totals(2, 1.0, 1.0)


def test_a_retraction_counts_once_and_never_goes_below_nothing(store: ScoreStore) -> None:
    store.apply("reaction:7", REPO, "ruff:B006", 1.0, 0.0, NOW)
    results = [store.retract("reaction:7", REPO, "ruff:B006", 1.0, 0.0, NOW) for _ in range(4)]
    assert results == [True, False, False, False]
    assert store.counts(REPO, "ruff:B006", NOW) == (0.0, 0.0)
    assert store.evidence(REPO, "ruff:B006", NOW).last is None
    assert store.totals(REPO, "ruff:B006").n == 0
    with pytest.raises(ValueError, match="alpha"):
        store.retract("reaction:8", REPO, "ruff:B006", -1.0, 0.0, NOW)


def test_unknown_pattern_has_no_evidence(store: ScoreStore) -> None:
    assert store.counts(REPO, "never:seen", NOW) == (0.0, 0.0)
    assert store.totals(REPO, "never:seen") == Totals()
    assert store.patterns(REPO) == []


@pytest.mark.parametrize(
    "pattern",
    ["", "   ", "x" * (MAX_NAME_LEN + 1), "ruff:\nB006", " ruff:B006", "ruff:*", "a*b"],
)
def test_malformed_patterns_are_rejected_not_stored(store: ScoreStore, pattern: str) -> None:
    with pytest.raises(ValueError, match="pattern"):
        store.apply("s1", REPO, pattern, 1.0, 0.0, NOW)
    assert store.applied_count() == 0
    assert store.patterns("*") == []
    assert store.snapshot() == {}


def test_longest_allowed_pattern_is_stored(store: ScoreStore) -> None:
    pattern = "llm:" + "x" * (MAX_NAME_LEN - 4)
    assert store.apply("s1", REPO, pattern, 1.0, 0.0, NOW)
    assert store.patterns(REPO) == [pattern]


@pytest.mark.parametrize("repo", ["", "acme", "*", "acme/", "/shop", "acme/sh op", "a/b/c"])
def test_malformed_repos_are_rejected(store: ScoreStore, repo: str) -> None:
    with pytest.raises(ValueError, match="repo"):
        store.apply("s1", repo, "ruff:B006", 1.0, 0.0, NOW)
    assert store.applied_count() == 0


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf"), 1000.0])
def test_bad_weights_are_rejected(store: ScoreStore, weight: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        store.apply("s1", REPO, "ruff:B006", weight, 0.0, NOW)
    assert store.applied_count() == 0


def test_snapshot_and_replace_all_round_trip(store: ScoreStore) -> None:
    store.apply("s1", REPO, "ruff:B006", 1.0, 0.0, NOW)
    store.apply("s2", REPO, "ruff:E501", 0.0, 1.0, NOW)
    weight = store.decay_weight(NOW)
    assert store.snapshot()[(REPO, "ruff:B006")] == pytest.approx((weight, 0.0))

    sums = {(REPO, "llm:naming"): (2.0, 3.0), ("*", "llm:naming"): (2.0, 3.0)}
    store.replace_all(sums, ["x1", "x2"])
    assert store.snapshot() == sums
    assert store.applied_count() == 2
    assert not store.apply("x1", REPO, "llm:naming", 1.0, 0.0, NOW)  # ids were replaced too
    assert store.apply("s1", REPO, "ruff:B006", 1.0, 0.0, NOW)
    # report counters are kept unless given
    assert store.totals(REPO, "ruff:E501") == Totals(1, 0.0, 1.0)
    store.replace_all(sums, [], totals={(REPO, "llm:naming"): Totals(5, 2.0, 3.0)})
    assert store.totals(REPO, "ruff:E501") == Totals()
    assert store.totals(REPO, "llm:naming") == Totals(5, 2.0, 3.0)


def test_recent_evidence_has_the_shorter_half_life_and_the_newest_time(
    store: ScoreStore,
) -> None:
    h = store.recent_half_life_days * DAY
    assert store.recent_half_life_days == H_DAYS / 4
    store.apply("old", REPO, "ruff:B006", 1.0, 0.0, NOW - h)
    store.apply("new", REPO, "ruff:B006", 0.0, 1.0, NOW)
    evidence = store.evidence(REPO, "ruff:B006", NOW)
    assert evidence.recent == pytest.approx((0.5, 1.0), rel=1e-12)
    assert evidence.long == pytest.approx(store.counts(REPO, "ruff:B006", NOW), rel=1e-12)
    assert evidence.last == NOW
    assert store.evidence("*", "ruff:B006", NOW).last == NOW
    # a signal that happened earlier but arrives late does not move the newest time
    store.apply("late", "acme/api", "ruff:B006", 1.0, 0.0, NOW - 3 * DAY)
    assert store.evidence(ORG, "ruff:B006", NOW).last == NOW
    assert store.evidence("acme/api", "ruff:B006", NOW).last == NOW - 3 * DAY
    assert store.evidence(REPO, "never:seen", NOW) == Evidence()


def test_replace_all_sets_the_recent_sums_or_clears_them(store: ScoreStore) -> None:
    store.apply("s1", REPO, "ruff:B006", 1.0, 0.0, NOW)
    assert set(store.recent_snapshot()) == {
        (REPO, "ruff:B006"),
        (ORG, "ruff:B006"),
        ("*", "ruff:B006"),
    }
    sums = {(REPO, "llm:naming"): (2.0, 3.0)}
    store.replace_all(sums, ["s1"])
    assert store.recent_snapshot() == {}
    recent = {(REPO, "llm:naming"): (1.0, 2.5, NOW - DAY)}
    store.replace_all(sums, ["s1"], recent=recent)
    assert store.recent_snapshot() == recent
    assert store.evidence(REPO, "llm:naming", NOW).last == NOW - DAY


def test_in_memory_store_is_thread_safe() -> None:
    store = InMemoryScoreStore(H_DAYS)

    def work(worker: int) -> None:
        for i in range(500):
            store.apply(f"w{worker}-{i}", REPO, f"p:{i % 5}", 1.0, 0.5, EPOCH + (i % 3) * H)
            store.apply(f"shared-{i % 50}", REPO, "p:0", 1.0, 0.0, EPOCH)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.applied_count() == 8 * 500 + 50
    assert sum(store.totals("*", f"p:{k}").n for k in range(5)) == 8 * 500 + 50


# --- persistence and the half-life ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_reopening_with_another_half_life_needs_a_rebuild(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    def open_store(days: float) -> ScoreStore:
        if kind == "sqlite":
            return SqliteScoreStore(tmp_path / "s.sqlite3", days)
        return RedisScoreStore(request.getfixturevalue("redis_url"), days, prefix="kaizen-test")

    first = open_store(30.0)
    first.apply("s1", REPO, "ruff:B006", 1.0, 0.0, NOW)
    first.close()

    again = open_store(30.0)  # same half-life: keeps working
    assert again.counts(REPO, "ruff:B006", NOW) == pytest.approx((1.0, 0.0))
    again.close()

    other = open_store(60.0)
    with pytest.raises(NeedsRebuild, match="30 days"):
        other.counts(REPO, "ruff:B006", NOW)
    with pytest.raises(NeedsRebuild):
        other.apply("s2", REPO, "ruff:B006", 1.0, 0.0, NOW)
    assert other.snapshot()  # a rebuild can still compare against the old sums
    other.replace_all({(REPO, "ruff:B006"): (other.decay_weight(NOW), 0.0)}, ["s1"])
    assert other.counts(REPO, "ruff:B006", NOW) == pytest.approx((1.0, 0.0))
    assert other.apply("s2", REPO, "ruff:B006", 1.0, 0.0, NOW)
    other.close()


# --- posterior --------------------------------------------------------------------------------


def test_repo_without_data_gets_exactly_the_org_mean(store: ScoreStore) -> None:
    feed(store, 30, 10, repo="acme/api")
    gm = 1 / 2  # nobody outside acme: the prior
    om = (30 + 2 * gm) / (40 + 2)
    assert mean(posterior(store, "acme/new", "ruff:B006", NOW)) == pytest.approx(om)
    assert sum(posterior(store, "acme/new", "ruff:B006", NOW)) == pytest.approx(2.0)


def test_the_only_repo_counts_each_signal_once(store: ScoreStore) -> None:
    # repo, org and global hold the same evidence: shrinking towards them would count it
    # three times; the posterior is the plain Beta(1 + accepts, 1 + rejects)
    feed(store, 30, 10)
    assert posterior(store, REPO, "ruff:B006", NOW) == pytest.approx((31.0, 11.0))


def test_shrinks_towards_the_other_repos_evidence_only(store: ScoreStore) -> None:
    feed(store, 30, 10, repo="acme/api")
    feed(store, 2, 8)  # REPO, also in acme
    feed(store, 1, 9, repo="other/x")
    gm = (1 + 1) / (2 + 10)  # prior + other/x only
    om = (30 + 2 * gm) / (40 + 2)  # acme/api only
    assert posterior(store, REPO, "ruff:B006", NOW) == pytest.approx((2 + 2 * om, 8 + 2 * (1 - om)))


def test_org_without_data_gets_the_global_mean(store: ScoreStore) -> None:
    feed(store, 8, 2, repo="other/x")
    gm = (1 + 8) / (2 + 10)
    assert mean(posterior(store, "newco/app", "ruff:B006", NOW)) == pytest.approx(gm)


def test_never_seen_pattern_gets_the_prior() -> None:
    store = InMemoryScoreStore(H_DAYS)
    assert posterior(store, REPO, "never:seen", NOW) == pytest.approx((1.0, 1.0))
    prior = Prior(alpha=3.0, beta=1.0, strength=4.0)
    assert mean(posterior(store, REPO, "never:seen", NOW, prior)) == pytest.approx(0.75)


def test_repo_with_much_data_follows_its_own_rate() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 300, 0, repo="acme/api")  # the org loves it...
    feed(store, 20, 180, repo="acme/legacy")  # ...this repo does not
    assert mean(posterior(store, "acme/legacy", "ruff:B006", NOW)) == pytest.approx(0.1, abs=0.02)
    assert mean(posterior(store, "acme/new", "ruff:B006", NOW)) > 0.6


def test_shrink_is_pure_and_prior_validated() -> None:
    assert shrink((0, 0), (0, 0), (0, 0)) == (1.0, 1.0)
    # the same signals in another summation order: never negative evidence
    assert shrink((3.0, 1.0), (3.0 - 1e-15, 1.0), (3.0, 1.0 - 1e-15)) == pytest.approx((4.0, 2.0))
    with pytest.raises(ValueError):
        Prior(strength=0)
    with pytest.raises(ValueError):
        Prior(confidence=-1.0)
    with pytest.raises(ValueError):
        Prior(confidence=True)
    assert Prior(confidence=0.0).confidence == 0.0


def test_mean_and_interval_closed_forms() -> None:
    m, lo, hi = mean_and_interval(1.0, 1.0, 0.9)  # uniform
    assert (m, lo, hi) == pytest.approx((0.5, 0.05, 0.95), abs=1e-12)
    m, lo, hi = mean_and_interval(2.0, 1.0, 0.9)  # CDF x^2
    assert (m, lo, hi) == pytest.approx((2 / 3, math.sqrt(0.05), math.sqrt(0.95)), abs=1e-12)
    with pytest.raises(ValueError):
        mean_and_interval(0.0, 1.0)


def test_quantile_of_a_sharp_beta_does_not_divide_by_zero() -> None:
    # the starting point's density underflows to 0 for such shapes: bisect, don't divide
    x = beta_quantile(0.2479576688970051, 394.15999620029754, 222.0474966961269)
    assert beta_cdf(x, 394.15999620029754, 222.0474966961269) == pytest.approx(0.24796, abs=1e-4)


def test_beta_functions_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for a, b in [(0.04, 3.96), (0.5, 0.5), (2.0, 11.0), (7.3, 2.1), (300.0, 900.0)]:
        for p in [0.001, 0.05, 0.5, 0.9]:
            assert beta_quantile(p, a, b) == pytest.approx(stats.beta.ppf(p, a, b), rel=1e-9)
            x = stats.beta.ppf(p, a, b)
            assert beta_cdf(x, a, b) == pytest.approx(p, abs=1e-10)


# --- selection --------------------------------------------------------------------------------


def run(store: ScoreStore, candidates: list[Candidate], seed: int = 0, **kw: object) -> Selection:
    kw.setdefault("budget", 10)
    return select(candidates, store=store, now=NOW, rng=random.Random(seed), **kw)  # type: ignore[arg-type]


def reasons(selection: Selection) -> dict[str, str]:
    return {d.candidate.key: d.reason for d in selection.posted + selection.suppressed}


def test_pattern_accepted_long_ago_and_rejected_lately_is_suppressed() -> None:
    decayed = InMemoryScoreStore(30.0)
    undecayed = InMemoryScoreStore(3650.0)
    for store in (decayed, undecayed):
        feed(store, 20, 0, at=NOW - 300 * DAY)
        for day in range(0, 30, 3):
            feed(store, 0, 1, at=NOW - day * DAY)
    assert mean(posterior(undecayed, REPO, "ruff:B006", NOW)) > 0.6  # without decay: liked
    assert mean(posterior(decayed, REPO, "ruff:B006", NOW)) < 0.15
    for seed in range(20):
        selection = run(decayed, [cand("c1")], seed)
        assert reasons(selection) == {"c1": "learned"}


def test_security_is_never_suppressed_by_learning_nor_budget() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 0, 50, pattern="secrets:aws-key")
    feed(store, 50, 0, pattern="ruff:B006")
    candidates = [cand("k", "secrets:aws-key", severity="security"), cand("b", "ruff:B006")]
    for seed in range(20):
        selection = run(store, candidates, seed, budget=0)
        assert [d.candidate.key for d in selection.posted] == ["k"]
        assert selection.posted[0].reason == "security"
        assert reasons(selection)["b"] == "budget"


@pytest.mark.parametrize(
    ("mute", "pattern"),
    [
        (Mute(REPO, "ruff:B006", "alice", NOW), "ruff:B006"),
        (Mute(ORG, "ruff:B006", "alice", NOW), "ruff:B006"),
        (Mute(REPO, "ruff:*", "alice", NOW), "ruff:E501"),
        (Mute(ORG, "secrets:*", "alice", NOW), "secrets:aws-key"),
        (Mute("*", "secrets:aws-key", "ops", NOW), "secrets:aws-key"),
    ],
)
def test_muted_is_never_posted_even_security(mute: Mute, pattern: str) -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 50, 0, pattern=pattern)
    for severity in ("medium", "security"):
        selection = run(store, [cand("c", pattern, severity=severity)], mutes=[mute])
        assert selection.posted == []
        assert reasons(selection) == {"c": "muted"}


def test_mutes_of_other_repos_and_orgs_and_other_families_do_not_apply() -> None:
    mutes = [
        Mute("acme/other", "ruff:B006", "a", NOW),
        Mute("globex", "ruff:*", "a", NOW),
        Mute(REPO, "ruff:E*", "a", NOW),
        Mute(REPO, "ruff:B00", "a", NOW),
    ]
    assert not is_muted("ruff:B006", REPO, mutes)
    assert is_muted("ruff:E501", REPO, mutes)


def test_store_keeps_mutes_per_scope(store: ScoreStore) -> None:
    store.mute(REPO, "ruff:*", by="alice", at=NOW)
    store.mute(ORG, "llm:naming", by="bob", at=NOW + 1)
    store.mute("globex", "llm:naming", by="carol", at=NOW)
    assert store.mutes(REPO) == [Mute(REPO, "ruff:*", "alice", NOW)]
    assert mutes_for(store, REPO) == [
        Mute(REPO, "ruff:*", "alice", NOW),
        Mute(ORG, "llm:naming", "bob", NOW + 1),
    ]
    assert is_muted("ruff:B006", REPO, mutes_for(store, REPO))
    assert not is_muted("ruff:B006", "acme/api", mutes_for(store, "acme/api"))
    assert store.unmute(REPO, "ruff:*")
    assert not store.unmute(REPO, "ruff:*")
    assert not is_muted("ruff:B006", REPO, mutes_for(store, REPO))
    with pytest.raises(ValueError, match="every finding"):
        store.mute(REPO, "*", by="alice", at=NOW)


def test_budget_keeps_the_highest_scores() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 40, 0)
    candidates = [cand(f"c{i}", severity="medium") for i in range(5)]
    candidates += [cand("hi", severity="high"), cand("info", severity="info")]
    selection = run(store, candidates, budget=3)
    assert len(selection.posted) == 3
    assert [d.reason for d in selection.posted] == ["selected"] * 3
    assert {d.reason for d in selection.suppressed} == {"budget"}
    posted_scores = [d.score for d in selection.posted]
    assert posted_scores == sorted(posted_scores, reverse=True)
    assert min(posted_scores) >= max(d.score for d in selection.suppressed)
    assert "hi" in {d.candidate.key for d in selection.posted}  # weight 1.5 beats 1.0
    for d in selection.posted + selection.suppressed:
        assert d.score == pytest.approx(d.sampled * SEVERITY_WEIGHT[d.candidate.severity])


def test_selection_is_deterministic_for_a_seed() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 3, 3)
    candidates = [cand(f"c{i}") for i in range(8)]
    assert run(store, candidates, seed=7, budget=2) == run(store, candidates, seed=7, budget=2)
    assert run(store, candidates, seed=7, budget=2) != run(store, candidates, seed=8, budget=2)


def test_shadow_log_keeps_the_sampled_scores(store: ScoreStore) -> None:
    feed(store, 0, 30, pattern="llm:naming")
    feed(store, 30, 0)
    candidates = [cand("n1", "llm:naming"), cand("b1"), cand("b2")]
    selection = run(store, candidates, budget=1)
    assert {d.reason for d in selection.suppressed} == {"learned", "budget"}
    for entry in selection.shadow_entries(NOW):
        store.log_shadow(entry)
    logged = store.shadow(REPO)
    expected = [
        ShadowEntry(REPO, d.candidate.pattern, d.candidate.key, d.sampled, d.reason, NOW)
        for d in reversed(selection.suppressed)
    ]
    assert logged == expected  # newest first, sampled θ kept exactly
    assert all(0.0 <= e.sampled < 1.0 for e in logged)
    assert store.shadow("acme/api") == []


def test_shadow_log_is_bounded_per_repo(store: ScoreStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scores_module, "SHADOW_KEEP", 3)
    for i in range(5):
        store.log_shadow(ShadowEntry(REPO, "ruff:B006", f"k{i}", 0.1, "learned", NOW + i))
    assert [e.key for e in store.shadow(REPO)] == ["k4", "k3", "k2"]
    assert [e.key for e in store.shadow(REPO, limit=1)] == ["k4"]
    assert SHADOW_KEEP == 1000


def test_shadow_entries_are_validated(store: ScoreStore) -> None:
    with pytest.raises(ValueError, match="reason"):
        store.log_shadow(ShadowEntry(REPO, "ruff:B006", "k", 0.1, "whim", NOW))
    with pytest.raises(ValueError, match="pattern"):
        store.log_shadow(ShadowEntry(REPO, "", "k", 0.1, "learned", NOW))


def test_neighbour_rejections_hold_back_a_liked_pattern() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 20, 0)
    for seed in range(20):
        alone = run(store, [cand("c")], seed)
        near_rejected = run(store, [cand("c", neighbour_rejects=60.0)], seed)
        assert reasons(alone) == {"c": "selected"}
        assert reasons(near_rejected) == {"c": "neighbours"}


def test_neighbour_acceptances_favour_a_disliked_pattern() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 0, 20)
    for seed in range(20):
        alone = run(store, [cand("c")], seed)
        near_accepted = run(store, [cand("c", neighbour_accepts=60.0)], seed)
        assert reasons(alone) == {"c": "learned"}
        assert reasons(near_accepted) == {"c": "selected"}


def test_too_few_neighbours_are_ignored() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 20, 0)  # liked: two rejections of comments like it would be news

    def outcome(selection: Selection) -> list[tuple[float, str]]:
        return [(d.sampled, d.reason) for d in selection.posted + selection.suppressed]

    for seed in range(10):
        alone = run(store, [cand("c")], seed)
        two_votes = run(store, [cand("c", neighbour_rejects=2.0)], seed, min_neighbours=2)
        one_vote = run(store, [cand("c", neighbour_rejects=1.0)], seed, min_neighbours=2)
        assert outcome(one_vote) == outcome(alone)  # the pattern score decides
        assert outcome(two_votes)[0][0] < outcome(alone)[0][0]  # enough votes: they count


def test_votes_in_line_with_the_pattern_are_not_counted_twice() -> None:
    # the neighbours' signals are already in the pattern's evidence: adding them again
    # would make a 50/50 pattern look surer than the team ever said it was
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 5, 5)
    for seed in range(10):
        alone = run(store, [cand("c")], seed)
        in_line = run(store, [cand("c", neighbour_accepts=2.0, neighbour_rejects=2.0)], seed)
        three_rejects = run(store, [cand("c", neighbour_rejects=3.0)], seed)  # < 2 s.e.
        five_rejects = run(store, [cand("c", neighbour_rejects=5.0)], seed)  # > 2 s.e.
        (base,) = alone.posted + alone.suppressed
        assert [d.sampled for d in in_line.posted + in_line.suppressed] == [base.sampled]
        assert [d.sampled for d in three_rejects.posted + three_rejects.suppressed] == [
            base.sampled
        ]
        assert reasons(five_rejects) == {"c": "neighbours"}


def test_the_old_rule_adds_every_vote_to_the_pattern() -> None:
    store = InMemoryScoreStore(H_DAYS)
    feed(store, 5, 5)
    alone = run(store, [cand("c")], 1)
    added = run(store, [cand("c", neighbour_rejects=3.0)], 1, neighbour_z=None)
    assert (added.posted + added.suppressed)[0].sampled < (alone.posted + alone.suppressed)[
        0
    ].sampled


@pytest.mark.parametrize(
    ("a", "b", "accepts", "rejects", "differ"),
    [
        (20.0, 20.0, 0.0, 0.0, False),  # no votes
        (20.0, 20.0, 2.0, 2.0, False),  # same share as the pattern
        (20.0, 20.0, 0.0, 3.0, False),  # 0 of 3 against 1/2: 1.7 standard errors
        (20.0, 20.0, 0.0, 5.0, True),  # 0 of 5: 2.2
        (40.0, 2.0, 0.0, 2.0, True),  # a pattern liked 95 %: two rejections are news
        (2.0, 40.0, 3.0, 0.0, True),  # and three acceptances of one disliked
    ],
)
def test_neighbours_differ_by_standard_errors(
    a: float, b: float, accepts: float, rejects: float, differ: bool
) -> None:
    assert neighbours_differ(a, b, accepts, rejects, 2.0) is differ


def test_unknown_pattern_is_offered() -> None:
    # the prior mean 1/2 is on the line: optimistic sampling offers it every time, so it
    # gathers evidence at once; plain tempered sampling offered it about half the time
    store = InMemoryScoreStore(H_DAYS)

    def posted(**kw: object) -> int:
        return sum(
            len(run(store, [cand("c", "brand:new")], seed, **kw).posted) for seed in range(200)
        )

    assert posted() == 200
    assert 60 < posted(optimistic=False) < 140


def test_optimistic_sampling_never_holds_back_a_favoured_pattern() -> None:
    # Beta(13, 12): mean 0.52, just above the line; tempered draws fall below it often
    posteriors = {(REPO, "ruff:B006"): (13.0, 12.0)}
    plain_held = 0
    for seed in range(300):
        optimistic = choose(
            [cand("c")], posteriors, rng=random.Random(seed), budget=5, confidence=256.0
        )
        assert reasons(optimistic) == {"c": "selected"}
        assert optimistic.posted[0].sampled >= 0.52
        plain = choose(
            [cand("c")],
            posteriors,
            rng=random.Random(seed),
            budget=5,
            optimistic=False,
            confidence=256.0,
        )
        plain_held += not plain.posted
        # the same uniform: optimism only ever raises θ
        assert optimistic.posted[0].sampled >= (plain.posted + plain.suppressed)[0].sampled
    assert 30 < plain_held < 150
    # below the line it changes nothing: the same draws decide the try-outs
    below = {(REPO, "ruff:B006"): (12.0, 13.0)}
    for seed in range(100):
        a = choose([cand("c")], below, rng=random.Random(seed), budget=5)
        b = choose([cand("c")], below, rng=random.Random(seed), budget=5, optimistic=False)
        assert reasons(a) == reasons(b)
    with pytest.raises(ValueError, match="optimistic"):
        choose([cand("c")], posteriors, rng=random.Random(0), budget=5, optimistic=1)  # type: ignore[arg-type]


def test_confidence_samples_around_the_mean() -> None:
    # Beta(3, 5): mean 0.375, so plain Thompson sampling posts it ~23 % of the time;
    # tempered by confidence 256 it is a sure "no", and confidence 0 is plain sampling
    posteriors = {(REPO, "ruff:B006"): (3.0, 5.0)}

    def posted(confidence: float) -> int:
        return sum(
            len(
                choose(
                    [cand("c")],
                    posteriors,
                    rng=random.Random(seed),
                    budget=5,
                    confidence=confidence,
                ).posted
            )
            for seed in range(300)
        )

    assert 40 < posted(0.0) < 100
    assert posted(256.0) == 0
    near = {(REPO, "ruff:B006"): (9.5, 10.5)}  # mean 0.475: still tried now and then
    tried = sum(
        len(choose([cand("c")], near, rng=random.Random(seed), budget=5, confidence=256.0).posted)
        for seed in range(300)
    )
    assert 30 < tried < 150


def test_tempering_grows_with_the_signals_a_pattern_has_had() -> None:
    prior = Prior(confidence=1500.0, confidence_signals=15.0)
    assert tempering(0, prior) == 0.0  # never judged: the plain posterior
    assert tempering(3, prior) == pytest.approx(250.0)  # 100 per signal at first
    assert tempering(15, prior) == pytest.approx(750.0)
    assert tempering(1_000_000, prior) == pytest.approx(1500.0, rel=1e-4)
    assert tempering(-2, prior) == 0.0  # more retracted than counted (a race): none
    assert tempering(3, Prior(confidence=256.0, confidence_signals=0.0)) == 256.0  # fixed
    with pytest.raises(ValueError, match="confidence_signals"):
        Prior(confidence_signals=-1.0)
    with pytest.raises(ValueError, match="confidence_signals"):
        Prior(confidence_signals=math.nan)


def test_a_pattern_judged_on_few_signals_is_tried_again_sooner_than_one_judged_often() -> None:
    # a third accepted, the rest ignored (0.6 each): posterior means 0.476 on 3 signals
    # and 0.458 on 30, both below the line
    store = InMemoryScoreStore(H_DAYS)
    for i, (pattern, n) in enumerate((("p:few", 3), ("p:many", 30))):
        for k in range(n):
            accepted = k % 3 == 0
            store.apply(f"s{i}-{k}", REPO, pattern, float(accepted), 0.0 if accepted else 0.6, NOW)
    assert store.totals(REPO, "p:few").n == 3

    def tried(pattern: str) -> int:
        return sum(len(run(store, [cand("c", pattern)], seed).posted) for seed in range(300))

    few, many = tried("p:few"), tried("p:many")
    assert few > 20
    assert many < few / 4


def test_at_most_one_try_out_per_pr() -> None:
    # three patterns below the line but sampled above it: only the best ranked is posted
    posteriors = {
        (REPO, "p:a"): (4.0, 6.0),
        (REPO, "p:b"): (4.0, 6.0),
        (REPO, "p:c"): (4.0, 6.0),
        (REPO, "ruff:B006"): (50.0, 1.0),
    }
    candidates = [cand("a", "p:a"), cand("b", "p:b"), cand("c", "p:c"), cand("good")]
    compared = 0
    for seed in range(20):
        selection = choose(
            candidates,
            posteriors,
            rng=random.Random(seed),
            budget=5,
            confidence=0.0,
            threshold=0.0,  # every θ is above it; no mean is below it: no try-outs
        )
        assert len(selection.posted) == 4
        selection = choose(
            candidates,
            posteriors,
            rng=random.Random(seed),
            budget=5,
            confidence=0.0,
            threshold=0.41,
        )
        tries = [d for d in selection.posted if d.candidate.key != "good"]
        assert "good" in {d.candidate.key for d in selection.posted}
        assert len(tries) <= 1
        assert {d.reason for d in selection.suppressed} <= {"learned"}
        if tries:
            held = [d for d in selection.suppressed if d.sampled >= 0.41]
            compared += len(held)
            assert all(d.score <= tries[0].score for d in held)
    assert compared  # some seed held back a pattern sampled above the line
    many = choose(
        candidates,
        posteriors,
        rng=random.Random(3),
        budget=5,
        confidence=0.0,
        threshold=0.0,
        max_explore=0,
    )
    assert len(many.posted) == 4
    with pytest.raises(ValueError, match="max_explore"):
        choose(candidates, posteriors, rng=random.Random(0), budget=5, max_explore=-1)
    with pytest.raises(ValueError, match="confidence"):
        choose(candidates, posteriors, rng=random.Random(0), budget=5, confidence=math.inf)


def test_choose_is_pure_given_posteriors() -> None:
    candidates = [cand("a"), cand("b", "llm:naming")]
    posteriors = {(REPO, "ruff:B006"): (50.0, 1.0), (REPO, "llm:naming"): (1.0, 50.0)}
    selection = choose(candidates, posteriors, rng=random.Random(0), budget=5)
    assert reasons(selection) == {"a": "selected", "b": "learned"}


@pytest.mark.parametrize(
    ("candidate", "match"),
    [
        (cand("c", "x" * 500), "pattern"),
        (cand("c", ""), "pattern"),
        (cand("c", severity="critical"), "severity"),
        (cand("c", repo="acme"), "repo"),
        (cand("c", neighbour_accepts=-1.0), "neighbour_accepts"),
    ],
)
def test_malformed_candidates_are_rejected(candidate: Candidate, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run(InMemoryScoreStore(H_DAYS), [candidate])


def test_duplicate_candidate_keys_and_bad_budget_are_rejected() -> None:
    store = InMemoryScoreStore(H_DAYS)
    with pytest.raises(ValueError, match="twice"):
        run(store, [cand("c"), cand("c")])
    with pytest.raises(ValueError, match="budget"):
        run(store, [cand("c")], budget=-1)


# --- a renamed or transferred repository keeps what was learned ------------------------------

SIGNALS = [  # (repo, pattern, alpha, beta, days before NOW)
    (REPO, "ruff:B006", 1.0, 0.0, 90),
    (REPO, "ruff:B006", 0.0, 0.6, 20),
    (REPO, "llm:naming", 0.0, 1.0, 3),
    ("acme/api", "ruff:B006", 1.0, 0.0, 10),  # another repo of the old org stays put
    ("globex/web", "llm:naming", 1.0, 0.0, 5),  # the new org's own evidence
]


def replay(store: ScoreStore, rename: dict[str, str] | None = None) -> None:
    for i, (repo, pattern, alpha, beta, days) in enumerate(SIGNALS):
        repo = (rename or {}).get(repo, repo)
        assert store.apply(f"m{i}", repo, pattern, alpha, beta, NOW - days * DAY)


def scores_by_scope(store: ScoreStore) -> dict[tuple[str, str], tuple[float, ...]]:
    out: dict[tuple[str, str], tuple[float, ...]] = {}
    for scope in (REPO, "acme/store", "globex/shop", "acme/api", "acme", "globex", "*"):
        for pattern in store.patterns(scope):
            ev = store.evidence(scope, pattern, NOW)
            t = store.totals(scope, pattern)
            out[(scope, pattern)] = (*ev.long, *ev.recent, ev.last or 0.0, t.n, t.alpha, t.beta)
    return out


@pytest.mark.parametrize("new", ["acme/store", "globex/shop"])
def test_a_moved_repo_scores_as_if_it_always_had_its_new_name(
    make_store: MakeStore, new: str
) -> None:
    moved, direct = make_store(), InMemoryScoreStore(H_DAYS)
    replay(moved)
    replay(direct, {REPO: new})
    assert moved.move_repo(REPO, new) == 2
    got, want = scores_by_scope(moved), scores_by_scope(direct)
    assert got.keys() == want.keys()  # the old name is gone; an emptied org lists nothing
    for key, values in want.items():
        assert got[key] == pytest.approx(values, rel=1e-9, abs=1e-12), key
    assert moved.evidence("*", "ruff:B006", NOW) == direct.evidence("*", "ruff:B006", NOW)


def test_moving_merges_with_evidence_already_under_the_new_name(store: ScoreStore) -> None:
    feed(store, 4, 0)
    feed(store, 0, 2, repo="acme/store")  # a review after the rename, before the event
    store.move_repo(REPO, "acme/store")
    assert store.counts("acme/store", "ruff:B006", NOW) == pytest.approx((4.0, 2.0))
    assert store.totals("acme/store", "ruff:B006") == Totals(6, 4.0, 2.0)
    assert store.counts("acme", "ruff:B006", NOW) == pytest.approx((4.0, 2.0))


def test_moving_twice_changes_nothing_more(store: ScoreStore) -> None:
    replay(store)
    assert store.move_repo(REPO, "globex/shop") == 2
    before = (store.snapshot(), store.recent_snapshot())
    assert store.move_repo(REPO, "globex/shop") == 0
    assert store.move_repo("globex/shop", "globex/shop") == 0
    assert (store.snapshot(), store.recent_snapshot()) == before


def test_mutes_and_shadow_log_follow_the_repo(store: ScoreStore) -> None:
    store.mute(REPO, "ruff:E501", by="alice", at=NOW)
    store.mute(REPO, "llm:*", by="alice", at=NOW)
    store.mute("acme/store", "llm:*", by="bob", at=NOW + 1)  # already there: kept
    store.mute(ORG, "ruff:B006", by="carol", at=NOW)  # the org's own: stays with the org
    store.log_shadow(ShadowEntry(REPO, "ruff:B006", "old", 0.2, "learned", NOW - 10))
    store.log_shadow(ShadowEntry("acme/store", "ruff:B006", "new", 0.3, "budget", NOW))
    store.move_repo(REPO, "acme/store")
    assert store.mutes(REPO) == []
    assert {(m.pattern, m.by) for m in store.mutes("acme/store")} == {
        ("ruff:E501", "alice"),
        ("llm:*", "bob"),
    }
    assert [m.pattern for m in store.mutes(ORG)] == ["ruff:B006"]
    assert store.shadow(REPO) == []
    assert [(e.repo, e.key) for e in store.shadow("acme/store")] == [
        ("acme/store", "new"),
        ("acme/store", "old"),
    ]


def test_moving_needs_two_repository_names(store: ScoreStore) -> None:
    with pytest.raises(ValueError, match="repo"):
        store.move_repo("acme", "acme/store")
    with pytest.raises(ValueError, match="repo"):
        store.move_repo(REPO, "*")


# --- a forgotten repository leaves nothing behind ------------------------------------------


def test_a_forgotten_repo_scores_as_if_it_was_never_reviewed(make_store: MakeStore) -> None:
    forgotten, never = make_store(), InMemoryScoreStore(H_DAYS)
    replay(forgotten)
    for i, (repo, pattern, alpha, beta, days) in enumerate(SIGNALS):
        if repo != REPO:
            never.apply(f"m{i}", repo, pattern, alpha, beta, NOW - days * DAY)
    assert forgotten.forget_repo(REPO) == 2
    got, want = scores_by_scope(forgotten), scores_by_scope(never)
    assert got.keys() == want.keys()  # the repo is gone; its org keeps only acme/api's
    for key, values in want.items():
        # all but the newest-signal time: a maximum stays where it was, as after a retraction
        without_last = (*values[:4], *values[5:])
        assert (*got[key][:4], *got[key][5:]) == pytest.approx(without_last, rel=1e-9, abs=1e-12)
        assert got[key][4] >= values[4], key


def test_forgetting_twice_or_an_unknown_repo_changes_nothing(store: ScoreStore) -> None:
    replay(store)
    assert store.forget_repo(REPO) == 2
    before = (store.snapshot(), store.recent_snapshot())
    assert store.forget_repo(REPO) == 0
    assert store.forget_repo("nobody/here") == 0
    assert (store.snapshot(), store.recent_snapshot()) == before


def test_forgetting_drops_the_repos_mutes_and_shadow_log_only(store: ScoreStore) -> None:
    store.mute(REPO, "ruff:E501", by="alice", at=NOW)
    store.mute(ORG, "ruff:B006", by="carol", at=NOW)  # the org's own: stays with the org
    store.mute("acme/api", "llm:*", by="dan", at=NOW)
    store.log_shadow(ShadowEntry(REPO, "ruff:B006", "k", 0.2, "learned", NOW))
    store.log_shadow(ShadowEntry("acme/api", "ruff:B006", "other", 0.3, "budget", NOW))
    store.forget_repo(REPO)
    assert store.mutes(REPO) == [] and store.shadow(REPO) == []
    assert [m.pattern for m in store.mutes(ORG)] == ["ruff:B006"]
    assert [m.pattern for m in store.mutes("acme/api")] == ["llm:*"]
    assert [e.key for e in store.shadow("acme/api")] == ["other"]


def test_forgetting_needs_a_repository_name(store: ScoreStore) -> None:
    for bad in ("acme", "*", "acme/*", ""):
        with pytest.raises(ValueError, match="repo"):
            store.forget_repo(bad)
