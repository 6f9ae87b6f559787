"""The fix loop's candidate order: tied lines take turns, stronger lines go first whole,
and lines past the first tier wait until its candidates are used up."""

from __future__ import annotations

import textwrap

import pytest

from workers.fix.operators import generate_patches
from workers.fix.planning import MESSAGE_EDIT_SHARE, plausibility, rank_candidates, rank_in_tiers
from workers.fix.types import Patch, Suspect

SOURCE = textwrap.dedent(
    """\
    def split(seq, n):
        q, r = divmod(len(seq), n)
        out = []
        stop = 0
        for i in range(1, n + 1):
            start = stop
            stop += q + 1 if i < r else q
            out.append(seq[start:stop])
        return out
    """
)
PATH = "pkg/split.py"
RANGE_LINE = 5  # for i in range(1, n + 1):
BUG_LINE = 7  # stop += q + 1 if i < r else q


def by_suspect_score(suspect: Suspect, _patch: Patch) -> float:
    return suspect.score


def lines_of(ranked: list[tuple[float, Patch]]) -> list[int]:
    return [patch.line for _, patch in ranked]


def operators_of(ranked: list[tuple[float, Patch]], line: int) -> list[str]:
    return [patch.operator for _, patch in ranked if patch.line == line]


def test_tied_lines_take_turns_so_each_lines_first_guess_comes_early() -> None:
    suspects = [Suspect(PATH, RANGE_LINE, 3.0, "ochiai"), Suspect(PATH, BUG_LINE, 3.0, "ochiai")]

    ranked = rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score)

    assert lines_of(ranked)[:2] == [RANGE_LINE, BUG_LINE]
    assert ranked[1][1] == generate_patches(SOURCE, PATH, BUG_LINE)[0]


def test_every_operators_first_guess_on_a_line_comes_before_any_second_guess() -> None:
    suspects = [Suspect(PATH, BUG_LINE, 3.0, "ochiai")]
    own = [p.operator for p in generate_patches(SOURCE, PATH, BUG_LINE)]
    kinds = list(dict.fromkeys(own))
    assert len(kinds) >= 3 and own.count(kinds[0]) >= 2  # grouped, the first one busy

    ranked = rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score)

    assert operators_of(ranked, BUG_LINE)[: len(kinds)] == kinds
    # A round goes line by line in each line's own order: its first guess leads.
    assert ranked[0][1] == generate_patches(SOURCE, PATH, BUG_LINE)[0]


def test_tied_lines_finish_a_round_of_operators_before_the_next_round() -> None:
    suspects = [Suspect(PATH, RANGE_LINE, 3.0, "ochiai"), Suspect(PATH, BUG_LINE, 3.0, "ochiai")]
    kinds = {
        line: len({p.operator for p in generate_patches(SOURCE, PATH, line)})
        for line in (RANGE_LINE, BUG_LINE)
    }

    ranked = rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score)

    first_round = [(p.line, p.operator) for _, p in ranked[: sum(kinds.values())]]
    assert len(set(first_round)) == len(first_round)  # one guess per (line, operator)
    assert {line for line, _ in first_round} == {RANGE_LINE, BUG_LINE}


def test_a_more_suspicious_line_is_tried_whole_before_a_weaker_one() -> None:
    suspects = [Suspect(PATH, RANGE_LINE, 2.9, "ochiai"), Suspect(PATH, BUG_LINE, 3.0, "ochiai")]

    lines = lines_of(rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score))

    on_bug = len(generate_patches(SOURCE, PATH, BUG_LINE))
    assert lines[:on_bug] == [BUG_LINE] * on_bug
    assert set(lines[on_bug:]) == {RANGE_LINE}


def test_equal_weights_that_differ_only_by_float_rounding_still_tie() -> None:
    suspects = [
        Suspect(PATH, RANGE_LINE, 0.1 + 0.2, "ochiai"),
        Suspect(PATH, BUG_LINE, 0.3, "ochiai"),
    ]
    assert 0.1 + 0.2 != 0.3

    lines = lines_of(rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score))

    assert lines[:2] == [RANGE_LINE, BUG_LINE]


def test_the_same_edit_from_two_suspects_is_tried_once() -> None:
    suspects = [Suspect(PATH, BUG_LINE, 3.0, "traceback"), Suspect(PATH, BUG_LINE, 2.0, "issue")]

    ranked = rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score)

    afters = [patch.after for _, patch in ranked]
    assert len(afters) == len(set(afters)) == len(generate_patches(SOURCE, PATH, BUG_LINE))
    assert {w for w, _ in ranked} == {3.0}


def test_suspects_in_files_not_read_are_skipped() -> None:
    suspects = [Suspect("gone.py", 1, 9.0, "traceback"), Suspect(PATH, BUG_LINE, 1.0, "ochiai")]

    ranked = rank_candidates(suspects, {PATH: SOURCE}, by_suspect_score)

    assert ranked and {patch.path for _, patch in ranked} == {PATH}


def test_a_later_tier_waits_for_the_first_even_when_it_weighs_more() -> None:
    # The weight favours the second tier's line; the tier still comes after.
    suspects = [Suspect(PATH, RANGE_LINE, 1.0, "ochiai"), Suspect(PATH, BUG_LINE, 5.0, "issue")]

    lines = lines_of(list(rank_in_tiers(suspects, {PATH: SOURCE}, by_suspect_score, tier=1)))

    on_range = len(generate_patches(SOURCE, PATH, RANGE_LINE))
    assert lines[:on_range] == [RANGE_LINE] * on_range
    assert lines[on_range:] and set(lines[on_range:]) == {BUG_LINE}


def test_a_later_tier_is_generated_only_when_the_first_is_used_up() -> None:
    suspects = [Suspect(PATH, BUG_LINE, 2.0, "ochiai"), Suspect(PATH, RANGE_LINE, 1.0, "ochiai")]
    weighed: list[int] = []

    def recording(suspect: Suspect, patch: Patch) -> float:
        weighed.append(suspect.line)
        return suspect.score

    plan = rank_in_tiers(suspects, {PATH: SOURCE}, recording, tier=1)
    next(plan)

    assert set(weighed) == {BUG_LINE}
    list(plan)
    assert set(weighed) == {BUG_LINE, RANGE_LINE}


def test_a_tier_takes_in_every_line_tied_with_its_last() -> None:
    # A tier of one line: the second line ties with it, so it joins and they take turns.
    suspects = [Suspect(PATH, RANGE_LINE, 2.0, "ochiai"), Suspect(PATH, BUG_LINE, 2.0, "ochiai")]

    lines = lines_of(list(rank_in_tiers(suspects, {PATH: SOURCE}, by_suspect_score, tier=1)))

    assert lines[:4] == [RANGE_LINE, BUG_LINE, RANGE_LINE, BUG_LINE]


def test_an_edit_offered_by_an_earlier_tier_is_not_offered_again() -> None:
    suspects = [Suspect(PATH, BUG_LINE, 3.0, "traceback"), Suspect(PATH, BUG_LINE, 2.0, "issue")]

    ranked = list(rank_in_tiers(suspects, {PATH: SOURCE}, by_suspect_score, tier=1))

    assert len(ranked) == len(generate_patches(SOURCE, PATH, BUG_LINE))
    assert {w for w, _ in ranked} == {3.0}


def test_a_tier_of_no_lines_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        list(rank_in_tiers([], {PATH: SOURCE}, by_suspect_score, tier=0))


def test_a_decay_lets_a_less_suspicious_lines_first_guess_past_a_busy_lines_tail() -> None:
    source = "def f(a, b, c):\n    x = g(a, b, c)\n    return x > 0\n"
    busy = Suspect("m.py", 2, 3.0, "")
    next_line = Suspect("m.py", 3, 2.0, "")

    def weight(s: Suspect, p: Patch) -> float:
        return s.score

    whole = [p.line for _, p in rank_candidates([busy, next_line], {"m.py": source}, weight)]
    decayed = [p.line for _, p in rank_candidates([busy, next_line], {"m.py": source}, weight, 0.8)]
    first_on_3 = whole.index(3)
    assert whole[:first_on_3] == [2] * first_on_3 and first_on_3 > 2  # the busy line, whole
    assert decayed.index(3) < first_on_3
    assert sorted(decayed) == sorted(whole)  # the same candidates, in another order


def test_a_name_in_a_raised_message_counts_a_quarter_and_one_in_returned_text_whole() -> None:
    """A traceback points at the ``raise``; its message is the symptom the issue quotes
    more often than the bug. A returned message is the output itself (parsy's
    ``f"… got {min} item(s)"`` for ``{times}``)."""
    source = textwrap.dedent(
        """\
        def check(low, high, value):
            if value < low:
                raise ValueError(f"{value} is below {low}")
            return f"{value} is at least {low}"
        """
    )
    raised = generate_patches(source, "a.py", 3, operators=["wrong-variable"])
    returned = generate_patches(source, "a.py", 4, operators=["wrong-variable"])
    assert raised and returned
    assert {plausibility(p) for p in raised} == {MESSAGE_EDIT_SHARE}
    assert {plausibility(p) for p in returned} == {1.0}
