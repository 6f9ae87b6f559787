"""Template repair: classic one-token mutations of a suspicious line, no LLM needed.

Why this exists: the fix agent must be able to propose *something* when no model is
configured (or it is down, or over budget), and most real-world one-line bugs are one of
a few shapes — a ``<`` that should be ``<=``, ``range(n)`` that should be ``range(n + 1)``,
swapped arguments, a missing ``None`` guard.  Each operator here is one such shape and is
learned as its own pattern (``fix:<operator>``), so the agent finds out per repository
which shapes actually fix its bugs and tries those first.

Why text splicing rather than ``ast.unparse``: a patch that reformats the whole file is
unreviewable and will fight the project's formatter.  Every edit replaces one exact span
of the original text (located through the AST's positions), so everything outside the
span is preserved byte for byte and the diff is the one-token change a human would make.
AST column offsets are UTF-8 *byte* offsets; they are converted to ``str`` indices per
line, so non-ASCII text before the edited span cannot shift the edit.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import inspect
import io
import itertools
import re
import tokenize
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeGuard

from workers.fix.types import Patch

OPERATORS: tuple[str, ...] = (
    "comparison",
    "arithmetic",
    "off-by-one",
    "boolean-operator",
    "negate-condition",
    "swap-arguments",
    "none-check",
    "wrong-variable",
    "return-value",
    "constant",
    "membership",
    "identity",
    "min-max",
    "slice-bound",
    "missing-factor",
    "missing-argument",
)

_PREFIX = "fix:"


def operator_pattern(name: str) -> str:
    """The pattern an operator's outcomes are learned under: ``fix:<name>``."""
    return _PREFIX + name.removeprefix(_PREFIX)


def generate_patches(
    source: str,
    path: str,
    line: int,
    *,
    operators: Sequence[str] | None = None,
    max_per_operator: int = 12,
) -> list[Patch]:
    """Candidate patches for the bug being on ``line`` (1-based) of ``source``.

    Patches come grouped operator by operator in :data:`OPERATORS` order (the caller
    reorders by learned scores), most plausible first within an operator, at most
    ``max_per_operator`` each.  Every patch's ``after`` parses (a leading BOM aside, which
    is kept), differs from ``source``
    and from every other patch's ``after``.  ``operators`` restricts the operators run
    (names with or without the ``fix:`` prefix; unknown names are ignored).  Never
    raises on odd input: source that does not parse, or a line with nothing to mutate,
    gives ``[]``.
    """
    if max_per_operator <= 0 or not isinstance(source, str):
        return []
    if isinstance(operators, str):
        operators = [operators]
    wanted = (
        set(OPERATORS)
        if operators is None
        else {name.removeprefix(_PREFIX) for name in operators if isinstance(name, str)}
    )
    # A UTF-8 BOM (a file read without "utf-8-sig") is not Python: edit the text after
    # it and keep it in front.
    bom = "\ufeff" if source.startswith("\ufeff") else ""
    text = source[len(bom) :]
    try:
        tree = ast.parse(text)
        ctx = _Ctx(text, tree, line)
    except Exception:  # SyntaxError, ValueError (NUL bytes), RecursionError, …
        return []
    if not ctx.has_line:
        return []
    patches: list[Patch] = []
    seen = {text}
    for name in OPERATORS:
        if name not in wanted:
            continue
        edits = _run(_GENERATORS[name], ctx)
        count = 0
        for edit in edits:
            if count >= max_per_operator:
                break
            after = text[: edit.start] + edit.text + text[edit.end :]
            if after in seen:
                continue
            seen.add(after)
            if not _parses(after):
                continue
            patches.append(
                Patch(
                    operator=operator_pattern(name),
                    path=path,
                    line=line,
                    before=source,
                    after=bom + after,
                    description=f"{edit.description} at line {line}",
                    extra={
                        **({LEAVES_DEAD: True} if edit.leaves_dead else {}),
                        **({IN_A_MESSAGE: True} if edit.in_a_message else {}),
                    },
                )
            )
            count += 1
    return patches


# --------------------------------------------------------------------------- machinery


def _run(generator: Callable[[_Ctx], Iterable[_Edit]], ctx: _Ctx) -> list[_Edit]:
    """An operator's edits, best first; none if it trips (it must not cost the others)."""
    try:
        return sorted(generator(ctx), key=lambda edit: edit.rank)
    except Exception:
        return []


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except Exception:
        return False
    return True


@dataclass(frozen=True)
class _Edit:
    """Replace ``source[start:end]`` with ``text``; ``rank`` orders within an operator."""

    rank: tuple[int, ...]
    start: int
    end: int
    text: str
    description: str = field(default="")
    leaves_dead: bool = False  # the edit takes a local's only read: see _op_wrong_variable
    in_a_message: bool = False  # in a placeholder of a raised exception's message: ditto


_NEWLINE_RE = re.compile(r"\r\n|\r|\n")
# Operator tokens, longest first where one is a prefix of another.
_TOKEN_RE = re.compile(
    r"not\s+in\b|is\s+not\b|\*\*=|//=|>>=|<<=|\*\*|//|>>|<<|<=|>=|==|!=|:="
    r"|[-+*/%@&|^]=|[-+*/%@&|^<>]|=|in\b|is\b|and\b|or\b"
)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# wrong-variable's rank for an edit of a local's only read: after every other of its edits
DEAD_READ_RANK = 100
# Patch.extra key: the patch leaves an assignment dead (the planner weighs it less)
LEAVES_DEAD = "leaves_dead"
# Patch.extra key: the patch edits a placeholder of a raised exception's f-string message
# (the planner weighs it less: see planning.MESSAGE_EDIT_SHARE)
IN_A_MESSAGE = "in_a_message"
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _show(text: str, limit: int = 48) -> str:
    """A one-line, bounded rendering of a snippet for a patch description."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _change(old: str, new: str) -> str:
    return f"`{_show(old)}` → `{_show(new)}`"


class _Ctx:
    """The parsed file plus position helpers, focused on one line."""

    def __init__(self, source: str, tree: ast.Module, line: int) -> None:
        self.source = source
        self.tree = tree
        self.line = line
        self.newline = "\r\n" if "\r\n" in source else "\n"
        self.starts = [0] + [m.end() for m in _NEWLINE_RE.finditer(source)]
        self._encoded: dict[int, bytes] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []  # nodes whose span touches the line, source order
        # Names bound to functions, classes and imports: never "variables".
        self.callables: set[str] = set()
        self.has_line = isinstance(line, int) and 1 <= line <= len(self.starts)
        # names that are a whole f-string placeholder on the line (``{count}``), placed
        # by reading the source: see _placeholders
        self.placeholder_spans: dict[ast.Name, tuple[int, int]] = {}
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            if node is not tree and self.touches(node):
                self.nodes.append(node)
            if isinstance(node, (*_FUNCS, ast.ClassDef)):
                self.callables.add(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                self.callables.update((a.asname or a.name).split(".")[0] for a in node.names)
            if isinstance(node, ast.JoinedStr):
                # Positions inside f-strings are unreliable before Python 3.12: edits
                # there go only where _placeholders reads a name's place from the source.
                if self.has_line and self.touches(node):
                    self._placeholders(node)
                continue
            children = list(ast.iter_child_nodes(node))
            for child in children:
                self.parents[child] = node
            stack.extend(reversed(children))
        self.nodes.sort(key=lambda n: self.span(n) or (0, 0))

    def _placeholders(self, joined: ast.JoinedStr) -> None:
        """Place the names that are a whole placeholder of ``joined`` (``{count}``,
        ``{count!r}``, ``{count:>4}``) on the line by reading its source. Python 3.11
        places them by searching the string for their text, and ``f"{n} of n"`` or
        ``f"min {min}"`` puts the name on the word. A name is placed only when its
        placeholders in the source are exactly its nodes: an escaped ``{{n}}``, a plain
        piece beside the f-string that holds ``{n}``, or the name in a format spec
        leave it unplaced."""
        span = self.span(joined)
        if span is None:
            return
        text = self.source[span[0] : span[1]]
        nodes: dict[str, list[ast.Name]] = {}
        for value in joined.values:
            if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name):
                nodes.setdefault(value.value.id, []).append(value.value)
                self.parents[value.value] = value
                self.parents[value] = joined
        for name, found in nodes.items():
            places = [
                m.start(2)
                for m in re.finditer(r"(\{+)\s*(" + re.escape(name) + r")\s*(?=[}!:=])", text)
                if len(m.group(1)) % 2 == 1  # ``{{`` is a brace, ``{{{`` one and a placeholder
                and (m.start() == 0 or text[m.start() - 1] != "{")
            ]
            if len(places) != len(found):
                continue
            for node, at in zip(found, places, strict=True):
                start = span[0] + at
                if self.line_of(start) == self.line:
                    self.placeholder_spans[node] = (start, start + len(name))

    # ----------------------------------------------------------------- positions

    def offset(self, lineno: int, col: int) -> int | None:
        """``str`` index of AST position (1-based line, UTF-8 byte column)."""
        if not 1 <= lineno <= len(self.starts) or col < 0:
            return None
        encoded = self._encoded.get(lineno)
        if encoded is None:
            begin = self.starts[lineno - 1]
            end = self.starts[lineno] if lineno < len(self.starts) else len(self.source)
            encoded = self.source[begin:end].encode("utf-8", "surrogatepass")
            self._encoded[lineno] = encoded
        if col > len(encoded):
            return None
        try:
            return self.starts[lineno - 1] + len(encoded[:col].decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def span(self, node: ast.AST) -> tuple[int, int] | None:
        pos = _pos(node)
        if pos is None:
            return None
        start = self.offset(pos[0], pos[1])
        end = self.offset(pos[2], pos[3])
        if start is None or end is None or end < start:
            return None
        return start, end

    def text(self, node: ast.AST) -> str:
        span = self.span(node)
        return "" if span is None else self.source[span[0] : span[1]]

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def touches(self, node: ast.AST) -> bool:
        pos = _pos(node)
        return pos is not None and pos[0] <= self.line <= pos[2]

    def find_token(self, start: int, end: int) -> tuple[int, int] | None:
        """The operator token in ``source[start:end]`` (skipping parens/comments/space)."""
        src = self.source
        i = start
        while i < end:
            char = src[i]
            if char in " \t\f\r\n()\\":
                i += 1
            elif char == "#":
                newline = src.find("\n", i, end)
                if newline < 0:
                    return None
                i = newline
            else:
                break
        match = _TOKEN_RE.match(src, i, end)
        return None if match is None else (match.start(), match.end())

    def token_between(
        self, left: ast.AST, right: ast.AST, *, on_line: bool = True
    ) -> tuple[int, int] | None:
        """The operator token between two operands, if it sits on the line."""
        a, b = self.span(left), self.span(right)
        if a is None or b is None:
            return None
        token = self.find_token(a[1], b[0])
        if token is None or (on_line and self.line_of(token[0]) != self.line):
            return None
        return token

    def pad(self, start: int, end: int, text: str) -> str:
        """``text`` with spaces added where a keyword would fuse with its neighbours."""
        src = self.source
        if (
            text[:1].isalpha()
            and start > 0
            and not (src[start - 1].isspace() or src[start - 1] in "(")
        ):
            text = " " + text
        if text[-1:].isalpha() and end < len(src) and not (src[end].isspace() or src[end] in ")"):
            text = text + " "
        return text

    # ------------------------------------------------------------- structure

    def of_type(self, *types: type[ast.AST]) -> Iterator[ast.AST]:
        return (node for node in self.nodes if isinstance(node, types))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        parent = self.parents.get(node)
        while parent is not None:
            yield parent
            parent = self.parents.get(parent)

    def enclosing_function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function whose *body* holds the line."""
        best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        for node in self.nodes:  # a function holding the line touches it
            if isinstance(node, _FUNCS) and node.body:
                first = _pos(node.body[0])
                last = _pos(node)
                inside = first is not None and last is not None and first[0] <= self.line <= last[2]
                if inside and (best is None or node.lineno >= best.lineno):
                    best = node
        return best

    def innermost_statement(self) -> ast.stmt | None:
        best: ast.stmt | None = None
        depth = -1
        for node in self.nodes:
            if isinstance(node, ast.stmt) and node.lineno <= self.line:
                d = sum(1 for _ in self.ancestors(node))
                if d > depth:
                    best, depth = node, d
        return best

    def replace_node(self, node: ast.AST, text: str, prec: int) -> tuple[int, int, str] | None:
        """Replace ``node`` by ``text`` (of precedence ``prec``), parenthesised if needed."""
        span = self.span(node)
        if span is None:
            return None
        if prec < _context_need(self.parents.get(node), node) and not self._grouped(span):
            text = f"({text})"
        return span[0], span[1], text

    def _grouped(self, span: tuple[int, int]) -> bool:
        """Whether the source already has grouping parentheses right around ``span``
        (``(a + b) % 7``): where an operand needs them, they can be nothing else."""
        before = self.source[: span[0]].rstrip(" \t")
        after = self.source[span[1] :].lstrip(" \t")
        return before.endswith("(") and after.startswith(")")

    def wrap(self, node: ast.AST, need: int) -> str:
        text = self.text(node)
        return f"({text})" if _prec(node, text) < need else text


def _pos(node: ast.AST) -> tuple[int, int, int, int] | None:
    lineno = getattr(node, "lineno", None)
    col = getattr(node, "col_offset", None)
    end_lineno = getattr(node, "end_lineno", None)
    end_col = getattr(node, "end_col_offset", None)
    if lineno is None or col is None or end_lineno is None or end_col is None:
        return None
    return int(lineno), int(col), int(end_lineno), int(end_col)


# Python's expression precedence, loosest first (matches the grammar's levels).
_BINOP_PREC: dict[type[ast.operator], int] = {
    ast.BitOr: 7,
    ast.BitXor: 8,
    ast.BitAnd: 9,
    ast.LShift: 10,
    ast.RShift: 10,
    ast.Add: 11,
    ast.Sub: 11,
    ast.Mult: 12,
    ast.Div: 12,
    ast.FloorDiv: 12,
    ast.Mod: 12,
    ast.MatMult: 12,
    ast.Pow: 14,
}
_ATOM = 16


def _prec(node: ast.AST, text: str = "") -> int:
    """How tightly ``node`` binds; text tells a parenthesised tuple from a bare one."""
    if isinstance(node, (ast.NamedExpr, ast.Yield, ast.YieldFrom)):
        return 0
    if isinstance(node, ast.Tuple):
        return _ATOM if text.startswith("(") else 0
    if isinstance(node, ast.Lambda):
        return 1
    if isinstance(node, ast.IfExp):
        return 2
    if isinstance(node, ast.BoolOp):
        return 3 if isinstance(node.op, ast.Or) else 4
    if isinstance(node, ast.UnaryOp):
        return 5 if isinstance(node.op, ast.Not) else 13
    if isinstance(node, ast.Compare):
        return 6
    if isinstance(node, ast.Starred):
        return 7
    if isinstance(node, ast.BinOp):
        return _BINOP_PREC.get(type(node.op), 12)
    if isinstance(node, ast.Await):
        return 15
    return _ATOM


def _context_need(parent: ast.AST | None, node: ast.AST) -> int:
    """The least precedence an expression needs to stand where ``node`` stands."""
    if isinstance(parent, ast.BinOp):
        p = _BINOP_PREC.get(type(parent.op), 12)
        if isinstance(parent.op, ast.Pow):
            return 15 if node is parent.left else 13
        return p if node is parent.left else p + 1
    if isinstance(parent, ast.UnaryOp):
        return 5 if isinstance(parent.op, ast.Not) else 13
    if isinstance(parent, ast.Compare):
        return 7
    if isinstance(parent, ast.BoolOp):
        return 4 if isinstance(parent.op, ast.Or) else 5
    if isinstance(parent, ast.IfExp):
        return 2 if node is parent.orelse else 3
    if isinstance(parent, ast.Attribute | ast.Subscript) and node is parent.value:
        return _ATOM
    if isinstance(parent, ast.Call) and node is parent.func:
        return _ATOM
    if isinstance(parent, ast.Await):
        return 15
    if isinstance(parent, ast.Starred):
        return 7
    if isinstance(parent, ast.comprehension):
        return 3 if node is not parent.target else _ATOM
    if isinstance(parent, ast.Return | ast.Assign | ast.Expr | ast.If | ast.While | ast.For):
        return 0
    return 1


def _int_value(node: ast.AST) -> int | None:
    """The value of an integer literal, ``-3`` included; ``None`` for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _is_call_to(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


# --------------------------------------------------------------------------- operators

_CMP_SYMBOL: dict[type[ast.cmpop], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
_CMP_ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "<": ("<=", ">", ">=", "==", "!="),
    "<=": ("<", ">=", ">", "==", "!="),
    ">": (">=", "<", "<=", "==", "!="),
    ">=": (">", "<=", "<", "==", "!="),
    "==": ("!=", "<=", ">=", "<", ">"),
    "!=": ("==", "<", ">"),
}


def _compare_ops(ctx: _Ctx) -> Iterator[tuple[ast.cmpop, int, int]]:
    """Every comparison operator token on the line: (op, start, end)."""
    for node in ctx.of_type(ast.Compare):
        assert isinstance(node, ast.Compare)
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            token = ctx.token_between(operands[i], operands[i + 1])
            if token is not None:
                yield op, token[0], token[1]


def _op_comparison(ctx: _Ctx) -> Iterator[_Edit]:
    """``<`` ↔ ``<=`` and friends: boundary and direction mistakes."""
    for op, start, end in _compare_ops(ctx):
        symbol = _CMP_SYMBOL.get(type(op))
        if symbol is None:
            continue
        for rank, alt in enumerate(_CMP_ALTERNATIVES[symbol]):
            yield _Edit((rank, start), start, end, alt, _change(symbol, alt))


def _op_membership(ctx: _Ctx) -> Iterator[_Edit]:
    """``in`` ↔ ``not in``: an inverted containment test."""
    for op, start, end in _compare_ops(ctx):
        if isinstance(op, ast.In | ast.NotIn):
            alt = "not in" if isinstance(op, ast.In) else "in"
            text = ctx.pad(start, end, alt)
            yield _Edit((0, start), start, end, text, _change(ctx.source[start:end], alt))


def _op_identity(ctx: _Ctx) -> Iterator[_Edit]:
    """``is`` ↔ ``is not`` ↔ ``==``: identity where equality was meant, and back."""
    table: dict[type[ast.cmpop], tuple[tuple[int, str], ...]] = {
        ast.Is: ((0, "is not"), (1, "==")),
        ast.IsNot: ((0, "is"), (1, "!=")),
        ast.Eq: ((2, "is"),),
        ast.NotEq: ((2, "is not"),),
    }
    for op, start, end in _compare_ops(ctx):
        for rank, alt in table.get(type(op), ()):
            text = ctx.pad(start, end, alt)
            yield _Edit((rank, start), start, end, text, _change(ctx.source[start:end], alt))


_ARITH_SYMBOL: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.MatMult: "@",
}
_ARITH_ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "+": ("-", "*"),
    "-": ("+",),
    "*": ("/", "//", "+", "**"),
    "/": ("//", "*"),
    "//": ("/", "%", "*"),
    "%": ("//", "/"),
    "**": ("*",),
    "<<": (">>",),
    ">>": ("<<",),
    "|": ("&", "^"),
    "&": ("|", "^"),
    "^": ("|", "&"),
    "@": ("*",),
}


def _op_arithmetic(ctx: _Ctx) -> Iterator[_Edit]:
    """``+`` ↔ ``-``, ``*`` ↔ ``/``, ``/`` ↔ ``//``…, in expressions and ``x += …``.

    Also ``total = x`` → ``total += x`` inside a loop (a lost accumulator) and dropping
    a stray unary minus, ranked last.
    """
    for node in ctx.nodes:
        if isinstance(node, ast.BinOp):
            token = ctx.token_between(node.left, node.right)
            symbol = _ARITH_SYMBOL.get(type(node.op))
            if token is None or symbol is None:
                continue
            for rank, alt in enumerate(_ARITH_ALTERNATIVES[symbol]):
                yield _Edit((rank, token[0]), token[0], token[1], alt, _change(symbol, alt))
        elif isinstance(node, ast.AugAssign):
            token = ctx.token_between(node.target, node.value)
            symbol = _ARITH_SYMBOL.get(type(node.op))
            if token is None or symbol is None:
                continue
            for rank, alt in enumerate((*_ARITH_ALTERNATIVES[symbol], "")):
                new = alt + "="
                yield _Edit(
                    (rank if alt else 3, token[0]),
                    token[0],
                    token[1],
                    new,
                    _change(symbol + "=", new),
                )
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            in_loop = any(isinstance(a, ast.For | ast.While) for a in _until_scope(ctx, node))
            token = ctx.token_between(node.targets[0], node.value)
            if in_loop and token is not None and ctx.source[token[0] : token[1]] == "=":
                yield _Edit((4, token[0]), token[0], token[1], "+=", _change("=", "+="))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            span = ctx.span(node)
            if span is None or ctx.line_of(span[0]) != ctx.line:
                continue
            operand = ctx.span(node.operand)
            if operand is None or _int_value(node) is not None:
                continue
            inner = ctx.source[span[0] + 1 : span[1]].strip()
            replaced = ctx.replace_node(node, inner, _prec(node.operand, inner))
            if replaced:
                yield _Edit((5, span[0]), *replaced, _change(ctx.text(node), inner))


def _is_offset(parent: ast.AST | None, literal: ast.AST) -> TypeGuard[ast.BinOp]:
    """``literal`` is the ``k`` of ``e + k`` or ``e - k``: an adjustment, not a value."""
    return (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.Add | ast.Sub)
        and parent.right is literal
    )


def _until_scope(ctx: _Ctx, node: ast.AST) -> Iterator[ast.AST]:
    """Ancestors of ``node`` up to (not including) the enclosing function or class."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, _SCOPES):
            return
        yield ancestor


def _power_of_two(value: int) -> bool:
    """8, 16, … 256, 1024, 65536: sizes whose off-by-one is the other of ``2**k`` and
    ``2**k - 1`` (webcolors' ``/ 100 * 256`` for ``* 255``), never ``2**k + 1``."""
    return value >= 8 and value & (value - 1) == 0


def _bumps(ctx: _Ctx, node: ast.AST, *, plus_first: bool = True) -> list[tuple[int, str, int]]:
    """Off-by-one variants of an expression: (rank, text, precedence), best first.

    ``n`` → ``n ± 1`` for literals, ``e ± k`` → ``e`` for adjusted expressions, else
    ``e + 1`` / ``e - 1``.
    """
    value = _int_value(node)
    if value is not None:
        order = (value + 1, value - 1) if plus_first else (value - 1, value + 1)
        if _power_of_two(value):
            order = (value - 1, value + 1)  # 256 for 255, the largest byte
        elif _power_of_two(value + 1):
            order = (value + 1, value - 1)  # 255 for 256, a count of them
        return [(i, str(v), _ATOM if v >= 0 else 13) for i, v in enumerate(order)]
    k = _int_value(node.right) if isinstance(node, ast.BinOp) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub) and k is not None:
        # `e - 1` → `e` first, then `e - 2` (never `e - 0`: that is the first).
        token = ctx.token_between(node.left, node.right, on_line=False)
        span = ctx.span(node)
        if token is None or span is None:
            return []
        left = ctx.source[span[0] : token[0]].rstrip()
        sign = ctx.source[token[0] : token[1]]
        out = [(0, left, _prec(node.left, left) if left == ctx.text(node.left) else _ATOM)]
        out.extend((1, f"{left} {sign} {v}", 11) for v in (k + 1, k - 1) if v > 0)
        return out
    text = ctx.wrap(node, 11)
    signs = ("+", "-") if plus_first else ("-", "+")
    return [(1 + i, f"{text} {sign} 1", 11) for i, sign in enumerate(signs)]


# Callables whose argument at these positions (or keywords) is a count, a size or an
# index: ``islice(it, n)`` for ``islice(it, n + 1)`` is the off-by-one with no literal in
# sight. Builtins, str/list methods, itertools, heapq, random, collections, and the
# itertools recipes' names (take, nth, chunked, …) that real projects define.
_COUNT_PARAMETERS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "islice": ((1, 2, 3), ()),
    "repeat": ((1,), ("times",)),
    "combinations": ((1,), ("r",)),
    "combinations_with_replacement": ((1,), ("r",)),
    "permutations": ((1,), ("r",)),
    "nlargest": ((0,), ("n",)),
    "nsmallest": ((0,), ("n",)),
    "round": ((1,), ("ndigits",)),
    "split": ((1,), ("maxsplit",)),
    "rsplit": ((1,), ("maxsplit",)),
    "pop": ((0,), ()),
    "insert": ((0,), ()),
    "zfill": ((0,), ()),
    "ljust": ((0,), ()),
    "rjust": ((0,), ()),
    "center": ((0,), ()),
    "enumerate": ((1,), ("start",)),
    "deque": ((1,), ("maxlen",)),
    "sample": ((1,), ("k",)),
    "choices": ((), ("k",)),
    "most_common": ((0,), ()),
    "read": ((0,), ()),
    "take": ((0,), ("n",)),
    "nth": ((1,), ("n",)),
    "chunked": ((1,), ("n",)),
    "batched": ((1,), ("n",)),
    "windowed": ((1,), ("n",)),
    "sliding_window": ((1,), ("n",)),
}
_BUILTIN_NAMES = frozenset(dir(builtins))
# Names that hold a count, size or index in most code: their arguments to any other call
# are worth a ±1, after every literal and index on the line.
_COUNT_NAME_RE = re.compile(
    r"(?:n|i|j|k|m|idx|index|pos|offset|start|stop|end|size|length|limit|count|width|"
    r"height|depth|level|num|total|step|n_\w+|num_\w+|max_\w+|min_\w+|"
    r"\w+_(?:count|size|len|length|index|idx|num|limit|offset|pos|width|depth))",
    re.IGNORECASE,
)


def _count_arguments(ctx: _Ctx, call: ast.Call) -> Iterator[tuple[int, ast.AST, bool]]:
    """A call's plain-name arguments that are counts: (base rank, node, plus first)."""
    func = call.func
    callee = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if callee in ("range", "len"):
        return  # their own rules
    positions, keywords = _COUNT_PARAMETERS.get(callee, ((), ()))
    if any(isinstance(a, ast.Starred) for a in call.args):
        positions = ()  # positions after a *args are unknown
    arguments = [(i in positions, a) for i, a in enumerate(call.args)]
    arguments += [(k.arg in keywords, k.value) for k in call.keywords if k.arg is not None]
    for known, arg in arguments:
        if isinstance(arg, ast.Name):
            name = arg.id
        elif isinstance(arg, ast.Attribute):
            name = arg.attr
        else:
            continue
        if name in ctx.callables or name in _BUILTIN_NAMES:
            continue
        if known:
            yield 1, arg, True
        elif _COUNT_NAME_RE.fullmatch(name):
            yield 3, arg, True


def _op_off_by_one(ctx: _Ctx) -> Iterator[_Edit]:
    """Loop bounds, ``len(x) - 1``, indices, dividends of ``%``/``//``/``divmod`` and
    integer literals one too big or small."""
    targets: list[tuple[int, ast.AST, bool]] = []  # (base rank, node, plus first)
    for node in ctx.nodes:
        if _is_call_to(node, "range") and isinstance(node, ast.Call):
            args = [a for a in node.args if not isinstance(a, ast.Starred)]
            if len(args) == len(node.args) and 1 <= len(args) <= 3:
                stop = args[0] if len(args) == 1 else args[1]
                targets.append((0, stop, True))
                if len(args) > 1:
                    targets.append((1, args[0], False))
        elif _is_call_to(node, "len"):
            parent = ctx.parents.get(node)
            adjusted = (
                isinstance(parent, ast.BinOp)
                and isinstance(parent.op, ast.Add | ast.Sub)
                and parent.left is node
                and _int_value(parent.right) is not None
            )
            targets.append((0, parent if adjusted and parent else node, False))
        elif isinstance(node, ast.Call):
            targets.extend(_count_arguments(ctx, node))
            parent = ctx.parents.get(node)
            offset = (
                isinstance(parent, ast.BinOp)
                and isinstance(parent.op, ast.Add | ast.Sub)
                and _int_value(parent.right) is not None
            )
            if _is_call_to(node, "int") and not offset:
                # a number read from text, 1-based as people write it: html2text's
                # `<ol start="3">` read as `int(attrs["start"])` for `… - 1`
                targets.append((2, node, False))
            dividend = node.args[0] if _is_call_to(node, "divmod") and node.args else None
            if dividend is not None and not isinstance(dividend, ast.Starred):
                targets.append((1, dividend, False))  # as `x // n` below
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.LShift | ast.RShift)
            and isinstance(node.right, ast.Name | ast.Attribute)
        ):
            # a bit position one off: mercantile's quadkey masked with `1 << z` for
            # `1 << (z - 1)` (a literal shift is bumped as any literal)
            targets.append((1, node.right, False))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.FloorDiv):
            # the dividend of `x % n`, `x // n`: a 1-based number taken as 0-based (months,
            # weekdays: `(month - 1 + step) % 12`), a ceiling division short of its `- 1`
            if not _textual(node.left):
                targets.append((1, node.left, False))
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add | ast.Sub)
            and all(
                isinstance(side, ast.Name | ast.Attribute | ast.Subscript)
                for side in (node.left, node.right)
            )
            and isinstance(ctx.parents.get(node), ast.Assign | ast.AnnAssign | ast.Return)
        ):
            # a bound computed from two values: intelhex's inclusive `end = start + size`
            # for `start + size - 1`, a count `last - first` short of its `+ 1`
            targets.append((1, node, isinstance(node.op, ast.Sub)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            # the count of a repeated sequence: `(fillvalue,) * n`, `" " * width`, padding
            # one too long or short (more-itertools' windowed padded `n` for `n - 1`)
            targets.extend((1, count, True) for count in _repetition_counts(node))
            # a 1-based number scaled to the units before it: hijri-converter's month
            # index `(year - 1) * 12`, a page's offset `(page - 1) * size`
            targets.extend((3, number, False) for number in _scaled_numbers(node))
        elif isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            index = node.slice
            if not isinstance(index, ast.Tuple) and not (
                isinstance(index, ast.Constant) and not isinstance(index.value, int)
            ):
                targets.append((1, index, True))
        elif _int_value(node) is not None:
            parent = ctx.parents.get(node)
            if parent is not None and _int_value(parent) is not None:
                continue  # the `1` inside `-1`: handled as the literal `-1`
            if isinstance(parent, ast.Slice):
                continue  # slice bounds belong to the slice-bound operator
            if (
                isinstance(parent, ast.BinOp)
                and isinstance(parent.op, ast.Sub)
                and parent.left is node
                and _int_value(parent.right) is None
            ):
                # `7 - i`: a position counted from the other end, as a bit within a
                # byte (pycrc's `octet >> (7 - i)`) or an index from the last
                targets.append((1, node, False))
                continue
            if _is_offset(parent, node):
                # `n - 1` → `n` first, then `n - 2`: bumping the `1` alone would write
                # `n - 0`, a fix no reviewer would merge as it stands. In a slice bound
                # that is the slice-bound operator's first guess, and stays its own.
                if not isinstance(ctx.parents.get(parent), ast.Slice):
                    targets.append((2, parent, True))
                continue
            targets.append((2, node, True))
    best: dict[tuple[int, int], tuple[int, ast.AST, bool]] = {}
    for base, node, plus_first in targets:
        span = ctx.span(node)
        if span is None or not ctx.touches(node):
            continue
        if span not in best or base < best[span][0]:
            best[span] = (base, node, plus_first)
    for span, (base, node, plus_first) in best.items():
        bumps = _bumps(ctx, node, plus_first=plus_first)
        position = _int_value(node) if isinstance(ctx.parents.get(node), ast.Subscript) else None
        if position:
            # a position counted from the wrong end: geojson's ring closed when
            # `elem[0] == elem[-1]`, written `elem[1]`
            bumps.append((len(bumps), str(-position), _ATOM if position < 0 else 13))
        for rank, text, prec in bumps:
            replaced = ctx.replace_node(node, text, prec)
            if replaced:
                yield _Edit((base, rank, span[0]), *replaced, _change(ctx.text(node), text))


def _repetition_counts(node: ast.BinOp) -> list[ast.expr]:
    """The plain operands that give the count of ``sequence * count`` (either order),
    through the branches of a conditional count; offsets (``n - 1``) and literals have
    their own rules."""
    if _sequence_literal(node.left):
        count = node.right
    elif _sequence_literal(node.right):
        count = node.left
    else:
        return []
    pending: list[ast.expr] = [count]
    found: list[ast.expr] = []
    while pending:
        part = pending.pop()
        if isinstance(part, ast.IfExp):
            pending += [part.orelse, part.body]
        elif isinstance(part, ast.Name | ast.Attribute | ast.Call):
            found.append(part)
    return found


def _scaled_numbers(node: ast.BinOp) -> list[ast.expr]:
    """The named operands of a product of numbers (``year * 12``, ``page * size``):
    neither side a sequence (that is :func:`_repetition_counts`), nor a literal."""
    sides = (node.left, node.right)
    if any(_sequence_literal(side) for side in sides):
        return []
    numeric = [s for s in sides if _int_value(s) is not None or _named(s)]
    if len(numeric) < 2:
        return []
    return [s for s in sides if _named(s)]


def _named(node: ast.AST) -> bool:
    return isinstance(node, ast.Name | ast.Attribute)


def _sequence_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Tuple | ast.List | ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
    )


def _textual(node: ast.AST) -> bool:
    """A string or bytes (``"%d" % n`` formats, it does not divide)."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | bytes)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _textual(node.left) or _textual(node.right)
    return False


def _op_slice_bound(ctx: _Ctx) -> Iterator[_Edit]:
    """``x[a:b]`` bounds ±1, ``x[:-1]`` ↔ ``x[:]``, a bound counted from the other end
    (``x[n:]`` ↔ ``x[-n:]``) and a step the other way (``x[-1::2]`` ↔ ``x[-1::-2]``,
    python-barcode's EAN-13 checksum): fencepost errors in slices. ``x[:i] + x[i:]`` is ``x``
    again, which no one writes on purpose: the list without its ``i``-th item was meant,
    and ``x[i + 1:]`` comes first (docopt's ``left[:pos] + left[pos + 1:]``)."""
    rejoined = _rejoined_tails(ctx)
    for node in ctx.of_type(ast.Slice):
        assert isinstance(node, ast.Slice)
        span = ctx.span(node)
        if span is None:
            continue
        lower, upper, step = node.lower, node.upper, node.step
        step_text = "" if step is None else ":" + ctx.text(step)
        lower_text = "" if lower is None else ctx.text(lower)
        upper_text = "" if upper is None else ctx.text(upper)
        whole = ctx.source[span[0] : span[1]]

        def rebuilt(lo: str, up: str, step_text: str = step_text) -> str:
            return f"{lo}:{up}{step_text}"

        if upper is None:
            new = rebuilt(lower_text, "-1")
            yield _Edit((1, 0, span[0]), span[0], span[1], new, _change(whole, new))
        else:
            if _int_value(upper) == -1:
                new = rebuilt(lower_text, "")
                yield _Edit((0, 0, span[0]), span[0], span[1], new, _change(whole, new))
            for rank, text, prec in _bumps(ctx, upper):
                replaced = ctx.replace_node(upper, text, prec)
                if replaced:
                    yield _Edit((1, rank, span[0]), *replaced, _change(upper_text, text))
            if _int_value(upper) != -1:
                new = rebuilt(lower_text, "")
                yield _Edit((3, 0, span[0]), span[0], span[1], new, _change(whole, new))
        if lower is None:
            new = rebuilt("1", upper_text)
            yield _Edit((2, 0, span[0]), span[0], span[1], new, _change(whole, new))
        else:
            for rank, text, prec in _bumps(ctx, lower):
                replaced = ctx.replace_node(lower, text, prec)
                first = node in rejoined and text == f"{lower_text} + 1"
                # `x[i + 1:]` → `x[i:]` before `x[i + 1:-1]`: an offset written out is
                # where the fencepost is (filetype's `buf[8 + n + 1:]`)
                undone = rank == 0 and isinstance(lower, ast.BinOp)
                if replaced:
                    order = (0, -1, span[0]) if first else (1, -1 if undone else rank + 1, span[0])
                    yield _Edit(order, *replaced, _change(lower_text, text))
            new = rebuilt("", upper_text)
            yield _Edit((3, 1, span[0]), span[0], span[1], new, _change(whole, new))
        for bound in (lower, upper, step):  # a step's sign: a walk the wrong way
            negated = _negated(ctx, bound)
            if bound is not None and negated is not None:
                replaced = ctx.replace_node(bound, *negated)
                if replaced:
                    yield _Edit((2, 1, span[0]), *replaced, _change(ctx.text(bound), negated[0]))


def _rejoined_tails(ctx: _Ctx) -> list[ast.Slice]:
    """The ``[i:]`` slices of ``x[:i] + x[i:]`` on the line."""
    found = []
    for node in ctx.of_type(ast.BinOp):
        assert isinstance(node, ast.BinOp)
        head, tail = node.left, node.right
        if not (
            isinstance(node.op, ast.Add)
            and isinstance(head, ast.Subscript)
            and isinstance(tail, ast.Subscript)
            and isinstance(head.slice, ast.Slice)
            and isinstance(tail.slice, ast.Slice)
            and ast.dump(head.value) == ast.dump(tail.value)
        ):
            continue
        cut, rest = head.slice, tail.slice
        if (
            cut.lower is None
            and cut.step is None
            and rest.upper is None
            and rest.step is None
            and cut.upper is not None
            and rest.lower is not None
            and ast.dump(cut.upper) == ast.dump(rest.lower)
        ):
            found.append(rest)
    return found


def _negated(ctx: _Ctx, bound: ast.expr | None) -> tuple[str, int] | None:
    """A slice bound counted from the other end: ``n`` → ``-n``, ``-n`` → ``n`` (toolz's
    ``tail`` with ``seq[n:]`` for ``seq[-n:]``), with the text's precedence; None for
    no bound or 0."""
    if bound is None or _int_value(bound) == 0:
        return None
    if isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub):
        text = ctx.text(bound.operand)
        return text, _prec(bound.operand, text)
    return f"-{ctx.wrap(bound, 13)}", 13


def _op_boolean_operator(ctx: _Ctx) -> Iterator[_Edit]:
    """``and`` ↔ ``or``: the whole chain at once first, then each operator alone."""
    for node in ctx.of_type(ast.BoolOp):
        assert isinstance(node, ast.BoolOp)
        alt = "or" if isinstance(node.op, ast.And) else "and"
        tokens = [
            ctx.token_between(a, b, on_line=False) for a, b in itertools.pairwise(node.values)
        ]
        if any(t is None for t in tokens):
            continue
        spans = [t for t in tokens if t is not None]
        if not any(ctx.line_of(s) == ctx.line for s, _ in spans):
            continue
        old = "and" if alt == "or" else "or"
        if len(spans) > 1:
            first, last = spans[0][0], spans[-1][1]
            text = ctx.source[first:last]
            for s, e in reversed(spans):
                text = text[: s - first] + alt + text[e - first :]
            yield _Edit((0, first), first, last, text, f"every `{old}` → `{alt}`")
        for s, e in spans:
            if ctx.line_of(s) == ctx.line:
                yield _Edit((1, s), s, e, alt, _change(old, alt))


def _negation(ctx: _Ctx, node: ast.AST) -> tuple[int, int, str] | None:
    """``node`` negated: ``not c`` → ``c``, otherwise ``not c`` (parenthesised if needed)."""
    span = ctx.span(node)
    if span is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = ctx.source[span[0] + 3 : span[1]].strip()
        if not inner:
            return None
        prec = _prec(node.operand, inner) if inner == ctx.text(node.operand) else _ATOM
        return ctx.replace_node(node, inner, prec)
    # `not (a < b)` rather than the legal but easily misread `not a < b`.
    return ctx.replace_node(node, "not " + ctx.wrap(node, 7), 5)


# Comparisons whose negation is one operator away, and offered as that operator's first
# guess (membership, identity, comparison): `not (x not in y)` is `x in y` written badly.
_INVERTIBLE = (ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.Eq, ast.NotEq)


def _has_inverse(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], _INVERTIBLE)
    )


def _op_negate_condition(ctx: _Ctx) -> Iterator[_Edit]:
    """``if c:`` → ``if not c:`` (and ``while``, ternaries, comprehension filters).

    Also drops an existing ``not`` on the line, then negates single operands of an
    ``and``/``or`` (``a and b`` → ``a and not b``).
    """
    tests: list[tuple[int, ast.AST]] = []
    for node in ctx.nodes:
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            tests.append((0, node.test))
        elif isinstance(node, ast.comprehension):
            tests.extend((0, cond) for cond in node.ifs)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tests.append((0, node))
        elif isinstance(node, ast.BoolOp):
            tests.extend((1, value) for value in node.values)
    done: set[tuple[int, int]] = set()
    for rank, test in tests:
        span = ctx.span(test)
        if span is None or span in done or not ctx.touches(test) or _has_inverse(test):
            continue
        done.add(span)
        negated = _negation(ctx, test)
        if negated:
            yield _Edit((rank, span[0]), *negated, _change(ctx.text(test), negated[2]))


_COMMUTATIVE_CALLS = frozenset({"min", "max", "hypot", "gcd", "lcm", "set", "frozenset"})
_NON_COMMUTATIVE = (
    ast.Sub,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.LShift,
    ast.RShift,
    ast.MatMult,
)


def _swap(ctx: _Ctx, a: ast.AST, b: ast.AST) -> tuple[int, int, str] | None:
    """Swap two sibling spans (call arguments), keeping what lies between them."""
    sa, sb = ctx.span(a), ctx.span(b)
    if sa is None or sb is None or sa[1] > sb[0]:
        return None
    src = ctx.source
    text = src[sb[0] : sb[1]] + src[sa[1] : sb[0]] + src[sa[0] : sa[1]]
    return sa[0], sb[1], text


MAX_UNPACKED = 5  # names an unpacking may have for two of them to be swapped


def _op_swap_arguments(ctx: _Ctx) -> Iterator[_Edit]:
    """``f(a, b)`` → ``f(b, a)``, ``a - b`` → ``b - a`` and ``a if c else b`` → ``b if c
    else a``: operands in the wrong order; ``s.m(a).m(b)`` → ``s.m(b).m(a)``, two steps
    of one kind done in the wrong order (unescaping ``~0`` before ``~1``); and ``a, b =
    pair`` → ``b, a = pair``, a pair unpacked the wrong way round (munch's
    ``__setstate__`` read its ``(default, dict)`` state as ``state_dict, default``), or two
    of several (docstring-parser's ``key, arg_name, type_name = args``)."""
    for node in ctx.nodes:
        if isinstance(node, ast.Assign | ast.For):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not (
                    isinstance(target, ast.Tuple | ast.List)
                    and 2 <= len(target.elts) <= MAX_UNPACKED
                    and ctx.touches(target)
                ):
                    continue
                names = target.elts
                for i, j in itertools.combinations(range(len(names)), 2):
                    first, second = names[i], names[j]
                    if isinstance(first, ast.Starred) or isinstance(second, ast.Starred):
                        continue
                    swapped = _swap(ctx, first, second)
                    if swapped and ctx.text(first) != ctx.text(second):
                        desc = f"swap `{_show(ctx.text(first))}` and `{_show(ctx.text(second))}`"
                        # neighbours first: two of several names written in each other's place
                        yield _Edit((1 if j == i + 1 else 2, swapped[0]), *swapped, desc)
        if isinstance(node, ast.Call):
            chained = _swap_chained(ctx, node)
            if chained is not None:
                yield chained
            func = node.func
            if isinstance(func, ast.Name) and func.id in _COMMUTATIVE_CALLS:
                continue
            args = node.args
            pairs: list[tuple[int, ast.AST, ast.AST]] = []
            for i, first in enumerate(args):
                stop = len(args) if len(args) <= 5 else min(i + 2, len(args))
                pairs.extend((0 if j == i + 1 else 1, first, args[j]) for j in range(i + 1, stop))
            keywords = [k for k in node.keywords if k.arg is not None]
            pairs.extend((2, k.value, m.value) for k, m in itertools.pairwise(keywords))
            for rank, a, b in pairs:
                if isinstance(a, ast.Starred) or isinstance(b, ast.Starred):
                    continue
                if not (ctx.touches(a) or ctx.touches(b)) or ctx.text(a) == ctx.text(b):
                    continue
                swapped = _swap(ctx, a, b)
                if swapped:
                    desc = f"swap `{_show(ctx.text(a))}` and `{_show(ctx.text(b))}`"
                    yield _Edit((rank, swapped[0]), *swapped, desc)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _NON_COMMUTATIVE):
            swapped = _swap_operands(ctx, node)
            if swapped:
                desc = _change(ctx.text(node), swapped[2])
                yield _Edit((0, swapped[0]), *swapped, desc)
        elif (
            isinstance(node, ast.IfExp)
            and ctx.text(node.body) != ctx.text(node.orelse)
            # a chained `a if c else b if d else e` would regroup once swapped
            and not isinstance(node.orelse, ast.IfExp | ast.Lambda | ast.NamedExpr)
        ):
            # `1024 if binary else 1000` with the two values the wrong way round
            swapped = _swap(ctx, node.body, node.orelse)
            if swapped:
                desc = f"swap `{_show(ctx.text(node.body))}` and `{_show(ctx.text(node.orelse))}`"
                yield _Edit((1, swapped[0]), *swapped, desc)


def _swap_chained(ctx: _Ctx, outer: ast.Call) -> _Edit | None:
    """The edit swapping the arguments of ``outer`` (``….m(b)``) and of the call of the
    same method it is made on (``s.m(a)``), both given positional arguments only."""
    func = outer.func
    inner = func.value if isinstance(func, ast.Attribute) else None
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr == func.attr
        and outer.args
        and inner.args
        and not outer.keywords
        and not inner.keywords
        and ctx.touches(outer)
    ):
        return None
    if any(isinstance(a, ast.Starred) for a in (*outer.args, *inner.args)):
        return None
    first, last = ctx.span(inner.args[0]), ctx.span(inner.args[-1])
    then, end = ctx.span(outer.args[0]), ctx.span(outer.args[-1])
    if first is None or last is None or then is None or end is None:
        return None
    src = ctx.source
    before, after = src[first[0] : last[1]], src[then[0] : end[1]]
    if before == after:
        return None
    text = after + src[last[1] : then[0]] + before
    method = func.attr
    desc = f"swap `.{method}({_show(before)})` and `.{method}({_show(after)})`"
    return _Edit((0, first[0]), first[0], end[1], text, desc)


def _swap_operands(ctx: _Ctx, node: ast.BinOp) -> tuple[int, int, str] | None:
    token = ctx.token_between(node.left, node.right)
    span = ctx.span(node)
    if token is None or span is None:
        return None
    src = ctx.source
    left = src[span[0] : token[0]].rstrip()
    right = src[token[1] : span[1]].lstrip()
    middle = src[span[0] + len(left) : span[1] - len(right)]
    p = _BINOP_PREC.get(type(node.op), 12)
    need_left, need_right = (15, 13) if isinstance(node.op, ast.Pow) else (p, p + 1)

    def fit(text: str, operand: ast.AST, need: int) -> str:
        bare = text == ctx.text(operand)
        return f"({text})" if bare and _prec(operand, text) < need else text

    new = fit(right, node.right, need_left) + middle + fit(left, node.left, need_right)
    return span[0], span[1], new


# ---------------------------------------------------------------- scope & kinds

_KIND_NAMES = {
    "int": "int",
    "float": "float",
    "str": "str",
    "bytes": "bytes",
    "bool": "bool",
    "list": "list",
    "List": "list",
    "Sequence": "list",
    "dict": "dict",
    "Dict": "dict",
    "Mapping": "dict",
    "set": "set",
    "Set": "set",
    "frozenset": "set",
    "tuple": "tuple",
    "Tuple": "tuple",
}
_EMPTY = {
    "int": "0",
    "float": "0.0",
    "str": '""',
    "bytes": 'b""',
    "bool": "False",
    "list": "[]",
    "dict": "{}",
    "set": "set()",
    "tuple": "()",
}
_CALL_KINDS = {
    "int": "int",
    "len": "int",
    "float": "float",
    "str": "str",
    "repr": "str",
    "bool": "bool",
    "isinstance": "bool",
    "list": "list",
    "sorted": "list",
    "dict": "dict",
    "set": "set",
    "tuple": "tuple",
}


def _annotation_kind(annotation: ast.AST | None) -> str | None:
    """The kind an annotation names (``list[int]`` → list; ``X | None`` → None: unsure)."""
    if isinstance(annotation, ast.Name):
        return _KIND_NAMES.get(annotation.id)
    if isinstance(annotation, ast.Attribute):
        return _KIND_NAMES.get(annotation.attr)
    if isinstance(annotation, ast.Subscript):
        return _annotation_kind(annotation.value) if annotation.value else None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return _annotation_kind(ast.parse(annotation.value, mode="eval").body)
        except Exception:
            return None
    return None


def _value_kind(value: ast.AST | None, env: dict[str, _Var] | None = None) -> str | None:
    """A guess at the kind of value an expression produces, or ``None``.

    ``env`` gives the kinds of variables seen so far, so ``mid = (lo + hi) // 2`` is
    an int when ``lo`` and ``hi`` are.
    """
    if isinstance(value, ast.Name) and env is not None:
        var = env.get(value.id)
        return var.kind if var is not None else None
    if isinstance(value, ast.BinOp) and not isinstance(value.op, ast.MatMult):
        kinds = {_value_kind(value.left, env), _value_kind(value.right, env)}
        if not kinds <= {"int", "float", "bool", None} or kinds <= {None}:
            left = _value_kind(value.left, env)
            return left if left in ("str", "list", "tuple", "bytes") else None
        if isinstance(value.op, ast.Div) or "float" in kinds:
            return "float"
        return "int" if None not in kinds else None
    if isinstance(value, ast.Constant):
        if value.value is None or value.value is Ellipsis:
            return None
        return type(value.value).__name__
    if isinstance(value, ast.List | ast.ListComp):
        return "list"
    if isinstance(value, ast.Dict | ast.DictComp):
        return "dict"
    if isinstance(value, ast.Set | ast.SetComp):
        return "set"
    if isinstance(value, ast.Tuple):
        return "tuple"
    if isinstance(value, ast.JoinedStr):
        return "str"
    if isinstance(value, ast.Compare) or (
        isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
    ):
        return "bool"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return _CALL_KINDS.get(value.func.id)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return _value_kind(value.operand, env)
    if isinstance(value, ast.IfExp):
        body, orelse = _value_kind(value.body, env), _value_kind(value.orelse, env)
        return body if body == orelse else None
    return None


@dataclass
class _Var:
    name: str
    first_line: int
    kinds: set[str | None] = field(default_factory=set)
    lines: set[int] = field(default_factory=set)  # where the name is used or bound
    hints: set[str] = field(default_factory=set)  # "container"/"number", from its uses

    def distance(self, line: int) -> int:
        return min((abs(n - line) for n in self.lines), default=1_000_000)

    @property
    def kind(self) -> str | None:
        known = {k for k in self.kinds if k is not None}
        if len(known) == 1:  # unknown reassignments (`lo = mid + 1`) don't contradict it
            return next(iter(known))
        if not known and len(self.hints) == 1:
            return next(iter(self.hints))
        return None


def _scope_nodes(root: ast.AST) -> Iterator[ast.AST]:
    """Nodes of ``root``'s own scope (nested functions, classes, comprehensions skipped)."""
    stack = list(reversed(list(ast.iter_child_nodes(root))))
    while stack:  # pre-order, source order: earlier assignments inform later kinds
        node = stack.pop()
        yield node
        if isinstance(node, (*_SCOPES, *_COMPREHENSIONS, ast.JoinedStr)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _scope_vars(scope: ast.AST) -> dict[str, _Var]:
    """Parameters and assigned locals of a function (or module), with guessed kinds."""
    out: dict[str, _Var] = {}

    def add(name: str, line: int, kind: str | None) -> None:
        var = out.setdefault(name, _Var(name, line))
        var.first_line = min(var.first_line, line)
        var.kinds.add(kind)

    if isinstance(scope, _FUNCS):
        a = scope.args
        positional = [*a.posonlyargs, *a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
        defaults += a.defaults
        for arg, default in [
            *zip(positional, defaults, strict=True),
            *zip(a.kwonlyargs, a.kw_defaults, strict=True),
        ]:
            kind = _annotation_kind(arg.annotation) or _value_kind(default)
            add(arg.arg, scope.lineno, kind)
        if a.vararg:
            add(a.vararg.arg, scope.lineno, "tuple")
        if a.kwarg:
            add(a.kwarg.arg, scope.lineno, "dict")
    typed: set[int] = set()
    used: dict[str, set[int]] = {}
    for node in _scope_nodes(scope):
        if isinstance(node, ast.Name):
            used.setdefault(node.id, set()).add(node.lineno)
        targets: list[tuple[ast.AST, str | None]] = []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Tuple)
                    and isinstance(node.value, ast.Tuple)
                    and len(target.elts) == len(node.value.elts)
                ):  # `lo, hi = 0, len(xs) - 1`
                    targets.extend(
                        (t, _value_kind(v, out))
                        for t, v in zip(target.elts, node.value.elts, strict=True)
                    )
                else:
                    targets.append((target, _value_kind(node.value, out)))
        elif isinstance(node, ast.AnnAssign):
            targets = [(node.target, _annotation_kind(node.annotation))]
        elif isinstance(node, ast.For | ast.AsyncFor):
            if _is_call_to(node.iter, "range"):
                targets = [(node.target, "int")]
            elif _is_call_to(node.iter, "enumerate") and isinstance(node.target, ast.Tuple):
                targets = [(node.target.elts[0], "int")]
        for bound, kind in targets:
            if isinstance(bound, ast.Name):
                add(bound.id, bound.lineno, kind)
                typed.add(id(bound))
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            typed.add(id(node.target))  # `x += …` keeps x's kind
            out.setdefault(node.target.id, _Var(node.target.id, node.target.lineno))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in typed:
            add(node.id, node.lineno, None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, node.lineno, None)
    hints = _usage_hints(scope)
    for name, var in out.items():
        var.lines = used.get(name, set()) | {var.first_line}
        var.hints = hints.get(name, set())
    return out


def _usage_hints(scope: ast.AST) -> dict[str, set[str]]:
    """What uses say about a name's kind: ``x[i]``/``len(x)``/``in x`` → container,
    ``x - 1``/``x / n``/``x < 3``/``-x``/``s[x:]``/``range(x)`` → number; so ``lo`` is
    never swapped for the list ``a`` (nor toolz's ``seq[n:]`` made ``n[n:]``, which
    raised in a ``try`` whose ``except`` then gave every test its answer).
    ``x.m(…)`` with a method no builtin type has → object: xmltodict's
    ``content_handler.ignorableWhitespace(newl)`` is not the depth or the newline.
    """
    hints: dict[str, set[str]] = {}

    def hint(node: ast.AST, kind: str) -> None:
        if isinstance(node, ast.Name):
            hints.setdefault(node.id, set()).add(kind)

    for node in _scope_nodes(scope):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr not in _BUILTIN_METHODS
        ):
            hint(node.func.value, "object")  # a method no builtin value has
        if isinstance(node, ast.Subscript):
            hint(node.value, "container")
        elif isinstance(node, ast.Slice):
            for bound in (node.lower, node.upper, node.step):
                if bound is not None:
                    hint(bound, "number")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            hint(node.operand, "number")
        elif _is_call_to(node, "range") and isinstance(node, ast.Call):
            for argument in node.args:
                hint(argument, "number")
        elif _is_call_to(node, "len") and isinstance(node, ast.Call) and node.args:
            hint(node.args[0], "container")
        elif isinstance(node, ast.For | ast.AsyncFor):
            hint(node.iter, "container")
        elif isinstance(node, _COMPREHENSIONS):
            hint(node.generators[0].iter, "container")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if isinstance(op, ast.In | ast.NotIn):
                    hint(operands[i + 1], "container")
                elif isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
                    pair = (operands[i], operands[i + 1])
                    if any(_value_kind(o) in ("int", "float") for o in pair):
                        for operand in pair:
                            hint(operand, "number")
        elif isinstance(node, ast.BinOp):
            numeric_literal = any(
                _value_kind(o) in ("int", "float") for o in (node.left, node.right)
            )
            if isinstance(node.op, ast.Sub | ast.Div | ast.FloorDiv | ast.Pow) or (
                isinstance(node.op, ast.Add) and numeric_literal
            ):
                hint(node.left, "number")
                hint(node.right, "number")
    return hints


_NUMBER_KINDS = frozenset({"int", "float", "number"})
_BUILTIN_METHODS = frozenset(
    name
    for kind in (str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float, complex)
    for name in dir(kind)
)
_CONTAINER_KINDS = frozenset({"list", "dict", "set", "tuple", "str", "bytes", "container"})


def _compatible(a: str | None, b: str | None) -> bool:
    """Kinds that could stand for each other: unknown, equal, both numbers or containers.

    (A "container" hint is compatible with any container kind; ``list`` vs ``str`` is not.)
    """
    if a is None or b is None or a == b:
        return True
    if a in _NUMBER_KINDS and b in _NUMBER_KINDS:
        return True
    return "container" in (a, b) and a in _CONTAINER_KINDS and b in _CONTAINER_KINDS


def _same_kind(a: str | None, b: str | None) -> bool:
    """Both kinds known and alike: equal, or a "container" hint from how one is used
    (``row[idx]``) and a container the other is built as (``fill = list(...)``). petl's
    ``filldown`` copied ``row[idx]`` where it meant ``fill[idx]``: ``row``, only ever
    indexed, counted every list in scope as another kind, and ``fill`` fell out of the
    names tried."""
    if a is None or b is None:
        return False
    return a == b or ("container" in (a, b) and _compatible(a, b))


def _op_wrong_variable(ctx: _Ctx) -> Iterator[_Edit]:
    """Use of the wrong variable: one name on the line swapped for another in scope.

    Candidates are the enclosing function's parameters and locals (the module's names
    at top level), of the same kind when both kinds can be guessed; those defined
    before the line and with similar names (``i``/``j``, ``width``/``height``) first.
    Replacing the only read of a local the function assigns comes last: it would leave
    that assignment computing nothing, which code that worked rarely does. munch's
    ``state_dict, default = state`` read the wrong way round was "fixed" by
    ``self.update(default)``, which passed its tests and left ``state_dict`` dead.
    """
    func = ctx.enclosing_function()
    scope: ast.AST = func if func is not None else ctx.tree
    variables = _scope_vars(scope)
    reads = Counter(  # closures, comprehensions and f-strings read it too
        node.id
        for node in ast.walk(scope)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    )
    assigned = {
        node.id
        for node in _scope_nodes(scope)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    not_variables = ctx.callables | set(dir(builtins))
    for name in list(variables):
        if name in {"self", "cls"} or (func is None and name in not_variables):
            del variables[name]
    # a closure reads its enclosing functions' variables, builtins' names among them
    # (parsy's ``until(…, min=0)`` and the parser it returns, which reads ``min``)
    enclosing: set[str] = set()
    if func is not None:  # the functions holding the line that start before it enclose it
        enclosing = {
            name
            for node in ctx.nodes
            if isinstance(node, _FUNCS) and node.lineno < func.lineno
            for name in _scope_vars(node)
        }
    for node in [*ctx.of_type(ast.Name), *ctx.placeholder_spans]:
        assert isinstance(node, ast.Name)
        parent = ctx.parents.get(node)
        if not isinstance(node.ctx, ast.Load) or node.id in {"self", "cls"}:
            continue
        if isinstance(parent, ast.Call) and parent.func is node:
            continue
        if node.id not in variables and node.id not in enclosing and node.id in not_variables:
            continue
        span = ctx.placeholder_spans.get(node) or ctx.span(node)
        if span is None:
            continue
        own = variables.get(node.id)
        own_kind = own.kind if own else None
        named = _target_words(ctx, node)

        def score(
            var: _Var,
            own: str = node.id,
            own_kind: str | None = own_kind,
            named: frozenset[str] = named,
        ) -> tuple[int, int, int, int, float, str]:
            # `ansi_g = 6 * round(b / 255.0 * 5.0)`: the value of `…_g` reads `g`
            # (colorful's rgb_to_ansi256 read `b` twice, and `b` → `g` came 41st)
            says = 0 if var.name in named and own not in named else 1
            same = 0 if _same_kind(own_kind, var.kind) else 1
            before = 0 if var.first_line < ctx.line else 1
            distance = var.distance(ctx.line)
            near = 0 if distance <= 2 else 1 if distance <= 10 else 2  # mix-ups are local
            similar = difflib.SequenceMatcher(None, own, var.name).ratio()
            return says, same, before, near, -similar, var.name

        candidates = sorted(
            (v for v in variables.values() if v.name != node.id and _compatible(own_kind, v.kind)),
            key=score,
        )
        # the only read of a local: the edit would leave its assignment dead
        dead = func is not None and node.id in assigned and reads[node.id] == 1
        last = DEAD_READ_RANK if dead else 0
        in_message = node in ctx.placeholder_spans and _raised(ctx, node)
        for rank, var in enumerate(candidates[:6]):
            desc = _change(node.id, var.name)
            yield _Edit((last + rank, span[0]), span[0], span[1], var.name, desc, dead, in_message)
    yield from _wrong_attribute(ctx)
    yield from _sibling_keyword_values(ctx)
    yield from _sibling_callees(ctx)


MAX_SIBLING_CALLEES = 3
# how alike a sibling the function calls must be named (``Le``/``Lt``, ``Le``/``Ge``: 0.5)
SIBLING_LIKENESS = 0.5
# calls named after their argument a function must have for that to be its convention
MIN_CONVENTIONAL = 2
SIBLING_RANK = 10  # wrong-variable rank of a sibling callee: after the names in scope (0-5)


def _sibling_callees(ctx: _Ctx) -> Iterator[_Edit]:
    """A called name swapped for a sibling: annotated-types' ``Interval.__iter__`` with
    ``yield Le(self.lt)`` for ``Lt``, one of four parallel constructors called in
    another's place. The siblings are the module's functions, classes and imports that
    the function (the module at top level) also calls with as many arguments and that
    are named alike (``Le``/``Ge``, not ``Gt``); and, where the function's other calls
    are each named after their argument (``Gt(self.gt)``, ``Ge(self.ge)``), the one this
    call's argument names (``self.lt``: ``Lt``), first. A builtin is never one (``len``,
    ``str``), nor one called inside the call or around it, nor is the exception a
    ``raise`` builds changed: bank_transfer's ``InsufficientFunds`` is no ``Account``."""
    func = ctx.enclosing_function()
    scope: ast.AST = func if func is not None else ctx.tree
    builtin = set(dir(builtins))
    arity: dict[str, set[int]] = defaultdict(set)
    conventional = 0  # the function's calls named after one of their arguments
    for node in _scope_nodes(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            arity[node.func.id].add(len(node.args))
            conventional += node.func.id.lower() in _argument_words(node)
    for node in ctx.of_type(ast.Call):
        assert isinstance(node, ast.Call)
        callee = node.func
        if not isinstance(callee, ast.Name) or callee.id in builtin or not ctx.touches(callee):
            continue
        if isinstance(ctx.parents.get(node), ast.Raise):
            continue  # the exception raised: its siblings are seldom exceptions
        span = ctx.span(callee)
        if span is None:
            continue
        inner = {
            n.func.id
            for n in ast.walk(node)
            if n is not node and isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        } | {  # and around it: `Counter(content_words(text))` is no `Counter(Counter(…))`
            a.func.id
            for a in ctx.ancestors(node)
            if isinstance(a, ast.Call) and isinstance(a.func, ast.Name)
        }
        words = _argument_words(node)
        named = (
            {c for c in ctx.callables if c.lower() in words}
            if conventional >= MIN_CONVENTIONAL and callee.id.lower() not in words
            else set()
        )
        parallel = {
            c
            for c, counts in arity.items()
            if len(node.args) in counts
            and c in ctx.callables
            and difflib.SequenceMatcher(None, callee.id, c).ratio() >= SIBLING_LIKENESS
        }
        siblings = (named | parallel) - inner - builtin - {callee.id}

        def order(
            name: str, own: str = callee.id, named: set[str] = named
        ) -> tuple[int, float, str]:
            similar = difflib.SequenceMatcher(None, own, name).ratio()
            return (0 if name in named else 1, -similar, name)

        for rank, name in enumerate(sorted(siblings, key=order)[:MAX_SIBLING_CALLEES]):
            # after the names in scope: a variable mixed up is the commoner slip
            yield _Edit(
                (SIBLING_RANK + rank, span[0]), span[0], span[1], name, _change(callee.id, name)
            )


def _argument_words(call: ast.Call) -> set[str]:
    """The lower-case words of the names and attributes in ``call``'s arguments."""
    return {
        word
        for arg in [*call.args, *(k.value for k in call.keywords)]
        for part in ast.walk(arg)
        if isinstance(name := getattr(part, "id", None) or getattr(part, "attr", None), str)
        for word in name.lower().split("_")
        if word
    }


def _raised(ctx: _Ctx, node: ast.AST) -> bool:
    """Whether ``node`` is part of a ``raise`` statement (its exception's message)."""
    return any(isinstance(up, ast.Raise) for up in ctx.ancestors(node))


def _target_words(ctx: _Ctx, node: ast.AST) -> frozenset[str]:
    """The words of the names of more than one word the statement holding ``node``
    assigns (``ansi_g`` → ansi, g)."""
    statement: ast.AST | None = node
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = ctx.parents.get(statement)
    if isinstance(statement, ast.Assign):
        targets: list[ast.expr] = statement.targets
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        targets = [statement.target]
    else:
        return frozenset()
    words: set[str] = set()
    for target in targets:
        for part in ast.walk(target):
            name = part.id if isinstance(part, ast.Name) else getattr(part, "attr", None)
            parts = [w for w in name.lower().split("_") if w] if isinstance(name, str) else []
            if len(parts) > 1:  # `mid = (lo + lo) // 2` is not a value of `mid`
                words.update(parts)
    return frozenset(words)


def _sibling_keyword_values(ctx: _Ctx) -> Iterator[_Edit]:
    """``f(patch=self.patch)`` where another call of ``f`` in the function (the module at
    top level) passes ``patch=0``: one branch of parallel code copied from another and
    left half-edited. semantic_version's ``next_minor`` builds ``Version(major=…,
    minor=…, patch=0)`` in each branch; a ``patch=self.patch`` in one is the slip, and no
    name in scope is the fix, the sibling's value is."""
    func = ctx.enclosing_function()
    scope: ast.AST = func if func is not None else ctx.tree
    calls = [n for n in _scope_nodes(scope) if isinstance(n, ast.Call)]
    for node in ctx.of_type(ast.keyword):
        assert isinstance(node, ast.keyword)
        call = ctx.parents.get(node)
        span = ctx.span(node.value)
        if node.arg is None or not isinstance(call, ast.Call) or span is None:
            continue
        if not ctx.touches(node.value):
            continue
        callee, own = ast.dump(call.func), ast.dump(node.value)
        others: dict[str, None] = {}
        for other in calls:
            if other is call or ast.dump(other.func) != callee:
                continue
            for keyword in other.keywords:
                if keyword.arg == node.arg and ast.dump(keyword.value) != own:
                    text = ctx.text(keyword.value)
                    if text and "\n" not in text:
                        others[text] = None
        for rank, text in enumerate(list(others)[:3]):
            yield _Edit(
                (rank, span[0]), span[0], span[1], text, _change(ctx.text(node.value), text)
            )


def _wrong_attribute(ctx: _Ctx) -> Iterator[_Edit]:
    """``self.width`` where ``self.height`` was meant (attributes the class assigns)."""
    for node in ctx.of_type(ast.Attribute):
        assert isinstance(node, ast.Attribute)
        if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            continue
        parent = ctx.parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            continue
        cls = next((a for a in ctx.ancestors(node) if isinstance(a, ast.ClassDef)), None)
        span = ctx.span(node)
        if cls is None or span is None:
            continue
        if not ctx.source.startswith(node.attr, span[1] - len(node.attr)):
            continue
        attrs = sorted(
            {
                n.attr
                for n in ast.walk(cls)
                if isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Store)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
                and n.attr != node.attr
            },
            key=lambda a: (-difflib.SequenceMatcher(None, node.attr, a).ratio(), a),
        )
        start = span[1] - len(node.attr)
        for rank, attr in enumerate(attrs[:4]):
            yield _Edit(
                (rank + 1, start),
                start,
                span[1],
                attr,
                _change(f"self.{node.attr}", f"self.{attr}"),
            )


def function_returns(func: ast.AST) -> list[ast.Return]:
    """The ``return`` statements of ``func``'s own scope (not of functions inside it)."""
    return [n for n in _scope_nodes(func) if isinstance(n, ast.Return)]


def _sensible_return(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """What a guard should return: the empty value of the declared or returned kind."""
    kind = _annotation_kind(func.returns)
    if kind is None and func.returns is None:
        kinds = {_value_kind(r.value) for r in function_returns(func) if r.value is not None}
        kinds.discard(None)
        kind = next(iter(kinds)) if len(kinds) == 1 else None
    return _EMPTY.get(kind or "", "None")


def _insertion_point(
    ctx: _Ctx, func: ast.FunctionDef | ast.AsyncFunctionDef | None
) -> tuple[ast.stmt, int, str] | None:
    """Where a guard for the line goes: (statement, offset of its line, indentation).

    The statement holding the line, widened to one that begins its own line (not the
    ``return x`` of ``if c: return x``) and is not an ``elif``, which nothing can
    precede.  ``None`` when the line is no statement's own (a blank line, a comment,
    a decorator) or is the function's own header.
    """
    stmt = ctx.innermost_statement()
    if stmt is None or stmt is func:
        return None
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        first = body[0]
        decorators = getattr(first, "decorator_list", [])
        first_line = min([first.lineno, *(d.lineno for d in decorators)])
        if ctx.line >= first_line:
            return None  # inside the body, but in no statement of it
    while stmt is not None and stmt is not func:
        span = ctx.span(stmt)
        if span is None:
            return None
        line_start = ctx.starts[ctx.line_of(span[0]) - 1]
        prefix = ctx.source[line_start : span[0]]
        if not prefix.strip() and not ctx.source.startswith("elif", span[0]):
            return stmt, line_start, prefix
        parent = ctx.parents.get(stmt)
        stmt = parent if isinstance(parent, ast.stmt) else None
    return None


def _op_none_check(ctx: _Ctx) -> Iterator[_Edit]:
    """A missing ``None``/empty guard for a name used on the line.

    For a parameter: inserts ``if x is None: return None`` (then ``return <empty value>``
    and ``if not x:`` variants) at the statement's indentation, just before it; for a
    loop variable, ``continue`` instead. For a local that the line dereferences and that
    was bound to something that can be ``None`` (``d.get(k)``, ``re.match(...)``,
    ``next(it, None)``, ``None`` itself: the commonest source of "'NoneType' object has no
    attribute"), ``if x is None:`` with the same returns, ``continue`` first in a loop.
    A parameter called ``default`` (or ``fallback``) is a return too, first when the
    function never uses it: a default nothing returns is what such a bug looks like.
    """
    func = ctx.enclosing_function()
    point = _insertion_point(ctx, func)
    if point is None:
        return
    stmt, line_start, indent = point
    unit = "\t" if "\t" in indent else "    "
    if func is not None and func.body and "\t" not in indent:
        body_col = _pos(func.body[0])
        def_col = _pos(func)
        if body_col and def_col and body_col[1] > def_col[1]:
            unit = " " * (body_col[1] - def_col[1])
    # The function the guard would return from (None at module level or in a class body).
    owner = func if func is not None and any(a is func for a in ctx.ancestors(stmt)) else None
    params = set(_param_names(owner)) - {"self", "cls"} if owner is not None else set()
    loop_vars: set[str] = set()
    for ancestor in _until_scope(ctx, stmt):
        if isinstance(ancestor, ast.For | ast.AsyncFor) and stmt not in (ancestor.orelse or []):
            loop_vars.update(n.id for n in ast.walk(ancestor.target) if isinstance(n, ast.Name))
    names: list[tuple[int, str]] = []
    for node in ctx.of_type(ast.Name):
        assert isinstance(node, ast.Name)
        if not isinstance(node.ctx, ast.Load) or not ctx.touches(node):
            continue
        parent = ctx.parents.get(node)
        dereferenced = (
            (isinstance(parent, ast.Attribute | ast.Subscript) and parent.value is node)
            or (isinstance(parent, ast.Call) and parent.func is not node)
            or isinstance(parent, ast.For | ast.comprehension)
        )
        if node.id in params or node.id in loop_vars:
            names.append((0 if dereferenced else 1, node.id))
        elif dereferenced and owner is not None:
            names.append((0, node.id))  # kept below only if it may be None
    maybe_none = _maybe_none_locals(owner, stmt) if owner is not None else set()
    ordered: list[str] = []
    for _, name in sorted(names, key=lambda p: p[0]):
        if name not in ordered and (name in params or name in loop_vars or name in maybe_none):
            ordered.append(name)
    sensible = _sensible_return(owner) if owner is not None else "None"
    fallback, unused = _default_parameter(owner) if owner is not None else (None, False)
    in_loop = any(isinstance(a, _LOOPS) for a in _until_scope(ctx, stmt))
    nl = ctx.newline
    for index, name in enumerate(ordered):
        returns = ["return None", f"return {sensible}"]
        if fallback is not None and fallback != name:
            returns.insert(0 if unused else len(returns), f"return {fallback}")
        returns = list(dict.fromkeys(returns))
        if name in loop_vars:
            guards = [(f"{name} is None", "continue"), (f"not {name}", "continue")]
        elif name in params:
            guards = [(f"{name} is None", r) for r in returns]
            guards.append((f"not {name}", f"return {sensible}"))
        else:
            actions = ["continue", *returns] if in_loop else returns
            guards = [(f"{name} is None", a) for a in actions]
        for rank, (cond, action) in enumerate(guards):
            text = f"{indent}if {cond}:{nl}{indent}{unit}{action}{nl}"
            yield _Edit(
                (rank, index),
                line_start,
                line_start,
                text,
                f"insert `if {cond}: {action}`",
            )


_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Methods and functions that answer None for "not there": d.get(k), re.match(...), ...
_NONE_ON_MISS_METHODS = frozenset(
    {"get", "match", "search", "fullmatch", "getenv", "first", "one_or_none", "get_or_none"}
)
_DEFAULT_PARAMS = ("default", "fallback")


def _may_be_none(value: ast.AST) -> bool:
    """Whether an assigned value can plainly be ``None`` (a lookup that can miss)."""
    if isinstance(value, ast.Constant):
        return value.value is None
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in ("get", "pop") and isinstance(func, ast.Attribute):
        if len(value.args) >= 2:  # d.get(k, x) is None only when x is
            return _is_none(value.args[1])
        return name == "get" and len(value.args) == 1 and not value.keywords
    if name in ("getattr", "next") and isinstance(func, ast.Name):
        last = 2 if name == "getattr" else 1
        return len(value.args) > last and _is_none(value.args[last])
    return name in _NONE_ON_MISS_METHODS


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _maybe_none_locals(func: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt) -> set[str]:
    """Locals of ``func`` bound, before ``stmt``, to a value that can be ``None``."""
    out: set[str] = set()
    for node in _scope_nodes(func):
        if getattr(node, "lineno", stmt.lineno) >= stmt.lineno:
            continue
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if _may_be_none(value):
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def _param_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = func.args
    return [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]


def _default_parameter(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str | None, bool]:
    """A parameter meant to be returned when something is missing, and whether the body
    never reads it."""
    param = next(
        (n for n in _param_names(func) if n in _DEFAULT_PARAMS or n.endswith("_default")),
        None,
    )
    if param is None:
        return None, False
    read = any(
        isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load)
        for n in _scope_nodes(func)
    )
    return param, not read


_BOOL_CALLS = frozenset(
    {"isinstance", "issubclass", "hasattr", "callable", "any", "all", "bool", "exists"}
)
_NUMERIC_CALLS = frozenset({"len", "sum", "abs", "int", "float", "round", "min", "max"})


def _is_boolish(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare | ast.BoolOp):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in _BOOL_CALLS or name.startswith(("is_", "has_", "startswith", "endswith"))
    return False


def _is_numeric(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp):
        return not isinstance(node.op, ast.BitOr | ast.BitAnd | ast.BitXor)
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    return _is_call_to(node, *_NUMERIC_CALLS)


def _op_return_value(ctx: _Ctx) -> Iterator[_Edit]:
    """The wrong value returned: ``True`` ↔ ``False``, ``not x``, ``None``, ``-x``."""
    func = ctx.enclosing_function()
    returns_bool = func is not None and _annotation_kind(func.returns) == "bool"
    # `return None` (or another literal, or a bare `return`) where the function's
    # `default` parameter was meant: first when nothing reads it.
    default, unused = _default_parameter(func) if func is not None else (None, False)
    for node in ctx.of_type(ast.Return):
        assert isinstance(node, ast.Return)
        span = ctx.span(node)
        if span is None:
            continue
        value = node.value
        if default is not None and (value is None or isinstance(value, ast.Constant)):
            text = f"return {default}"
            yield _Edit(
                (0 if unused else 1, span[0]), span[0], span[1], text, _change(ctx.text(node), text)
            )
        if value is None:
            others = function_returns(func) if func is not None else []
            if any(
                isinstance(r.value, ast.Constant) and isinstance(r.value.value, bool)
                for r in others
            ):
                for rank, text in enumerate(("return False", "return True")):
                    yield _Edit((rank, span[0]), span[0], span[1], text, _change("return", text))
            continue
        old = ctx.text(value)
        options: list[tuple[int, tuple[int, int, str] | None]] = []
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            options.append((0, ctx.replace_node(value, str(not value.value), _ATOM)))
        elif _is_boolish(value) or returns_bool:
            options.append((0, _negation(ctx, value)))
        if not (isinstance(value, ast.Constant) and value.value is None):
            options.append((1, ctx.replace_node(value, "None", _ATOM)))
        if _is_numeric(value):
            options.append((2, ctx.replace_node(value, "-" + ctx.wrap(value, 13), 13)))
        if isinstance(value, ast.Tuple) and len(value.elts) == 2:
            options.append((2, _swap(ctx, value.elts[0], value.elts[1])))
        if not _is_boolish(value) and not returns_bool and not _is_none(value):
            options.append((3, _negation(ctx, value)))  # never `not None`
        for rank, option in options:
            if option:
                yield _Edit((rank, span[0]), *option, _change(old, option[2]))


def _in_annotation(ctx: _Ctx, node: ast.AST) -> bool:
    child = node
    for parent in ctx.ancestors(node):
        if isinstance(parent, ast.arg):
            return child is parent.annotation
        if isinstance(parent, _FUNCS):
            return child is parent.returns
        if isinstance(parent, ast.AnnAssign):
            return child is parent.annotation
        if isinstance(parent, ast.stmt):
            return False
        child = parent
    return False


def _is_identity_operand(ctx: _Ctx, node: ast.AST) -> bool:
    parent = ctx.parents.get(node)
    return isinstance(parent, ast.Compare) and any(
        isinstance(op, ast.Is | ast.IsNot) for op in parent.ops
    )


def _op_constant(ctx: _Ctx) -> Iterator[_Edit]:
    """A wrong literal: ``True`` ↔ ``False``, ``0`` ↔ ``1``, ``""`` ↔ ``None``, a power of
    ten at the next scale, a byte shift one byte off, a word for its opposite
    (``"true"`` ↔ ``"false"``, ``"asc"`` ↔ ``"desc"``), a whole number for one the
    line's comment names."""
    said = _comment_numbers(ctx)
    for node in ctx.of_type(ast.Constant):
        assert isinstance(node, ast.Constant)
        value = node.value
        if _in_annotation(ctx, node) or _is_identity_operand(ctx, node):
            continue  # `-> None`, `x is None`: changing these is never the fix
        if (
            type(value) is int
            and node.lineno == ctx.line
            and (told := [n for n in said if n != value])
        ):
            # the comment on the line gives the number: isoweek's ``date(self.year, 1, 1)
            # # The Jan 4th must be in week 1``
            alts = [str(n) for n in told]
            if value in (0, 1) and (1 - value) not in told:
                alts.append(str(1 - value))
        elif isinstance(value, bool):
            alts = [str(not value)]
        elif type(value) is int and value in (0, 1):
            parent = ctx.parents.get(node)
            if isinstance(parent, ast.UnaryOp):
                continue
            if _is_offset(parent, node):
                continue  # `n - 1` → `n - 0` is off-by-one's `n`, written badly
            alts = [str(1 - value)]
        elif type(value) is int and _shifts_by_bytes(ctx.parents.get(node), node):
            alts = [str(value + 8), *([str(value - 8)] if value > 8 else [])]
        elif type(value) is int and (
            scaled := list(dict.fromkeys([*_unit_scales(ctx, node, value), *_other_scales(value)]))
        ):
            if _is_offset(ctx.parents.get(node), node):
                continue
            alts = scaled
        elif type(value) is float and value in (0.0, 1.0):
            alts = ["1.0" if value == 0.0 else "0.0"]
        elif value is None:
            alts = ['""', "0", "False"]
        elif value == "":
            alts = ["None"]
        elif (
            isinstance(value, str)
            and not isinstance(ctx.parents.get(node), ast.Attribute)  # `" ".join`: a separator
            and (runs := _run_lengths(ctx.text(node), value))
        ):
            alts = runs
        elif isinstance(value, str) and (opposite := _opposite_word(value)) is not None:
            written = ctx.text(node)  # its quotes kept
            if written.count(value) != 1:
                continue
            alts = [written.replace(value, opposite)]
        else:
            continue
        span = ctx.span(node)
        if span is None:
            continue
        for rank, alt in enumerate(alts):
            yield _Edit((rank, span[0]), span[0], span[1], alt, _change(ctx.text(node), alt))


_COMMENT_NUMBER = re.compile(r"(?<![\w.])(\d{1,9})(?:st|nd|rd|th)?(?![\w.])")
MAX_COMMENT_NUMBERS = 3


def _comment_numbers(ctx: _Ctx) -> list[int]:
    """The whole numbers the comment at the end of the line names (``# The Jan 4th must
    be in week 1`` → 4, 1), at most :data:`MAX_COMMENT_NUMBERS`: where code and its
    comment disagree, the code may be what changed."""
    if not ctx.has_line:
        return []
    end = ctx.starts[ctx.line] if ctx.line < len(ctx.starts) else len(ctx.source)
    text = ctx.source[ctx.starts[ctx.line - 1] : end]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        tokens = []  # a line inside a bracket: its comment still tokenizes first
    comment = next((tok.string for tok in tokens if tok.type == tokenize.COMMENT), "")
    numbers = [int(m.group(1)) for m in _COMMENT_NUMBER.finditer(comment)]
    return list(dict.fromkeys(numbers))[:MAX_COMMENT_NUMBERS]


# Words a string literal holds where its opposite was meant: hjson's encoder with
# ``elif key is False: key = 'true'``, a sort ``order = "asc"`` where "desc" was meant.
_OPPOSITE_WORDS = dict(
    pair
    for a, b in (
        ("true", "false"),
        ("yes", "no"),
        ("on", "off"),
        ("asc", "desc"),
        ("ascending", "descending"),
        ("left", "right"),
        ("start", "end"),
        ("begin", "end"),
        ("before", "after"),
        ("first", "last"),
        ("open", "close"),
        ("enable", "disable"),
        ("enabled", "disabled"),
        ("read", "write"),
        ("top", "bottom"),
        ("prev", "next"),
        ("previous", "next"),
        ("upper", "lower"),
        ("min", "max"),
        ("input", "output"),
        ("allow", "deny"),
        ("horizontal", "vertical"),
    )
    for pair in ((a, b), (b, a))
    if pair[0] not in ("end", "next")  # two words pair with them: no single opposite
)


MAX_RUN = 4


def _run_lengths(written: str, value: str) -> list[str]:
    """A string of one punctuation or space character repeated (``"\\n"``, ``"##"``),
    written one shorter and one longer, in its own quotes and escapes: docstring-parser's
    blank line tested with ``endswith("\\n")`` for ``"\\n\\n"``. Not a separator
    whose method is called (``" ".join``): its length is rarely what is wrong."""
    n = len(value)
    if not 1 <= n <= MAX_RUN or len(set(value)) != 1 or value.isalnum():
        return []
    quote = written.lstrip("rRuUbB")[:1]
    if quote not in ("'", '"') or written.lstrip("rRuUbB").startswith(quote * 3):
        return []
    start = written.index(quote) + 1
    body = written[start:-1]
    unit = body[: len(body) // n] if len(body) % n == 0 else ""
    if not unit or unit * n != body:
        return []
    head, tail = written[:start], written[-1:]
    counts = [n - 1, n + 1] if n > 1 else [n + 1]
    return [head + unit * k + tail for k in counts]


def _opposite_word(value: str) -> str | None:
    """The opposite of a one-word string, written in the same case (``"true"`` →
    ``"false"``, ``"ASC"`` → ``"DESC"``, ``"Left"`` → ``"Right"``), or None."""
    opposite = _OPPOSITE_WORDS.get(value.lower())
    if opposite is None:
        return None
    if value.isupper() and len(value) > 1:
        return opposite.upper()
    if value[:1].isupper():
        return opposite.capitalize()
    return opposite if value.islower() else None


def _shifts_by_bytes(parent: ast.AST | None, node: ast.expr) -> bool:
    """Whether ``node`` is a whole number of bytes a value is shifted by (``b << 16``):
    packing bytes into a word, where the slip is one byte too few or too many (pyotp's
    dynamic truncation, ``hmac_hash[offset + 1] << 16``)."""
    return (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.LShift | ast.RShift)
        and parent.right is node
        and isinstance(node, ast.Constant)
        and type(node.value) is int
        and node.value > 0
        and node.value % 8 == 0
    )


def _other_scales(value: int) -> list[str]:
    """The scales a power of ten may have been meant at: a zero too few or too many
    (humanize's ordinal took ``value % 10 in (11, 12, 13)`` for ``% 100``), and the
    binary thousand for the decimal one and back (``1000`` for ``1024`` in a size)."""
    if value < 10:
        return []
    if value == 1024:
        return ["1000"]
    text = str(value)
    if text.strip("0") != "1":
        return []
    return [
        str(value * 10),
        *([str(value // 10)] if value >= 100 else []),
        *(["1024"] if value == 1000 else []),
    ]


# Numbers that stand for one another between units, and the words that say a function
# works in those units. Sexagesimal units (time, and an angle's minutes and seconds) are
# the ones decimal habits get wrong: ``/ 100`` for ``/ 60``, minutes for seconds.
_UNIT_WORDS = frozenset(
    {"second", "seconds", "secs", "minute", "minutes", "mins", "hour", "hours", "hrs"}
    | {"degree", "degrees", "arcminute", "arcminutes", "arcsecond", "arcseconds"}
    | {"sexagesimal", "dms", "hhmm", "hhmmss"}
)
_UNIT_SCALES = {
    60: (3600, 100, 24),
    100: (60,),
    3600: (60, 86400),
    24: (60, 12),
    12: (24,),
    86400: (3600,),
    180: (360, 90),
    360: (180,),
    90: (180,),
}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _unit_scales(ctx: _Ctx, node: ast.AST, value: int) -> list[str]:
    """The other numbers of its units ``value`` may stand for, when the function around
    it names the units (its name, arguments, docstring, comments): pynmea2's degrees and
    minutes divided ``float(m) / 100`` for ``/ 60``; seconds divided by 60 for hours.
    Outside a function, the statement's own names say it (pysrt's ``MINUTES_RATIO =
    SECONDS_RATIO * 100``). Code that names no unit gets none: 100 there is a percentage
    as likely."""
    scales = _UNIT_SCALES.get(value)
    if not scales:
        return []
    function = next((a for a in ctx.ancestors(node) if isinstance(a, _FUNCS)), None)
    if function is not None:
        text = ctx.text(function)  # its comments too: the tree has none
    else:  # a constant of a class or module: its own statement names the units
        statement = next((a for a in ctx.ancestors(node) if isinstance(a, ast.stmt)), None)
        text = ctx.text(statement) if statement is not None else ""
    words = {w.lower() for w in _WORD.findall(text)}
    return [str(n) for n in scales] if words & _UNIT_WORDS else []


_DUALS = {
    "min": "max",
    "max": "min",
    "any": "all",
    "all": "any",
    "floor": "ceil",
    "ceil": "floor",
    "argmin": "argmax",
    "argmax": "argmin",
    "idxmin": "idxmax",
    "idxmax": "idxmin",
    "startswith": "endswith",
    "endswith": "startswith",
    "lstrip": "rstrip",
    "rstrip": "lstrip",
    "ljust": "rjust",
    "rjust": "ljust",
    "find": "rfind",
    "rfind": "find",
    "index": "rindex",
    "rindex": "index",
    "lower": "upper",
    "upper": "lower",
    "islower": "isupper",
    "isupper": "islower",
    "removeprefix": "removesuffix",
    "removesuffix": "removeprefix",
    "keys": "values",
    "values": "keys",
    "start": "end",  # a match's or a span's ends (docstring-parser's sections)
    "end": "start",
}


def _op_min_max(ctx: _Ctx) -> Iterator[_Edit]:
    """``min`` ↔ ``max``, ``any`` ↔ ``all`` (and other dual functions/methods)."""
    for node in ctx.of_type(ast.Call):
        assert isinstance(node, ast.Call)
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if not isinstance(name, str) or name not in _DUALS or not ctx.touches(func):
            continue
        span = ctx.span(func)
        if span is None or not ctx.source.startswith(name, span[1] - len(name)):
            continue
        start = span[1] - len(name)
        dual = _DUALS[name]
        yield _Edit((0, start), start, span[1], dual, _change(name, dual))


def _op_missing_factor(ctx: _Ctx) -> Iterator[_Edit]:
    """A factor its siblings have, given to one that lacks it: ``FixedOffset(sign * hours,
    minutes)`` → ``sign * minutes`` (isodate 0.7 with the sign dropped from the minutes of
    a negative offset), ``(scale * x, y)`` → ``scale * y``. The siblings are a call's
    arguments or a tuple's or list's items; the factor is a name they are multiplied by."""
    for node in ctx.of_type(ast.Call, ast.Tuple, ast.List):
        if isinstance(node, ast.Call):
            items = [*node.args, *(k.value for k in node.keywords if k.arg is not None)]
        else:
            items = list(node.elts)  # type: ignore[attr-defined]
        # name → (how many siblings it multiplies, written on the left); in ``sign * hours``
        # either name may be the factor: the one more siblings share, then the left one
        factors: dict[str, tuple[int, bool]] = {}
        for item in items:
            if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mult):
                for side, left in ((item.left, True), (item.right, False)):
                    if isinstance(side, ast.Name):
                        count, was_left = factors.get(side.id, (0, left))
                        factors[side.id] = (count + 1, was_left)
        for name, (count, left) in factors.items():
            for item in items:
                if not isinstance(item, ast.Name | ast.Attribute | ast.Subscript):
                    continue
                if not ctx.touches(item) or any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(item)
                ):
                    continue
                span = ctx.span(item)
                if span is None:
                    continue
                old = ctx.source[span[0] : span[1]]
                new = f"{name} * {old}" if left else f"{old} * {name}"
                rank = (-count, 0 if left else 1, span[0])
                yield _Edit(rank, span[0], span[1], new, _change(old, new))


def _op_missing_argument(ctx: _Ctx) -> Iterator[_Edit]:
    """A parameter the function takes and never reads, passed to a call on the line:
    geojson's ``clean_coordinates(cls, coords, precision)`` rounding with
    ``round(coord)``. Positionally at the end of a call without keywords, then by name
    (``get(url, verify=True, timeout=timeout)``). Parameters named ``_…``, ``self`` and
    ``cls`` are not meant to be read; one only handed on to the function's own recursive
    call (geojson's ``cls.clean_coordinates(coord, precision)``) is not read either."""
    func = ctx.enclosing_function()
    if func is None:
        return

    def recursive(node: ast.AST) -> bool:
        call = ctx.parents.get(node)
        if isinstance(call, ast.keyword):
            call = ctx.parents.get(call)
        if not isinstance(call, ast.Call):
            return False
        callee = call.func
        return (isinstance(callee, ast.Name) and callee.id == func.name) or (
            isinstance(callee, ast.Attribute) and callee.attr == func.name
        )

    read = {
        node.id
        for node in ast.walk(func)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and not recursive(node)
    }
    unread = [
        name
        for name in _param_names(func)
        if name not in read and name not in {"self", "cls"} and not name.startswith("_")
    ]
    if not unread:
        return
    for call in ctx.of_type(ast.Call):
        assert isinstance(call, ast.Call)
        span = ctx.span(call)
        if span is None or not ctx.touches(call) or ctx.source[span[1] - 1] != ")":
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            continue  # `*args`/`**kwargs` may carry it already
        given = [*call.args, *(k.value for k in call.keywords)]
        ends = [end for end in (ctx.span(a) for a in given) if end is not None]
        if len(ends) != len(given):
            continue
        at = max(end for _, end in ends) if ends else span[1] - 1
        names = {k.arg for k in call.keywords}
        shown = _show(ctx.text(call))
        for name in unread:
            if name in names:
                continue
            forms = [name, f"{name}={name}"] if not call.keywords else [f"{name}={name}"]
            forms = [f for f in forms if _may_take(call, f)]
            for rank, form in enumerate(forms):
                text = f", {form}" if ends else form
                yield _Edit((rank, span[0]), at, at, text, f"pass `{name}` to `{shown}`")


_BUILTIN_TYPES = (list, dict, set, frozenset, str, bytes, tuple, int, float)


def _may_take(call: ast.Call, form: str) -> bool:
    """Whether ``call`` may take one more argument written as ``form`` (``name`` or
    ``name=name``), as far as Python's own signatures tell: ``isinstance(x, T)`` and a
    list's ``append(x)`` take no more; ``round(x)`` takes its digits. Other callables
    are not known here and may."""
    callee = call.func
    if isinstance(callee, ast.Name) and isinstance(getattr(builtins, callee.id, None), type(len)):
        candidates: list[object] = [getattr(builtins, callee.id)]
    elif isinstance(callee, ast.Attribute):
        candidates = [
            getattr(kind, callee.attr) for kind in _BUILTIN_TYPES if hasattr(kind, callee.attr)
        ]
        if not candidates:
            return True
    else:
        return True
    keyword = form.partition("=")[0] if "=" in form else None
    for candidate in candidates:
        try:
            signature = inspect.signature(candidate)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return True  # no signature to go by (``print`` has one; some builtins none)
        args = [object()] * len(call.args)
        kwargs: dict[str, object] = {k.arg: object() for k in call.keywords if k.arg}
        if keyword is None:
            args.append(object())
        else:
            kwargs[keyword] = object()
        if isinstance(callee, ast.Attribute):
            args.insert(0, object())  # the receiver, for the unbound method
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            continue
        return True
    return False


_GENERATORS: dict[str, Callable[[_Ctx], Iterable[_Edit]]] = {
    "comparison": _op_comparison,
    "arithmetic": _op_arithmetic,
    "off-by-one": _op_off_by_one,
    "boolean-operator": _op_boolean_operator,
    "negate-condition": _op_negate_condition,
    "swap-arguments": _op_swap_arguments,
    "none-check": _op_none_check,
    "wrong-variable": _op_wrong_variable,
    "return-value": _op_return_value,
    "constant": _op_constant,
    "membership": _op_membership,
    "identity": _op_identity,
    "min-max": _op_min_max,
    "slice-bound": _op_slice_bound,
    "missing-factor": _op_missing_factor,
    "missing-argument": _op_missing_argument,
}
