"""Options of popular pytest plugins that the sandbox's Python lacks, accepted and ignored.

Why: a project's pytest config often carries its plugins' options in ``addopts``
(``--cov=pkg``, ``-n auto``, ``--reruns 2``, ``--timeout 30``) and their markers under
``--strict-markers``. The sandbox has pytest and pytest-timeout, and installs nothing
unless told to, so pytest stopped with "unrecognized arguments" before running one test
and no fix could ever be checked. This plugin, loaded with ``-p``, declares those options
and markers when, and only when, their own plugin cannot be imported: it decides inside
the sandbox, with the interpreter that runs the tests. Coverage, parallel runs and reruns
are not what a fix is judged by, so the run without them is the closest one to the
project's own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SHIM_DIR = ".kaizen-pytest"
"""The folder of the workspace copy that holds the plugin (put on ``PYTHONPATH``)."""

SHIM_MODULE = "kaizen_absent_plugins"

SHIM_SOURCE = '''"""Written by Kaizen into its copy of the repository: workers/fix/pytest_shim.py"""
import importlib.util


def _absent(module):
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def pytest_addoption(parser):
    group = parser.getgroup("kaizen", "options of plugins this Python lacks (ignored)")
    if _absent("pytest_cov"):
        group.addoption("--cov", action="append", nargs="?", const=True, default=[],
                        dest="kaizen_cov")
        for name in ("--cov-report", "--cov-config", "--cov-fail-under", "--cov-context",
                     "--cov-precision"):
            group.addoption(name, action="append", default=[], dest="kaizen_" + name[2:])
        for name in ("--no-cov", "--no-cov-on-fail", "--cov-append", "--cov-branch",
                     "--cov-reset"):
            group.addoption(name, action="store_true", dest="kaizen_" + name[2:])
    if _absent("xdist"):
        group._addoption("-n", "--numprocesses", dest="kaizen_numprocesses")
        group.addoption("--maxprocesses", dest="kaizen_maxprocesses")
        group.addoption("--dist", dest="kaizen_dist")
    if _absent("pytest_rerunfailures"):
        group.addoption("--reruns", dest="kaizen_reruns")
        group.addoption("--reruns-delay", dest="kaizen_reruns_delay")
        group.addoption("--only-rerun", action="append", dest="kaizen_only_rerun")
    if _absent("pytest_timeout"):
        group.addoption("--timeout", dest="kaizen_timeout")
        group.addoption("--timeout-method", dest="kaizen_timeout_method")
        parser.addini("timeout", "ignored: pytest-timeout is not installed")
        parser.addini("timeout_method", "ignored: pytest-timeout is not installed")


def pytest_configure(config):
    if _absent("pytest_timeout"):
        config.addinivalue_line("markers", "timeout(seconds): ignored, no pytest-timeout")
    if _absent("pytest_rerunfailures"):
        config.addinivalue_line("markers", "flaky(reruns): ignored, no pytest-rerunfailures")
'''


def install_shim(workspace: Path) -> list[str]:
    """Write the plugin into ``workspace`` (a private copy: whatever the repository had
    under that name is replaced) and return the pytest arguments that load it."""
    folder = Path(workspace) / SHIM_DIR
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    folder.mkdir(exist_ok=True)
    module = folder / f"{SHIM_MODULE}.py"
    if module.is_dir() and not module.is_symlink():
        shutil.rmtree(module)
    elif module.is_symlink() or module.exists():
        module.unlink()
    module.write_text(SHIM_SOURCE, encoding="utf-8")
    return ["-p", SHIM_MODULE]
