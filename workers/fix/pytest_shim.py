"""Options of popular pytest plugins that the sandbox's Python lacks, accepted and ignored.

Why: a project's pytest config often carries its plugins' options in ``addopts``
(``--cov=pkg``, ``-n auto``, ``--reruns 2``, ``--timeout 30``) and their markers under
``--strict-markers`` (pytest-benchmark's ``--benchmark-autosave``, python-statemachine
3.2). The sandbox has pytest and pytest-timeout, and installs nothing
unless told to, so pytest stopped with "unrecognized arguments" before running one test
and no fix could ever be checked. This plugin, loaded with ``-p``, declares those options
and markers when, and only when, their own plugin cannot be imported: it decides inside
the sandbox, with the interpreter that runs the tests. Coverage, parallel runs and reruns
are not what a fix is judged by, so the run without them is the closest one to the
project's own. The same goes for pytest's own cache options (async-lru 2.4's
``--cache-clear``, ``--lf``): the sandbox blocks the cache (``-p no:cacheprovider``) so
that no run picks its tests by what the last one failed, and that took its options away.

pytest-asyncio is different: without it an async test is skipped (pytest 7) or fails
(pytest 8.4+) whatever the code does, and ``--strict-config``/``--strict-markers`` stop
the run at its ``asyncio_mode`` setting or ``asyncio`` marker. So when it is absent (or
blocked with ``-p no:asyncio``) the plugin declares those, and runs the async tests it
would have run (marked, or all of them under ``asyncio_mode = auto``) on ``asyncio.run``
when their fixtures are plain values; a test taking an async fixture is left to pytest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SHIM_DIR = ".kaizen-pytest"
"""The folder of the workspace copy that holds the plugin (put on ``PYTHONPATH``)."""

SHIM_MODULE = "kaizen_absent_plugins"

SHIM_SOURCE = '''"""Written by Kaizen into its copy of the repository: workers/fix/pytest_shim.py"""
import asyncio
import importlib.util
import inspect

import pytest

_ASYNCIO = {"absent": False}
# pytest-benchmark's options (python-statemachine 3.2's addopts carry
# --benchmark-autosave --benchmark-group-by=name): flags, those with an optional value,
# and those with a value
_BENCHMARK_FLAGS = (
    "--benchmark-autosave", "--benchmark-skip", "--benchmark-only", "--benchmark-disable",
    "--benchmark-enable", "--benchmark-disable-gc", "--benchmark-save-data",
    "--benchmark-verbose", "--benchmark-quiet",
)
_BENCHMARK_OPTIONAL = (
    "--benchmark-warmup", "--benchmark-compare", "--benchmark-histogram",
    "--benchmark-cprofile-dump",
)
_BENCHMARK_VALUES = (
    "--benchmark-group-by", "--benchmark-sort", "--benchmark-columns",
    "--benchmark-min-rounds", "--benchmark-max-time", "--benchmark-min-time",
    "--benchmark-timer", "--benchmark-calibration-precision",
    "--benchmark-warmup-iterations", "--benchmark-name", "--benchmark-storage",
    "--benchmark-save", "--benchmark-json", "--benchmark-compare-fail",
    "--benchmark-time-unit", "--benchmark-cprofile", "--benchmark-cprofile-loops",
    "--benchmark-cprofile-top", "--benchmark-netrc",
)


def _absent(module):
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def pytest_addoption(parser, pluginmanager):
    if _absent("pytest_asyncio") or pluginmanager.is_blocked("asyncio"):
        _ASYNCIO["absent"] = True
        for name in ("asyncio_mode", "asyncio_default_fixture_loop_scope",
                     "asyncio_default_test_loop_scope"):
            parser.addini(name, "Kaizen's stand-in: pytest-asyncio is not installed")
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
    if _absent("pytest_benchmark"):
        for name in _BENCHMARK_FLAGS:
            group.addoption(name, action="store_true", dest="kaizen_" + name[2:])
        for name in _BENCHMARK_OPTIONAL:
            group.addoption(name, nargs="?", const=True, dest="kaizen_" + name[2:])
        for name in _BENCHMARK_VALUES:
            group.addoption(name, action="append", default=[], dest="kaizen_" + name[2:])
    if pluginmanager.is_blocked("cacheprovider"):
        # the sandbox runs each test run clean (-p no:cacheprovider): what the last run
        # failed must not pick the tests of the next (--lf), nor clearing it stop one
        group.addoption("--cache-clear", action="store_true", dest="kaizen_cache_clear")
        group.addoption("--cache-show", nargs="?", const="*", dest="kaizen_cache_show")
        group.addoption("--lf", "--last-failed", action="store_true", dest="kaizen_lf")
        group.addoption("--ff", "--failed-first", action="store_true", dest="kaizen_ff")
        group.addoption("--nf", "--new-first", action="store_true", dest="kaizen_nf")
        group.addoption("--lfnf", "--last-failed-no-failures", dest="kaizen_lfnf")
        parser.addini("cache_dir", "ignored: Kaizen runs pytest without its cache")
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
    if _absent("pytest_benchmark"):
        config.addinivalue_line("markers", "benchmark(**kwargs): ignored, no pytest-benchmark")
    if _ASYNCIO["absent"]:
        config.addinivalue_line("markers", "asyncio: run by Kaizen's stand-in on asyncio.run")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """An async test pytest-asyncio would run: on asyncio.run, when every fixture it takes
    is a plain value (an async fixture needs the real plugin, so it is left to pytest)."""
    function = pyfuncitem.obj
    if not _ASYNCIO["absent"] or not inspect.iscoroutinefunction(function):
        return None
    auto = (pyfuncitem.config.getini("asyncio_mode") or "strict").strip() == "auto"
    if not auto and pyfuncitem.get_closest_marker("asyncio") is None:
        return None
    names = pyfuncitem._fixtureinfo.argnames
    args = {name: pyfuncitem.funcargs[name] for name in names}
    if any(inspect.iscoroutine(v) or inspect.isasyncgen(v) for v in args.values()):
        return None
    asyncio.run(function(**args))
    return True
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
