"""The drift diagnosis bench: its fresh-start variant renames only the told patterns, only
from the drift on, and a short run reports every variant."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from memory.simulation import make_stream

BENCH = Path(__file__).resolve().parents[2] / "bench" / "drift_diagnosis.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("drift_diagnosis", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_told_patterns_look_new_from_the_drift_on_and_nothing_else_does() -> None:
    bench = load()
    stream = make_stream(40, 3)
    team = stream.team
    policy = bench.ToldKaizen(3, team, bench.VARIANTS["told_all"], "told_all")
    assert policy.renamed == set(team.flipped) and policy.renamed
    before, after = stream.prs[team.drift_at - 1], stream.prs[team.drift_at]
    assert before.candidates
    assert all(policy._seen(c, before.index) == c for c in before.candidates)
    for c in after.candidates:
        seen = policy._seen(c, after.index)
        assert seen.pattern == (
            f"{c.pattern}#after-drift" if c.pattern in policy.renamed else c.pattern
        )


def test_a_short_run_reports_every_variant_and_the_steady_posts() -> None:
    bench = load()
    summary = bench.summarise([bench.one_seed((400, 0))], 400)  # steady from PR 150 to 200
    assert set(summary["policies"]) == {"kaizen", *bench.VARIANTS}
    assert summary["steady"]["oracle"]["precision"] > 0.5
    assert "style" not in summary["steady"]["oracle"]["groups"]  # the oracle posts no noise
    team = make_stream(400, 0).team
    wanted = [pt for pt in team.patterns if pt.flipped and pt.p_after >= 0.5]
    assert summary["newly_wanted"]["patterns"] == len(wanted) >= 2  # style, maybe in-between
    assert summary["now_unwanted"]["patterns"] == 2  # the two bug/perf patterns
    assert 0 <= summary["noise_floor"]["seeds_straying_past_gap"] <= 1
    assert "noise floor" in bench.text(summary)
