"""The report as one GitHub comment (``/kaizen report``, ``/kaizen patterns``).

GitHub refuses comments over 65,536 characters; the pattern table is cut to fit (the
busiest and the held-back patterns first) and says how many rows were left out, so a
repository with hundreds of patterns still gets one readable comment.
"""

from __future__ import annotations

import time

from memory.report import PatternRow, Report

LIMIT = 65_536
BUDGET = 60_000  # leaves room for the reply's marker and a header added by the caller

_STATUS = {
    "active": "active",
    "exploring": "exploring",
    "suppressed": "held back",
    "muted": "muted",
}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f} %"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")[:120]


def _row(p: PatternRow) -> str:
    rate = _pct(p.rate)
    if p.interval is not None:
        rate += f" ({p.interval[0] * 100:.0f}-{p.interval[1] * 100:.0f})"
    trend = "-" if p.trend is None else f"{p.trend * 100:+.0f} pts"
    return (
        f"| `{_cell(p.pattern)}` | {_STATUS[p.status]} | {p.posted} | {p.accepted} | "
        f"{p.rejected} | {p.ignored} | {rate} | {trend} |"
    )


def _day(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


def render_markdown(report: Report, *, patterns_only: bool = False, url: str | None = None) -> str:
    scope = f"`{report.repo}`" if report.repo else "all repositories"
    if report.empty:
        return (
            f"**Kaizen report for {scope}**\n\nNothing learned yet: Kaizen has not posted "
            "comments or tried fixes here, or nobody has reacted to them. Reactions (👍/👎), "
            "replies, resolved threads and merged fixes will show up here."
        )
    t = report.totals
    head = [f"**Kaizen report for {scope}** ({_day(report.generated_at)})", ""]
    if not patterns_only:
        head.append(
            f"{t['posted']} comments posted, {t['accepted']} acted on, {t['rejected']} "
            f"rejected, {t['ignored']} ignored: acceptance {_pct(t['rate'])}."
        )
        recent = [p for p in report.acceptance if p.rate is not None][-4:]
        if recent:
            head.append(
                "Recent weeks: " + ", ".join(f"{_day(p.at)} {_pct(p.rate)}" for p in recent) + "."
            )
        if t["fix_runs"]:
            head.append(f"Fixes: {t['fixed']} of {t['fix_runs']} attempts produced a fix.")
        head.append("")
    tail: list[str] = []
    held = [p for p in report.patterns if p.status == "suppressed"]
    if held:
        tail += [
            "",
            "**Held back** (learned the team does not act on them): "
            + ", ".join(f"`{_cell(p.pattern)}`" for p in held[:50])
            + (f" and {len(held) - 50} more" if len(held) > 50 else ""),
        ]
    if report.mutes:
        tail += [
            "",
            "**Muted:** "
            + ", ".join(
                f"`{_cell(m.pattern)}` by @{_cell(m.by)} on {_day(m.at)}" for m in report.mutes[:50]
            ),
        ]
    if not patterns_only and report.suppressed:
        top = report.suppressed[:10]
        tail += [
            "",
            "**Not posted, and why:** "
            + ", ".join(f"`{_cell(s.pattern)}` {s.reason} x{s.count}" for s in top),
        ]
    tail += ["", "Correct it with `/kaizen mute <pattern>` or `/kaizen unmute <pattern>`."]
    if url:
        tail.append(f"Full report: {url}")
    table = [
        "| pattern | status | posted | accepted | rejected | ignored | acceptance (90 % CI)"
        " | trend |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    fixed_size = len("\n".join(head + table + tail)) + 200
    rows: list[str] = []
    used = fixed_size
    for p in report.patterns:
        line = _row(p)
        if used + len(line) + 1 > BUDGET:
            break
        rows.append(line)
        used += len(line) + 1
    left = len(report.patterns) - len(rows)
    if left:
        rows.append(f"| … {left} more patterns | | | | | | | |")
    text = "\n".join(head + table + rows + tail)
    assert len(text) <= LIMIT
    return text
