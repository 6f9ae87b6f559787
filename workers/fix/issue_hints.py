"""What the words of an issue say about the kind of fix, before any test runs.

A user who writes "one space too many", "stops one day short" or "off by one" has
counted: the result is wrong by exactly one, and the edit that mends it moves a bound (a
``- 1``, a ``<`` for ``<=``, a slice end, a constant by one). One who writes "in the
wrong order" or "the arguments are swapped" has seen two things trade places. A
traceback that ends in ``'NoneType' object is not subscriptable`` has a None where a
value was expected, and a guard is the usual mend (sqlparse 0.6 with the ``None`` check
of ``remove_quotes`` gone: the guard was the fifth operator tried). Those operators'
candidates weigh :data:`HINT_BOOST` times as much on every suspect line, so they come
before the other guesses on the lines the localiser ranked alike (tabulate 0.10 with
``_afterpoint`` one too high: the right edit was the last of ten operators tried on its
line).

The words only reorder candidates; every operator is still tried. An ``IndexError``
says less than it seems: an index one past the end and an empty list both raise it, and
pointing it at the bounds put a missing empty-list guard 11 candidates further back on
the corpus (``stats_median_empty``), so it points nowhere.
"""

from __future__ import annotations

import re

from workers.fix.operators import operator_pattern

__all__ = ["HINT_BOOST", "operator_hints"]

HINT_BOOST = 2.0

_BY_ONE = re.compile(
    r"(?ix)"
    r"\boff[- ]by[- ](?:one|1)\b"
    r"|\bfence[- ]?post\b"
    # one space too many, one request too many, one day short, one word shorter, one too few;
    # not "one" as a pronoun ("cuts the longer one short", "the next one less")
    r"|(?<!er\s)(?<!the\s)(?<!this\s)(?<!that\s)(?<!each\s)(?<!every\s)(?<!any\s)"
    r"(?<!which\s)(?<!first\s)(?<!last\s)(?<!next\s)(?<!same\s)(?<!new\s)(?<!old\s)"
    r"\bone\s+(?:[a-z]+\s+)?(?:too\s+(?:many|few|much|little|early|late|long|short|"
    r"high|low|far|soon)|short|shorter|longer|fewer|less|more|extra|above|below)\b"
    r"|\b(?:an?\s+)?extra\s+(?:[a-z]+\s+)?(?:space|line|row|column|item|element|character|day|page|"
    r"entry|iteration|byte|char)\b"
    r"|\b(?:misses|drops|skips|loses|omits|cuts\s+off)\s+the\s+(?:first|last|final)\b"
)
_SWAPPED = re.compile(
    r"(?ix)\bin\s+the\s+wrong\s+order\b|\b(?:arguments|parameters|operands)\s+(?:are\s+)?"
    r"(?:swapped|reversed|switched|mixed\s+up)\b|\bswapped\b"
    # "comparisons come out backwards" (simpleeval with a comparison's operands traded:
    # the swap was the twelfth candidate), "the wrong way round"; not "backwards compatible"
    r"|\bbackwards?\b(?![- ]?compat)|\b(?:wrong|other)\s+way\s+a?round\b"
)

# "'NoneType' object is not subscriptable" / "has no attribute": a value that may be None
# used as if it never were; a guard is the usual mend.
_NONE_USED = re.compile(r"\bNoneType\b")

_FAMILIES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (_BY_ONE, ("off-by-one", "comparison", "slice-bound", "constant")),
    (_SWAPPED, ("swap-arguments",)),
    (_NONE_USED, ("none-check",)),
)


def operator_hints(issue_text: str) -> dict[str, float]:
    """Operator pattern (``fix:off-by-one``) → how much more its candidates weigh, for
    the operators the issue's words point at; the rest are 1 (absent)."""
    hints: dict[str, float] = {}
    for words, operators in _FAMILIES:
        if words.search(issue_text):
            for name in operators:
                hints[operator_pattern(name)] = HINT_BOOST
    return hints
