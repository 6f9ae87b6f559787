"""Which Python sandboxed tests run with, and what doctor says about it, checked with real
interpreters: this one (pytest, pytest-timeout and coverage installed) and bare venvs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.doctor import bwrap_python_check
from workers.sandbox.interpreter import has_module, resolve, runner_info


def bare_venv(folder: Path, *, packages: dict[str, str] | None = None) -> str:
    """A virtualenv with nothing installed but ``packages`` (module name -> source)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120
    )
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for name, source in (packages or {}).items():
        (Path(purelib) / name).mkdir(parents=True)
        (Path(purelib) / name / "__init__.py").write_text(source)
    return str(python)


def test_names_resolve_on_the_sandbox_path_and_workspace_paths_are_unknown() -> None:
    found = resolve("sh")
    assert found is not None and found.startswith(("/usr/local/bin/", "/usr/bin/", "/bin/"))
    assert resolve(".venv/bin/python") is None  # exists only inside a run's workspace
    assert resolve("/no/such/python3") is None
    assert resolve(sys.executable) == sys.executable


def test_this_interpreter_has_what_fixes_need() -> None:
    info = runner_info(sys.executable)
    assert info.executable == sys.executable
    assert info.pytest_version == pytest.__version__
    assert info.missing == {}
    check = bwrap_python_check(sys.executable)
    assert check.status == "ok", check
    assert check.detail == (
        f"bubblewrap available; tests run with {sys.executable} (pytest {pytest.__version__})"
    )


def test_a_python_without_pytest_fails_with_what_to_do(tmp_path: Path) -> None:
    python = bare_venv(tmp_path / "v")
    assert not has_module(python, "pytest")
    check = bwrap_python_check(python)
    assert check.status == "fail"
    assert f"{python}, which runs the tests in it, cannot import pytest" in check.detail
    assert "apt-get install python3-pytest" in check.detail
    assert "KAIZEN_SANDBOX=docker" in check.detail


def test_pytest_without_its_helpers_works_with_a_warning(tmp_path: Path) -> None:
    python = bare_venv(tmp_path / "v", packages={"pytest": "__version__ = '8.3.0'\n"})
    check = bwrap_python_check(python)
    assert check.status == "warn", check
    assert "(pytest 8.3.0)" in check.detail
    assert "no pytest_timeout: a hanging test waits" in check.detail
    assert "no coverage: no coverage to localise bugs with" in check.detail


def test_no_python_on_the_sandbox_path_fails() -> None:
    check = bwrap_python_check("python-that-does-not-exist")
    assert check.status == "fail"
    assert "no python-that-does-not-exist on the sandbox's PATH (/usr/local/bin:" in check.detail
