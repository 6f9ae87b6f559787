"""The order in which the fix loop tries template candidates.

Each candidate is weighted by how suspicious its line is and how well its operator has done
(the caller's ``weight``). Lines often tie: every line of a straight-line function both
failing tests run through has the same spectrum score, and a symbol the issue names adds
the same bonus to all of them. Ties used to be broken by generation order, so the first
tied line's whole tail of guesses (15-30 candidates on a busy line) came before the next
line's best guess, and the run budget could end before the buggy line was reached (on
more_itertools' ``divide`` the bug sat on the 8th of 10 tied lines). Among equal weights
the candidates now take turns, and so do the operators on a line: every operator's first
guess on every tied line, then every operator's second, and so on (in a line's own order
within a round). A line's candidates come grouped by operator, and the operators with
many guesses (a wrong variable, a missing guard) used to hide the one ``min`` → ``max`` or
``is`` → ``==`` behind them. Over the 41 corpus cases at cold start this moved the
reference fix from a median position of 8 to 4 (sum of positions, capped at 60: 581 →
457), against 489 for taking turns by operator alone (ignoring the line's order).
Lines with a higher weight still go first, whole.

Only the most suspicious lines are ranked together (one tier); the rest wait. When every
guess on the first tier has failed and runs are left, the next tier is ranked the same way
rather than the loop giving up with budget unspent: a line outside the top few is a worse
bet than any line inside, but still better than stopping. A tier never splits lines of
equal suspicion: it grows to take in every line tied with its last one (on a limiter whose
window check sat 12th among 12 equally suspicious lines, a cut at 8 put the bug out of
reach of a 60-run budget).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from workers.fix.operators import IN_A_MESSAGE, LEAVES_DEAD, generate_patches
from workers.fix.types import Patch, Suspect

# Weights equal to this many decimals are a tie (sums of the same float terms in another
# order differ in the last bits).
TIE_DECIMALS = 9
# What a patch that leaves an assignment computing nothing counts (see
# operators.LEAVES_DEAD): code that worked rarely has one, so such a patch that passes the
# tests is more likely to fit them than to fix the bug (munch: ``self.update(default)``
# for ``self.update(state_dict)``, the pair unpacked the wrong way round a line above).
DEAD_EDIT_SHARE = 0.5
# What a patch to a name in the f-string message of a raised exception counts
# (operators.IN_A_MESSAGE): tracebacks point at ``raise`` lines, and the message there is
# the symptom the issue quotes more often than what is wrong ("14:00-15:00 overlaps
# 09:00-10:00" from a wrong overlap test). At a whole share, and at half, the fix corpus
# lost plan positions (booking_overlap's fix second → fourth: the traceback's ``raise``
# line outweighs the overlap test twice over). A message that is returned or printed is
# the output itself and keeps its whole share (parsy's ``got {min} item(s)``).
MESSAGE_EDIT_SHARE = 0.25


def plausibility(patch: Patch) -> float:
    """The share of its line's weight a candidate keeps for what it does to the code."""
    share = DEAD_EDIT_SHARE if patch.extra.get(LEAVES_DEAD) else 1.0
    return share * (MESSAGE_EDIT_SHARE if patch.extra.get(IN_A_MESSAGE) else 1.0)


def rank_candidates(
    suspects: Iterable[Suspect],
    files: Mapping[str, str],
    weight: Callable[[Suspect, Patch], float],
    decay: float = 1.0,
) -> list[tuple[float, Patch]]:
    """Every template candidate on ``suspects`` with its weight, best first, the same
    edit (identical resulting file) only once. Equal weights are interleaved by each
    operator's own order on its line (every operator's first guess on every tied line
    before any operator's second), then by the line's order of candidates, then kept in
    suspect order. With ``decay`` < 1 the line's n-th candidate in that order (from 0)
    counts ``decay**n`` of its weight, so a busy line's long tail of guesses no longer
    comes whole before a slightly less suspicious line's first guess."""
    scored: list[tuple[float, tuple[int, int], Patch]] = []
    for suspect in suspects:
        source = files.get(suspect.path)
        if source is None:
            continue
        nth: Counter[str] = Counter()
        line: list[tuple[tuple[int, int], Patch]] = []
        for k, patch in enumerate(generate_patches(source, suspect.path, suspect.line)):
            line.append(((nth[patch.operator], k), patch))
            nth[patch.operator] += 1
        line.sort(key=lambda item: item[0])
        for n, (order, patch) in enumerate(line):
            scored.append((weight(suspect, patch) * decay**n, order, patch))
    # Stable: what the key leaves tied stays in generation (suspect) order.
    scored.sort(key=lambda item: (-_level(item[0]), item[1]))
    seen: set[str] = set()
    ranked: list[tuple[float, Patch]] = []
    for w, _, patch in scored:
        if patch.after in seen:
            continue
        seen.add(patch.after)
        ranked.append((w, patch))
    return ranked


def rank_in_tiers(
    suspects: Sequence[Suspect],
    files: Mapping[str, str],
    weight: Callable[[Suspect, Patch], float],
    tier: int,
    decay: float = 1.0,
) -> Iterator[tuple[float, Patch]]:
    """:func:`rank_candidates` on the first ``tier`` suspects (more when the next ones tie
    with the last), then on the next tier, and so on; a tier is generated only when the
    one before it is used up, and an edit already offered by an earlier tier is not
    offered again. ``suspects`` come best first."""
    if tier < 1:
        raise ValueError(f"tier must be at least 1, not {tier}")
    offered: set[str] = set()
    start = 0
    while start < len(suspects):
        end = start + tier
        while end < len(suspects) and _tied(suspects[end], suspects[end - 1]):
            end += 1
        group, start = suspects[start:end], end
        for w, patch in rank_candidates(group, files, weight, decay):
            if patch.after in offered:
                continue
            offered.add(patch.after)
            yield w, patch


def _tied(a: Suspect, b: Suspect) -> bool:
    return _level(a.score) == _level(b.score)


def _level(value: float) -> float:
    """What equal weights and scores compare as (see :data:`TIE_DECIMALS`)."""
    return round(value, TIE_DECIMALS)
