"""The LLM fixer's tools under answers a weak, confused or prompt-injected model gives: every
bad action costs one step with an error the model can read, never the fix run."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fakes.chat import FakeChat
from workers.fix.evaluate import TestsOutcome
from workers.fix.llm_policy import SEARCH_TIMEOUT_S, LlmFixPolicy
from workers.fix.loop import FixContext
from workers.sandbox.base import RunResult
from workers.sandbox.junit import TestResult

CODE = "def total(prices):\n    return sum(prices) * 2\n"


def scripted(*answers: str) -> FakeChat:
    """A model answering ``answers`` in turn, then finishing."""
    return FakeChat(*answers, default='{"action": "finish", "args": {}}')


class NoTestRuns:
    """The actions under test never run tests; a run would mean a wrong dispatch."""

    runs = 0

    def run(self, patches: Any) -> Any:
        raise AssertionError("no action here should run the tests")


def context(tmp_path: Path, files: dict[str, str] | None = None) -> FixContext:
    failing = TestResult(
        "tests/test_shop.py::test_total",
        "tests.test_shop",
        "test_total",
        "tests/test_shop.py",
        "failed",
        0.01,
        "assert 6 == 3",
    )
    return FixContext(
        repo="acme/shop",
        issue_id="7",
        issue_text="total() doubles the sum",
        checkout=tmp_path,
        baseline=TestsOutcome(run=RunResult(1, "", "", 0.1), tests=[failing]),
        suspects=[],
        error_class="AssertionError",
        files=files if files is not None else {"shop/price.py": CODE},
        skills=[],
        reflections=[],
    )


def act(action: str, **args: Any) -> str:
    return json.dumps({"thought": action, "action": action, "args": args})


def observations(model: FakeChat) -> list[str]:
    """What the model was told after each of its actions."""
    return [m[-1]["content"] for m in model.requests[1:]]


def test_a_line_number_of_the_wrong_type_is_an_error_the_model_reads(tmp_path: Path) -> None:
    model = scripted(
        act("read", path="shop/price.py", start="ten"),
        act("read", path="shop/price.py", end=[2]),
        act("read", path="shop/price.py", start="2", end=2.0),
        act("edit", path="shop/price.py", search="* 2", replace=""),
        act("finish", explanation="removed the doubling"),
    )
    patches, reflection = LlmFixPolicy(model).attempt(context(tmp_path), NoTestRuns(), number=1)
    seen = observations(model)
    assert seen[0].startswith("error:") and "'start' must be a line number" in seen[0]
    assert seen[1].startswith("error:") and "'end'" in seen[1]
    assert seen[2] == "2:     return sum(prices) * 2"
    assert reflection is None
    assert [p.after for p in patches] == ["def total(prices):\n    return sum(prices) \n"]


def test_edit_texts_that_are_not_strings_are_refused_not_stringified(tmp_path: Path) -> None:
    model = scripted(
        act("edit", path="shop/price.py", search="* 2", replace=["return", "sum(prices)"])
    )
    patches, _ = LlmFixPolicy(model).attempt(context(tmp_path), NoTestRuns(), number=1)
    assert observations(model)[0] == "error: 'replace' must be a string, not list"
    assert patches == []


def test_a_catastrophic_search_pattern_is_stopped_and_explained(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": ("a" * 3000 + "!\n") * 50 for i in range(3)}
    model = scripted(act("search", pattern="(a|aa)+$"), act("search", pattern="total"))
    started = time.monotonic()
    LlmFixPolicy(model).attempt(
        context(tmp_path, files | {"shop/price.py": CODE}), NoTestRuns(), number=1
    )
    assert time.monotonic() - started < SEARCH_TIMEOUT_S + 3
    seen = observations(model)
    assert seen[0].startswith("error: the search took over")
    assert seen[1] == "shop/price.py:1: def total(prices):"


def test_a_pattern_that_would_take_gigabytes_to_compile_is_refused(tmp_path: Path) -> None:
    model = scripted(act("search", pattern="a{100000000}"), act("search", pattern="("))
    LlmFixPolicy(model).attempt(context(tmp_path), NoTestRuns(), number=1)
    seen = observations(model)
    assert seen[0] == "error: bad regex: repeat counts over 999 are refused"
    assert seen[1].startswith("error: bad regex:")


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(
        [
            "shop/price.py",
            "tests/test_shop.py",
            "../etc/passwd",
            ".github/workflows/ci.yml",
            "* 2",
            "total",
            "(a+)+$",
            "3",
            "-1",
        ]
    )
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
ARG_NAMES = st.sampled_from(
    ["path", "start", "end", "search", "replace", "pattern", "explanation", "other"]
)
WELL_FORMED_EDITS = st.builds(
    lambda path, search, replace: act("edit", path=path, search=search, replace=replace),
    st.sampled_from(["shop/price.py", "tests/test_shop.py", "../etc/passwd", ".git/config"]),
    st.sampled_from(["* 2", "total", "return", "sum(prices)", "absent"]),
    st.text(max_size=12),
)
ANSWERS = st.one_of(
    WELL_FORMED_EDITS,  # without these, no random answer ever makes a patch
    st.builds(
        lambda action, args: json.dumps({"action": action, "args": args}),
        st.sampled_from(["search", "read", "edit", "finish", "delete", ""]),
        st.dictionaries(ARG_NAMES, JSON_VALUES, max_size=4),
    ),
    st.builds(lambda v: json.dumps({"action": "read", "args": v}), JSON_VALUES),
    st.text(max_size=60),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(answers=st.lists(ANSWERS, min_size=1, max_size=6))
@example(answers=[act("edit", path="shop/price.py", search="* 2", replace="")])
@example(
    answers=[
        act("edit", path="../etc/passwd", search="root", replace="x"),
        act("edit", path="shop/price.py", search="total", replace="grand_total"),
    ]
)
def test_any_answers_end_in_patches_inside_the_repository_or_none(
    tmp_path: Path, answers: list[str]
) -> None:
    model = scripted(*answers)
    patches, _ = LlmFixPolicy(model, max_steps=6).attempt(context(tmp_path), NoTestRuns(), number=1)
    assert all(p.path == "shop/price.py" for p in patches)
    seen = observations(model)
    assert seen  # an edit is followed by another step; no edit, by the request to reflect
    assert all(isinstance(o, str) and o for o in seen)


def test_a_test_is_never_edited_whether_its_name_or_pytests_testpaths_says_so(
    tmp_path: Path,
) -> None:
    """celery keeps its tests in t/unit (testpaths): no test_ name, still the judge."""
    files = {"shop/price.py": CODE, "t/unit/shop_checks.py": "assert total([1]) == 2\n"}
    ctx = context(tmp_path, files)
    ctx.test_roots = ("t/unit",)
    model = scripted(
        act("edit", path="t/unit/shop_checks.py", search="== 2", replace="== 1"),
        act("edit", path="tests/test_shop.py", search="6", replace="3"),
        act("edit", path="shop/price.py", search=" * 2", replace=""),
    )

    patches, _ = LlmFixPolicy(model).attempt(ctx, NoTestRuns(), number=1)

    seen = observations(model)
    assert (
        seen[0] == seen[1] == "error: refused: tests are the judge, not the patient; edit the code"
    )
    assert [p.path for p in patches] == ["shop/price.py"]
