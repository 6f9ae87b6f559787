"""Human-friendly durations: 3725 -> "1h2m5s", and parsing them back."""

import re

_UNITS = {"h": 3600, "m": 60, "s": 1}
_TOKEN = re.compile(r"(\d+)\s*([hms])")


def split_duration(seconds: int) -> tuple[int, int, int]:
    """(hours, minutes, seconds) of a non-negative number of seconds."""
    if seconds < 0:
        raise ValueError("negative duration")
    total = int(seconds)
    hours = total // 3600
    rem = total % 3600
    minutes = rem % 60
    secs = rem % 60
    return hours, minutes, secs


def format_duration(seconds: int, *, compact: bool = True) -> str:
    hours, minutes, secs = split_duration(seconds)
    parts = [
        f"{value}{unit}" for value, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if value
    ]
    if not parts:
        return "0s"
    return ("" if compact else " ").join(parts)


def parse_duration(text: str) -> int:
    """Seconds in a string like "1h 30m" or "45s"."""
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    pos = 0
    total = 0
    for match in _TOKEN.finditer(text):
        if text[pos : match.start()].strip():
            raise ValueError(f"cannot parse duration {text!r}")
        total += int(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos == 0 or text[pos:].strip():
        raise ValueError(f"cannot parse duration {text!r}")
    return total


def clock(seconds: int) -> str:
    hours, minutes, secs = split_duration(seconds)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"
