"""The failing tests an issue names become a fix's targets."""

from __future__ import annotations

import pytest

from workers.fix.targets import named_in, never_run, short_name, targets_of_named_code

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


ATTRS_FAILING = [
    "tests/test_converters.py::TestPipe::test_wrapped_annotation",  # fails whatever the code
    "tests/test_validators.py::TestMaxLen::test_check_valid[spam]",
    "tests/test_validators.py::TestMaxLen::test_check_valid[value4]",
]


def test_the_failing_tests_named_after_the_code_the_issue_names_are_its_targets() -> None:
    issue = "`attrs.validators.max_len(4)` raises for 'spam':\nValueError: Length of 'x' ..."
    found, names = targets_of_named_code(issue, ATTRS_FAILING)
    assert found == set(ATTRS_FAILING[1:])
    assert names == ["maxlen"]


@pytest.mark.parametrize(
    ("issue", "nodeid"),
    [
        ("max_len rejects exactly the maximum", "tests/t.py::test_max_len"),
        ("max_len rejects exactly the maximum", "tests/t.py::test_max_len_of_bytes[b]"),
        ("`MaxLen` is wrong", "tests/t.py::TestMaxLen::test_ok"),
        ("calling make_default_short_help()", "tests/t.py::test_make_default_short_help[x]"),
        ("pkg.utils.slugify gives 'a-'", "tests/t.py::test_slugify_unicode"),
        ("`slugify` gives 'a-'", "tests/t.py::test_slugify"),
        ("windowed() pads a window too many", "tests/test_more.py::WindowedTests::test_basic"),
        ("`chunked()` loses items", "tests/t.py::ChunkedTestCase::test_even"),
    ],
)
def test_code_names_match_test_names_case_and_underscores_aside(issue: str, nodeid: str) -> None:
    assert targets_of_named_code(issue, [nodeid, "tests/t.py::test_other"])[0] == {nodeid}


@pytest.mark.parametrize(
    "issue",
    [
        "the total is wrong for big carts",  # no code named
        "`add` is wrong",  # too short to tell
        "it raises ValueError and prints a KeyError",  # builtins: the error, not the subject
        "max_len rejects the maximum",  # a test only containing the name, not named for it
    ],
)
def test_nothing_is_chosen_without_a_test_named_for_named_code(issue: str) -> None:
    failing = ["tests/t.py::test_add", "tests/t.py::test_value_error", "tests/t.py::test_a_max_len"]
    assert targets_of_named_code(issue, failing)[0] == set()


SPECTRUM = {
    "tests.test_calc.test_total": {("calc.py", 3), ("calc.py", 7)},
    "tests.test_legacy.test_format[v1]": {("legacy.py", 2)},
}


def test_tests_that_never_run_the_changed_files() -> None:
    total, legacy = "tests/test_calc.py::test_total", "tests/test_legacy.py::test_format[v1]"
    assert never_run([legacy], {"calc.py"}, SPECTRUM)
    assert not never_run([total, legacy], {"calc.py"}, SPECTRUM)
    assert never_run([total, legacy], {"other.py"}, SPECTRUM)
    # no coverage of its own: it cannot be shown not to run the change
    assert not never_run(["tests/test_new.py::test_x"], {"other.py"}, SPECTRUM)


def test_a_module_pytest_could_not_collect_ran_what_its_error_went_through() -> None:
    """idna 3.12's property tests need a newer hypothesis than the sandbox has: the module
    never runs a test, and its error goes through no file of the package, so a patch to
    ``idna/core.py`` that fixes every other target is a whole fix. A module whose import
    failed inside the changed file may be the bug's."""
    props, broken = "tests/test_props.py", "tests/test_tables.py"
    uncollected = {
        props: "tests/test_props.py:61: in <module>\n    _any = st.characters(x=())\nE   TypeError",
        broken: "tests/test_tables.py:3: in <module>\n    T = load()\nidna/core.py:9: in load\n",
    }
    assert never_run([props], {"idna/core.py"}, SPECTRUM, uncollected)
    assert not never_run([broken], {"idna/core.py"}, SPECTRUM, uncollected)
    assert never_run([broken], {"idna/codec.py"}, SPECTRUM, uncollected)
    assert not never_run([props], {"idna/core.py"}, SPECTRUM)  # not known to be uncollected
