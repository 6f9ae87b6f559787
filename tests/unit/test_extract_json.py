"""Reading JSON out of a model's answer: weak or looping models must cost a retry, never a
crashed review or fix."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.llm import extract_json


def test_bare_fenced_and_embedded_objects_are_read() -> None:
    assert extract_json('{"a": 1}') == ({"a": 1}, None)
    assert extract_json('Here:\n```json\n{"a": 2}\n```') == ({"a": 2}, None)
    assert extract_json('Sure! {"a": 3} hope that helps') == ({"a": 3}, None)


@pytest.mark.parametrize(
    "answer",
    [
        "[" * 100_000,  # a model stuck repeating one token
        '{"a":' * 100_000,
        'Answer: {"findings": ' + "[" * 5_000,
        "```json\n" + "[" * 50_000 + "\n```",
    ],
)
def test_runaway_nesting_is_a_reason_not_a_crash(answer: str) -> None:
    value, problem = extract_json(answer)
    assert value is None
    assert problem is not None and "deep" in problem


@pytest.mark.parametrize(
    "answer",
    [
        '{"score": NaN}',
        '{"line": Infinity}',
        '{"line": -Infinity}',
        '{"line": 1e400}',
        '```json\n{"score": NaN}\n```',
        'ok {"score": -1e999}',
    ],
)
def test_numbers_json_does_not_allow_are_refused(answer: str) -> None:
    value, problem = extract_json(answer)
    assert value is None
    assert problem is not None


def test_the_first_valid_object_wins_over_an_earlier_broken_one() -> None:
    assert extract_json('{"x": NaN} then {"x": 1}') == ({"x": 1}, None)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2_000))
def test_any_text_gives_a_value_or_a_reason_and_never_raises(answer: str) -> None:
    value, problem = extract_json(answer)
    assert problem is None or value is None


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES.filter(lambda v: v is not None), st.text(max_size=40))
def test_a_json_object_in_prose_comes_back_unchanged(value: object, prose: str) -> None:
    obj = {"value": value}
    got, problem = extract_json(f"{json.dumps(obj)}")
    assert problem is None and got == obj
    fenced, problem = extract_json(f"{prose.replace('`', '')}\n```json\n{json.dumps(obj)}\n```")
    assert problem is None and fenced == obj


@pytest.mark.parametrize("tag", ["think", "thinking", "Reasoning"])
def test_a_reasoning_models_drafts_before_its_answer_are_not_the_answer(tag: str) -> None:
    answer = (
        f'<{tag}>\nMaybe {{"findings": [{{"line": 3}}]}}? No, line 3 is fine.\n</{tag}>\n\n'
        '```json\n{"findings": []}\n```'
    )
    assert extract_json(answer) == ({"findings": []}, None)


def test_an_answer_that_is_only_thinking_has_no_json() -> None:
    value, problem = extract_json("<think>I am not sure what to say</think>")
    assert value is None and problem == "the answer was empty"
