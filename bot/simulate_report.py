"""Rendering a learning simulation for people: a table of metrics and a PNG of the curves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLUMNS = (
    ("precision", "precision", "{:.3f}"),
    ("precision_after_100", "prec>100", "{:.3f}"),
    ("valuable_precision", "val.prec", "{:.3f}"),
    ("recall", "recall", "{:.3f}"),
    ("security_recall", "sec.recall", "{:.3f}"),
    ("regret", "regret", "{:.0f}"),
    ("prs_to_recover_after_drift", "recover", "{:.0f}"),
)


def format_table(result: dict[str, Any]) -> str:
    """The per-policy metrics and the targets, as a plain-text table."""
    policies: dict[str, dict[str, Any]] = result["policies"]
    width = max(12, *(len(name) + 2 for name in policies))
    head = f"{'policy':<{width}}" + "".join(f"{label:>12}" for _, label, _ in COLUMNS)
    lines = [
        f"{result['prs']} PRs, seed {result['seed']}, preferences drift at PR {result['drift_at']}",
    ]
    ts = result.get("time_scale")
    if ts:
        lines.append(
            f"{ts['prs_per_day']:g} PRs a day: the {ts['half_life_days']:g}-day half-life is"
            f" {ts['half_life_prs']:g} PRs and the 100-PR recovery target is"
            f" {ts['recovery_target_days']:g} days"
        )
    lines += [
        head,
        "-" * len(head),
    ]
    for name, metrics in policies.items():
        cells = ""
        for key, _, fmt in COLUMNS:
            value = metrics.get(key)
            cells += f"{'never' if value is None else fmt.format(value):>12}"
        lines.append(f"{name:<{width}}{cells}")
    lines.append("targets:")
    for name, target in result.get("targets", {}).items():
        value = target.get("value")
        shown = "never" if value is None else f"{value:.3g}"
        verdict = "met" if target.get("met") else "NOT met"
        lines.append(f"  {name}: {shown} (target {target.get('target')}) {verdict}")
    return "\n".join(lines)


def write_png(curves: dict[str, Any], path: str | Path) -> None:
    """Cumulative regret and rolling precision per policy, the drift marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drift = curves["drift_at"]
    fig, (regret_ax, precision_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, curve in curves["policies"].items():
        width = 2.2 if name == "kaizen" else 1.2
        style = "--" if name == "oracle" else "-"
        regret = curve["cumulative_regret"]
        regret_ax.plot(range(1, len(regret) + 1), regret, style, lw=width, label=name)
        precision = [float("nan") if v is None else v for v in curve["rolling_precision"]]
        precision_ax.plot(range(1, len(precision) + 1), precision, style, lw=width, label=name)
    for ax in (regret_ax, precision_ax):
        ax.axvline(drift, color="red", ls=":", lw=1)
        ax.set_xlabel("PR")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    regret_ax.set_ylabel("cumulative regret vs oracle")
    precision_ax.set_ylabel("precision of posted comments (rolling)")
    precision_ax.set_ylim(0, 1)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
