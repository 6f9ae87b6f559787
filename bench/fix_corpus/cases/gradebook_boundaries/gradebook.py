"""Turn raw scores into letter grades and class reports."""

GRADE_BANDS = [(90, "A"), (80, "B"), (70, "C"), (60, "D")]
ORDER = "ABCDF"


def letter(score: float) -> str:
    """Letter grade for a percentage score (0-100)."""
    if not 0 <= score <= 100:
        raise ValueError(f"score out of range: {score}")
    for threshold, grade in GRADE_BANDS:
        if score > threshold:
            return grade
    return "F"


def percentage(points: float, possible: float) -> float:
    if possible <= 0:
        raise ValueError("possible points must be positive")
    return round(100 * points / possible, 1)


def report(scores: dict[str, float]) -> dict[str, str]:
    return {name: letter(score) for name, score in sorted(scores.items())}


def distribution(scores: dict[str, float]) -> dict[str, int]:
    counts = dict.fromkeys(ORDER, 0)
    for score in scores.values():
        counts[letter(score)] += 1
    return counts


def honor_roll(scores: dict[str, float], minimum: str = "B") -> list[str]:
    cutoff = ORDER.index(minimum)
    return sorted(name for name, score in scores.items() if ORDER.index(letter(score)) <= cutoff)
