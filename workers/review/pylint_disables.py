"""Ruff remarks on a line where the team switched off pylint's check of the same thing.

Ruff honours its own ``# noqa`` comments, but a team that lints with pylint says no
another way: ``# pylint: disable=consider-using-with`` on the line, or
``# pylint: disable-next=…`` on the line before. Ruff implements many of pylint's checks
under other codes (``consider-using-with`` is SIM115, ``broad-exception-caught``
BLE001), so without this Kaizen says on the line what the team just silenced there
(astroid 4.4's test that tracks the streams it opens: a "medium" SIM115 on the very line
that disables ``consider-using-with``).
"""

from __future__ import annotations

import re

__all__ = ["PYLINT_EQUIVALENTS", "disabled_by_pylint"]

# pylint's message names (and ids) → the ruff codes that check the same thing.
PYLINT_EQUIVALENTS: dict[str, frozenset[str]] = {
    name: frozenset(codes)
    for name, codes in {
        "consider-using-with": ("SIM115",),
        "unspecified-encoding": ("PLW1514",),
        "broad-except": ("BLE001",),
        "broad-exception-caught": ("BLE001",),
        "bare-except": ("E722",),
        "unused-import": ("F401",),
        "unused-variable": ("F841",),
        "unused-argument": ("ARG001", "ARG002", "ARG003", "ARG004", "ARG005"),
        "undefined-variable": ("F821",),
        "reimported": ("F811",),
        "function-redefined": ("F811",),
        "redefined-builtin": ("A001", "A002", "A003"),
        "redefined-outer-name": ("PLW0621",),
        "global-statement": ("PLW0603",),
        "global-variable-not-assigned": ("PLW0602",),
        "protected-access": ("SLF001",),
        "eval-used": ("S307", "PGH001"),
        "exec-used": ("S102",),
        "import-outside-toplevel": ("PLC0415",),
        "wrong-import-position": ("E402",),
        "wildcard-import": ("F403",),
        "subprocess-run-check": ("PLW1510",),
        "raise-missing-from": ("B904",),
        "cell-var-from-loop": ("B023",),
        "dangerous-default-value": ("B006",),
        "pointless-statement": ("B018",),
        "expression-not-assigned": ("B018",),
        "useless-return": ("PLR1711",),
        "comparison-with-itself": ("PLR0124",),
        "self-assigning-variable": ("PLW0127",),
        "literal-comparison": ("F632",),
        "magic-value-comparison": ("PLR2004",),
        "too-many-arguments": ("PLR0913",),
        "too-many-positional-arguments": ("PLR0917",),
        "too-many-branches": ("PLR0912",),
        "too-many-statements": ("PLR0915",),
        "too-many-return-statements": ("PLR0911",),
        "consider-using-in": ("PLR1714",),
        "consider-using-f-string": ("UP031", "UP032"),
        "consider-using-sys-exit": ("PLR1722",),
        "unnecessary-lambda": ("PLW0108",),
        "unnecessary-comprehension": ("C416",),
        "use-dict-literal": ("C408",),
        "use-list-literal": ("C408",),
        "no-else-return": ("RET505",),
        "no-else-raise": ("RET506",),
        "no-else-continue": ("RET507",),
        "no-else-break": ("RET508",),
        "inconsistent-return-statements": ("RET503",),
        "super-with-arguments": ("UP008",),
        "useless-object-inheritance": ("UP004",),
        "f-string-without-interpolation": ("F541",),
        "logging-fstring-interpolation": ("G004",),
        "logging-format-interpolation": ("G001",),
        "logging-not-lazy": ("G002",),
        "duplicate-key": ("F601",),
        "assert-on-tuple": ("F631",),
        "lost-exception": ("B012",),
        "return-in-finally": ("B012",),
        "nested-min-max": ("PLW3301",),
        "keyword-arg-before-vararg": ("B026",),
        "bad-staticmethod-argument": ("PLW0211",),
        "line-too-long": ("E501",),
        "invalid-name": ("N801", "N802", "N803", "N806", "N815", "N816"),
        "unnecessary-pass": ("PIE790",),
        "consider-using-generator": ("C419",),
        "use-a-generator": ("C419",),
        "consider-using-dict-items": ("PLC0206",),
        "modified-iterating-list": ("B909", "PLW4701"),
        "unnecessary-dunder-call": ("PLC2801",),
        "misplaced-bare-raise": ("PLE0704",),
        "useless-else-on-loop": ("PLW0120",),
        "redefined-loop-name": ("PLW2901",),
        "consider-merging-isinstance": ("PLR1701", "SIM101"),
        "simplifiable-if-statement": ("SIM108", "SIM103"),
        "simplifiable-if-expression": ("SIM210", "SIM211"),
        "unidiomatic-typecheck": ("E721",),
        "singleton-comparison": ("E711", "E712"),
    }.items()
}
# Their message ids: W0718 is broad-exception-caught, R1732 consider-using-with, …
_IDS = {
    "R1732": "consider-using-with",
    "W1514": "unspecified-encoding",
    "W0703": "broad-except",
    "W0718": "broad-exception-caught",
    "W0702": "bare-except",
    "W0611": "unused-import",
    "W0612": "unused-variable",
    "W0613": "unused-argument",
    "W0212": "protected-access",
    "W0603": "global-statement",
    "W0123": "eval-used",
    "W0122": "exec-used",
    "C0415": "import-outside-toplevel",
    "W1510": "subprocess-run-check",
    "W0707": "raise-missing-from",
    "W0640": "cell-var-from-loop",
    "W0102": "dangerous-default-value",
    "W0104": "pointless-statement",
    "W0106": "expression-not-assigned",
    "R0913": "too-many-arguments",
    "R0912": "too-many-branches",
    "R0915": "too-many-statements",
    "R0911": "too-many-return-statements",
    "W0621": "redefined-outer-name",
    "W0622": "redefined-builtin",
    "C0103": "invalid-name",
    "C0301": "line-too-long",
}
_DISABLE = re.compile(r"#\s*pylint\s*:\s*(disable|disable-next)\s*=\s*([\w\s,-]+)")


def disabled_by_pylint(source: str, row: int, code: str) -> bool:
    """Whether ``row`` (1-based) carries ``# pylint: disable=`` of a check that ``code``
    also makes (or of ``all``), or the line before it ``# pylint: disable-next=`` of one.
    Names and message ids both count (``broad-exception-caught``, ``W0718``)."""
    lines = source.splitlines()
    if not 0 < row <= len(lines):
        return False
    here = _disabled(lines[row - 1], "disable")
    before = _disabled(lines[row - 2], "disable-next") if row > 1 else set()
    names = here | before
    return "all" in names or any(code in PYLINT_EQUIVALENTS.get(name, ()) for name in names)


def _disabled(line: str, kind: str) -> set[str]:
    names: set[str] = set()
    for match in _DISABLE.finditer(line):
        if match.group(1) != kind:
            continue
        for name in match.group(2).split(","):
            name = name.strip().lower()
            names.add(_IDS.get(name.upper(), name))
    return names
