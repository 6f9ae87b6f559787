"""Path globs from a repository's config, matched in time linear in the path.

Why not a regex: a glob turned into a regex (``*`` → ``[^/]*``, ``**`` → ``.*``) backtracks,
and a config glob such as ``**a**a**a**a**a**a**a**b`` against a path of a few dozen
``a``\\ s took seconds at seven stars and grows exponentially from there. Both the config and
the changed paths come from the repository, and one worker reviews for every installation,
so one repository could stall everybody's reviews. The glob is instead run as a
Thompson NFA whose states are the bits of one integer: every character of the path costs a
handful of integer operations, whatever the glob.

The language is unchanged: ``**/`` matches any number of leading directories (or none),
``**`` anything, ``*`` anything within one path segment, ``?`` one character other than
``/``, everything else itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Glob", "compile_glob"]


@dataclass(frozen=True)
class Glob:
    """One compiled glob; :meth:`fullmatch` says whether a whole path matches it.

    Bit ``i`` of a state set means "the next path character is matched against token
    ``i``". ``**/`` takes two bits: its entry, which may be skipped, and its inside, reached
    after one character and left only through a slash.
    """

    pattern: str
    _accept: int = field(repr=False)
    _literals: dict[str, int] = field(repr=False)  # char → tokens that are that char
    _one: int = field(repr=False)  # ``?``: one non-slash character
    _segment: int = field(repr=False)  # ``*``: stays on non-slash characters
    _anything: int = field(repr=False)  # ``**``: stays on every character
    _dirs_entry: int = field(repr=False)  # ``**/`` before its first character
    _dirs_inside: int = field(repr=False)  # ``**/`` after it, until a slash
    _skippable: int = field(repr=False)  # one-bit tokens that match the empty string
    _required: tuple[str, ...] = field(repr=False)  # literal runs every match contains

    def _closure(self, states: int) -> int:
        while True:
            grown = states | ((states & self._skippable) << 1) | ((states & self._dirs_entry) << 2)
            if grown == states:
                return states
            states = grown

    def fullmatch(self, path: str) -> bool:
        # A quick no for most paths: a literal run of the glob missing from the path.
        if not all(run in path for run in self._required):
            return False
        states = self._closure(1)
        for ch in path:
            nxt = (states & self._literals.get(ch, 0)) << 1
            nxt |= states & (self._anything | self._dirs_inside)
            nxt |= (states & self._dirs_entry) << 1
            if ch == "/":
                nxt |= ((states & self._dirs_entry) << 2) | ((states & self._dirs_inside) << 1)
            else:
                nxt |= ((states & self._one) << 1) | (states & self._segment)
            if not nxt:
                return False
            states = self._closure(nxt)
        return bool(states & self._accept)


def compile_glob(glob: str) -> Glob:
    """``**`` crosses directories, ``*`` and ``?`` do not; ``dir/**`` matches all under dir."""
    literals: dict[str, int] = {}
    one = segment = anything = dirs_entry = dirs_inside = 0
    runs: list[str] = []
    run = ""
    bit = 1
    i = 0
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**/", i):
            dirs_entry |= bit
            bit <<= 1
            dirs_inside |= bit
            i += 3
        elif glob.startswith("**", i):
            anything |= bit
            i += 2
        elif ch == "*":
            segment |= bit
            i += 1
        elif ch == "?":
            one |= bit
            i += 1
        else:
            literals[ch] = literals.get(ch, 0) | bit
            run += ch
            i += 1
            bit <<= 1
            continue
        runs.append(run)
        run = ""
        bit <<= 1
    runs.append(run)
    return Glob(
        pattern=glob,
        _accept=bit,
        _literals=literals,
        _one=one,
        _segment=segment,
        _anything=anything,
        _dirs_entry=dirs_entry,
        _dirs_inside=dirs_inside,
        _skippable=segment | anything,
        _required=tuple(r for r in runs if r),
    )
