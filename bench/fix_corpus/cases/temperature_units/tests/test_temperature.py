import pytest
from units.temperature import c_to_f, c_to_k, convert, f_to_c, format_temperature


def test_celsius_to_fahrenheit():
    assert c_to_f(100) == pytest.approx(212)


def test_fahrenheit_to_celsius():
    assert f_to_c(212) == pytest.approx(100)


def test_convert_freezing_point():
    assert convert(32, "F", "C") == pytest.approx(0)


def test_kelvin():
    assert c_to_k(0) == pytest.approx(273.15)
    assert convert(300, "K", "C") == pytest.approx(26.85)


def test_below_absolute_zero():
    with pytest.raises(ValueError):
        c_to_k(-300)


def test_unknown_unit():
    with pytest.raises(ValueError, match="unknown unit"):
        convert(1, "C", "R")


def test_format():
    assert format_temperature(21.456) == "21.5 C"
