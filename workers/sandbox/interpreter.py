"""The Python a sandboxed test run uses, looked at from the host.

Why from the host: the bubblewrap sandbox binds the host's /usr (and the other top-level
folders) read-only and runs with :data:`SAFE_ENV`'s ``PATH``, so ``python3`` inside is the
file that ``PATH`` names on the host, with the same packages. What it can import decides
whether a fix can run tests at all (pytest) and how well (pytest-timeout stops a hanging
test on its own; coverage localises the bug), and ``kaizen doctor`` says so up front
instead of every fix failing with "No module named pytest".
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from workers.sandbox.base import SAFE_ENV

# Not required, but each makes fixes better; what the sandbox lacks is named by doctor.
HELPFUL_MODULES = {
    "pytest_timeout": "a hanging test waits for the run's time limit",
    "coverage": "no coverage to localise bugs with",
}


def resolve(python: str) -> str | None:
    """The host file the sandbox runs as ``python``, or ``None`` when unknown: a bare name
    is looked up on the sandbox's ``PATH``; a relative path is inside the workspace, which
    only exists during a run."""
    if os.path.isabs(python):
        return python if os.access(python, os.X_OK) else None
    if "/" in python:
        return None
    return shutil.which(python, path=SAFE_ENV["PATH"])


def has_module(python: str, module: str) -> bool:
    """Whether ``python`` as the sandbox runs it can import ``module`` (run on the host)."""
    exe = resolve(python)
    if exe is None:
        return False
    return _run(exe, f"import importlib.util as u,sys; sys.exit(not u.find_spec({module!r}))")[0]


@dataclass(frozen=True)
class RunnerInfo:
    """What a sandboxed ``python -m pytest`` would have."""

    executable: str | None
    pytest_version: str | None = None
    missing: dict[str, str] = field(default_factory=dict)  # helpful module -> what it costs


def runner_info(python: str = "python3") -> RunnerInfo:
    exe = resolve(python)
    if exe is None:
        return RunnerInfo(None)
    ok, out = _run(exe, "import pytest; print(pytest.__version__)")
    if not ok:
        return RunnerInfo(exe)
    missing = {m: cost for m, cost in HELPFUL_MODULES.items() if not has_module(exe, m)}
    return RunnerInfo(exe, out.strip() or "?", missing)


def _run(exe: str, code: str) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            [exe, "-c", code],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": SAFE_ENV["PATH"], "PYTHONNOUSERSITE": "1"},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False, ""
    return done.returncode == 0, done.stdout
