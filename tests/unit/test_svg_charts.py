"""Tests for bot.svg_charts: the dashboard's server-side SVG charts.

Charts are checked structurally (parsed with xml.etree, elements found by their kz-* class)
rather than byte-for-byte, so layout tweaks don't break the tests but broken XML, lost
series, unescaped user text or exceptions on odd data do.
"""

from __future__ import annotations

import calendar
import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.svg_charts import NO_DATA, PALETTE, Series, bar_chart, line_chart, sparkline

SVG = "{http://www.w3.org/2000/svg}"
DAY = 86_400
T0 = calendar.timegm((2024, 11, 30, 0, 0, 0))  # a Saturday


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # noqa: S314 - parsing our own output, not untrusted input
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("aria-label")
    assert root.find(f"{SVG}title") is not None
    return root


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [el for el in root.iter() if cls in (el.get("class") or "").split()]


def texts(root: ET.Element, cls: str) -> list[str]:
    return ["".join(el.itertext()) for el in by_class(root, cls)]


def axis_ticks(root: ET.Element, axis: str) -> list[str]:
    (group,) = by_class(root, f"kz-axis-{axis}")
    return texts(group, "kz-tick")


def all_text(root: ET.Element) -> str:
    return " ".join(t for el in root.iter() for t in (el.text, *el.attrib.values()) if t)


def daily(name: str, values: list[float | None]) -> Series:
    return Series(name, [(T0 + i * DAY, v) for i, v in enumerate(values)])


# --------------------------------------------------------------------------- line chart


def test_line_chart_draws_one_line_and_legend_entry_per_series() -> None:
    svg = line_chart(
        [daily("accepted", [1, 2, 3, 4]), daily("rejected", [4, 3, 2, 1])],
        title="Outcomes",
        y_label="PRs",
    )
    root = parse(svg)
    assert len(by_class(root, "kz-line")) == 2
    assert len(by_class(root, "kz-legend-item")) == 2
    assert texts(root, "kz-legend-item") == ["accepted", "rejected"]
    assert by_class(root, "kz-axis-x") and by_class(root, "kz-axis-y")
    assert texts(root, "kz-title") == ["Outcomes"]
    assert texts(root, "kz-y-label") == ["PRs"]
    assert root.findtext(f"{SVG}title") == "Outcomes"
    strokes = [el.get("stroke") for el in by_class(root, "kz-line")]
    assert strokes == list(PALETTE[:2])


def test_standalone_svg_has_namespace_and_viewbox() -> None:
    svg = line_chart([daily("a", [1, 2])], title="t", width=500, height=200)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    root = parse(svg)
    assert root.get("viewBox") == "0 0 500 200"
    assert (
        "<style" not in svg
        and "<script" not in svg
        and "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )


def test_nice_y_ticks_start_at_zero_by_default() -> None:
    root = parse(line_chart([daily("a", [3, 7, 12, 9])], title="t"))
    ticks = axis_ticks(root, "y")
    assert ticks[0] == "0"
    values = [float(t) for t in ticks]
    assert values[-1] >= 12
    steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
    assert len(steps) == 1
    (step,) = steps
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 9) in (1.0, 2.0, 5.0)


def test_y_min_none_fits_the_data() -> None:
    root = parse(line_chart([daily("a", [100, 101, 103])], title="t", y_min=None))
    values = [float(t) for t in axis_ticks(root, "y")]
    assert values[0] >= 99
    assert values[-1] >= 103


def test_percent_ticks() -> None:
    root = parse(
        line_chart([daily("rate", [0.1, 0.5, 0.93])], title="Rate", percent=True, y_max=1.0)
    )
    ticks = axis_ticks(root, "y")
    assert all(t.endswith("%") for t in ticks)
    assert ticks[0] == "0%"
    assert ticks[-1] == "100%"
    assert "50%" in ticks or "40%" in ticks


def test_percent_ticks_on_a_narrow_range_keep_decimals() -> None:
    root = parse(
        line_chart([daily("rate", [0.501, 0.503, 0.506])], title="t", percent=True, y_min=None)
    )
    ticks = axis_ticks(root, "y")
    assert len(set(ticks)) == len(ticks) > 1
    assert all(re.fullmatch(r"50\.\d+%", t) for t in ticks)


def test_date_ticks_are_utc_month_day() -> None:
    root = parse(line_chart([daily("a", list(range(10)))], title="t"))
    ticks = axis_ticks(root, "x")
    assert ticks
    assert all(re.fullmatch(r"(Nov|Dec) \d{1,2}", t) for t in ticks), ticks
    assert "Dec 1" in ticks or "Dec 2" in ticks


def test_long_time_ranges_label_months_or_years() -> None:
    monthly = Series("a", [(T0 + i * 30 * DAY, i) for i in range(20)])
    ticks = axis_ticks(parse(line_chart([monthly], title="t")), "x")
    assert ticks and all(re.fullmatch(r"[A-Z][a-z]{2} 20\d\d", t) for t in ticks), ticks
    decades = Series("a", [(T0 + i * 365 * DAY, i) for i in range(40)])
    ticks = axis_ticks(parse(line_chart([decades], title="t")), "x")
    assert ticks and all(re.fullmatch(r"20\d\d", t) for t in ticks), ticks


def test_short_time_ranges_label_hours() -> None:
    hourly = Series("a", [(T0 + i * 3600, i) for i in range(12)])
    ticks = axis_ticks(parse(line_chart([hourly], title="t")), "x")
    assert "Nov 30" in ticks
    assert any(re.fullmatch(r"\d\d:00", t) for t in ticks)


def test_index_x_axis_uses_whole_numbers() -> None:
    s = Series("a", [(0, 1.0), (1, 2.0), (2, 1.5)])
    ticks = axis_ticks(parse(line_chart([s], title="t", x_is_time=False)), "x")
    assert ticks == ["0", "1", "2"]


def test_gaps_split_the_line_and_isolated_points_become_dots() -> None:
    s = daily("a", [1, 2, None, 4, None, 6, 7])
    root = parse(line_chart([s], title="t"))
    (line,) = by_class(root, "kz-line")
    assert line.get("d", "").count("M") == 2  # [1, 2] and [6, 7]
    dots = by_class(root, "kz-dot")
    assert len(dots) == 1  # the lone 4
    assert "4" in "".join(dots[0].itertext())


def test_nan_and_inf_are_gaps() -> None:
    s = daily("a", [1, math.nan, 3, math.inf, -math.inf, 5, 6])
    root = parse(line_chart([s], title="t"))
    (line,) = by_class(root, "kz-line")
    assert line.get("d", "").count("M") == 1  # only [5, 6] has two neighbours
    assert len(by_class(root, "kz-dot")) == 2  # 1 and 3
    assert "nan" not in line_chart([s], title="t").lower()


def test_single_point_is_a_dot() -> None:
    root = parse(line_chart([daily("only", [0.42])], title="t", percent=True))
    assert not by_class(root, "kz-line")
    (dot,) = by_class(root, "kz-dot")
    assert "42%" in "".join(dot.itertext())
    assert axis_ticks(root, "x")  # a range is invented around the point


@pytest.mark.parametrize(
    "series",
    [
        [],
        [Series("a", [])],
        [daily("a", [None, None])],
        [daily("a", [math.nan, math.inf])],
        [Series("bad", [(math.nan, 1.0), (math.inf, 2.0)])],
    ],
)
def test_no_data_yields_a_valid_placeholder(series: list[Series]) -> None:
    svg = line_chart(series, title="Acceptance <rate>")
    root = parse(svg)
    assert texts(root, "kz-empty") == [NO_DATA]
    assert NO_DATA in (root.get("aria-label") or "")
    assert "Acceptance &lt;rate&gt;" in svg
    assert not by_class(root, "kz-line")


def test_series_names_are_escaped() -> None:
    evil = "<script>'x'</script> & \"co\""
    svg = line_chart([daily(evil, [1, 2]), daily("ok", [5])], title="A & B <i>", y_label="<y>")
    assert "<script" not in svg
    assert "<i>" not in svg
    assert "&lt;script&gt;" in svg
    assert "A &amp; B &lt;i&gt;" in svg
    root = parse(svg)
    assert texts(root, "kz-legend-item")[0] == evil
    assert root.findtext(f"{SVG}title") == "A & B <i>"
    (series_group, _) = by_class(root, "kz-series")
    assert series_group.get("data-series") == evil


def test_control_characters_are_dropped_so_xml_stays_valid() -> None:
    svg = line_chart([daily("bad\x00name\x1b", [1, 2])], title="t\x07")
    root = parse(svg)
    assert texts(root, "kz-legend-item") == ["badname"]


def test_huge_and_negative_values() -> None:
    s = daily("wild", [-1e308, 5e307, 1e300, -3.0, 0.0])
    root = parse(line_chart([s], title="t"))
    assert len(by_class(root, "kz-line")) == 1
    ticks = axis_ticks(root, "y")
    assert ticks and all("inf" not in t and "nan" not in t for t in ticks)
    neg = parse(line_chart([daily("neg", [-5, -2, -9])], title="t"))
    values = [float(t) for t in axis_ticks(neg, "y")]
    assert values[0] <= -9 and values[-1] >= 0  # default y_min=0 grows to fit negatives
    big = parse(line_chart([daily("big", [2e9, 5e9])], title="t"))
    assert any(t.endswith("G") for t in axis_ticks(big, "y"))


def test_huge_x_values_fall_back_to_numeric_ticks() -> None:
    s = Series("a", [(1e300, 1.0), (-1e300, 2.0), (0, 3.0)])
    root = parse(line_chart([s], title="t"))
    assert axis_ticks(root, "x")


def test_coordinates_stay_inside_the_viewbox() -> None:
    svg = line_chart([daily("a", [-1e12, 3, 1e12])], title="t", width=300, height=150)
    for num in re.findall(r'(?:cx|cy|x|y|x1|x2|y1|y2)="(-?[\d.]+)"', svg):
        assert -1 <= float(num) <= 300
    d = by_class(parse(svg), "kz-line")[0].get("d", "")
    for num in re.findall(r"-?\d+(?:\.\d+)?", d):
        assert -1 <= float(num) <= 300


def test_unsorted_points_are_drawn_in_x_order() -> None:
    s = Series("a", [(T0 + 2 * DAY, 3.0), (T0, 1.0), (T0 + DAY, 2.0)])
    d = by_class(parse(line_chart([s], title="t")), "kz-line")[0].get("d", "")
    xs = [float(p.split()[0]) for p in re.split("[ML]", d) if p]
    assert xs == sorted(xs)


def test_bands_are_shaded_between_lower_and_upper() -> None:
    mean = daily("mean", [0.5, 0.6, 0.55, 0.7])
    lower = daily("lo", [0.4, 0.5, None, 0.6])
    upper = daily("hi", [0.6, 0.7, 0.65, 0.8])
    root = parse(line_chart([mean], title="t", percent=True, bands=[(lower, upper)]))
    (band,) = by_class(root, "kz-band")
    d = band.get("d", "")
    assert d.count("M") == 1 and d.endswith("Z")  # only the first two x have both bounds
    assert band.get("fill") == PALETTE[0]
    assert float(band.get("fill-opacity", "1")) < 0.5
    # drawn before (under) the line
    children = list(root)
    assert children.index(band) < children.index(by_class(root, "kz-series")[0])
    assert len(by_class(root, "kz-legend-item")) == 1  # bands are not legend entries


def test_band_alone_counts_as_data_and_widens_the_axis() -> None:
    lower, upper = daily("lo", [1, 2]), daily("hi", [30, 40])
    root = parse(line_chart([daily("m", [10, 20])], title="t", bands=[(lower, upper)]))
    assert float(axis_ticks(root, "y")[-1]) >= 40


def test_many_series_reuse_palette_with_dashes_and_legend_overflow() -> None:
    series = [daily(f"pattern-number-{i}", [i, i + 1]) for i in range(40)]
    root = parse(line_chart(series, title="t", height=200))
    lines = by_class(root, "kz-line")
    assert len(lines) == 40
    assert lines[0].get("stroke-dasharray") is None
    assert lines[len(PALETTE)].get("stroke-dasharray")
    shown = len(by_class(root, "kz-legend-item"))
    assert 0 < shown < 40
    (more,) = texts(root, "kz-legend-more")
    assert more == f"+{40 - shown} more"


def test_long_legend_names_are_truncated_but_full_name_kept() -> None:
    name = "x" * 200
    root = parse(line_chart([daily(name, [1, 2])], title="t"))
    (entry,) = texts(root, "kz-legend-item")
    assert len(entry) < 40 and entry.endswith("…")
    assert by_class(root, "kz-series")[0].get("data-series") == name


def test_output_is_deterministic() -> None:
    args = ([daily("a", [1, None, 3.333333]), daily("b", [0.1, 0.2, 0.3])],)
    kwargs = {"title": "t", "bands": [(daily("l", [0, 0, 0]), daily("h", [5, 5, 5]))]}
    assert line_chart(*args, **kwargs) == line_chart(*args, **kwargs)  # type: ignore[arg-type]
    bars = (["a", "b"], [("g", [1.0, 2.0])])
    assert bar_chart(*bars, title="t") == bar_chart(*bars, title="t")
    assert sparkline([1, 2, None, 3]) == sparkline([1, 2, None, 3])


def test_numbers_are_rounded() -> None:
    svg = line_chart([daily("a", [1 / 3, 2 / 3, 0.123456789])], title="t")
    assert not re.search(r"\d\.\d{3,}", svg)


def test_thousand_points_stay_small() -> None:
    values: list[float | None] = [math.sin(i / 20) * 1000 for i in range(1000)]
    series = [daily("a", values), daily("b", [v and v / 2 for v in values])]
    svg = line_chart(series, title="big", bands=[(daily("lo", values[::-1]), daily("hi", values))])
    parse(svg)
    assert len(svg.encode()) < 100_000


# --------------------------------------------------------------------------- bar chart


def test_grouped_bars_one_rect_per_value() -> None:
    svg = bar_chart(
        ["review", "fix", "triage"],
        [("accepted", [5, 8, 2]), ("rejected", [1, 3, 0])],
        title="By kind",
        y_label="count",
    )
    root = parse(svg)
    bars = by_class(root, "kz-bar")
    assert len(bars) == 6
    assert texts(root, "kz-legend-item") == ["accepted", "rejected"]
    assert axis_ticks(root, "x") == ["review", "fix", "triage"]
    assert axis_ticks(root, "y")[0] == "0"
    assert {b.get("fill") for b in bars} == set(PALETTE[:2])
    heights: dict[str | None, list[float]] = {b.get("data-series"): [] for b in bars}
    for b in bars:
        heights[b.get("data-series")].append(float(b.get("height", "0")))
    assert heights["accepted"][1] > heights["accepted"][0] > heights["accepted"][2]
    assert heights["rejected"][2] == 0
    assert "accepted: fix: 8" in "".join(bars[1].itertext())


def test_stacked_bars_stack_positive_values() -> None:
    root = parse(bar_chart(["a", "b"], [("x", [5, 1]), ("y", [5, 1])], title="t", stacked=True))
    bars = by_class(root, "kz-bar")
    assert len(bars) == 4
    xa, ya = by_class(root, "kz-bar")[0], by_class(root, "kz-bar")[2]  # category a, x then y
    assert xa.get("x") == ya.get("x")
    assert float(ya.get("y", "0")) + float(ya.get("height", "0")) == pytest.approx(
        float(xa.get("y", "0")), abs=0.2
    )
    assert float(axis_ticks(root, "y")[-1]) >= 10


def test_negative_bars_extend_the_axis_below_zero() -> None:
    root = parse(bar_chart(["a", "b"], [("delta", [3, -4])], title="t"))
    values = [float(t) for t in axis_ticks(root, "y")]
    assert values[0] <= -4 and 0 in values and values[-1] >= 3


@pytest.mark.parametrize(
    ("categories", "groups"),
    [
        ([], []),
        (["a"], []),
        ([], [("g", [1.0])]),
        (["a", "b"], [("g", [math.nan, math.inf])]),
    ],
)
def test_bar_chart_no_data(categories: list[str], groups: list[tuple[str, list[float]]]) -> None:
    root = parse(bar_chart(categories, groups, title="t"))
    assert texts(root, "kz-empty") == [NO_DATA]
    assert not by_class(root, "kz-bar")


def test_bar_chart_tolerates_ragged_and_bad_values() -> None:
    root = parse(
        bar_chart(["a", "b", "c"], [("g", [1, math.nan]), ("h", [1, 2, 3, 4, 5])], title="t")
    )
    assert len(by_class(root, "kz-bar")) == 4  # g: 1; h: 1, 2, 3 (extra values ignored)


def test_bar_chart_escapes_categories_and_groups() -> None:
    svg = bar_chart(["<script>x</script>"], [("a & b", [1.0])], title="<t>")
    assert "<script" not in svg and "a &amp; b" in svg
    root = parse(svg)
    assert axis_ticks(root, "x") == ["<script>x</script>"]
    assert texts(root, "kz-legend-item") == ["a & b"]


def test_many_categories_thin_out_labels() -> None:
    cats = [f"day {i}" for i in range(100)]
    root = parse(bar_chart(cats, [("g", [float(i) for i in range(100)])], title="t"))
    assert len(by_class(root, "kz-bar")) == 100
    assert 1 < len(axis_ticks(root, "x")) < 30


# --------------------------------------------------------------------------- sparkline


def test_sparkline_draws_trend_and_last_point() -> None:
    svg = sparkline([1, 3, 2, None, 5, 4, 6])
    root = parse(svg)
    assert root.get("width") == "80" and root.get("height") == "18"
    (line,) = by_class(root, "kz-spark-line")
    assert line.get("d", "").count("M") == 2  # the gap splits it
    assert len(by_class(root, "kz-spark-last")) == 1
    assert "1 to 6" in (root.get("aria-label") or "")
    assert len(svg) < 600


@pytest.mark.parametrize("values", [[], [None], [math.nan, None, math.inf]])
def test_sparkline_no_data(values: list[float | None]) -> None:
    root = parse(sparkline(values))
    assert texts(root, "kz-empty") == [NO_DATA]


def test_sparkline_single_and_flat_values() -> None:
    root = parse(sparkline([4.0]))
    assert not by_class(root, "kz-spark-line")
    assert len(by_class(root, "kz-spark-last")) == 1
    flat = parse(sparkline([2, 2, 2]))
    (line,) = by_class(flat, "kz-spark-line")
    ys = {p.split()[1] for p in re.split("[ML]", line.get("d", "")) if p}
    assert ys == {"9"}  # centred vertically


def test_sparkline_huge_values() -> None:
    parse(sparkline([1e308, -1e308, 0]))


# --------------------------------------------------------------------------- properties

_values = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
)
_xs = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(1.6e9, 1.8e9))
_series = st.builds(Series, st.text(max_size=20), st.lists(st.tuples(_xs, _values), max_size=12))
_bound = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))
_COORD_ATTRS = {"x", "y", "cx", "cy", "width", "height", "x1", "x2", "y1", "y2"}


def assert_sane(svg: str) -> None:
    """Well-formed, and every coordinate is a finite number near the canvas."""
    for el in parse(svg).iter():
        nums = [v for k, v in el.attrib.items() if k in _COORD_ATTRS]
        nums += re.findall(r"[^MLZ ]+", el.get("d", ""))
        for n in nums:
            assert -1e4 < float(n) < 1e4, (el.tag, el.attrib)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_series, max_size=4),
    st.lists(st.tuples(_series, _series), max_size=2),
    _bound,
    _bound,
    st.booleans(),
    st.booleans(),
)
def test_line_chart_never_breaks(
    series: list[Series],
    bands: list[tuple[Series, Series]],
    y_min: float | None,
    y_max: float | None,
    percent: bool,
    x_is_time: bool,
) -> None:
    assert_sane(
        line_chart(
            series,
            title="t",
            bands=bands,
            y_min=y_min,
            y_max=y_max,
            percent=percent,
            x_is_time=x_is_time,
        )
    )


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(max_size=8), max_size=6),
    st.lists(st.tuples(st.text(max_size=8), st.lists(_values, max_size=8)), max_size=3),
    st.booleans(),
)
def test_bar_chart_never_breaks(
    categories: list[str], groups: list[tuple[str, list[float]]], stacked: bool
) -> None:
    assert_sane(bar_chart(categories, groups, title="t", stacked=stacked))


@settings(max_examples=100, deadline=None)
@given(st.lists(_values, max_size=30))
def test_sparkline_never_breaks(values: list[float | None]) -> None:
    assert_sane(sparkline(values))
