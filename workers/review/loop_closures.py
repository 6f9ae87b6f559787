"""``B023`` (a function that does not bind a loop variable) on one used up in its iteration.

The bug B023 is about is late binding: a function made in a loop reads the loop's
variables when it runs, so one kept and run after the loop has moved on sees the last
values. A function that is only run in the iteration that made it sees its own. Ruff
flags both. Tests make them all the time: a case loop, ``with self.subTest(…)``, a
``def render(size): return md(unit * size)`` handed to a helper that runs it then
(mistune 3.4, tornado 6.6, wrapt 2.5: every B023 of those releases).

- A function that is only called in the loop body is run there: no remark anywhere.
- One that is also passed to a call (``assert_near_linear(self, render, …)``) is run in
  the iteration unless the callee keeps it (a callback registry, a thread). In test code
  the helpers run what they are handed; elsewhere the remark stays.
- A thread's (or process's) target, when the loop body joins threads after making it,
  is run in the iteration too: the join waits for it.
- A decorated one that the loop calls by its name (numba's tests compile a ``@jit``
  kernel per case and run it there) is handed to its decorator: run in the iteration
  in test code, unless the decorator keeps it; elsewhere the remark stays.
- One the loop's own function returns from the iteration that made it outlives the
  loop, but the loop ends there: its variables keep the values of that iteration
  (tslearn 0.10 returns ``call`` as soon as it finds the method it wraps). No remark.

Anything else keeps the remark: the function decorated and not called in the loop (a
decorator may register it), stored, yielded (the loop goes on), put in a container, or
named after the loop.
"""

from __future__ import annotations

import ast
import functools
from typing import Literal

from workers.review.false_alarms import parse_source

__all__ = ["used_in_its_iteration"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_Loop = ast.For | ast.AsyncFor | ast.While
Use = Literal["called", "returned", "passed"]
# Calls that keep what they are handed for later (containers, callback registries,
# threads, lazy iterators): a function handed to one may run after the loop.
_KEEPERS = frozenset(
    {
        "append",
        "appendleft",
        "extend",
        "insert",
        "add",
        "setdefault",
        "put",
        "put_nowait",
        "register",
        "connect",
        "subscribe",
        "on",
        "submit",
        "add_done_callback",
        "add_callback",
        "call_soon",
        "call_later",
        "call_at",
        "callLater",
        "addCleanup",
        "addfinalizer",
        "Thread",
        "Timer",
        "partial",
        "map",
        "filter",
    }
)


def used_in_its_iteration(source: str, row: int) -> Use | None:
    """How the function that B023 reported on ``row`` is used: ``"called"`` when only
    called in its loop's body, ``"returned"`` when also returned from it (which ends the
    loop), ``"passed"`` when also handed to calls there, None when it may outlive the
    iteration (or the place is not read)."""
    tree = parse_source(source)
    if tree is None:
        return None
    parents = _parents(source)
    if parents is None:
        return None
    chain = _functions_around(tree, row, parents)
    if not chain:
        return None
    uses = [_use(function, parents, tree) for function in chain]
    if None in uses:
        return None
    return next((use for use in ("passed", "returned") if use in uses), "called")


@functools.lru_cache(maxsize=16)  # ruff reports several rows of one file
def _parents(source: str) -> dict[int, ast.AST] | None:
    tree = parse_source(source)
    if tree is None:
        return None
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _functions_around(tree: ast.Module, row: int, parents: dict[int, ast.AST]) -> list[_Function]:
    """The functions that hold ``row`` up to the innermost loop around them, innermost
    first; none when no loop holds them."""
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, _Function) and node.lineno <= row <= (node.end_lineno or node.lineno)
    ]
    chain: list[_Function] = []
    # a function nested in another starts after it
    node: ast.AST | None = max(holding, key=lambda f: (f.lineno, f.col_offset), default=None)
    while node is not None:
        if isinstance(node, _Function):
            chain.append(node)
        elif isinstance(node, _Loop):
            return chain
        node = parents.get(id(node))
    return []


def _use(function: _Function, parents: dict[int, ast.AST], tree: ast.Module) -> Use | None:
    """How one function is used where it is made."""
    parent = parents.get(id(function))
    if isinstance(function, ast.Lambda):
        if isinstance(parent, ast.Call) and function is parent.func:
            return "called"
        if isinstance(parent, ast.Return) and _ends_its_loop(parent, parents):
            return "returned"
        if _handed_over(function, parents):
            return "passed"
        if (
            isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
        ):
            return _uses_of(parent.targets[0].id, parent, parents, tree)
        return None
    if function.decorator_list:
        # the decorator is handed the function (numba's tests compile a ``@jit`` kernel
        # per case and call it there); one that keeps it and is never called in the
        # loop (``@app.route``) may run it after the loop
        use = _uses_of(function.name, function, parents, tree)
        return "passed" if use is not None and _called_by_name(function, parents) else None
    return _uses_of(function.name, function, parents, tree)


def _called_by_name(
    function: ast.FunctionDef | ast.AsyncFunctionDef, parents: dict[int, ast.AST]
) -> bool:
    """Whether the loop that makes ``function`` calls it by its name."""
    loop = parents.get(id(function))
    while loop is not None and not isinstance(loop, _Loop):
        loop = parents.get(id(loop))
    return loop is not None and any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function.name
        for statement in loop.body
        for node in ast.walk(statement)
    )


def _uses_of(name: str, made: ast.AST, parents: dict[int, ast.AST], tree: ast.Module) -> Use | None:
    """How a name bound in a loop body is used: every load of it must be in that loop's
    body, where it was made, and be a call or an argument of one."""
    loop = parents.get(id(made))
    while loop is not None and not isinstance(loop, _Loop):
        if isinstance(loop, _Function):
            return None  # made in a function inside the loop: not this shape
        loop = parents.get(id(loop))
    if loop is None:
        return None
    scope: ast.AST = tree
    step = parents.get(id(loop))
    while step is not None:
        if isinstance(step, ast.FunctionDef | ast.AsyncFunctionDef):
            scope = step
            break
        step = parents.get(id(step))
    use: Use = "called"
    for node in ast.walk(scope):
        if not isinstance(node, ast.Name) or node.id != name or node is made:
            continue
        if isinstance(node.ctx, ast.Store) and node is not getattr(made, "targets", [None])[0]:
            return None  # the name is bound again: this cannot follow which value runs
        if not isinstance(node.ctx, ast.Load):
            continue
        if not _in_loop_body(node, loop, parents):
            return None
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            continue
        if isinstance(parent, ast.Return) and _ends_its_loop(parent, parents):
            use = "passed" if use == "passed" else "returned"
            continue
        if _handed_over(node, parents) or _a_thread_joined_in(node, loop, parents):
            use = "passed"
            continue
        return None
    return use


_THREADS = frozenset({"Thread", "Process"})


def _a_thread_joined_in(node: ast.AST, loop: _Loop, parents: dict[int, ast.AST]) -> bool:
    """Whether ``node`` is the target of a thread (or process) made in the loop's body,
    which joins threads later in that body: the function runs in the iteration that
    made it (ping3 1.x's tests start four pinging threads per round and join them before
    the next round reads the results)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if not isinstance(parent, ast.Call):
        return False
    func = parent.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in _THREADS:
        return False
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "join"
        and call.lineno > parent.lineno
        and _waits(call)
        for statement in loop.body
        for call in ast.walk(statement)
    )


def _waits(call: ast.Call) -> bool:
    """A thread's ``join()``, ``join(timeout=…)`` or ``join(20)``, not ``", ".join(words)``."""
    if not call.args:
        return True
    (argument, *more) = call.args
    value = argument.value if isinstance(argument, ast.Constant) else None
    return not more and type(value) in (int, float)  # a bool is no timeout


def _handed_over(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether ``node`` is an argument of a call that does not keep it for later, alone
    or in a list or tuple written in the call (``callbacks=[lambda n: seen.append(n)]``,
    s3transfer 0.19's tests)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.List | ast.Tuple):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if not isinstance(parent, ast.Call) or parent.func is node:
        return False
    func = parent.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name not in _KEEPERS


def _ends_its_loop(statement: ast.Return, parents: dict[int, ast.AST]) -> bool:
    """Whether the ``return`` is the function's own that holds the loop around it (not a
    nested function's), so that returning ends the loop."""
    step = parents.get(id(statement))
    while step is not None and not isinstance(step, _Function):
        if isinstance(step, _Loop):
            return True
        step = parents.get(id(step))
    return False


def _in_loop_body(node: ast.AST, loop: _Loop, parents: dict[int, ast.AST]) -> bool:
    """Whether ``node`` is in the loop's body (not its ``else:``, which runs after the
    last iteration)."""
    step: ast.AST | None = node
    while step is not None and parents.get(id(step)) is not loop:
        step = parents.get(id(step))
    return step is not None and any(step is statement for statement in loop.body)
