"""Temperature conversions and the formatter used by the weather widget."""

from collections.abc import Callable

ABSOLUTE_ZERO_C = -273.15


def c_to_f(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def f_to_c(fahrenheit: float) -> float:
    return (fahrenheit + 32) * 5 / 9


def c_to_k(celsius: float) -> float:
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError(f"below absolute zero: {celsius}")
    return celsius - ABSOLUTE_ZERO_C


def k_to_c(kelvin: float) -> float:
    if kelvin < 0:
        raise ValueError(f"negative kelvin: {kelvin}")
    return kelvin + ABSOLUTE_ZERO_C


def _identity(value: float) -> float:
    return value


_TO_C: dict[str, Callable[[float], float]] = {"C": _identity, "F": f_to_c, "K": k_to_c}
_FROM_C: dict[str, Callable[[float], float]] = {"C": _identity, "F": c_to_f, "K": c_to_k}


def convert(value: float, source: str, target: str) -> float:
    """Convert ``value`` between the units "C", "F" and "K"."""
    try:
        to_c = _TO_C[source.upper()]
        from_c = _FROM_C[target.upper()]
    except KeyError as exc:
        raise ValueError(f"unknown unit: {exc.args[0]}") from None
    return from_c(to_c(value))


def format_temperature(value: float, unit: str = "C", digits: int = 1) -> str:
    return f"{value:.{digits}f} {unit.upper()}"
