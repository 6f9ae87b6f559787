"""The report as one self-contained HTML page: inline CSS, server-side SVG charts, no
script and nothing fetched from anywhere (no CDN), so it works offline, in a saved file
and behind strict content security policies."""

from __future__ import annotations

import time
from collections.abc import Sequence

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from bot.svg_charts import Series, bar_chart, line_chart, sparkline
from memory.report import Report

_env: Environment | None = None


def _templates() -> Environment:
    global _env
    if _env is None:
        _env = Environment(
            loader=PackageLoader("bot", "templates"), autoescape=select_autoescape(["html", "j2"])
        )
        _env.filters["pct"] = lambda v: "-" if v is None else f"{v * 100:.0f} %"
        _env.filters["day"] = lambda at: time.strftime("%Y-%m-%d", time.gmtime(at))
    return _env


def _svg(svg: str) -> Markup:
    """SVG from :mod:`bot.svg_charts`, which escapes every text it draws (pattern names come
    from user data), so it can be inlined as is."""
    return Markup(svg)  # noqa: S704 - escaped by svg_charts


def charts(report: Report) -> dict[str, Markup]:
    """Every chart of the report, as SVG markup safe to inline."""
    out: dict[str, Markup] = {}
    out["acceptance"] = _svg(
        line_chart(
            [Series("all comments", [(p.at, p.rate) for p in report.acceptance])],
            title="Acceptance of posted comments per week",
            percent=True,
            y_max=1.0,
        )
    )
    top = [p.pattern for p in report.patterns if p.posted][:6]
    out["by_pattern"] = _svg(
        line_chart(
            [
                Series(name, [(p.at, p.rate) for p in report.acceptance_by_pattern.get(name, [])])
                for name in top
            ],
            title="Acceptance per pattern (busiest patterns)",
            percent=True,
            y_max=1.0,
        )
    )
    days = [time.strftime("%b %d", time.gmtime(f.at)) for f in report.fixes]
    out["fixes"] = _svg(
        bar_chart(
            days,
            [
                ("fix runs", [float(f.runs) for f in report.fixes]),
                ("fixed", [float(f.fixed) for f in report.fixes]),
                ("merged", [float(f.merged) for f in report.fixes]),
                ("closed", [float(f.closed) for f in report.fixes]),
            ],
            title="Fixes per week",
        )
    )
    out["sandbox"] = _svg(
        line_chart(
            [
                Series(
                    "sandbox runs per fix run",
                    [(f.at, f.sandbox_runs / f.runs if f.runs else None) for f in report.fixes],
                )
            ],
            title="Sandbox runs per fix run",
        )
    )
    out["tokens"] = _svg(
        line_chart(
            [
                Series("prompt tokens", [(u.at, float(u.prompt_tokens)) for u in report.usage]),
                Series(
                    "completion tokens", [(u.at, float(u.completion_tokens)) for u in report.usage]
                ),
            ],
            title="LLM tokens per day",
        )
    )
    out["cost"] = _svg(
        line_chart(
            [Series("cost (USD)", [(u.at, u.cost_usd) for u in report.usage])],
            title="LLM cost per day (USD)",
        )
    )
    return out


def sparks(report: Report) -> dict[str, Markup]:
    return {p.pattern: _svg(sparkline(p.spark)) for p in report.patterns}


def render_html(
    report: Report,
    *,
    repos: Sequence[str] = (),
    base: str = "/reports",
    standalone: bool = False,
) -> str:
    """The dashboard page; ``standalone`` drops the links back to the live dashboard."""
    return (
        _templates()
        .get_template("report.html.j2")
        .render(
            report=report,
            charts=charts(report),
            sparks=sparks(report),
            repos=repos,
            base=base,
            standalone=standalone,
        )
    )


def render_login(*, error: str | None, base: str = "/reports", configured: bool = True) -> str:
    return (
        _templates()
        .get_template("report_login.html.j2")
        .render(error=error, base=base, configured=configured)
    )
