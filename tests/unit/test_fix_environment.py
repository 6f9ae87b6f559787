"""Telling failures the sandbox causes from failures the code causes."""

from __future__ import annotations

import pytest

from workers.fix.environment import (
    describe,
    environment_cause,
    environment_failures,
    fixture_names,
    identifiers,
    optional_imports,
    repository_modules,
)
from workers.sandbox.junit import TestResult

OWN = repository_modules(["shop/pricing.py", "shop/__init__.py", "util.py", "src/lib/x.py"])


def failing(message: str, traceback: str = "", outcome: str = "failed") -> TestResult:
    return TestResult(
        nodeid="tests/test_a.py::test_a",
        classname="tests.test_a",
        name="test_a",
        file="tests/test_a.py",
        outcome=outcome,  # type: ignore[arg-type]
        duration_s=0.1,
        message=message,
        traceback=traceback,
    )


def test_the_repositorys_own_top_level_names() -> None:
    assert {"shop", "util", "lib"} == OWN


@pytest.mark.parametrize(
    "package",
    ["urllib3", "ujson", "orjson", "httpx", "typer", "psutil", "tomli", "lxml", "yaml", "attrs"],
)
def test_packages_named_like_standard_modules_are_still_dependencies(package: str) -> None:
    message = f"ModuleNotFoundError: No module named '{package}'"
    assert environment_cause(failing(message), OWN) == f"missing dependency '{package}'"


@pytest.mark.parametrize(
    ("message", "traceback", "cause"),
    [
        (
            "ImportError while importing test module '/workspace/tests/test_a.py'.",
            "E   ModuleNotFoundError: No module named 'requests'",
            "missing dependency 'requests'",
        ),
        (
            "ModuleNotFoundError: No module named 'yaml.constructor'",
            "",
            "missing dependency 'yaml'",
        ),
        (
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='httpbin.org', "
            "port=443): Max retries exceeded (Caused by NameResolutionError(...))",
            "",
            "no network",
        ),
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "", "no network"),
        (
            "urllib.error.URLError: <urlopen error [Errno 101] Network is unreachable>",
            "",
            "no network",
        ),
        (
            'failed on setup with "locale.Error: unsupported locale setting"',
            ">       return _setlocale(category, locale)\nE       locale.Error: unsupported "
            "locale setting\n\n/usr/lib/python3.11/locale.py:626: Error",
            "locale not installed",
        ),
        (
            "RuntimeError: Unable to invoke 'cpp'.  Make sure its path was passed correctly",
            "E               FileNotFoundError: [Errno 2] No such file or directory: 'cpp'\n\n"
            "/usr/lib/python3.11/subprocess.py:1901: FileNotFoundError\n\nDuring handling "
            "of the above exception, another exception occurred:\n",
            "missing program 'cpp'",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: 'git'",
            '  File "/usr/lib/python3.11/subprocess.py", line 1901, in _execute_child\n'
            "    raise child_exception_type(errno_num, err_msg, err_filename)\n"
            "FileNotFoundError: [Errno 2] No such file or directory: 'git'\n",
            "missing program 'git'",
        ),
    ],
)
def test_failures_the_sandbox_causes(message: str, traceback: str, cause: str) -> None:
    assert environment_cause(failing(message, traceback, "error"), OWN) == cause


@pytest.mark.parametrize(
    "message",
    [
        "assert 22.0 == 18.0",
        "ModuleNotFoundError: No module named 'shop.discounts'",  # its own module: a bug
        "ModuleNotFoundError: No module named 'lib'",  # src layout: its own too
        "ModuleNotFoundError: No module named 'colections'",  # a typo: the bug to fix
        "ModuleNotFoundError: No module named 'datetme'",
        "ConnectionRefusedError: [Errno 111] Connection refused",  # its own server, maybe
        "KeyError: 'network'",
        "ValueError: unknown locale: de_XX",  # the code's own parsing of a name
        "FileNotFoundError: [Errno 2] No such file or directory: 'settings.json'",  # open()
    ],
)
def test_failures_the_code_may_cause(message: str) -> None:
    assert environment_cause(failing(message), OWN) is None


def test_passing_and_skipped_tests_are_never_set_aside() -> None:
    text = "No module named 'requests'"
    assert environment_cause(failing(text, outcome="skipped"), OWN) is None
    assert environment_cause(failing(text, outcome="passed"), OWN) is None


def test_the_set_aside_failures_are_counted_by_cause() -> None:
    tests = [
        failing("No module named 'requests'"),
        TestResult("t::b", "t", "b", None, "failed", 0.0, "Name or service not known"),
        TestResult("t::c", "t", "c", None, "failed", 0.0, "assert 1 == 2"),
        TestResult("t::d", "t", "d", None, "error", 0.0, "[Errno -2] Name or service not known"),
    ]
    found = environment_failures(tests, OWN)
    assert found == {
        "tests/test_a.py::test_a": "missing dependency 'requests'",
        "t::b": "no network",
        "t::d": "no network",
    }
    assert describe(found) == (
        "3 test(s) fail in the sandbox whatever the code does "
        "(no network: 2, missing dependency 'requests': 1)"
    )


def test_a_fixture_no_file_of_the_repository_defines_is_a_missing_plugin() -> None:
    """humanize's benchmarks take pytest-codspeed's ``benchmark`` fixture: without the
    plugin 15 tests error on setup whatever the code does, and as targets no patch could
    ever pass them. A fixture the repository defines (by its name or ``name=``) and
    failing to be found is its own conftest's doing."""
    files = {
        "tests/conftest.py": (
            "import pytest\n\n\n@pytest.fixture\ndef shop():\n    return 1\n\n\n"
            '@pytest.fixture(name="client")\ndef _client():\n    return 2\n'
        ),
        "shop/pricing.py": "def total():\n    return 0\n",
    }
    own = repository_modules(files)
    names = fixture_names(files)
    text = "file tests/test_b.py, line 3\n  def test_x(benchmark):\nE       fixture '{}' not found"

    assert environment_cause(failing(text.format("benchmark"), outcome="error"), own, names) == (
        "missing pytest plugin (fixture 'benchmark')"
    )
    assert environment_cause(failing(text.format("shop"), outcome="error"), own, names) is None
    assert environment_cause(failing(text.format("client"), outcome="error"), own, names) is None


OPTIONAL_TESTS = """\
import pytest
try:
    import hypothesmith
    from hypothesis import HealthCheck, given, settings as hsettings
except ImportError:
    hypothesmith = None
try:
    from shop import loyalty
except (ImportError, AttributeError):
    loyalty = None
try:
    import numpy
except Exception:
    numpy = None
"""


def test_an_optional_import_binds_its_names_to_the_modules_tried_before_them() -> None:
    found = optional_imports({"tests/test_a.py": OPTIONAL_TESTS, "bad.py": "def (:\n"})
    assert found == {
        "tests/test_a.py": {
            "hypothesmith": ("hypothesmith",),
            "HealthCheck": ("hypothesmith", "hypothesis"),
            "given": ("hypothesmith", "hypothesis"),
            "hsettings": ("hypothesmith", "hypothesis"),
            "loyalty": ("shop",),
        }
    }


def test_a_name_an_optional_import_did_not_define_is_a_missing_dependency() -> None:
    """mccabe 0.7: ``@settings(...)`` on a test, at import, after ``from hypothesis
    import settings`` under ``try``/``except ImportError`` failed for hypothesmith: the
    project's one test module could not be collected, and Kaizen said "no fix found in 0
    attempts"."""
    optional = optional_imports({"tests/test_a.py": OPTIONAL_TESTS})
    collection = failing(
        "NameError: name 'hsettings' is not defined",
        "tests/test_a.py:14: in <module>\n    @hsettings(\nE   NameError: name 'hsettings' "
        "is not defined",
        "error",
    )
    cause = environment_cause(collection, OWN, optional=optional)
    assert cause == "missing dependency 'hypothesmith' or 'hypothesis'"


def test_a_name_no_optional_import_near_the_failure_binds_is_a_bug() -> None:
    """The repository's own module under ``try`` (``shop.loyalty``), a name only another
    file imports so, or a name nothing imports: the code's to fix."""
    optional = optional_imports({"tests/test_a.py": OPTIONAL_TESTS, "other.py": OPTIONAL_TESTS})
    for message in (
        "NameError: name 'loyalty' is not defined",
        "NameError: name 'discount' is not defined",
    ):
        assert environment_cause(failing(message), OWN, optional=optional) is None
    elsewhere = TestResult(
        "tests/test_b.py::test_b",
        "t",
        "b",
        None,
        "failed",
        0.0,
        "NameError: name 'given' is not defined",
    )
    assert environment_cause(elsewhere, OWN, optional={"other.py": {"given": ("x",)}}) is None


def test_a_name_the_installed_version_of_a_package_lacks_is_an_environment_failure() -> None:
    """asyncstdlib 3.14's tests import ``get_annotations`` from typing_extensions; the
    sandbox's Debian typing_extensions predates it."""
    message = (
        "ImportError: cannot import name 'get_annotations' from 'typing_extensions' "
        "(/usr/lib/python3/dist-packages/typing_extensions.py)"
    )
    words = identifiers({"tests/test_a.py": "from typing_extensions import get_annotations\n"})
    cause = environment_cause(failing(message, "", "error"), OWN, identifiers=words)
    assert cause == "installed 'typing_extensions' has no 'get_annotations' (another version)"


@pytest.mark.parametrize(
    "message",
    [
        # the standard library moved it (3.10): the code's to follow
        "ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/x.py)",
        # the repository's own module
        "ImportError: cannot import name 'discount' from 'shop.pricing' (/workspace/x.py)",
        # a misspelling of a name the repository writes elsewhere
        "ImportError: cannot import name 'Sesion' from 'requests' (/usr/lib/x.py)",
    ],
)
def test_a_name_the_code_may_have_wrong_is_no_environment_failure(message: str) -> None:
    words = identifiers({"a.py": "from requests import Sesion\n", "b.py": "Session()\n"})
    assert environment_cause(failing(message), OWN, identifiers=words) is None
