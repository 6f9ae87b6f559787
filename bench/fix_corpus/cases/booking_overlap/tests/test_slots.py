import pytest
from booking.slots import ConflictError, RoomCalendar, Slot


def test_parse_and_str():
    slot = Slot.parse("09:30 - 10:15")
    assert (slot.start, slot.end, slot.duration) == (570, 615, 45)
    assert str(slot) == "09:30-10:15"


def test_overlapping_slots():
    assert Slot.parse("09:00-10:00").overlaps(Slot.parse("09:30-11:00"))


def test_separate_slots_do_not_overlap():
    assert not Slot.parse("09:00-10:00").overlaps(Slot.parse("14:00-15:00"))


def test_book_two_meetings():
    cal = RoomCalendar()
    cal.book(Slot.parse("09:00-10:00"))
    cal.book(Slot.parse("14:00-15:00"))


def test_conflict_rejected():
    cal = RoomCalendar()
    cal.book(Slot.parse("09:00-10:00"))
    with pytest.raises(ConflictError):
        cal.book(Slot.parse("09:45-10:30"))


def test_free_between():
    cal = RoomCalendar()
    cal.book(Slot.parse("10:00-11:00"))
    assert [str(s) for s in cal.free_between(540, 720)] == ["09:00-10:00", "11:00-12:00"]


def test_empty_slot_rejected():
    with pytest.raises(ValueError):
        Slot(600, 600)
