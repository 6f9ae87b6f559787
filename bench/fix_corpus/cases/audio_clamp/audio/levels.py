"""Sample-level gain and normalisation for float audio in -1.0..1.0."""

from __future__ import annotations

import math
from collections.abc import Sequence

SILENCE_DB = -120.0


def clamp(value: float, low: float, high: float) -> float:
    if low > high:
        raise ValueError("low must not exceed high")
    return min(low, min(value, high))


def db_to_gain(db: float) -> float:
    return 10 ** (db / 20)


def gain_to_db(gain: float) -> float:
    if gain <= 0:
        return SILENCE_DB
    return max(SILENCE_DB, 20 * math.log10(gain))


def apply_gain(samples: Sequence[float], gain: float) -> list[float]:
    """Scale the samples, clipping anything that leaves -1.0..1.0."""
    return [clamp(s * gain, -1.0, 1.0) for s in samples]


def peak(samples: Sequence[float]) -> float:
    return max((abs(s) for s in samples), default=0.0)


def normalize_peak(samples: Sequence[float], target_db: float = -1.0) -> list[float]:
    """Scale so that the loudest sample sits at ``target_db``."""
    loudest = peak(samples)
    if loudest == 0:
        return list(samples)
    factor = db_to_gain(target_db) / loudest
    return [s * factor for s in samples]
