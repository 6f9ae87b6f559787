"""pytest's JUnit XML report as per-test results, and the pytest command that writes it.

The report comes out of a sandbox, so it is untrusted: it is parsed without entity
expansion or external resources (``xml.etree`` resolves neither external entities nor
DTDs), size-checked, and read without following symlinks (:func:`load_junit`).
"""

from __future__ import annotations

import os
import re
import stat
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from workers.sandbox.interpreter import has_module

Outcome = Literal["passed", "failed", "error", "skipped"]
MAX_JUNIT_BYTES = 32 * 1024 * 1024
MAX_TRACEBACK_CHARS = 8000  # the end holds the innermost frames
MAX_MESSAGE_CHARS = 2000
_EXC_RE = re.compile(r'^(?:failed on \w+ with ")?([A-Za-z_][\w.]*)(?::|"|$)')
_TRACEBACK_TYPE_RE = re.compile(r"^\S+:\d+: ([A-Za-z_][\w.]*)\s*$", re.MULTILINE)
_ROOT_TEST_MODULES = frozenset({"tests", "test"})
_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_TIMEOUT_RE = re.compile(r"Timeout \(>[\d.]+s\) from pytest-timeout")


class JUnitError(ValueError):
    """The report is missing, too big or not JUnit XML; the message says which."""


@dataclass(frozen=True)
class TestResult:
    nodeid: str
    classname: str
    name: str
    file: str | None
    outcome: Outcome
    duration_s: float
    message: str = ""
    exception_type: str = ""
    timed_out: bool = False  # pytest-timeout stopped this test
    traceback: str = ""  # the failure's full text (pytest's traceback), for localisation

    __test__ = False  # not a pytest test class

    @property
    def uncollected(self) -> bool:
        """A test module pytest could not import (it ran none of its tests)."""
        return not self.classname and self.outcome == "error" and self.nodeid == self.file

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_junit(xml_text: str | bytes) -> list[TestResult]:
    """Every ``<testcase>`` of a pytest JUnit report, in document order.

    Handles a bare ``<testsuite>`` or ``<testsuites>`` with any number of suites, missing
    attributes (empty name, zero duration, file derived from the classname) and
    ``system-out``/``system-err`` elements. Raises :class:`JUnitError` for malformed XML,
    a DOCTYPE/entity declaration, or a root that is not a test suite.
    """
    raw = xml_text.encode("utf-8", errors="replace") if isinstance(xml_text, str) else xml_text
    if len(raw) > MAX_JUNIT_BYTES:
        raise JUnitError(f"JUnit report is {len(raw)} bytes, over {MAX_JUNIT_BYTES}")
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        raise JUnitError("JUnit report declares a DTD or entities; refused")
    try:
        root = ET.fromstring(raw)  # noqa: S314 - no DTD/entities (checked above)
    except ET.ParseError as exc:
        raise JUnitError(f"malformed JUnit XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"not a JUnit report: root element is <{root.tag}>")
    return [_testcase(case) for case in root.iter("testcase")]


def load_junit(
    path: str | os.PathLike[str], *, max_bytes: int = MAX_JUNIT_BYTES
) -> list[TestResult]:
    """Read and parse a report a sandbox wrote: a regular file, not a symlink (a hostile
    repo could point it at a host secret), at most ``max_bytes``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError as exc:
        raise JUnitError(f"no JUnit report at {path}") from exc
    except OSError as exc:
        raise JUnitError(f"cannot open JUnit report {path}: {exc}") from exc
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise JUnitError(f"JUnit report {path} is not a regular file")
        if st.st_size > max_bytes:
            raise JUnitError(f"JUnit report is {st.st_size} bytes, over {max_bytes}")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise JUnitError(f"JUnit report is over {max_bytes} bytes")
    return parse_junit(data)


def _testcase(case: ET.Element) -> TestResult:
    classname = case.get("classname", "") or ""
    name = case.get("name", "") or ""
    file = case.get("file") or _file_from_classname(classname)
    try:
        duration = float(case.get("time", "0") or 0)
    except ValueError:
        duration = 0.0
    outcome: Outcome = "passed"
    message = ""
    exception_type = ""
    traceback = ""
    # pytest writes at most one of these; with several (e.g. a failure plus an error in
    # teardown) the worst wins.
    for tag, kind in (("error", "error"), ("failure", "failed"), ("skipped", "skipped")):
        child = case.find(tag)
        if child is None:
            continue
        outcome = kind  # type: ignore[assignment]
        message = child.get("message") or (child.text or "").strip()
        if kind == "skipped":
            exception_type = ""
            if child.get("type") == "pytest.xfail":
                message = f"xfail: {message}" if message else "xfail"
        else:
            exception_type = child.get("type") or _exception_type(message, child.text or "")
            traceback = (child.text or "")[-MAX_TRACEBACK_CHARS:]
        break
    uncollected = not classname and outcome == "error" and _MODULE_NAME.fullmatch(name)
    if uncollected:
        # a module pytest could not collect, by its dotted name: as a path it can be run
        # again on its own
        file = name.replace(".", "/") + ".py"
    return TestResult(
        nodeid=file if uncollected and file else _nodeid(classname, name, file),
        classname=classname,
        name=name,
        file=file,
        outcome=outcome,
        duration_s=max(0.0, duration),
        message=message[:MAX_MESSAGE_CHARS],
        exception_type=exception_type,
        timed_out=outcome in ("failed", "error") and bool(_TIMEOUT_RE.search(message)),
        traceback=traceback,
    )


def _exception_type(message: str, text: str) -> str:
    """pytest's xunit2 report has no ``type``: take it from the message, which starts with
    ``ExcType: text`` (or ``failed on setup with "ExcType: text"`` for errors), else from
    the traceback's last ``path:line: ExcType`` line (a bare ``assert`` says only that)."""
    if not message.startswith("assert "):
        match = _EXC_RE.match(message)
        if match:
            return match.group(1)
    found = _TRACEBACK_TYPE_RE.findall(text)
    return found[-1] if found else ""


def _file_from_classname(classname: str) -> str | None:
    """pytest's classname is the module path with dots (``tests.test_x.TestY``): the file
    is the longest prefix ending in a ``test_``/``_test`` module name."""
    if not classname:
        return None
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        last = parts[i - 1]
        if last.startswith("test_") or last.endswith("_test"):
            return "/".join(parts[:i]) + ".py"
    if parts[0] in _ROOT_TEST_MODULES and (len(parts) == 1 or parts[1][:1].isupper()):
        return f"{parts[0]}.py"  # a root tests.py, run with its name in python_files
    return None


def _nodeid(classname: str, name: str, file: str | None) -> str:
    """pytest-style ``path::Class::test`` when the file is known, else ``classname::name``."""
    if file and classname:
        module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
        if module and classname.startswith(module):
            rest = classname[len(module) :].lstrip(".")
            return "::".join(p for p in (file, *rest.split("."), name) if p)
    if classname:
        return f"{classname}::{name}"
    return name


def pytest_command(
    junit_path: str,
    extra_args: Sequence[str] = (),
    per_test_timeout_s: float | None = None,
    *,
    python: str = "python",
    has_pytest_timeout: bool | None = None,
) -> list[str]:
    """``python -m pytest`` writing a JUnit report to ``junit_path``, without a cache dir,
    going on past a test module that cannot be imported: humanize's tests import
    freezegun at the top of two modules, and without it pytest stopped at collection and
    ran none of the tests that showed the bug (the module's error is in the report).
    And going on past the first failure, whatever the project's ``addopts`` say:
    transitions 0.9.3 has ``-x`` in its pytest.ini, so its one test module that needs
    pycodestyle ended every run before a test of the code had run.

    With ``per_test_timeout_s``, ``--timeout`` is added so a hanging test fails on its own
    (instead of the whole run timing out) - but only when pytest-timeout is importable by
    ``python``, which is what the command runs in the sandbox: pass ``has_pytest_timeout``
    if you know, otherwise it is checked by running ``python`` on the host (the sandbox
    binds the host's interpreters read-only, so the answer is the same there).
    """
    cmd = [
        python,
        "-m",
        "pytest",
        "-q",
        f"--junitxml={junit_path}",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "--maxfail=0",  # no limit, after the addopts' -x or --maxfail=N
    ]
    if per_test_timeout_s is not None and per_test_timeout_s > 0:
        if has_pytest_timeout is None:
            has_pytest_timeout = has_module(python, "pytest_timeout")
        if has_pytest_timeout:
            seconds = max(1, round(per_test_timeout_s))
            cmd += [f"--timeout={seconds}", "--timeout-method=signal"]
    return [*cmd, *extra_args]
