"""Small, dependency-free SVG charts for the reports dashboard.

Why server-side SVG: the dashboard is served by the bot itself, often on a private network or
saved as a single HTML file, so it cannot rely on JavaScript, a CDN or web fonts. Each
function returns one ``<svg>`` string that can be inlined into HTML *and* written out as a
standalone ``.svg`` file (it carries its own ``xmlns``).

Design choices, and why:

* Styling uses presentation attributes, not a ``<style>`` element: a ``<style>`` inside inline
  SVG applies to the whole HTML page, so two charts (or the page itself) would fight.
  Text, axes and grid use ``currentColor`` so the charts follow the page's text colour (dark
  mode works for free); standalone, ``currentColor`` falls back to black.
* Every drawn element has a ``kz-*`` class (``kz-line``, ``kz-dot``, ``kz-band``, ``kz-bar``,
  ``kz-axis``, ``kz-tick``, ``kz-legend-item``, ``kz-empty``...) so the page's CSS can restyle
  them and browser tests can count them.
* Series colours come from the Okabe-Ito palette, which stays distinguishable for the common
  forms of colour blindness; after eight series the palette repeats with dash patterns.
* Inputs come from user data (pattern names, repository names) and from metrics that may be
  missing, so nothing here raises on odd data: ``None``/NaN/inf are gaps, absurd magnitudes
  are clamped, all text is XML-escaped, and no data at all yields a "No data yet" chart.
* Output is deterministic (no ids, no clocks, no set iteration) and coordinates are rounded to
  one decimal, so the same input gives the same bytes and pages stay small and cacheable.
"""

from __future__ import annotations

import calendar
import math
import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["NO_DATA", "PALETTE", "Series", "bar_chart", "line_chart", "sparkline"]

#: Okabe-Ito colours, reordered so the first few are the most distinct on white.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "currentColor",  # Okabe-Ito's black, but it stays visible on a dark page
)
#: Used once the palette wraps, so series 0 and 8 still differ without relying on colour.
_DASHES: tuple[str, ...] = ("", "6 3", "2 2", "8 3 2 3")

NO_DATA = "No data yet"

_FONT = "system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"
_FONT_SIZE = 11
_CHAR_W = 6.2  # rough average glyph width at 11px, used only for layout estimates
_TITLE_CHAR_W = 7.4  # same at the 13px title size
_TITLE_H = 34  # space reserved above the plot for the visible title and the top tick label
_ROW_H = 16  # legend row height
_X_LABEL_H = 20  # space below the plot for x tick labels
_RIGHT = 16
_MIN_PLOT_H = 40
_LEGEND_MAX_CHARS = 32

#: Values beyond this are clamped: it keeps spans like ``max - min`` finite (no overflow to
#: inf) while being far outside anything a real metric produces.
_MAX_ABS = 1e300
#: Characters XML 1.0 forbids even when escaped; user strings may contain them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# datetime's range (years 1..9999) with a little slack; outside it time ticks fall back to numbers.
_MIN_TS = -62_135_596_800.0 + 86_400 * 370
_MAX_TS = 253_402_300_799.0 - 86_400 * 370
_DAY = 86_400
_TIME_STEPS = (
    1, 5, 10, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600,
    _DAY, 2 * _DAY, 7 * _DAY, 14 * _DAY,
)  # fmt: skip
_MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200, 2400, 6000)
_MONDAY_OFFSET = 4 * _DAY  # 1970-01-05 was a Monday; weekly ticks land on Mondays


@dataclass(frozen=True)
class Series:
    """One named line: ``points`` are ``(x, y)`` with x a unix time (or an index).

    A ``None`` (or NaN/inf) y is a gap: the line is broken there rather than drawn through a
    made-up value, so missing days look missing.
    """

    name: str
    points: Sequence[tuple[float, float | None]]


# --------------------------------------------------------------------------- small helpers


def _num(value: object) -> float | None:
    """A finite, clamped float, or None for anything that cannot be plotted."""
    if isinstance(value, str) or not isinstance(value, numbers.Real):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(f):
        return None
    return max(-_MAX_ABS, min(_MAX_ABS, f))


def _esc(text: object) -> str:
    """Escape for both element text and double- or single-quoted attributes."""
    s = _INVALID_XML.sub("", str(text))
    return (
        s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def _nz(s: str) -> str:
    """Drop the sign from a formatted negative zero ("-0", "-0.00")."""
    if s.startswith("-") and s[1:].strip("0.") == "":
        return s[1:]
    return s


def _c(v: float) -> str:
    """A coordinate rounded to one decimal, without a useless ".0"."""
    s = f"{v:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return _nz(s)


def _trim(s: str, max_chars: int) -> str:
    """Shorten a label for layout; the full text stays available in a ``<title>``."""
    max_chars = max(1, max_chars)
    return s if len(s) <= max_chars else s[: max_chars - 1] + "…"


def _text_w(s: str) -> float:
    return len(s) * _CHAR_W


def _fmt_value(v: float, percent: bool = False) -> str:
    """A value for tooltips and descriptions: short, at most two decimals."""
    if percent:
        return _nz(f"{v * 100:.1f}".rstrip("0").rstrip(".")) + "%"
    if abs(v) >= 1e15:
        return f"{v:.3g}"
    if abs(v) >= 1000:
        return _nz(f"{v:,.0f}")
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return _nz(s) if s else "0"


def _fmt_x(x: float, is_time: bool) -> str:
    if is_time and _MIN_TS <= x <= _MAX_TS:
        dt = _EPOCH + timedelta(seconds=x)
        if dt.hour or dt.minute:
            return f"{dt:%Y-%m-%d %H:%M} UTC"
        return f"{dt:%Y-%m-%d}"
    return _fmt_value(x)


# --------------------------------------------------------------------------- scales and ticks


def _nice_step(raw: float) -> float:
    """The 1/2/5 x 10^k step nearest ``raw``: round numbers that people read at a glance.

    Nearest rather than next-larger, so a short axis still gets about as many ticks as asked
    for (0/20/40...% instead of just 0/50/100%).
    """
    if not (raw > 0 and math.isfinite(raw)):
        return 1.0
    mag = 10.0 ** math.floor(math.log10(raw))
    norm = raw / mag
    for m, upper in ((1.0, 1.5), (2.0, 3.5), (5.0, 7.5)):
        if norm < upper:
            return m * mag
    return 10.0 * mag


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    k0 = math.ceil(lo / step - 1e-9)
    k1 = math.floor(hi / step + 1e-9)
    if k1 - k0 > 60:  # float precision trouble at extreme magnitudes; show the ends only
        return [lo, hi]
    return [k * step for k in range(k0, k1 + 1)]


def _decimals(step: float) -> int:
    if step <= 0 or not math.isfinite(step):
        return 0
    return max(0, min(6, -math.floor(math.log10(step) + 1e-9)))


def _tick_formatter(ticks: Sequence[float], step: float, percent: bool) -> Callable[[float], str]:
    """One format for the whole axis, so labels line up ("0.5", "1.0", not "0.5", "1")."""
    if percent:
        d = _decimals(step * 100)
        return lambda v: _nz(f"{v * 100:.{d}f}") + "%"
    big = max((abs(t) for t in ticks), default=0.0)
    if big >= 1e15 or (0 < step < 1e-4):
        sig = 3
        if big > 0 and step > 0:
            sig = max(1, min(15, math.floor(math.log10(big)) - math.floor(math.log10(step)) + 1))
        return lambda v: _nz(f"{v:.{sig}g}")
    for unit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if big >= unit:
            du = _decimals(step / unit)
            return lambda v: _nz(f"{v / unit:.{du}f}") + suffix
    d = _decimals(step)
    return lambda v: _nz(f"{v:.{d}f}")


def _domain(
    lo_data: float,
    hi_data: float,
    want_lo: float | None,
    want_hi: float | None,
    target: int,
) -> tuple[float, float, float]:
    """Axis range and tick step.

    A requested bound is always on the axis and is the exact end unless data falls outside
    it; then the axis grows instead, because drawing outside (or clipping) the plot would
    misrepresent the data. Free ends are rounded out to a tick so the last gridline is labelled.
    """
    w_lo, w_hi = _num(want_lo), _num(want_hi)  # a NaN bound means "fit the data"
    wanted = [w for w in (w_lo, w_hi) if w is not None]
    lo = min([lo_data, *wanted])  # a requested bound is always on the axis (0 stays visible
    hi = max([hi_data, *wanted])  # even when every value is negative)
    fixed_lo = w_lo is not None and lo == w_lo
    fixed_hi = w_hi is not None and hi == w_hi
    span = hi - lo
    if span <= 0 or span < 1e-200 or span <= abs(lo) * 1e-12:
        pad = abs(hi) or 1.0
        if fixed_lo or not fixed_hi:
            if fixed_lo:
                hi = lo + pad
            else:
                lo, hi = lo - pad / 2, hi + pad / 2
            fixed_hi = False
        else:
            lo = hi - pad
            fixed_lo = False
    step = _nice_step((hi - lo) / max(1, target))
    if not fixed_lo:
        lo = math.floor(lo / step + 1e-9) * step
    if not fixed_hi:
        hi = math.ceil(hi / step - 1e-9) * step
    if not hi > lo:  # precision loss at extreme magnitudes
        hi = lo + abs(lo) * 1e-6 + 1.0
    return lo, hi, step


def _time_ticks(x0: float, x1: float, target: int) -> list[tuple[float, str]] | None:
    """Calendar-aligned UTC ticks ("Nov 30", "14:00", "Jan 2025", "2025"), or None if the range
    is not a plausible date range (then the caller uses plain numbers)."""
    if x0 < _MIN_TS or x1 > _MAX_TS:
        return None
    span = x1 - x0
    target = max(1, target)
    for step in _TIME_STEPS:
        if span / step > target:
            continue
        offset = _MONDAY_OFFSET if step % (7 * _DAY) == 0 else 0
        k0 = math.ceil((x0 - offset) / step)
        k1 = math.floor((x1 - offset) / step)
        out: list[tuple[float, str]] = []
        for k in range(k0, k1 + 1):
            t = float(offset + k * step)
            dt = _EPOCH + timedelta(seconds=t)
            if step < 60:
                label = f"{dt:%H:%M:%S}"
            elif step < _DAY and (dt.hour or dt.minute):
                label = f"{dt:%H:%M}"
            else:
                label = f"{_MONTHS[dt.month - 1]} {dt.day}"
            out.append((t, label))
        return out
    mstep = _MONTH_STEPS[-1]
    for m in _MONTH_STEPS:
        if span / (30.44 * _DAY) / m <= target:
            mstep = m
            break
    d0 = _EPOCH + timedelta(seconds=x0)
    idx = d0.year * 12 + d0.month - 1
    idx = -(-idx // mstep) * mstep
    out = []
    while len(out) <= 60:
        year, month = divmod(idx, 12)
        if not 1 <= year <= 9999:
            break
        t = float(calendar.timegm((year, month + 1, 1, 0, 0, 0)))
        if t > x1:
            break
        if t >= x0:
            out.append((t, f"{year}" if mstep >= 12 else f"{_MONTHS[month]} {year}"))
        idx += mstep
    return out


def _num_x_ticks(x0: float, x1: float, target: int, integral: bool) -> list[tuple[float, str]]:
    step = _nice_step((x1 - x0) / max(1, target))
    if integral:
        step = max(step, 1.0)  # an index axis has no "2.5th" entry
    ticks = _ticks(x0, x1, step)
    fmt = _tick_formatter(ticks, step, percent=False)
    return [(t, fmt(t)) for t in ticks]


# --------------------------------------------------------------------------- svg scaffolding


def _open(width: int, height: int, kind: str, label: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="kz-chart kz-{kind}" role="img"'
        f' width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        f' aria-label="{_esc(label)}" font-family="{_FONT}" font-size="{_FONT_SIZE}">',
        f"<title>{_esc(label)}</title>",
        f"<desc>{_esc(desc)}</desc>" if desc and desc != label else "",
    ]


def _title_text(title: str, width: int) -> str:
    if not title:
        return ""
    shown = _trim(title, int((width - 16) / _TITLE_CHAR_W))
    return (
        f'<text class="kz-title" x="8" y="18" font-size="13" font-weight="600"'
        f' fill="currentColor">{_esc(shown)}</text>'
    )


def _empty(kind: str, title: str, width: int, height: int) -> str:
    """The "No data yet" chart: same size and structure as a real one, so pages don't jump."""
    label = f"{title}: {NO_DATA}" if title else NO_DATA
    parts = _open(width, height, kind, label, NO_DATA)
    parts.append(_title_text(title, width))
    parts.append(
        f'<text class="kz-empty" x="{_c(width / 2)}" y="{_c(height / 2 + 4)}"'
        f' text-anchor="middle" fill="currentColor" fill-opacity="0.6">{NO_DATA}</text>'
    )
    parts.append("</svg>")
    return "".join(p for p in parts if p)


def _style(i: int) -> tuple[str, str]:
    """Colour and dash pattern for series ``i``."""
    colour = PALETTE[i % len(PALETTE)]
    dash = _DASHES[(i // len(PALETTE)) % len(_DASHES)]
    return colour, (f' stroke-dasharray="{dash}"' if dash else "")


@dataclass(frozen=True)
class _Legend:
    items: list[tuple[int, str, float, int]]  # (series index, shown label, x, row)
    more: tuple[str, float, int] | None  # "+N more" overflow note
    rows: int


def _legend_rows(height: int, top: float) -> int:
    """Legend rows allowed: at most about a third of the chart, and never below a usable plot."""
    fit = int((height - top - _X_LABEL_H - _MIN_PLOT_H - 4) // _ROW_H)
    return max(1, min(fit, int(height * 0.35 // _ROW_H)))


def _legend_layout(names: Sequence[str], left: float, right: float, max_rows: int) -> _Legend:
    """Flow legend entries into rows; entries that would squeeze the plot become "+N more"."""

    def item_w(label: str) -> float:
        return 18 + _text_w(label) + 12

    placed: list[tuple[int, str, float, int]] = []
    x, row = left, 0
    for i, name in enumerate(names):
        if not name:
            continue
        label = _trim(name, _LEGEND_MAX_CHARS)
        w = item_w(label)
        if x + w > right and x > left:
            row, x = row + 1, left
        if row >= max_rows:
            break
        placed.append((i, label, x, row))
        x += w
    total = sum(1 for n in names if n)
    hidden = total - len(placed)
    more: tuple[str, float, int] | None = None
    if hidden:
        while True:
            note = f"+{hidden} more"
            if not placed:
                more = (note, left, 0)
                break
            _, label, lx, lrow = placed[-1]
            end = lx + item_w(label)
            if end + _text_w(note) <= right:
                more = (note, end, lrow)
                break
            placed.pop()
            hidden += 1
    rows = max([r for *_, r in placed] + ([more[2]] if more else []), default=-1) + 1
    return _Legend(placed, more, rows)


def _legend_svg(legend: _Legend, top: float, swatch: str, dashes: bool) -> list[str]:
    if not legend.items and not legend.more:
        return []
    out = ['<g class="kz-legend" fill="currentColor">']
    for i, label, x, row in legend.items:
        colour, dash = _style(i) if dashes else (PALETTE[i % len(PALETTE)], "")
        y = top + row * _ROW_H
        if swatch == "line":
            mark = (
                f'<line x1="{_c(x)}" y1="{_c(y - 4)}" x2="{_c(x + 14)}" y2="{_c(y - 4)}"'
                f' stroke="{colour}" stroke-width="3"{dash}/>'
            )
        else:
            mark = f'<rect x="{_c(x + 2)}" y="{_c(y - 9)}" width="10" height="10" fill="{colour}"/>'
        out.append(
            f'<g class="kz-legend-item">{mark}'
            f'<text x="{_c(x + 18)}" y="{_c(y)}">{_esc(label)}</text></g>'
        )
    if legend.more:
        note, x, row = legend.more
        out.append(
            f'<text class="kz-legend-more" x="{_c(x)}" y="{_c(top + row * _ROW_H)}"'
            f' fill-opacity="0.7">{_esc(note)}</text>'
        )
    out.append("</g>")
    return out


def _y_axis(
    ticks: Sequence[float],
    fmt: Callable[[float], str],
    ymap: Callable[[float], float],
    left: float,
    right: float,
) -> list[str]:
    out = ['<g class="kz-grid" stroke="currentColor" stroke-opacity="0.12">']
    out += [
        f'<line x1="{_c(left)}" y1="{_c(ymap(t))}" x2="{_c(right)}" y2="{_c(ymap(t))}"/>'
        for t in ticks
    ]
    out.append("</g>")
    out.append(
        '<g class="kz-axis kz-axis-y" fill="currentColor" fill-opacity="0.75" text-anchor="end">'
    )
    out += [
        f'<text class="kz-tick" x="{_c(left - 6)}" y="{_c(ymap(t) + 4)}">{_esc(fmt(t))}</text>'
        for t in ticks
    ]
    out.append("</g>")
    return out


def _y_label_svg(y_label: str, top: float, bottom: float) -> str:
    if not y_label:
        return ""
    cy = (top + bottom) / 2
    shown = _trim(y_label, int((bottom - top) / _CHAR_W))
    return (
        f'<text class="kz-y-label" x="12" y="{_c(cy)}" text-anchor="middle" fill="currentColor"'
        f' transform="rotate(-90 12 {_c(cy)})">{_esc(shown)}</text>'
    )


def _x_axis(
    ticks: Sequence[tuple[float, str]],
    xmap: Callable[[float], float],
    left: float,
    right: float,
    axis_y: float,
    width: int,
    *,
    label_y: float | None = None,
    marks: bool = True,
) -> list[str]:
    label_y = axis_y if label_y is None else label_y
    out = [
        '<g class="kz-axis kz-axis-x" fill="currentColor" fill-opacity="0.75"'
        ' stroke="currentColor" stroke-opacity="0.5">',
        f'<line class="kz-axis-line" x1="{_c(left)}" y1="{_c(axis_y)}" x2="{_c(right)}"'
        f' y2="{_c(axis_y)}"/>',
    ]
    for t, label in ticks:
        px = xmap(t)
        half = _text_w(label) / 2
        anchor = "middle"
        if px - half < 2:
            anchor = "start"
        elif px + half > width - 2:
            anchor = "end"
        if marks:
            out.append(
                f'<line x1="{_c(px)}" y1="{_c(axis_y)}" x2="{_c(px)}" y2="{_c(axis_y + 4)}"/>'
            )
        out.append(
            f'<text class="kz-tick" x="{_c(px)}" y="{_c(label_y + 15)}" stroke="none"'
            f' text-anchor="{anchor}">{_esc(label)}</text>'
        )
    out.append("</g>")
    return out


def _list_names(kind: str, names: Sequence[str]) -> str:
    shown = [n for n in names if n][:10]
    more = len([n for n in names if n]) - len(shown)
    tail = f" and {more} more" if more > 0 else ""
    return f"{kind} of {len(names)} series: {', '.join(shown)}{tail}." if shown else f"{kind}."


# --------------------------------------------------------------------------- line chart


def _clean(points: Sequence[tuple[float, float | None]]) -> list[tuple[float, float | None]]:
    """Points with a usable x, sorted by x; unusable y become None (a gap)."""
    out: list[tuple[float, float | None]] = []
    for p in points:
        try:
            x_raw, y_raw = p
        except (TypeError, ValueError):
            continue
        x = _num(x_raw)
        if x is not None:
            out.append((x, _num(y_raw)))
    out.sort(key=lambda p: p[0])
    return out


def _runs(points: Sequence[tuple[float, float | None]]) -> list[list[tuple[float, float]]]:
    """Split at gaps: each run is a stretch of consecutive plottable points."""
    runs: list[list[tuple[float, float]]] = []
    cur: list[tuple[float, float]] = []
    for x, y in points:
        if y is None:
            if cur:
                runs.append(cur)
            cur = []
        else:
            cur.append((x, y))
    if cur:
        runs.append(cur)
    return runs


def _band_runs(lower: Series, upper: Series) -> list[list[tuple[float, float, float]]]:
    """(x, low, high) stretches where both bounds exist at the same x."""
    lo_by_x: dict[float, float | None] = dict(_clean(lower.points))
    runs: list[list[tuple[float, float, float]]] = []
    cur: list[tuple[float, float, float]] = []
    for x, hi in _clean(upper.points):
        lo = lo_by_x.get(x)
        if hi is None or lo is None:
            if cur:
                runs.append(cur)
            cur = []
        else:
            cur.append((x, lo, hi))
    if cur:
        runs.append(cur)
    return [r for r in runs if len(r) >= 2]


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    y_label: str = "",
    y_min: float | None = 0.0,
    y_max: float | None = None,
    percent: bool = False,
    width: int = 640,
    height: int = 240,
    x_is_time: bool = True,
    bands: Sequence[tuple[Series, Series]] = (),
) -> str:
    """A multi-series line chart as an SVG string.

    ``y_min`` defaults to 0 so rates and counts are not visually exaggerated; pass ``None`` to
    fit the data. A requested bound is always on the axis (so 0 stays visible) and the axis
    grows past it if data falls outside. NaN bounds count as None. With ``percent=True`` the
    values are fractions (0.25 is drawn as "25%"). ``bands`` are (lower, upper) pairs drawn as
    a shaded credible interval; band ``i`` is tinted like series ``i``, so pass them in series
    order. Runs of one point (including a one-point series) are drawn as dots.
    """
    width, height = max(int(width), 160), max(int(height), 100)
    cleaned = [(s, _clean(s.points)) for s in series]
    band_runs = [_band_runs(lo, hi) for lo, hi in bands]

    xs: list[float] = []
    ys: list[float] = []
    for _, pts in cleaned:
        for x, y in pts:
            if y is not None:
                xs.append(x)
                ys.append(y)
    for shaded in band_runs:
        for stretch in shaded:
            for x, lo, hi in stretch:
                xs.append(x)
                ys += (lo, hi)
    if not ys:
        return _empty("line-chart", title, width, height)

    # Legend first: its height decides how much room the plot gets.
    top = _TITLE_H if title else 10
    left_guess = 40 + (16 if y_label else 0)
    max_rows = _legend_rows(height, top)
    legend = _legend_layout([s.name for s, _ in cleaned], 8, width - _RIGHT, max_rows)
    bottom = height - _X_LABEL_H - legend.rows * _ROW_H - (4 if legend.rows else 0)
    plot_h = bottom - top

    y0, y1, ystep = _domain(min(ys), max(ys), y_min, y_max, max(2, int(plot_h // 36)))
    yticks = _ticks(y0, y1, ystep)
    yfmt = _tick_formatter(yticks, ystep, percent)
    label_w = max((_text_w(yfmt(t)) for t in yticks), default=0.0)
    left = max(float(left_guess - 12), label_w + 10 + (16 if y_label else 0))
    right = width - _RIGHT
    plot_w = right - left

    x0, x1 = min(xs), max(xs)
    if x1 - x0 <= 0 or x1 - x0 <= abs(x0) * 1e-12:
        # Widen around a lone x; relative padding keeps the span non-zero at huge magnitudes.
        pad = max(float(_DAY) if x_is_time else 1.0, abs(x0) * 1e-6)
        x0, x1 = x0 - pad, x1 + pad
    target_x = max(2, int(plot_w // 80))
    xticks = _time_ticks(x0, x1, target_x) if x_is_time else None
    if xticks is None:
        integral = all(float(x).is_integer() for x in xs)
        xticks = _num_x_ticks(x0, x1, target_x, integral)

    def xmap(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def ymap(y: float) -> float:
        return bottom - (y - y0) / (y1 - y0) * plot_h

    names = [s.name for s in series]
    desc = _list_names("Line chart", names)
    if y_label:
        desc += f" Y axis: {y_label}."
    desc += f" Range {_fmt_value(min(ys), percent)} to {_fmt_value(max(ys), percent)}."
    parts = _open(width, height, "line-chart", title, desc)
    parts.append(_title_text(title, width))
    parts += _y_axis(yticks, yfmt, ymap, left, right)
    parts.append(_y_label_svg(y_label, top, bottom))
    parts += _x_axis(xticks, xmap, left, right, bottom, width)

    for i, shaded in enumerate(band_runs):
        if not shaded:
            continue
        colour = PALETTE[i % len(PALETTE)]
        d = "".join(
            "M"
            + "L".join(f"{_c(xmap(x))} {_c(ymap(hi))}" for x, _, hi in run)
            + "L"
            + "L".join(f"{_c(xmap(x))} {_c(ymap(lo))}" for x, lo, _ in reversed(run))
            + "Z"
            for run in shaded
        )
        parts.append(
            f'<path class="kz-band" d="{d}" fill="{colour}" fill-opacity="0.18" stroke="none"/>'
        )

    for i, (s, pts) in enumerate(cleaned):
        runs = _runs(pts)
        if not runs:
            continue
        colour, dash = _style(i)
        name = _esc(s.name)
        parts.append(f'<g class="kz-series" data-series="{name}">')
        lines = [r for r in runs if len(r) >= 2]
        if lines:
            d = "".join(
                "M" + "L".join(f"{_c(xmap(x))} {_c(ymap(y))}" for x, y in run) for run in lines
            )
            parts.append(
                f'<path class="kz-line" d="{d}" fill="none" stroke="{colour}" stroke-width="2"'
                f' stroke-linejoin="round" stroke-linecap="round"{dash}>'
                f"<title>{name}</title></path>"
            )
        for run in runs:
            if len(run) == 1:
                x, y = run[0]
                tip = _esc(f"{s.name}: {_fmt_x(x, x_is_time)}: {_fmt_value(y, percent)}")
                parts.append(
                    f'<circle class="kz-dot" cx="{_c(xmap(x))}" cy="{_c(ymap(y))}" r="3"'
                    f' fill="{colour}"><title>{tip}</title></circle>'
                )
        parts.append("</g>")

    parts += _legend_svg(legend, bottom + _X_LABEL_H + 12, "line", dashes=True)
    parts.append("</svg>")
    return "".join(p for p in parts if p)


# --------------------------------------------------------------------------- bar chart


def bar_chart(
    categories: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    stacked: bool = False,
    width: int = 640,
    height: int = 240,
    y_label: str = "",
) -> str:
    """Grouped (or stacked) bars: one bar per finite value, ``groups[g][1][c]`` for category c.

    The value axis always includes zero, since bar length is what readers compare. Stacks put
    positive values above zero and negative ones below, so they never cancel out visually.
    Missing, NaN or inf values are skipped; values beyond the number of categories are ignored.
    """
    width, height = max(int(width), 160), max(int(height), 100)
    cats = [str(c) for c in categories]
    n = len(cats)
    vals: list[list[float | None]] = []
    for _, values in groups:
        row: list[float | None] = [_num(v) for v in list(values)[:n]]
        vals.append(row + [None] * (n - len(row)))
    finite = [v for row in vals for v in row if v is not None]
    if not n or not finite:
        return _empty("bar-chart", title, width, height)

    if stacked:
        pos = [sum(max(0.0, row[c] or 0.0) for row in vals) for c in range(n)]
        neg = [sum(min(0.0, row[c] or 0.0) for row in vals) for c in range(n)]
        lo_data, hi_data = min(neg), max(pos)
    else:
        lo_data, hi_data = min(finite), max(finite)
    lo_data = max(-_MAX_ABS, lo_data)
    hi_data = min(_MAX_ABS, hi_data)

    top = _TITLE_H if title else 10
    max_rows = _legend_rows(height, top)
    legend = _legend_layout([g for g, _ in groups], 8, width - _RIGHT, max_rows)
    bottom = height - _X_LABEL_H - legend.rows * _ROW_H - (4 if legend.rows else 0)
    plot_h = bottom - top

    y0, y1, ystep = _domain(lo_data, hi_data, 0.0, 0.0, max(2, int(plot_h // 36)))
    yticks = _ticks(y0, y1, ystep)
    yfmt = _tick_formatter(yticks, ystep, percent=False)
    label_w = max((_text_w(yfmt(t)) for t in yticks), default=0.0)
    left = max(28.0, label_w + 10 + (16 if y_label else 0))
    right = width - _RIGHT
    plot_w = right - left
    band_w = plot_w / n

    def ymap(y: float) -> float:
        return bottom - (y - y0) / (y1 - y0) * plot_h

    desc = _list_names("Stacked bar chart" if stacked else "Bar chart", [g for g, _ in groups])
    desc += f" {n} categories."
    if y_label:
        desc += f" Y axis: {y_label}."
    parts = _open(width, height, "bar-chart", title, desc)
    parts.append(_title_text(title, width))
    parts += _y_axis(yticks, yfmt, ymap, left, right)
    parts.append(_y_label_svg(y_label, top, bottom))

    # Category labels: thin them out when bands are too narrow to label each one.
    every = max(1, math.ceil(28 / band_w)) if band_w > 0 else 1
    max_chars = max(3, int(band_w * every / _CHAR_W) - 1)
    # Tick positions are category indices; xmap puts them at band centres.
    xticks = [(float(c), _trim(cats[c], max_chars)) for c in range(0, n, every)]

    def xmap(c: float) -> float:
        return left + (c + 0.5) * band_w

    # The axis line marks zero (bars grow from it); labels stay at the bottom regardless.
    parts += _x_axis(xticks, xmap, left, right, ymap(0.0), width, label_y=bottom, marks=False)

    inner = band_w * 0.8
    bar_w = inner if stacked else inner / max(1, len(groups))
    gap = 1.0 if bar_w > 4 else 0.0
    parts.append('<g class="kz-bars">')
    pos_acc = [0.0] * n
    neg_acc = [0.0] * n
    for g, (gname, _) in enumerate(groups):
        colour = PALETTE[g % len(PALETTE)]
        for c in range(n):
            v = vals[g][c]
            if v is None:
                continue
            if stacked:
                base = pos_acc[c] if v >= 0 else neg_acc[c]
                end = base + v
                if v >= 0:
                    pos_acc[c] = end
                else:
                    neg_acc[c] = end
                bx = left + c * band_w + band_w * 0.1
            else:
                base, end = 0.0, v
                bx = left + c * band_w + band_w * 0.1 + g * bar_w
            # Clamped: stacks of astronomically large values can exceed the (clamped) axis.
            ya = min(bottom, max(top, ymap(base)))
            yb = min(bottom, max(top, ymap(end)))
            tip = _esc(f"{gname}: {cats[c]}: {_fmt_value(v)}" if gname else f"{cats[c]}: {v}")
            parts.append(
                f'<rect class="kz-bar" data-series="{_esc(gname)}" x="{_c(bx)}"'
                f' y="{_c(min(ya, yb))}" width="{_c(max(0.5, bar_w - gap))}"'
                f' height="{_c(abs(yb - ya))}" fill="{colour}"><title>{tip}</title></rect>'
            )
    parts.append("</g>")
    parts += _legend_svg(legend, bottom + _X_LABEL_H + 12, "rect", dashes=False)
    parts.append("</svg>")
    return "".join(p for p in parts if p)


# --------------------------------------------------------------------------- sparkline


def sparkline(values: Sequence[float | None], *, width: int = 80, height: int = 18) -> str:
    """A tiny trend line for table cells: no axes, scaled to its own min..max.

    Gaps (None/NaN/inf) keep their slot on the x axis so spacing stays honest in time, and
    the last value gets a dot because "where are we now" is what a sparkline is read for.
    """
    width, height = max(int(width), 8), max(int(height), 4)
    vals = [_num(v) for v in values]
    finite = [v for v in vals if v is not None]
    if not finite:
        parts = _open(width, height, "sparkline", NO_DATA, "")
        parts.append(
            f'<text class="kz-empty" x="{_c(width / 2)}" y="{_c(height / 2 + 3)}"'
            f' text-anchor="middle" font-size="8" fill="currentColor"'
            f' fill-opacity="0.6">{NO_DATA}</text></svg>'
        )
        return "".join(parts)
    lo, hi = min(finite), max(finite)
    pad = 2.0
    n = len(vals)

    def xmap(i: int) -> float:
        return width / 2 if n == 1 else pad + i / (n - 1) * (width - 2 * pad)

    def ymap(v: float) -> float:
        if hi - lo <= 0:
            return height / 2
        return height - pad - (v - lo) / (hi - lo) * (height - 2 * pad)

    indexed: list[tuple[float, float | None]] = [(float(i), v) for i, v in enumerate(vals)]
    runs = _runs(indexed)
    first, last = finite[0], finite[-1]
    label = (
        f"Trend of {len(finite)} values: {_fmt_value(first)} to {_fmt_value(last)}"
        f" (min {_fmt_value(lo)}, max {_fmt_value(hi)})"
    )
    colour = PALETTE[0]
    parts = _open(width, height, "sparkline", label, "")
    lines = [r for r in runs if len(r) >= 2]
    if lines:
        d = "".join(
            "M" + "L".join(f"{_c(xmap(int(x)))} {_c(ymap(y))}" for x, y in run) for run in lines
        )
        parts.append(
            f'<path class="kz-spark-line" d="{d}" fill="none" stroke="{colour}"'
            ' stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round"/>'
        )
    last_x = runs[-1][-1][0]
    for run in runs:
        if len(run) == 1 and run[0][0] != last_x:
            x, y = run[0]
            parts.append(
                f'<circle class="kz-dot" cx="{_c(xmap(int(x)))}" cy="{_c(ymap(y))}" r="1.5"'
                f' fill="{colour}"/>'
            )
    lx, ly = runs[-1][-1]
    parts.append(
        f'<circle class="kz-spark-last" cx="{_c(xmap(int(lx)))}" cy="{_c(ymap(ly))}" r="2"'
        f' fill="{colour}"/>'
    )
    parts.append("</svg>")
    return "".join(parts)
