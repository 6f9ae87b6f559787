"""B023 on functions used up in the iteration that made them: read off the source."""

from __future__ import annotations

import pytest

from workers.review.loop_closures import used_in_its_iteration

SOURCE = """\
def called(cases):
    for case in cases:
        def check(n):
            return case.build(n)
        check(1)
        check(2)


def passed(self, cases):
    for case in cases:
        with self.subTest(case=case):
            def render(size):
                return case.unit * size
            assert_near_linear(self, render, 1500, 3000)
            run(fn=lambda: case.unit)
            run(callbacks=[lambda n: case.seen.append(n)])


def kept(cases, callbacks):
    for case in cases:
        def later():
            return case.name
        callbacks.append(later)
        store = lambda: case.name
    return store


def decorated(app, cases):
    for case in cases:
        @app.route(case.path)
        def view():
            return case.body


def after_the_loop(cases):
    for case in cases:
        def last():
            return case.name
    else:
        last()
    return last()


def returned(cases):
    for case in cases:
        def first():
            return case.name
        return first


def compiled(cases):
    for case in cases:
        @jit
        def kernel(arr):
            return arr.sort(kind=case.kind)
        kernel(case.arr)


def returned_lambda(cases):
    for case in cases:
        if case:
            return lambda: case.name


def yielded(cases):
    for case in cases:
        def each():
            yield case.name
        yield each


def lambda_called(cases):
    for case in cases:
        get = lambda: case.name
        print(get())


def same_name_elsewhere(cases):
    for case in cases:
        def check():
            return case.name
        check()
    for other in cases:
        def check():
            return other.name
        handlers = [check]
    return handlers


def threads_joined(rounds):
    for round in rounds:
        results = {}
        def worker(tid):
            results[tid] = round.ping()
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)


def threads_left_running(rounds):
    for round in rounds:
        def pinger():
            return round.pong()
        threading.Thread(target=pinger).start()
        print(", ".join(round.names))
"""
LINES = SOURCE.splitlines()


def _row(text: str, nth: int = 0) -> int:
    rows = [number for number, line in enumerate(LINES, start=1) if text in line]
    return rows[nth]


@pytest.mark.parametrize(
    ("text", "use", "nth"),
    [
        ("return case.build(n)", "called", 0),
        ("return case.unit * size", "passed", 0),
        ("run(fn=lambda: case.unit)", "passed", 0),
        ("run(callbacks=[lambda n: case.seen.append(n)])", "passed", 0),
        ("get = lambda: case.name", "called", 0),
        ("results[tid] = round.ping()", "passed", 0),  # ping3's threads, joined in the round
        ("return case.name", "returned", 2),  # the return ends the loop (tslearn 0.10)
        ("return lambda: case.name", "returned", 0),
        ("return arr.sort(kind=case.kind)", "passed", 0),  # numba's @jit kernels
    ],
)
def test_a_function_run_in_its_iteration(text: str, use: str, nth: int) -> None:
    assert used_in_its_iteration(SOURCE, _row(text, nth)) == use


@pytest.mark.parametrize(
    ("text", "nth"),
    [
        ("return case.name", 0),  # appended to a list that outlives the loop
        ("store = lambda: case.name", 0),  # returned after the loop
        ("return case.body", 0),  # a decorator may register it
        ("return case.name", 1),  # called in the loop's else and after it
        ("yield case.name", 0),  # yielded: the loop goes on
        ("return case.name", 3),  # another function of that name is kept
        ("return round.pong()", 0),  # a thread no join waits for (a str.join is none)
    ],
)
def test_a_function_that_may_outlive_its_iteration(text: str, nth: int) -> None:
    assert used_in_its_iteration(SOURCE, _row(text, nth)) is None


def test_no_loop_or_no_parse_is_not_read() -> None:
    assert used_in_its_iteration("def f():\n    return x\n", 2) is None
    assert used_in_its_iteration("def f(:\n", 1) is None
