from __future__ import annotations

import pytest

from memory.feedback import (
    DEFAULT_TABLE,
    Effect,
    UnknownSignal,
    combine,
    effect_of,
    load_table,
)
from memory.types import Outcome

Oc = Outcome


def test_default_table_maps_signals_to_outcomes_and_weights() -> None:
    assert DEFAULT_TABLE["thumbs_up"] == Effect(Oc.ACCEPTED, 1.0, 0.0)
    assert DEFAULT_TABLE["applied"] == Effect(Oc.ACCEPTED, 1.0, 0.0)
    assert DEFAULT_TABLE["bad"] == Effect(Oc.REJECTED, 0.0, 1.0)
    assert DEFAULT_TABLE["addressed"] == Effect(Oc.ADDRESSED, 0.8, 0.0)
    assert DEFAULT_TABLE["dismissed"] == Effect(Oc.DISMISSED, 0.0, 0.8)
    assert DEFAULT_TABLE["fix_merged_edited"] == Effect(Oc.PARTLY, 0.5, 0.5)
    assert DEFAULT_TABLE["fix_closed"] == Effect(Oc.REJECTED, 0.0, 1.0)


def test_silence_weighs_a_little_more_than_half_a_thumbs_down() -> None:
    # the learning simulation's choice (memory.simulation.KaizenParams): most rejections
    # are silent, so silence must count, but less than an explicit 👎
    ignored, down = DEFAULT_TABLE["ignored"], DEFAULT_TABLE["thumbs_down"]
    assert ignored.outcome is Oc.IGNORED
    assert ignored == Effect(Oc.IGNORED, 0.0, 0.6)
    assert down.beta / 2 < ignored.beta < down.beta


def test_default_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        DEFAULT_TABLE["thumbs_up"] = Effect(Oc.REJECTED, 0.0, 1.0)  # type: ignore[index]


def test_load_table_without_overrides_is_the_default() -> None:
    assert load_table(None) == dict(DEFAULT_TABLE)
    assert load_table({}) == dict(DEFAULT_TABLE)


def test_override_changes_only_the_fields_given() -> None:
    table = load_table({"ignored": {"beta": 0.2}})
    assert table["ignored"] == Effect(Oc.IGNORED, 0.0, 0.2)
    assert table["thumbs_up"] == DEFAULT_TABLE["thumbs_up"]


def test_override_can_add_a_new_signal_kind() -> None:
    table = load_table({"rocket": {"outcome": "accepted", "alpha": 2}})
    assert table["rocket"] == Effect(Oc.ACCEPTED, 2.0, 0.0)
    assert isinstance(table["rocket"].alpha, float)


def test_new_kind_needs_an_outcome() -> None:
    with pytest.raises(ValueError, match=r"'rocket' is new.*outcome"):
        load_table({"rocket": {"alpha": 1.0}})


def test_unknown_outcome_is_rejected_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"'thumbs_up': unknown outcome 'liked'.*accepted"):
        load_table({"thumbs_up": {"outcome": "liked"}})


def test_pending_is_not_an_outcome_a_signal_can_give() -> None:
    with pytest.raises(ValueError, match="pending"):
        load_table({"thumbs_up": {"outcome": "pending"}})


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "1", True, 1e6])
def test_bad_weights_are_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match=r"signal 'bad': beta"):
        load_table({"bad": {"beta": bad}})


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        load_table({"good": {"weight": 1.0}})


def test_effect_of_known_kind() -> None:
    assert effect_of("thumbs_down") == Effect(Oc.REJECTED, 0.0, 1.0)
    table = load_table({"thumbs_down": {"beta": 2.0}})
    assert effect_of("thumbs_down", table).beta == 2.0


def test_effect_of_unknown_kind_names_the_valid_kinds() -> None:
    with pytest.raises(UnknownSignal) as info:
        effect_of("heart")
    assert isinstance(info.value, ValueError)
    assert "'heart'" in str(info.value)
    assert "thumbs_up" in str(info.value) and "fix_closed" in str(info.value)


def test_effect_itself_validates() -> None:
    with pytest.raises(ValueError):
        Effect(Oc.ACCEPTED, -1.0, 0.0)
    with pytest.raises(ValueError):
        Effect(Oc.PENDING, 1.0, 0.0)


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [
        # anything replaces pending
        (Oc.PENDING, Oc.IGNORED, Oc.IGNORED),
        (Oc.PENDING, Oc.ACCEPTED, Oc.ACCEPTED),
        # explicit words beat silence, whichever came first
        (Oc.IGNORED, Oc.REJECTED, Oc.REJECTED),
        (Oc.REJECTED, Oc.IGNORED, Oc.REJECTED),
        (Oc.ACCEPTED, Oc.IGNORED, Oc.ACCEPTED),
        # the latest explicit word wins
        (Oc.ACCEPTED, Oc.REJECTED, Oc.REJECTED),
        (Oc.REJECTED, Oc.ACCEPTED, Oc.ACCEPTED),
        (Oc.ACCEPTED, Oc.PARTLY, Oc.PARTLY),
        # explicit beats what was inferred from the thread, in either order
        (Oc.REJECTED, Oc.DISMISSED, Oc.REJECTED),
        (Oc.ADDRESSED, Oc.ACCEPTED, Oc.ACCEPTED),
        (Oc.DISMISSED, Oc.REJECTED, Oc.REJECTED),
        # inferred beats ignored; among inferred the latest wins
        (Oc.IGNORED, Oc.ADDRESSED, Oc.ADDRESSED),
        (Oc.ADDRESSED, Oc.IGNORED, Oc.ADDRESSED),
        (Oc.DISMISSED, Oc.ADDRESSED, Oc.ADDRESSED),
        # pending never undoes anything
        (Oc.ACCEPTED, Oc.PENDING, Oc.ACCEPTED),
    ],
)
def test_combine(current: Outcome, new: Outcome, expected: Outcome) -> None:
    assert combine(current, new) is expected


def test_combine_accepts_stored_strings() -> None:
    assert combine("rejected", "ignored") is Oc.REJECTED  # type: ignore[arg-type]
