"""One remark per kind of finding is enough: ``review.max_per_pattern``."""

from __future__ import annotations

from bot.repo_config import RepoConfig
from tests.helpers import review_body_of
from workers.review.findings import Finding
from workers.review.render import repeat_lines
from workers.review.selection import choose_findings, repeats_of_posted

REPO = "octo-org/app"


def finding(
    pattern: str, path: str, line: int, severity: str = "medium", source: str = "ruff"
) -> Finding:
    return Finding(
        path=path,
        line=line,
        side="RIGHT",
        pattern=pattern,
        severity=severity,
        message=f"{pattern} here",
        source=source,
        code=f"x{line} = {path!r}",
    )


def config(**review: object) -> RepoConfig:
    return RepoConfig.model_validate({"review": review})


def chosen_places(findings: list[Finding], **review: object) -> tuple[list, list]:  # type: ignore[type-arg]
    chosen = choose_findings(findings, repo=REPO, pr="7", config=config(**review), memory=None)
    posted = [(c.finding.pattern, c.finding.path, c.finding.line) for c in chosen.posted]
    repeats = [
        (c.finding.pattern, c.finding.path, c.finding.line)
        for c in chosen.suppressed
        if c.reason == "repeat"
    ]
    return posted, repeats


def test_the_first_places_of_a_pattern_are_posted_and_the_rest_are_repeats() -> None:
    many = [finding("ruff:S610", "tests/test_sockets.py", n) for n in (708, 779, 781, 784)]

    posted, repeats = chosen_places(many)

    assert posted == [
        ("ruff:S610", "tests/test_sockets.py", 708),
        ("ruff:S610", "tests/test_sockets.py", 779),
    ]
    assert repeats == [
        ("ruff:S610", "tests/test_sockets.py", 781),
        ("ruff:S610", "tests/test_sockets.py", 784),
    ]


def test_the_budget_goes_to_other_patterns_instead() -> None:
    many = [finding("ruff:PLW1510", f"tests/test_{n}.py", 6, "low") for n in range(7)]
    other = finding("ruff:B006", "app/util.py", 4, "low")

    posted, _ = chosen_places([*many, other], max_comments=3)

    assert [p[0] for p in posted] == ["ruff:PLW1510", "ruff:PLW1510", "ruff:B006"]


def test_the_most_severe_places_are_the_ones_kept() -> None:
    found = [
        finding("ruff:B006", "a.py", 1, "low"),
        finding("ruff:B006", "b.py", 1, "low"),
        finding("ruff:B006", "c.py", 1, "high"),
    ]

    posted, repeats = chosen_places(found, max_per_pattern=1)

    assert posted == [("ruff:B006", "c.py", 1)]
    assert [r[1] for r in repeats] == ["a.py", "b.py"]


def test_the_llms_findings_of_one_category_are_different_remarks() -> None:
    bugs = [finding("llm:correctness", f"m{n}.py", 3, source="llm") for n in range(4)]

    posted, repeats = chosen_places(bugs)

    assert len(posted) == 4
    assert repeats == []


def test_security_findings_are_never_repeats() -> None:
    keys = [finding("secrets:private-key", f"certs/{n}.key", 1, "security") for n in range(5)]

    posted, repeats = chosen_places(keys)

    assert len(posted) == 5
    assert repeats == []


def test_zero_means_no_limit() -> None:
    many = [finding("ruff:S610", "t.py", n) for n in range(1, 6)]

    posted, repeats = chosen_places(many, max_per_pattern=0)

    assert len(posted) == 5
    assert repeats == []


def test_the_review_body_lists_where_else_a_posted_remark_applies() -> None:
    many = [finding("ruff:S610", "tests/test_sockets.py", n) for n in (708, 779, 781, 784)]
    many.append(finding("ruff:S610", "tests/test_streams.py", 12))
    chosen = choose_findings(many, repo=REPO, pr="7", config=config(), memory=None)

    lines = repeat_lines(repeats_of_posted(chosen))
    body = review_body_of(2, repeats=lines)

    assert lines == [
        "- `ruff:S610` also at `tests/test_sockets.py` lines 781, 784;"
        " `tests/test_streams.py` line 12"
    ]
    assert "The same remark applies to (one comment each is enough):\n" + lines[0] in body


def test_a_pattern_with_nothing_posted_is_not_listed() -> None:
    many = [finding("ruff:S610", "t.py", n) for n in range(1, 5)]
    chosen = choose_findings(many, repo=REPO, pr="7", config=config(max_comments=0), memory=None)

    assert repeats_of_posted(chosen) == {}


def test_a_long_list_is_cut() -> None:
    many = [finding("ruff:S610", "t.py", n) for n in range(1, 41)]

    (line,) = repeat_lines({"ruff:S610": many}, limit=3)

    assert line == "- `ruff:S610` also at `t.py` lines 1, 2, 3; and 37 more"


def test_comments_already_on_the_pr_count() -> None:
    """``/kaizen review`` again: the two places said before are not followed by two more."""
    many = [finding("ruff:S610", "t.py", n) for n in range(1, 6)]
    said = {f.fingerprint for f in many[:2]}

    chosen = choose_findings(
        many, repo=REPO, pr="7", config=config(), memory=None, already_posted=said
    )

    assert chosen.posted == []
    assert [c.finding.line for c in chosen.suppressed if c.reason == "repeat"] == [3, 4, 5]
    assert [f.line for f in repeats_of_posted(chosen)["ruff:S610"]] == [3, 4, 5]


def test_the_same_remark_on_the_same_code_elsewhere_in_the_file_is_a_listed_repeat() -> None:
    """djangorestframework's pagination.py: one ``warnings.warn(...)`` line, three times."""

    def warn(line: int) -> Finding:
        return Finding(
            path="rest_framework/pagination.py",
            line=line,
            side="RIGHT",
            pattern="ruff:B028",
            severity="medium",
            message="No explicit `stacklevel`",
            source="ruff",
            code="warnings.warn(msg, RemovedInDRF317Warning)",
        )

    same_place_twice = [warn(319), warn(319)]
    chosen = choose_findings(
        [warn(319), warn(536), warn(939), *same_place_twice],
        repo=REPO,
        pr="7",
        config=config(),
        memory=None,
    )

    assert [c.finding.line for c in chosen.posted] == [319]
    assert [(c.finding.line, c.reason) for c in chosen.suppressed] == [
        (536, "repeat"),
        (939, "repeat"),
        (319, "duplicate"),
        (319, "duplicate"),
    ]
    assert repeat_lines(repeats_of_posted(chosen)) == [
        "- `ruff:B028` also at `rest_framework/pagination.py` lines 536, 939"
    ]


def test_a_remark_another_rule_makes_on_the_same_line_is_a_duplicate() -> None:
    """addict 2.4's ``for key, val in self.items():`` drew B007 (``key`` unused) and
    PERF102 (use ``.values()``) on one line: one piece of advice, said twice (textstat
    0.7's ``result == lo or result == hi`` drew SIM109 and PLR1714, both ``in (lo, hi)``;
    kanren 0.3's ``zip(lst, lst[1:])`` drew B905, whose ``strict=True`` would raise there,
    and RUF007, ``itertools.pairwise``, which leaves no ``zip`` to be strict about). The
    rule that says more stays; alone on its line, or where the other is below the repo's
    ``min_severity``, the lesser one is posted."""
    findings = [
        finding("ruff:B007", "addict/addict.py", 154, "medium"),
        finding("ruff:PERF102", "addict/addict.py", 154, "low"),
        finding("ruff:UP030", "cli.py", 44, "low"),
        finding("ruff:UP032", "cli.py", 44, "low"),
        finding("ruff:B007", "addict/addict.py", 170, "medium"),
        finding("ruff:RET501", "tests/test_dump.py", 546, "low"),
        finding("ruff:PLR1711", "tests/test_dump.py", 546, "low"),
        finding("ruff:PLR1704", "intelhex/__init__.py", 777, "medium"),
        finding("ruff:B020", "intelhex/__init__.py", 777, "medium"),
        finding("ruff:SIM109", "tests/test_text_standard.py", 50, "low"),
        finding("ruff:PLR1714", "tests/test_text_standard.py", 50, "low"),
        finding("ruff:B905", "tests/test_goals.py", 152, "medium"),
        finding("ruff:RUF007", "tests/test_goals.py", 152, "low"),
    ]

    posted, _ = chosen_places(findings)
    strict, _ = chosen_places(findings, min_severity="medium")

    assert sorted(posted) == [
        ("ruff:B007", "addict/addict.py", 170),
        ("ruff:B020", "intelhex/__init__.py", 777),
        ("ruff:PERF102", "addict/addict.py", 154),
        ("ruff:PLR1711", "tests/test_dump.py", 546),
        ("ruff:PLR1714", "tests/test_text_standard.py", 50),
        ("ruff:RUF007", "tests/test_goals.py", 152),
        ("ruff:UP032", "cli.py", 44),
    ]
    assert sorted(strict) == [
        ("ruff:B007", "addict/addict.py", 154),
        ("ruff:B007", "addict/addict.py", 170),
        ("ruff:B020", "intelhex/__init__.py", 777),
        ("ruff:B905", "tests/test_goals.py", 152),
    ]
