"""Does Kaizen learn what a team wants? The learning simulation, side by side with baselines.

Runs ``memory.simulation`` (Kaizen's real ``memory.scores`` code against a simulated team
whose preferences drift halfway) for several seeds, prints a table and the targets, and
writes ``bench/results/learning_sim.json`` and ``bench/results/learning_sim.png``.

    .venv/bin/python bench/learning_sim.py [--prs 1000] [--seed 0] [--seeds 5] [--json]
                                           [--png PATH] [--threshold T] [--half-life D]
                                           [--ignored-beta B] [--prior-strength S]
                                           [--confidence C] [--confidence-signals N]
                                           [--not-optimistic]
                                           [--change-z Z|none]
                                           [--prs-per-day R] [--silent-accept-share F]
                                           [--context-spread S] [--no-extras] [--sweep]

Besides the five policies it also runs, for reference, Kaizen with the code's own defaults
(``kaizen_code_defaults``), Kaizen with plain rather than optimistic sampling
(``kaizen_not_optimistic``), Kaizen without change detection
(``kaizen_no_change_detection``), Kaizen without neighbour votes (``kaizen_no_votes``) and
with the votes' old rule (``kaizen_undecayed_votes``: every near-identical comment ever
judged added to the pattern's evidence), and ε-greedy with exploration displacing greedy
picks (``eps_greedy_explore_first``); the targets are checked for ``kaizen`` against
``eps_greedy`` only. ``--sweep`` runs Kaizen over a grid of its parameters (both CPUs).

Time scale: Kaizen forgets by the clock (half-life in days) while the targets count PRs;
``--prs-per-day`` (default 4, a PR every six hours) sets the team's pace, and the output
states what it makes of the half-life and of the 100-PR recovery target.

Place: every finding sits in a place of the repository, and Kaizen's neighbour votes come
from earlier comments on the same pattern in the same place. ``--context-spread S`` (logit
standard deviation, default 0) makes the team judge a pattern differently by place, with
the oracle knowing each place's probability.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.scores import CHANGE_Z  # noqa: E402
from memory.simulation import (  # noqa: E402
    CHOSEN_PRIOR,
    EXTRA_POLICIES,
    POLICIES,
    KaizenParams,
    average,
    precision_frontier,
    run_simulation,
    run_simulation_with_curves,
)

RESULTS = ROOT / "bench" / "results"

COLUMNS = (
    ("precision", "precision", "{:.3f}"),
    ("precision_after_100", "prec@100+", "{:.3f}"),
    ("valuable_precision", "val.prec", "{:.3f}"),
    ("recall", "recall", "{:.3f}"),
    ("security_recall", "sec.recall", "{:.3f}"),
    ("regret", "regret", "{:.1f}"),
    ("prs_to_recover_after_drift", "recover", "{}"),
    ("posted_per_pr", "posted/PR", "{:.2f}"),
)


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return "never"
    if fmt == "{}" and isinstance(value, float):
        return f"{value:.0f}"
    return fmt.format(value)


def table(policies: dict[str, dict[str, Any]]) -> str:
    width = max(11, *(len(name) + 1 for name in policies))
    head = f"{'policy':<{width}}" + "".join(f"{label:>11}" for _, label, _ in COLUMNS)
    lines = [head, "-" * len(head)]
    for name, m in policies.items():
        cells = "".join(f"{_cell(m.get(key), fmt):>11}" for key, _, fmt in COLUMNS)
        lines.append(f"{name:<{width}}{cells}")
    return "\n".join(lines)


def targets_text(targets: dict[str, dict[str, Any]]) -> str:
    lines = []
    for name, t in targets.items():
        value = t["value"]
        shown = "never" if value is None else f"{value:.3g}"
        extra = f"  ({t['seeds_met']}/{t['seeds']} seeds)" if "seeds" in t else ""
        verdict = "MET" if t["met"] else "NOT MET"
        lines.append(f"  {name:<40} {shown:>8} (target {t['target']})  {verdict}{extra}")
    return "\n".join(lines)


def mean_curves(all_curves: list[dict[str, Any]]) -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, np.ndarray]] = {}
    for name in all_curves[0]["policies"]:
        out[name] = {}
        for key in ("cumulative_regret", "rolling_precision"):
            rows = [
                np.array([np.nan if v is None else v for v in c["policies"][name][key]])
                for c in all_curves
            ]
            out[name][key] = np.nanmean(np.vstack(rows), axis=0)
    return out


def frontier_text(frontier: dict[str, Any]) -> str:
    """The precision an omniscient policy buys with regret: what the targets allow at all."""
    lines = [
        f"precision frontier (oracle posting only findings accepted >= bar; seeds"
        f" {frontier['seeds'][0]}-{frontier['seeds'][-1]})",
        f"{'bar':>6}{'prec@100+':>11}{'recall':>9}{'regret':>9}{'/eps_greedy':>13}",
    ]
    for row in frontier["rows"]:
        ratio = row["regret_ratio"]
        lines.append(
            f"{row['bar']:>6.2f}{row['precision_after_100']:>11.3f}{row['recall']:>9.3f}"
            f"{row['regret']:>9.0f}{'-' if ratio is None else f'{ratio:.3f}':>13}"
        )
    cross = frontier["at_precision_target"]
    if cross is None:
        lines.append("  no bar reaches the precision target")
    else:
        lines.append(
            f"  precision after 100 reaches the target at bar {cross['bar']:.3f}, where even"
            f" this policy's regret is {cross['regret_ratio']:.3f} of eps_greedy's"
        )
    return "\n".join(lines)


def time_scale_text(ts: dict[str, float] | None) -> str:
    if not ts:
        return ""
    return (
        f"time scale: {ts['prs_per_day']:g} PRs a day, so the {ts['half_life_days']:g}-day"
        f" half-life is {ts['half_life_prs']:g} PRs and the 100-PR recovery target is"
        f" {ts['recovery_target_days']:g} days"
    )


def plot(
    all_curves: list[dict[str, Any]],
    path: Path,
    prs: int,
    seeds: list[int],
    prs_per_day: float = 4.0,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = mean_curves(all_curves)
    drift = all_curves[0]["drift_at"]
    styles = {
        "post_all": ("tab:gray", "-"),
        "eps_greedy": ("tab:orange", "-"),
        "eps_decay": ("tab:purple", "-"),
        "kaizen": ("tab:blue", "-"),
        "oracle": ("black", "--"),
        "kaizen_code_defaults": ("tab:cyan", ":"),
        "eps_greedy_explore_first": ("tab:orange", ":"),
        "kaizen_not_optimistic": ("tab:blue", ":"),
        "kaizen_no_change_detection": ("tab:green", ":"),
    }
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    x = np.arange(1, prs + 1)
    # linear, so that ratios read true; post_all is far above the rest and runs off the top
    top = 1.1 * max(float(c["cumulative_regret"][-1]) for n, c in curves.items() if n != "post_all")
    for name, c in curves.items():
        color, ls = styles.get(name, (None, "-"))
        lw = 2.2 if name == "kaizen" else 1.3
        final = float(c["cumulative_regret"][-1])
        label = f"{name} ({final:.0f})" + (" off scale" if final > top else "")
        ax1.plot(x, c["cumulative_regret"], color=color, ls=ls, lw=lw, label=label)
        ax2.plot(x, c["rolling_precision"], color=color, ls=ls, lw=lw, label=name)
    for ax in (ax1, ax2):
        ax.axvline(drift, color="red", ls=":", lw=1.2)
        ax.set_xlabel("PR")
        ax.grid(alpha=0.3)
    ax1.set_ylim(-0.02 * top, top)
    ax1.text(drift, top * 0.97, " preferences drift", color="red", va="top")
    ax1.set_ylabel("cumulative regret vs oracle (expected utility)")
    ax1.legend(loc="upper left", fontsize=8, title="final regret", title_fontsize=8)
    ax2.set_ylabel("precision, rolling 50 PRs")
    ax2.set_ylim(0, 1)
    ax2.axhline(0.85, color="tab:blue", ls=":", lw=0.8)
    ax2.legend(loc="lower right", fontsize=8)
    fig.suptitle(
        f"Kaizen learning simulation: {prs} PRs ({prs_per_day:g} a day), mean of seeds {seeds}"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


SWEEP_GRID = {
    "threshold": (0.5, 0.55),
    "half_life_days": (20.0, 30.0, 45.0),
    "ignored_beta": (0.3, 0.6, 1.0),
    "strength": (2.0, 4.0),
    "confidence": (256.0, 1024.0, 1536.0, 4096.0),
    "confidence_signals": (0.0, 15.0, 30.0),
}


def _sweep_one(job: tuple[int, list[int], dict[str, float], float]) -> dict[str, Any]:
    prs, seeds, point, silent = job
    params = KaizenParams(
        threshold=point["threshold"],
        half_life_days=point["half_life_days"],
        ignored_beta=point["ignored_beta"],
        prior={
            **CHOSEN_PRIOR,
            "strength": point["strength"],
            "confidence": point["confidence"],
            "confidence_signals": point["confidence_signals"],
        },
    )
    runs = [
        run_simulation(
            prs,
            s,
            kaizen=params,
            include=("eps_greedy", "kaizen", "oracle"),
            silent_accept_share=silent,
        )
        for s in seeds
    ]
    avg = average(runs)
    k = avg["policies"]["kaizen"]
    return {
        **point,
        "silent_accept_share": silent,
        "regret_ratio": avg["targets"]["kaizen_regret_le_30pct_of_eps_greedy"]["value"],
        **{
            key: k[key]
            for key in ("regret", "regret_noise", "regret_missed", "precision_after_100", "recall")
        },
        "recover": k["prs_to_recover_after_drift"],
        "recovered_runs": k["recovered_runs"],
        "targets_met": sum(t["met"] for t in avg["targets"].values()),
    }


def sweep(prs: int, seeds: list[int], silent: float) -> list[dict[str, Any]]:
    """Kaizen's parameters on a grid: the numbers behind the chosen defaults."""
    keys = list(SWEEP_GRID)
    jobs = [
        (prs, seeds, dict(zip(keys, values, strict=True)), silent)
        for values in itertools.product(*SWEEP_GRID.values())
    ]
    rows = []
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for r in pool.map(_sweep_one, jobs):
            rows.append(r)
            print(
                f"thr {r['threshold']:<5} half-life {r['half_life_days']:>3.0f}d "
                f"ignored {r['ignored_beta']:<4} strength {r['strength']:>3.0f} "
                f"confidence {r['confidence']:>4.0f}/{r['confidence_signals']:<2.0f}  "
                f"regret {r['regret']:6.1f} (noise {r['regret_noise']:5.1f}) "
                f"ratio {r['regret_ratio']:.3f}  prec@100+ {r['precision_after_100']:.3f} "
                f"recall {r['recall']:.3f}  recover {r['recover']:3.0f} "
                f"({r['recovered_runs']}/{len(seeds)})  targets {r['targets_met']}/4",
                flush=True,
            )
    rows.sort(key=lambda r: r["regret"])
    print("\nbest by regret:")
    for r in rows[:5]:
        print("  ", {k: r[k] for k in (*keys, "regret", "regret_ratio", "precision_after_100")})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--seeds", type=int, default=5, help="how many seeds, from --seed")
    parser.add_argument("--json", action="store_true", help="print the JSON result too")
    parser.add_argument("--png", type=Path, default=RESULTS / "learning_sim.png")
    parser.add_argument("--out", type=Path, default=RESULTS / "learning_sim.json")
    defaults = KaizenParams()
    parser.add_argument("--threshold", type=float, default=defaults.threshold)
    parser.add_argument("--half-life", type=float, default=defaults.half_life_days)
    parser.add_argument("--ignored-beta", type=float, default=defaults.ignored_beta)
    parser.add_argument("--prior-strength", type=float, default=defaults.prior["strength"])
    parser.add_argument(
        "--confidence",
        type=float,
        default=defaults.prior["confidence"],
        help="sample θ as if the posterior rested on up to this many more signals (0: plain)",
    )
    parser.add_argument(
        "--confidence-signals",
        type=float,
        default=defaults.prior["confidence_signals"],
        help="signals on a pattern at which the tempering reaches half of --confidence"
        " (0: --confidence for every pattern)",
    )
    parser.add_argument(
        "--not-optimistic",
        action="store_true",
        help="Kaizen draws θ plainly instead of never below the posterior mean",
    )
    parser.add_argument(
        "--prs-per-day",
        type=float,
        default=4.0,
        help="the team's pace: how many PRs a day (Kaizen's half-life is in days)",
    )
    parser.add_argument(
        "--silent-accept-share",
        type=float,
        default=0.0,
        help="share of accepted comments that get no reaction (default 0)",
    )
    parser.add_argument(
        "--context-spread",
        type=float,
        default=0.0,
        help="how much the place of a finding sways the team (logit s.d. between places;"
        " default 0: the pattern alone decides, the team the targets are set on)",
    )
    parser.add_argument(
        "--change-z",
        default=str(CHANGE_Z),
        help=f"change detection threshold in standard errors, or 'none' (default {CHANGE_Z})",
    )
    parser.add_argument("--no-extras", action="store_true", help="only the five policies")
    parser.add_argument("--sweep", action="store_true", help="grid over Kaizen's parameters")
    args = parser.parse_args(argv)
    seeds = list(range(args.seed, args.seed + max(1, args.seeds)))

    if args.sweep:
        rows = sweep(args.prs, seeds, args.silent_accept_share)
        path = args.out.with_name("learning_sim_sweep.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {
            "prs": args.prs,
            "seeds": seeds,
            "silent_accept_share": args.silent_accept_share,
            "rows": rows,
        }
        path.write_text(json.dumps(body, indent=2))
        print(f"wrote {path}")
        return 0

    params = KaizenParams(
        threshold=args.threshold,
        half_life_days=args.half_life,
        ignored_beta=args.ignored_beta,
        prior={
            **CHOSEN_PRIOR,
            "strength": args.prior_strength,
            "confidence": args.confidence,
            "confidence_signals": args.confidence_signals,
        },
        optimistic=not args.not_optimistic,
        change_z=None if args.change_z.lower() == "none" else float(args.change_z),
    )
    include = POLICIES if args.no_extras else (*POLICIES, *EXTRA_POLICIES)
    started = time.perf_counter()
    runs, all_curves = [], []
    for s in seeds:
        result, curves = run_simulation_with_curves(
            args.prs,
            s,
            kaizen=params,
            include=include,
            silent_accept_share=args.silent_accept_share,
            prs_per_day=args.prs_per_day,
            context_spread=args.context_spread,
        )
        runs.append(result)
        all_curves.append(curves)
    seconds = time.perf_counter() - started
    avg = average(runs)

    for r in runs:
        print(
            f"\nseed {r['seed']}  ({args.prs} PRs, drift at PR {r['drift_at']}; "
            f"flipped: {', '.join(r['team']['flipped'])})"
        )
        print(table(r["policies"]))
        print(targets_text(r["targets"]))
    if len(runs) > 1:
        print(
            f"\nmean over seeds {seeds}  (recover: 'never' counted as the whole post-drift stretch)"
        )
        print(table(avg["policies"]))
        print(targets_text(avg["targets"]))
    frontier = precision_frontier(
        args.prs,
        seeds,
        silent_accept_share=args.silent_accept_share,
        prs_per_day=args.prs_per_day,
        context_spread=args.context_spread,
    )
    print()
    print(frontier_text(frontier))
    print(f"\nkaizen parameters: {params.as_dict()}   ({seconds:.1f}s)")
    print(time_scale_text(avg.get("time_scale")))

    out = {
        "kaizen_params": params.as_dict(),
        "silent_accept_share": args.silent_accept_share,
        "prs_per_day": args.prs_per_day,
        "context_spread": args.context_spread,
        "seconds": round(seconds, 2),
        "mean": avg,
        "frontier": frontier,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    plot(all_curves, args.png, args.prs, seeds, args.prs_per_day)
    print(f"wrote {args.out} and {args.png}")
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
