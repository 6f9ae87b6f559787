"""The learning simulation: deterministic, fair to every policy, and measuring what it says."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest

from memory.simulation import (
    EXTRA_POLICIES,
    PLACES,
    POLICIES,
    REPO,
    VALUABLE,
    Finding,
    Kaizen,
    KaizenParams,
    Oracle,
    OracleAt,
    Trace,
    average,
    make_stream,
    make_team,
    play,
    precision_frontier,
    prs_to_recover,
    rolling_precision,
    run_simulation,
    run_simulation_with_curves,
)
from memory.types import Candidate

METRICS = {
    "precision",
    "recall",
    "security_recall",
    "regret",
    "precision_after_100",
    "prs_to_recover_after_drift",
}
SEEDS = (0, 1, 2, 3)
PRS = 200


@pytest.fixture(scope="module")
def runs() -> list[dict[str, Any]]:
    return [run_simulation(PRS, seed) for seed in SEEDS]


def test_same_seed_same_numbers_other_seed_other_numbers() -> None:
    a = run_simulation_with_curves(120, seed=7)
    b = run_simulation_with_curves(120, seed=7)
    c = run_simulation(120, seed=8)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.dumps(a[0]["policies"], sort_keys=True) != json.dumps(c["policies"], sort_keys=True)


def test_every_policy_sees_the_same_prs_and_reactions() -> None:
    one, two = make_stream(60, seed=4), make_stream(60, seed=4)
    assert one == two
    # the reaction to a finding is drawn with the PR, not by the policy that posts it
    finding = one.prs[10].findings[0]
    assert finding.signal in {"thumbs_up", "applied", "thumbs_down", "ignored"}
    assert finding.accepted == (finding.signal in {"thumbs_up", "applied"})


def test_result_has_every_policy_metric_target_and_is_json(runs: list[dict[str, Any]]) -> None:
    result, curves = run_simulation_with_curves(PRS, seed=0)
    assert result == runs[0]
    assert result["prs"] == PRS and result["seed"] == 0
    assert set(result["policies"]) == set(POLICIES)
    for metrics in result["policies"].values():
        assert metrics.keys() >= METRICS
    assert set(result["targets"]) == {
        "kaizen_regret_le_30pct_of_eps_greedy",
        "kaizen_precision_after_100_ge",
        "kaizen_security_recall_eq",
        "kaizen_recovers_within_prs",
    }
    for verdict in result["targets"].values():
        assert {"value", "target", "met"} <= verdict.keys()
        assert isinstance(verdict["met"], bool)
    assert set(curves["policies"]) == set(POLICIES)
    for curve in curves["policies"].values():
        for key in ("cumulative_regret", "rolling_precision", "posted", "accepted"):
            assert len(curve[key]) == PRS
    json.dumps(result, allow_nan=False)
    json.dumps(curves, allow_nan=False)


def test_oracle_has_no_regret_and_the_best_precision(runs: list[dict[str, Any]]) -> None:
    for r in runs:
        assert r["policies"]["oracle"]["regret"] == 0.0
        for name, m in r["policies"].items():
            assert m["regret"] >= -1e-9 or name == "post_all"  # post_all ignores the budget
    avg = average(runs)["policies"]
    for name in POLICIES:
        assert avg["oracle"]["precision"] >= avg[name]["precision"], name
        assert avg["oracle"]["expected_precision"] >= avg[name]["expected_precision"], name


def test_post_all_posts_everything(runs: list[dict[str, Any]]) -> None:
    for r in runs:
        m = r["policies"]["post_all"]
        assert m["recall"] == 1.0
        assert m["security_recall"] == 1.0
        assert m["posted_per_pr"] == pytest.approx(r["team"]["findings_per_pr"])


def test_security_findings_are_always_posted(runs: list[dict[str, Any]]) -> None:
    for r in runs:
        for name in POLICIES:
            assert r["policies"][name]["security_recall"] == 1.0, (r["seed"], name)
        assert r["targets"]["kaizen_security_recall_eq"]["met"]


def test_budgeted_policies_stay_within_budget() -> None:
    _, curves = run_simulation_with_curves(PRS, seed=1)
    stream = make_stream(PRS, seed=1)
    security = [sum(c.severity == "security" for c in pr.candidates) for pr in stream.prs]
    for name in ("eps_greedy", "eps_decay", "kaizen", "oracle"):
        posted = curves["policies"][name]["posted"]
        assert all(p <= 5 + s for p, s in zip(posted, security, strict=True)), name


def test_kaizen_learns(runs: list[dict[str, Any]]) -> None:
    avg = average(runs)["policies"]
    assert avg["kaizen"]["regret"] < avg["post_all"]["regret"]
    assert avg["kaizen"]["precision_after_100"] > avg["post_all"]["precision_after_100"] + 0.2


def test_drift_flips_preferences_both_ways_and_never_security() -> None:
    for seed in SEEDS:
        team = make_team(seed, prs=PRS)
        assert team.drift_at == PRS // 2
        lost = [p for p in team.patterns if p.p_before >= VALUABLE > p.p_after]
        gained = [p for p in team.patterns if p.p_before < VALUABLE <= p.p_after]
        assert len(lost) >= 2 and len(gained) >= 2
        assert sorted(team.flipped) == sorted(p.name for p in lost + gained)
        security = [p for p in team.patterns if p.group == "security"]
        assert security
        assert all(p.p_before == p.p_after for p in security)
        assert all(p.p_before >= 0.9 for p in security)
    # the stream really changes: flipped patterns are accepted at their new rates
    stream = make_stream(2000, seed=0)
    team = stream.team
    flipped = {i for i, p in enumerate(team.patterns) if p.flipped}
    for phase, prs in (
        ("before", stream.prs[: team.drift_at]),
        ("after", stream.prs[team.drift_at :]),
    ):
        for i in flipped:
            outcomes = [f.accepted for pr in prs for f in pr.findings if f.pattern == i]
            expected = getattr(team.patterns[i], f"p_{phase}")
            assert len(outcomes) > 30
            assert np.mean(outcomes) == pytest.approx(expected, abs=0.2), (phase, i)


def test_oracle_follows_the_drift() -> None:
    result = run_simulation(PRS, seed=2)
    assert result["policies"]["oracle"]["prs_to_recover_after_drift"] == 0
    assert result["policies"]["oracle"]["recall"] > 0.85


def test_rolling_precision_and_recovery() -> None:
    trace = Trace.empty(6)
    trace.posted[:] = [2, 2, 0, 4, 2, 2]
    trace.accepted[:] = [2, 1, 0, 2, 0, 2]
    roll = rolling_precision(trace, window=2)
    assert roll[0] == 1.0 and roll[1] == 0.75 and roll[2] == 0.5
    assert roll[3] == 0.5 and roll[4] == pytest.approx(2 / 6) and roll[5] == 0.5
    oracle = np.full(10, 0.8)
    dip = np.array([0.8, 0.8, 0.6, 0.6, 0.7, 0.76, 0.9, 0.78, 0.8, 0.8])
    assert prs_to_recover(dip, oracle, drift_at=2, window=3) == 3
    assert prs_to_recover(np.full(10, 0.79), oracle, drift_at=2, window=3) == 0
    assert prs_to_recover(np.full(10, 0.5), oracle, drift_at=2, window=3) is None


def test_kaizen_parameters_reach_the_real_code() -> None:
    loose = run_simulation(PRS, seed=0, kaizen=KaizenParams(threshold=0.3))
    strict = run_simulation(PRS, seed=0, kaizen=KaizenParams(threshold=0.9))
    assert loose["kaizen_params"]["threshold"] == 0.3
    k_loose, k_strict = loose["policies"]["kaizen"], strict["policies"]["kaizen"]
    assert k_strict["posted_per_pr"] < k_loose["posted_per_pr"]
    assert k_strict["security_recall"] == 1.0


def test_kaizen_is_the_real_memory_code_fed_every_reaction() -> None:
    from memory import scores

    stream = make_stream(80, seed=5)
    kaizen = Kaizen(KaizenParams(), seed=5)
    assert isinstance(kaizen.store, scores.InMemoryScoreStore)
    trace = play(stream, kaizen)
    # every reaction that arrived before the last PR went into the real score store, once
    last = stream.prs[-1].at
    delivered = sum(
        1
        for pr in stream.prs[:-1]
        for f in pr.findings
        if pr.at + f.delay_s <= last and f.key in kaizen.posted_keys
    )
    assert kaizen.store.applied_count() == delivered > 0
    assert trace.posted.sum() == len(kaizen.posted_keys)
    # what it learned points the right way: a style pattern below a bug pattern
    now = stream.prs[-1].at
    style_a, style_b = scores.posterior(kaizen.store, REPO, "style/line-length", now)
    bug_a, bug_b = scores.posterior(kaizen.store, REPO, "bug/null-dereference", now)
    assert style_a / (style_a + style_b) < 0.5 < bug_a / (bug_a + bug_b)


def test_extra_policies_run_alongside() -> None:
    result = run_simulation(60, seed=0, include=(*POLICIES, *EXTRA_POLICIES))
    assert set(result["policies"]) == {*POLICIES, *EXTRA_POLICIES}
    assert result["policies"]["kaizen_code_defaults"]["security_recall"] == 1.0


def test_the_chosen_parameters_are_the_codes_defaults() -> None:
    from memory import feedback, scores

    params = KaizenParams()
    default = scores.Prior()
    assert scores.Prior(**params.prior) == default
    assert params.half_life_days == scores.DEFAULT_HALF_LIFE_DAYS
    assert params.as_dict()["ignored_beta"] == feedback.DEFAULT_TABLE["ignored"].beta
    result = run_simulation(60, seed=0, include=("kaizen", "kaizen_code_defaults"))
    assert result["policies"]["kaizen"] == result["policies"]["kaizen_code_defaults"]


def test_optimism_reaches_the_real_code() -> None:
    result = run_simulation(PRS, seed=0, include=("kaizen", "kaizen_not_optimistic"))
    assert result["kaizen_params"]["optimistic"] is True
    kaizen, plain = result["policies"]["kaizen"], result["policies"]["kaizen_not_optimistic"]
    assert kaizen != plain
    assert kaizen["security_recall"] == plain["security_recall"] == 1.0


def test_the_time_scale_is_stated() -> None:
    result = run_simulation(60, seed=0, include=("kaizen",))
    assert result["time_scale"] == {
        "prs_per_day": 4.0,
        "half_life_days": 30.0,
        "half_life_prs": 120.0,
        "recovery_target_days": 25.0,
    }
    slow = run_simulation(60, seed=0, include=("kaizen",), prs_per_day=2.0)
    assert slow["time_scale"]["half_life_prs"] == 60.0
    assert slow["time_scale"]["recovery_target_days"] == 50.0
    assert average([result, result])["time_scale"] == result["time_scale"]


@pytest.fixture(scope="module")
def long_run() -> dict[str, Any]:
    include = ("kaizen", "kaizen_no_change_detection", "kaizen_undecayed_votes")
    return run_simulation(1000, seed=3, include=include)


@pytest.mark.parametrize(
    ("slower", "param", "value"),
    [
        # change detection reaches the real code and speeds recovery
        ("kaizen_no_change_detection", "change_z", 2.5),
        # votes that never fade hold back a change of mind
        ("kaizen_undecayed_votes", "neighbour_votes", "decayed"),
    ],
)
def test_what_speeds_recovery_after_the_drift(
    long_run: dict[str, Any], slower: str, param: str, value: object
) -> None:
    assert long_run["kaizen_params"][param] == value
    kaizen = long_run["policies"]["kaizen"]
    other = long_run["policies"][slower]
    assert kaizen["prs_to_recover_after_drift"] is not None
    assert other["prs_to_recover_after_drift"] is not None
    assert kaizen["prs_to_recover_after_drift"] + 100 < other["prs_to_recover_after_drift"]
    assert kaizen["regret"] < other["regret"]


def test_valuable_precision_uses_recalls_ground_truth(runs: list[dict[str, Any]]) -> None:
    for run in runs:
        assert run["policies"]["oracle"]["valuable_precision"] == 1.0
        kaizen = run["policies"]["kaizen"]
        assert kaizen["precision"] < kaizen["valuable_precision"] < 1.0


def test_oracle_at_the_default_bar_is_the_oracle() -> None:
    stream = make_stream(PRS, 0)
    plain, at_half = play(stream, Oracle()), play(stream, OracleAt(VALUABLE))
    assert np.array_equal(plain.posted, at_half.posted)
    assert np.array_equal(plain.accepted, at_half.accepted)
    with pytest.raises(ValueError, match="bar"):
        OracleAt(0.4)


def test_precision_frontier_trades_regret_for_precision() -> None:
    frontier = precision_frontier(PRS, SEEDS)
    rows = frontier["rows"]
    assert rows[0]["bar"] == VALUABLE and rows[0]["regret"] == 0.0
    for lo, hi in itertools.pairwise(rows):
        # a higher bar drops the least likely accepted findings: surer, fewer, costlier
        assert hi["expected_precision"] >= lo["expected_precision"] - 1e-12
        assert hi["recall"] <= lo["recall"] + 1e-12
        assert hi["regret"] >= lo["regret"] - 1e-9
    assert rows[-1]["expected_precision"] > rows[0]["expected_precision"] + 0.05
    cross = frontier["at_precision_target"]
    assert cross is not None
    below = [r for r in rows if r["bar"] <= cross["bar"]][-1]
    above = next(r for r in rows if r["bar"] >= cross["bar"])
    assert below["precision_after_100"] < 0.85 <= above["precision_after_100"]
    assert below["regret_ratio"] <= cross["regret_ratio"] <= above["regret_ratio"]


def test_places_spread_a_patterns_acceptance_around_its_own() -> None:
    flat, placed = make_team(0, 1000), make_team(0, 1000, context_spread=1.0)
    assert flat.patterns == placed.patterns  # the same team, only spread over places
    assert not flat.by_place_before
    weights = np.array([w for _, w in PLACES]) / sum(w for _, w in PLACES)
    for j, pt in enumerate(placed.patterns):
        for own, by_place in (
            (pt.p_before, placed.by_place_before[j]),
            (pt.p_after, placed.by_place_after[j]),
        ):
            assert float(weights @ np.array(by_place)) == pytest.approx(own, abs=1e-3)
    spreads = [max(row) - min(row) for row in placed.by_place_before]
    assert np.median(spreads) > 0.2
    with pytest.raises(ValueError, match="context_spread"):
        make_team(0, 1000, context_spread=-1.0)


def test_the_same_prs_at_every_spread_judged_by_place() -> None:
    flat, placed = make_stream(150, seed=2), make_stream(150, seed=2, context_spread=1.5)
    for a, b in zip(flat.prs, placed.prs, strict=True):
        assert [c.text for c in a.candidates] == [c.text for c in b.candidates]
        assert [f.pattern for f in a.findings] == [f.pattern for f in b.findings]
    team = placed.team
    names = [pt.name for pt in team.patterns]
    places = [name for name, _ in PLACES]
    for pr in placed.prs:
        for f, c in zip(pr.findings, pr.candidates, strict=True):
            place = places.index(c.text.removeprefix(f"{names[f.pattern]} in "))
            assert f.p == team.p_at(pr.index, f.pattern, place)
    flat_p = {f.p for pr in flat.prs for f in pr.findings}
    assert flat_p <= {pt.p_before for pt in flat.team.patterns} | {
        pt.p_after for pt in flat.team.patterns
    }


def test_neighbour_votes_fade_and_reach_the_real_selection() -> None:
    day, at = 86_400.0, 1_750_000_000.0
    c = Candidate(
        key="k",
        repo=REPO,
        pattern="bug/off-by-one",
        severity="high",
        text="bug/off-by-one in tests",
    )
    other = Candidate(key="o", repo=REPO, pattern="bug/off-by-one", text="bug/off-by-one in tools")
    judged = Finding("k", 5, 0.8, False, "thumbs_down", 3600.0)

    def votes(mode: str, days_later: float) -> list[tuple[float, float]]:
        kaizen = Kaizen(KaizenParams(neighbour_votes=mode), seed=0)
        kaizen.observe(c, judged, "s1", at)
        fresh = kaizen._with_votes([c, other], at + days_later * day)
        return [(x.neighbour_accepts, x.neighbour_rejects) for x in fresh]

    assert votes("decayed", 30.0) == [(0.0, pytest.approx(0.5)), (0.0, 0.0)]
    assert votes("decayed", 121.0) == [(0.0, 0.0), (0.0, 0.0)]  # beyond the horizon
    assert votes("undecayed", 121.0) == [(0.0, 1.0), (0.0, 0.0)]
    assert votes("off", 1.0) == [(0.0, 0.0), (0.0, 0.0)]
    with pytest.raises(ValueError, match="neighbour_votes"):
        KaizenParams(neighbour_votes="sometimes")
