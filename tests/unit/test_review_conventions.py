"""What the file's untouched code already does is its convention: ``review.convention_places``."""

from __future__ import annotations

import difflib

from bot.repo_config import RepoConfig
from tests.helpers import review_body_of
from workers.review.diff_model import DiffModel
from workers.review.findings import NEIGHBOUR_FILES, NEIGHBOURS_READ, UNCHANGED_PLACES, Finding
from workers.review.render import convention_lines
from workers.review.ruff_scan import run_ruff
from workers.review.selection import choose_findings

REPO = "octo-org/app"
HAS = "def has_{n}(d, k):\n    return k in d.keys()\n\n\n"


def diff_of(changes: dict[str, tuple[str, str]]) -> DiffModel:
    chunks: list[str] = []
    for path, (old, new) in changes.items():
        chunks += difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    return DiffModel.from_unified("".join(chunks))


def finding(
    places: int | None, severity: str = "low", source: str = "ruff", pattern: str = "ruff:SIM118"
) -> Finding:
    extra: dict[str, object] = {} if places is None else {UNCHANGED_PLACES: places}
    return Finding(
        path="app/lookup.py",
        line=12,
        side="RIGHT",
        pattern=pattern,
        severity=severity,
        message=f"{pattern} here",
        source=source,
        code="return k in d.keys()",
        extra=extra,
    )


def reasons(findings: list[Finding], **review: object) -> list[str]:
    config = RepoConfig.model_validate({"review": review})
    chosen = choose_findings(findings, repo=REPO, pr="7", config=config, memory=None)
    return [c.reason if not c.posted else "posted" for c in chosen.choices]


def test_ruff_counts_the_rules_places_on_the_untouched_lines_of_the_same_file() -> None:
    old = "".join(HAS.format(n=n) for n in range(3))
    changes = {
        "app/lookup.py": (old, old + HAS.format(n=3)),
        "app/other.py": ("X = 1\n", "X = 1\n\n\n" + HAS.format(n=0)),
    }

    found = run_ruff({p: new for p, (_, new) in changes.items()}, diff_of(changes))

    by_path = {f.path: f for f in found if f.pattern == "ruff:SIM118"}
    assert by_path["app/lookup.py"].line == 14
    assert by_path["app/lookup.py"].extra[UNCHANGED_PLACES] == 3
    assert by_path["app/other.py"].extra[UNCHANGED_PLACES] == 0


def test_an_import_of_a_typing_alias_counts_the_annotations_spelled_with_them() -> None:
    """argilla 2.8 added ``Tuple`` to ``from typing import …, Dict, List`` in a file whose
    untouched annotations say ``Dict[str, …]``: the import (UP035) is spelled like the
    file (UP006), and so is ``Optional`` beside ``Union`` (UP045, UP007)."""
    old = (
        "from typing import Dict, Union\n\n\n"
        "def f(x: Dict[str, int], y: Union[int, str]) -> None:\n    pass\n"
    )
    new = old.replace("Dict, Union", "Dict, Optional, Tuple, Union") + (
        "\n\ndef g(z: Optional[int]) -> Tuple[int, int]:\n    return (1, 2)\n"
    )
    changes = {"app/types.py": (old, new)}

    found = run_ruff({"app/types.py": new}, diff_of(changes), select=["UP"])

    places = {f.pattern: f.extra[UNCHANGED_PLACES] for f in found}
    assert places == {"ruff:UP035": 1, "ruff:UP006": 1, "ruff:UP045": 1}


def test_a_remark_the_file_already_earns_three_times_is_left_out() -> None:
    assert reasons([finding(3)]) == ["convention"]
    assert reasons([finding(2)]) == ["posted"]
    assert reasons([finding(None)]) == ["posted"]


def test_a_likely_bug_is_also_a_convention_but_high_and_security_never_are() -> None:
    assert reasons([finding(5, "medium", pattern="ruff:B904")]) == ["convention"]
    assert reasons([finding(40, "high", pattern="ruff:S701")]) == ["posted"]
    assert reasons([finding(40, "security", "secrets", "secrets:private-key")]) == ["posted"]


def test_one_annotation_spelled_the_old_way_is_already_the_files_spelling() -> None:
    """ezdxf 1.4.5 annotated ``DEBUG_SHAPE_NUMBERS: Set[int]`` under the untouched
    ``DEBUG_CODES: Set[int]``: the new line is written like its file, and moving the file
    to ``set[int]`` is a change of its own. Other rules still need three places."""
    for rule in ("UP006", "UP007", "UP035", "UP045"):
        assert reasons([finding(1, pattern=f"ruff:{rule}")]) == ["convention"], rule
        assert reasons([finding(0, pattern=f"ruff:{rule}")]) == ["posted"], rule
    assert reasons([finding(1, pattern="ruff:UP032")]) == ["posted"]
    assert reasons([finding(1, pattern="ruff:UP006")], convention_places=0) == ["posted"]


def test_only_static_analysis_follows_conventions() -> None:
    assert reasons([finding(9, source="llm", pattern="llm:style")]) == ["posted"]


def test_the_threshold_comes_from_the_repo_config_and_zero_turns_it_off() -> None:
    assert reasons([finding(3)], convention_places=4) == ["posted"]
    assert reasons([finding(4)], convention_places=4) == ["convention"]
    assert reasons([finding(500)], convention_places=0) == ["posted"]


def test_conventions_take_no_place_from_the_repeat_cap() -> None:
    held = finding(3)
    fresh = [
        Finding("app/new.py", n, "RIGHT", "ruff:SIM118", "low", "m", "ruff", code=f"k{n}")
        for n in (1, 2)
    ]

    assert reasons([held, *fresh]) == ["convention", "posted", "posted"]


def test_the_review_body_says_what_was_left_out_and_why() -> None:
    held = [finding(20), finding(20)]
    held[1] = Finding(**{**held[1].__dict__, "line": 30})
    lines = convention_lines(held)

    body = review_body_of(1, conventions=lines)

    assert lines == [
        "- `ruff:SIM118` at `app/lookup.py` lines 12, 30 "
        "(the rest of the file does the same in 20 places)"
    ]
    assert convention_lines([finding(1, pattern="ruff:UP006")]) == [
        "- `ruff:UP006` at `app/lookup.py` line 12 (the rest of the file does the same in 1 place)"
    ]
    assert body.startswith("Kaizen reviewed this pull request: 1 comment.\n")
    assert "already written that way (`review.convention_places`):\n" + lines[0] in body


def beside(earned: int, read: int, severity: str = "low") -> Finding:
    return Finding(
        "app/new.py",
        3,
        "RIGHT",
        "ruff:RUF012",
        severity,
        "m",
        "ruff",
        extra={NEIGHBOUR_FILES: earned, NEIGHBOURS_READ: read},
    )


def test_a_new_module_written_like_most_modules_beside_it_follows_their_convention() -> None:
    """ansible-lint 26.11's new rule sets ``tags = [...]`` as its neighbours do: two or
    more of them, and half of those read, earn the rule. One neighbour is no convention,
    nor is a rule most of them keep clear of; high remarks never are."""
    assert reasons([beside(2, 4)]) == ["convention"]
    assert reasons([beside(6, 6)]) == ["convention"]
    assert reasons([beside(1, 1)]) == ["posted"]
    assert reasons([beside(2, 5)]) == ["posted"]
    assert reasons([beside(6, 6, "high")]) == ["posted"]
    assert reasons([beside(6, 6)], convention_places=0) == ["posted"]
    assert convention_lines([beside(3, 4)]) == [
        "- `ruff:RUF012` at `app/new.py` line 3 (3 of 4 modules beside it do the same)"
    ]
