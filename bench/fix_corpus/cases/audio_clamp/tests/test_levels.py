import pytest
from audio.levels import apply_gain, clamp, db_to_gain, gain_to_db, normalize_peak, peak


def test_clamp_inside_range():
    assert clamp(0.25, -1.0, 1.0) == 0.25


def test_clamp_below_range():
    assert clamp(-3.0, -1.0, 1.0) == -1.0


def test_clamp_bad_bounds():
    with pytest.raises(ValueError):
        clamp(0, 1, -1)


def test_apply_gain_clips():
    assert apply_gain([0.2, -0.5, 0.8], 2.0) == pytest.approx([0.4, -1.0, 1.0])


def test_db_conversions():
    assert db_to_gain(-6.0) == pytest.approx(0.501, abs=1e-3)
    assert gain_to_db(1.0) == 0.0
    assert gain_to_db(0.0) == -120.0


def test_peak_and_normalize():
    samples = [0.1, -0.4, 0.2]
    assert peak(samples) == 0.4
    assert peak(normalize_peak(samples, 0.0)) == pytest.approx(1.0)
