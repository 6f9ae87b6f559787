"""Ruff remarks told apart from the code they are on (``workers.review.false_alarms``)."""

from __future__ import annotations

import pytest

from workers.review.false_alarms import (
    compares_with_a_supported_python,
    defines_names_at_run_time,
    harmless_redefinition,
    in_a_meta_class,
    in_an_assert,
    in_type_comments,
    loads_with_its_own_loader,
    loop_variable_read_after,
    mutated_nowhere_in_the_file,
    names_a_shell,
    not_djangos_extra,
    raises_on_purpose,
    reraises_a_handled_exception,
    return_code_read,
    runs_code_written_here,
    self_assigned_builtin,
    split_inside_a_sentence,
    splits_a_digest,
)


def test_a_self_assigned_builtin_is_deliberate() -> None:
    assert self_assigned_builtin("Self-assignment of variable `print`")
    assert self_assigned_builtin(
        "Self-assignment of variable `ExceptionGroup`", frozenset({"ExceptionGroup"})
    )
    assert not self_assigned_builtin("Self-assignment of variable `total`")
    assert not self_assigned_builtin("something else entirely")


def test_another_librarys_extra_is_not_djangos() -> None:
    source = (
        "async def serve(stream):\n"
        "    family = stream.extra(SocketAttribute.family)\n"
        "    return stream.extra(\n"
        "        SocketAttribute.local_address,\n"
        "    )\n"
    )
    assert not_djangos_extra(source, 2)
    assert not_djangos_extra(source, 3)
    assert not_djangos_extra(source, 4)  # ruff may report any line of the call


def test_djangos_arguments_keep_the_remark() -> None:
    for call in (
        "qs.extra(where=[clause])",
        "qs.extra(select={'n': sql})",
        "qs.extra({'n': sql})",
        "qs.extra(**options)",
        "qs.extra(tables=names)",
    ):
        assert not not_djangos_extra(f"def f(qs, clause, sql, names, options):\n    {call}\n", 2)


def test_a_file_that_imports_django_keeps_the_remark() -> None:
    source = "from django.db import models\n\n\ndef f(qs, x):\n    return qs.extra(x)\n"
    assert not not_djangos_extra(source, 5)
    assert not not_djangos_extra("import django\n" + source.split("\n", 1)[1], 5)


def test_what_cannot_be_read_keeps_the_remark() -> None:
    assert not not_djangos_extra("def f():\n    qs.extra(x)\x00\n", 2)  # does not parse
    assert not not_djangos_extra("x = 1\ny = 2\n", 2)  # no extra() call on the row


def columns(line: str, pair: str) -> tuple[int, int]:
    """Where ``pair`` (two literals side by side) sits on ``line``, as ruff reports ISC001:
    1-based columns, the end exclusive."""
    start = line.index(pair) + 1
    return start, start + len(pair)


@pytest.mark.parametrize(
    ("line", "pair"),
    [
        (
            'raise ValueError(f"Cannot set {key} in {head} " f"due to existing value: {v}")',
            'f"Cannot set {key} in {head} " f"due to existing value: {v}"',
        ),
        ('"description": "Successful " "Response",', '"Successful " "Response"'),
        ('fields.append("--B\\r\\n" f\'name="N{i}";\')', '"--B\\r\\n" f\'name="N{i}";\''),
        ('msg = "first part" " second part"', '"first part" " second part"'),
    ],
)
def test_one_sentence_split_where_it_runs_on_is_not_a_missing_comma(line: str, pair: str) -> None:
    assert split_inside_a_sentence(f"x = 1\n{line}\n", 2, *columns(line, pair))


@pytest.mark.parametrize(
    ("line", "pair"),
    [
        ('names = ["alpha" "beta", "gamma"]', '"alpha" "beta"'),
        ('path = os.path.join("dir" "file.txt")', '"dir" "file.txt"'),
        ('pattern = r"a\\n" "b"', 'r"a\\n" "b"'),  # a raw string's \\n is two characters
    ],
)
def test_a_split_between_words_stays_a_likely_missing_comma(line: str, pair: str) -> None:
    assert not split_inside_a_sentence(line + "\n", 1, *columns(line, pair))


@pytest.mark.parametrize(
    ("line", "pair", "one"),
    [
        # requests-ntlm 1.3's tests: a SHA-256 in hex, cut where the line ran out
        (
            'h = ("2334B8476CBF4E6DFC766A5D5A30D6649C01BAE1662A5C3A130" "2A968D7C6B0F6")',
            '"2334B8476CBF4E6DFC766A5D5A30D6649C01BAE1662A5C3A130" "2A968D7C6B0F6"',
            True,
        ),
        ('sha1 = "da39a3ee5e6b4b0d3255" "bfef95601890afd80709"', None, True),
        # two hashes of a list, a comma missing: neither a digest's length together
        ('ids = ["da39a3ee5e6b4b0d3255bfef95601890afd80709" "deadbeef"]', None, False),
        ('codes = ["abc" "def"]', None, False),
    ],
)
def test_a_digest_split_in_two_is_one_value(line: str, pair: str | None, one: bool) -> None:
    pair = pair or line[line.index('"') : line.rindex('"') + 1]
    assert splits_a_digest(line + "\n", 1, *columns(line, pair)) is one


def test_what_cannot_be_read_as_two_literals_is_not_a_sentence() -> None:
    assert not split_inside_a_sentence('x = "a " "b"\n', 3, 5, 13)  # no such row
    assert not split_inside_a_sentence('x = "a " + "b"\n', 1, 5, 15)  # not side by side


PROBE = """\
try:
    import brotli
except ImportError:
    pass
else:
    try:
        brotli.Decompressor.process
    except {caught}:
        warn("brotli is too old")
"""


@pytest.mark.parametrize(
    "caught", ["AttributeError", "(ImportError, AttributeError)", "Exception", "KeyError"]
)
def test_an_attribute_read_alone_in_a_try_is_there_to_raise(caught: str) -> None:
    assert raises_on_purpose(PROBE.format(caught=caught), 7)


def test_an_expression_alone_in_a_try_is_there_to_raise() -> None:
    source = "try:\n    1 / 0\nexcept Exception as e:\n    info = e\n"
    assert raises_on_purpose(source, 2)


def test_a_division_by_a_literal_zero_is_there_to_raise() -> None:
    """bottle's tests end a route handler with ``1/0`` to see the error page."""
    handler = "@app.get('/')\ndef _get():\n    called.append('route')\n    1/0\n"
    assert raises_on_purpose(handler, 4)
    assert raises_on_purpose("x // 0\n", 1)
    assert not raises_on_purpose("1 / n\n", 1)  # a division that may well not raise


@pytest.mark.parametrize(
    "manager",
    [
        "pytest.warns(DeprecationWarning)",
        "pytest.raises(AttributeError)",
        "pytest.deprecated_call()",
        "self.assertRaises(KeyError)",
        "self.assertWarnsRegex(UserWarning, 'old')",
    ],
)
def test_an_expression_alone_where_a_raise_or_warning_is_expected_is_there_for_it(
    manager: str,
) -> None:
    """sentry-sdk's tests read ``Hub.current`` under ``pytest.warns`` for its warning."""
    source = f"def test_it():\n    with {manager}:\n        Hub.current\n"
    assert raises_on_purpose(source, 3)


def test_an_expression_in_a_block_nested_where_a_raise_is_expected_is_there_for_it() -> None:
    """omegaconf's tests pick the access under ``raises``: ``if access == "attr":
    c.missng`` / ``else: c["missng"]``. A function defined there runs elsewhere."""
    source = (
        "def test_it(c, access):\n"
        "    with raises(KeyError):\n"
        "        if access == 'attr':\n"
        "            c.missng\n"
        "        else:\n"
        "            c['missng']\n"
        "        def later():\n"
        "            c.other\n"
    )
    assert raises_on_purpose(source, 4)
    assert raises_on_purpose(source, 6)
    assert not raises_on_purpose(source, 8)


def test_an_expression_alone_in_another_with_is_useless() -> None:
    assert not raises_on_purpose("with open('f') as f:\n    f.name\n", 2)
    assert not raises_on_purpose("with lock:\n    shared.value\n", 2)


def test_an_expression_outside_a_try_with_handlers_is_useless() -> None:
    assert not raises_on_purpose("obj.attr\n", 1)
    assert not raises_on_purpose("try:\n    obj.attr\nfinally:\n    close()\n", 2)
    assert not raises_on_purpose("try:\n    x = 1\nexcept E:\n    pass\nobj.attr\n", 5)
    assert not raises_on_purpose("def broken(:\n", 1)


FLASK_REBUILD = """\
import sys


def handle_url_build_error(error, handlers):
    for handler in handlers:
        rv = handler(error)
        if rv is not None:
            return rv
    if error is sys.exc_info()[1]:
        raise
    raise error


def reraise():
    if sys.exception() is not None:
        raise
"""


def test_a_bare_raise_under_a_check_for_a_handled_exception_reraises_it() -> None:
    assert reraises_a_handled_exception(FLASK_REBUILD, 10)
    assert reraises_a_handled_exception(FLASK_REBUILD, 16)


def test_a_bare_raise_with_no_such_check_is_misplaced() -> None:
    source = "def f(x):\n    if x:\n        raise\n"
    assert not reraises_a_handled_exception(source, 3)
    assert not reraises_a_handled_exception(FLASK_REBUILD, 11)  # raise error: not bare
    assert not reraises_a_handled_exception("def broken(:\n", 1)


HUMANIZE_NATURALSIZE = """\
def naturalsize(value, base=1000):
    suffix = ("kB", "MB", "GB")
    for i, s in enumerate(suffix, 2):
        unit = base**i
        if value < unit:
            break
    return format(base * value / unit) + s
"""


def test_a_loop_variable_read_after_the_loop_is_its_result() -> None:
    """humanize 4.11: renaming ``s`` to ``_s``, as B007 asks, breaks the return."""
    assert loop_variable_read_after(HUMANIZE_NATURALSIZE, 3, "s")
    # the same in a module's top level and in a nested function after the loop
    module = "for line in open('f'):\n    if not line:\n        break\nprint(line)\n"
    assert loop_variable_read_after(module, 1, "line")
    nested = "def f(xs):\n    for x in xs:\n        pass\n    return lambda: x\n"
    assert loop_variable_read_after(nested, 2, "x")


def test_a_loop_variable_never_read_is_unused() -> None:
    assert not loop_variable_read_after(HUMANIZE_NATURALSIZE, 3, "i")  # only bound
    unused = "def f(xs):\n    for x in xs:\n        pass\n    x = 1\n    return 0\n"
    assert not loop_variable_read_after(unused, 2, "x")  # rebound, not read
    # a read before the loop, or in another function, is not this loop's result
    before = "def f(xs):\n    print(x)\n    for x in xs:\n        pass\n"
    assert not loop_variable_read_after(before, 3, "x")
    other = "def f(xs):\n    for x in xs:\n        pass\n\n\ndef g(x):\n    return x\n"
    assert not loop_variable_read_after(other, 2, "x")
    assert not loop_variable_read_after("def broken(:\n", 1, "x")


@pytest.mark.parametrize(
    "line",
    [
        "exec(compile('def _raise(*a): raise a[0], a[1], a[2]', '<py3fix>', 'exec'))",  # bottle
        "exec('x = 1')",
        "eval('1 + 2')",
        'exec("""def f():\\n    return 1\\n""")',
        "value = eval(compile('0', 'f', 'eval'), {})",
    ],
)
def test_code_written_in_a_literal_is_the_authors_own(line: str) -> None:
    assert runs_code_written_here(line + "\n", 1)


@pytest.mark.parametrize(
    "line",
    [
        "exec(source)",
        "exec(compile(source, path, 'exec'), env)",
        "eval(f'{expr} + 1')",
        "eval('1' + user_input)",
        "exec(self.co, env)",  # bottle's compiled template: written elsewhere
        "exec('x = 1'); exec(code)",  # one of two calls on the line is not a literal
        "exec()",
        "print('exec')",  # no call of exec or eval on the line at all
    ],
)
def test_code_from_anywhere_else_keeps_the_remark(line: str) -> None:
    assert not runs_code_written_here(line + "\n", 1)


RQ_PUBSUB_HANDLER = """\
class Worker:
    def _pubsub_exception_handler(self, exc, pubsub, pubsub_thread):
        if isinstance(exc, ConnectionError):
            time.sleep(2.0)
        else:
            raise

    def on_failure(self, job, failure: JobFailedError):
        raise

    def stop(self, job):
        raise
"""


def test_a_bare_raise_in_a_function_handed_the_exception_reraises_it() -> None:
    """rq 2.0: redis-py calls the handler from its ``except`` block."""
    assert reraises_a_handled_exception(RQ_PUBSUB_HANDLER, 6)
    assert reraises_a_handled_exception(RQ_PUBSUB_HANDLER, 9)  # annotated as an exception
    assert not reraises_a_handled_exception(RQ_PUBSUB_HANDLER, 12)  # handed none


@pytest.mark.parametrize(
    "source",
    [
        "vars().update(keywords)\n",  # pyparsing's examples
        "globals().update({'NOT': 1})\n",
        "for name in names:\n    globals()[name] = make(name)\n",
        "def f():\n    locals().setdefault('x', 1)\n",
    ],
)
def test_a_module_that_writes_its_namespace_defines_names_at_run_time(source: str) -> None:
    assert defines_names_at_run_time(source)


@pytest.mark.parametrize(
    "source",
    [
        "x = globals()['name']\n",  # a read
        "settings.update(keywords)\n",  # another mapping
        "env = vars(obj)\nenv.update(x)\n",  # a copy of another object's namespace
        "def broken(:\n",
    ],
)
def test_reading_a_namespace_defines_nothing(source: str) -> None:
    assert not defines_names_at_run_time(source)


def test_only_a_meta_class_nested_in_another_holds_options() -> None:
    nested = "class A(Model):\n    class Meta:\n        ordering = ['x']\n"
    top = "class Meta:\n    ordering = ['x']\n"
    other = "class A(Model):\n    class Config:\n        ordering = ['x']\n"
    assert in_a_meta_class(nested, 3)
    assert not in_a_meta_class(top, 2)  # a class of its own, with instances
    assert not in_a_meta_class(other, 3)
    assert not in_a_meta_class("def broken(:\n", 1)


SENTRY_INIT = """\
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, ContextManager, Optional

    import sentry_sdk.consts


def init(*args, **kwargs):
    # type: (*Optional[str], **Any) -> ContextManager[Any]  # type: ignore
    return None


def options():
    # type: () -> sentry_sdk.consts.ClientConstructor
    pass
"""


@pytest.mark.parametrize(
    "name", ["typing.Any", "typing.ContextManager", "typing.Optional", "sentry_sdk.consts"]
)
def test_an_import_a_type_comment_uses_is_used(name: str) -> None:
    assert in_type_comments(SENTRY_INIT, f"`{name}` imported but unused")


def test_an_import_no_type_comment_uses_is_unused() -> None:
    assert not in_type_comments(SENTRY_INIT, "`typing.TYPE_CHECKING` imported but unused")
    ignored = "import os\nx = 1  # type: ignore[os]\n"
    assert not in_type_comments(ignored, "`os` imported but unused")  # not a type comment
    assert not in_type_comments("import os\n", "`os` imported but unused")
    unterminated = "import os\n# type: (os.PathLike) -> None\nx = '''\n"
    assert in_type_comments(unterminated, "`os` imported but unused")  # read up to the error


FIXTURE_IMPORTED = """\
import pytest
from helpers import http_parser  # noqa: F401 (fixture)

h2 = pytest.importorskip("h2")
import h2.config


def test_parse(http_parser):
    assert http_parser


async def test_other(tmp_path, *, http_parser):
    assert http_parser
"""


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (8, "Redefinition of unused `http_parser` from line 2: `http_parser` redefined here"),
        (12, "Redefinition of unused `http_parser` from line 2: `http_parser` redefined here"),
        (5, "Redefinition of unused `h2.config` from line 4: `h2.config` redefined here"),
    ],
)
def test_a_fixture_parameter_or_an_importorskip_is_no_harmful_redefinition(
    row: int, message: str
) -> None:
    """gunicorn 27's tests import a fixture and take it as a parameter, as pytest wants
    (44 "high" F811 candidates on one release), and import ``h2.config`` after
    ``h2 = pytest.importorskip("h2")``."""
    assert harmless_redefinition(FIXTURE_IMPORTED, row, message)


def test_a_redefined_function_is_a_harmful_redefinition() -> None:
    source = "def helper():\n    pass\n\n\ndef helper():\n    pass\n"
    message = "Redefinition of unused `helper` from line 1: `helper` redefined here"
    assert not harmless_redefinition(source, 5, message)
    assert not harmless_redefinition("def (:\n", 1, message)  # does not parse
    assert not harmless_redefinition(source, 5, "something else")


def test_the_same_import_again_inside_a_function_is_no_harmful_redefinition() -> None:
    """pyyaml 6.0.4's build backend imports ``inspect`` at the top and again inside the
    function that uses it: one module bound twice, nothing lost (the unused top import is
    F401's remark). Another module under the name, or a function, is a redefinition."""
    source = (
        "import inspect\nimport json as codec\n\n\n"
        "def expose(method):\n"
        "    import inspect\n"
        "    import pickle as codec\n"
        "    return inspect.signature(method), codec\n"
    )
    same = "Redefinition of unused `inspect` from line 1: `inspect` redefined here"
    other = "Redefinition of unused `codec` from line 2: `codec` redefined here"

    assert harmless_redefinition(source, 6, same)
    assert not harmless_redefinition(source, 7, other)


def test_a_step_registered_by_its_decorator_may_reuse_the_name() -> None:
    """behave's and pytest-bdd's steps are found by their ``@given``/``@when``/``@then``
    text; every one may be ``step_impl`` (behave 1.3's examples drew two "high" F811s).
    A function under another decorator, a Flask route, still redefines its name."""
    source = (
        "from behave import when, then\n\n\n"
        "@when('I invite {name}')\n"
        "def step_impl(ctx, name):\n"
        "    ctx.name = name\n\n\n"
        "@then('{name} is invited')\n"
        "def step_impl(ctx, name):\n"
        "    assert ctx.name == name\n\n\n"
        "@app.route('/a')\n"
        "def view():\n"
        "    return 'a'\n\n\n"
        "@app.route('/b')\n"
        "def view():\n"
        "    return 'b'\n"
    )
    step = "Redefinition of unused `step_impl` from line 5: `step_impl` redefined here"
    route = "Redefinition of unused `view` from line 14: `view` redefined here"

    assert harmless_redefinition(source, 10, step)
    assert not harmless_redefinition(source, 19, route)


def test_a_function_registered_by_each_call_that_decorates_it_may_reuse_the_name() -> None:
    """multipledispatch's ``@dispatch(int)`` and ``@dispatch(str)`` each register their
    function. The same call twice, a decorator without arguments, or a test under
    ``@given`` (the first test would never run) still redefine the name."""
    source = (
        "from multipledispatch import dispatch\n\n\n"
        "@dispatch(int)\n"
        "def area(x):\n"
        "    return x * x\n\n\n"
        "@dispatch(str)\n"
        "def area(x):\n"
        "    return len(x)\n\n\n"
        "@dispatch(int)\n"
        "def side(x):\n"
        "    return x\n\n\n"
        "@dispatch(int)\n"
        "def side(x):\n"
        "    return -x\n\n\n"
        "@given(1)\n"
        "def test_it(x):\n"
        "    pass\n\n\n"
        "@given(2)\n"
        "def test_it(x):\n"
        "    pass\n"
    )

    def message(name: str, line: int) -> str:
        return f"Redefinition of unused `{name}` from line {line}: `{name}` redefined here"

    assert harmless_redefinition(source, 10, message("area", 5))
    assert not harmless_redefinition(source, 20, message("side", 15))
    assert not harmless_redefinition(source, 30, message("test_it", 25))


VERSION_BLOCKS = """\
import sys
if sys.version_info >= (3, 6):
    from typing import Awaitable
if sys.version_info < (3, 0):
    text = unicode
X = 1 if sys.version_info[:2] >= (3, 7) else 2
"""


def test_a_version_check_on_a_supported_python_is_not_outdated() -> None:
    """loguru supports 3.5, which ruff cannot lint for: at its floor, 3.7, ruff calls a
    ``>= (3, 6)`` check outdated, though 3.5 takes the other branch."""
    assert compares_with_a_supported_python(VERSION_BLOCKS, 2, 5)
    assert compares_with_a_supported_python(VERSION_BLOCKS, 6, 6)
    assert not compares_with_a_supported_python(VERSION_BLOCKS, 2, 6)
    assert not compares_with_a_supported_python(VERSION_BLOCKS, 4, 5)
    assert not compares_with_a_supported_python(VERSION_BLOCKS, 6, 7)


def test_a_row_inside_an_assert_statement() -> None:
    source = "assert (\n    a == a\n)\nb = a == a\n"
    assert in_an_assert(source, 1)
    assert in_an_assert(source, 2)
    assert not in_an_assert(source, 4)
    assert not in_an_assert("assert (\n", 1)  # does not parse


YAML_LOADS = """\
import yaml
import yaml as y
from yaml import FullLoader
from ._yaml import get_yaml_loader, ConfigLoader

a = yaml.load(f, Loader=get_yaml_loader(max_nodes=10))
b = yaml.load(f, ConfigLoader)
c = yaml.load(f, Loader=yaml.FullLoader)
d = yaml.load(f, Loader=FullLoader)
e = y.load(f, Loader=y.UnsafeLoader)
g = yaml.load(f)
"""


def test_a_yaml_loader_of_the_projects_own_is_told_from_pyyamls() -> None:
    """omegaconf 2.4: ``Loader=get_yaml_loader(...)`` builds a ``BaseLoader`` subclass in
    another module; ruff cannot see that, only that it is not ``yaml.SafeLoader``."""
    assert loads_with_its_own_loader(YAML_LOADS, 6)
    assert loads_with_its_own_loader(YAML_LOADS, 7)
    for row in (8, 9, 10, 11):  # PyYAML's own loaders, or none given
        assert not loads_with_its_own_loader(YAML_LOADS, row)


def test_a_class_attribute_is_mutated_only_through_an_attribute_of_its_name() -> None:
    source = (
        "class Lexer:\n"
        "    aliases = ['a']\n"
        "    names: list[str] = []\n"
        "    def f(self):\n"
        "        self.names.extend(['x'])\n"
        "        aliases = []\n"
        "        aliases.append(1)\n"
    )
    assert mutated_nowhere_in_the_file(source, 2)  # a local of the same name is another
    assert not mutated_nowhere_in_the_file(source, 3)
    assert not mutated_nowhere_in_the_file(source, 5)  # not a class attribute's line
    assert not mutated_nowhere_in_the_file("class (:\n", 1)


RUNS = """\
import subprocess


def test_import():
    if windows:
        result = subprocess.run(["python", "-c", "x"], capture_output=True)
    else:
        result = subprocess.run(
            ["python", "-c", "y"],
            capture_output=True,
        )
    assert result.returncode == 0, result.stderr


def fire_and_forget():
    done = subprocess.run(["true"])
    other = subprocess.run(["false"])
    other.check_returncode()
    subprocess.run(["echo"])
    return done.stdout
"""


def test_a_run_whose_return_code_is_read_afterwards_is_checked() -> None:
    """click-repl asserts ``result.returncode == 0`` with the child's stderr."""
    assert return_code_read(RUNS, 6)
    assert return_code_read(RUNS, 9)
    assert return_code_read(RUNS, 17)
    assert not return_code_read(RUNS, 16)  # its stdout only
    assert not return_code_read(RUNS, 19)  # not kept


HANDED_BACK = """\
import subprocess


def run_in_a_fresh_interpreter(code):
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
    )


def kept_then_returned():
    done = subprocess.run(["make"])
    log(done.args)
    return done


def output_only():
    return subprocess.run(["git", "log"], capture_output=True).stdout
"""


def test_a_run_whose_result_the_function_returns_is_left_to_its_caller() -> None:
    """zope.interface 8.7's test helper returns the ``CompletedProcess`` so that a crash
    "is observed as a non-zero exit" by the test that called it."""
    assert return_code_read(HANDED_BACK, 5)
    assert return_code_read(HANDED_BACK, 12)
    assert not return_code_read(HANDED_BACK, 18)  # its stdout only


def test_a_shell_given_by_name_is_not_a_command_line_run_through_one() -> None:
    """shtab's tests write a completion script for ``shell="bash"``; ``shell=True`` (or a
    variable that may be ``True``) is what S604 is for."""
    source = (
        'completion = shtab.complete(parser, shell="bash", preamble="x")\n'
        "run_it(command, shell=True)\n"
        "run_it(command, shell=use_shell)\n"
    )
    assert names_a_shell(source, 1)
    assert not names_a_shell(source, 2)
    assert not names_a_shell(source, 3)
