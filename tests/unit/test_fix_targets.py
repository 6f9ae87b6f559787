"""The failing tests an issue names become a fix's targets."""

from __future__ import annotations

from workers.fix.targets import named_in, short_name

FAILING = [
    "tests/test_pricing.py::test_total_with_discount",
    "tests/test_pricing.py::TestShipping::test_free_from[50-0]",
    "tests/test_legacy.py::test_total",
]


def test_short_names_drop_the_path_class_and_parameters() -> None:
    assert short_name(FAILING[1]) == "test_free_from"
    assert short_name("test_x") == "test_x"


def test_a_pasted_pytest_summary_names_its_tests() -> None:
    issue = "After upgrading:\n\nFAILED tests/test_pricing.py::test_total_with_discount - assert"
    assert named_in(issue, FAILING) == {FAILING[0]}


def test_a_test_name_counts_as_a_whole_word_only() -> None:
    # "test_total" is part of "test_total_with_discount", not a word of its own there
    assert named_in("test_total_with_discount gives 22.0", FAILING) == {FAILING[0]}
    assert named_in("see test_free_from and test_total.", FAILING) == {FAILING[1], FAILING[2]}


def test_an_issue_that_names_no_test_names_none() -> None:
    assert named_in("total_price([(10, 2)], 0.1) gives 22.0", FAILING) == set()
