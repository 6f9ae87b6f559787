"""A project's warning filters that name a module the sandbox lacks, left out of the run.

Why: ``filterwarnings = ignore::pytest_benchmark.logger.PytestBenchmarkWarning``
(python-statemachine 3.2) names a plugin's warning class, and pytest imports it before
it runs a test: without the plugin, pytest 7 stops with "while parsing the following
warning configuration", and pytest 8 and 9 warn "Failed to import filter module", which
the project's own ``error`` filter turns into the same stop. No test ran, so no fix could
be checked. The run goes again with the project's filters minus those naming the missing
module (``-o filterwarnings=…``), so ``error`` and the rest still hold; where the filters
cannot be read, without pytest's warnings plugin (``-p no:warnings``).
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from workers.fix.testcmd import config_text, pytest_config_source

_FAILED_IMPORT = re.compile(r"Failed to import filter module '([\w.]+)'")
_WHILE_PARSING = "while parsing the following warning configuration"
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")


def missing_filter_module(output: str) -> str | None:
    """The module a warning filter names that pytest could not import, if ``output`` (a
    run that wrote no report) says so."""
    found = _FAILED_IMPORT.search(output)
    if found is not None:
        return found.group(1)
    if _WHILE_PARSING in output:
        missing = _NO_MODULE.search(output[output.index(_WHILE_PARSING) :])
        return missing.group(1) if missing is not None else None
    return None


def without_filters_of(checkout: Path, *modules: str) -> list[str]:
    """pytest arguments that run the project's warning filters without those naming one
    of ``modules`` (or their submodules)."""
    filters = project_filters(checkout)
    if filters is None:
        return ["-p", "no:warnings"]
    kept = [entry for entry in filters if not any(_names(entry, m) for m in modules)]
    return ["-o", "filterwarnings=" + "\n".join(kept)]


def project_filters(checkout: Path) -> list[str] | None:
    """The ``filterwarnings`` of the config pytest reads (see
    :func:`~workers.fix.testcmd.pytest_config_source`), or None when it cannot be read
    here."""
    source = pytest_config_source(checkout)
    if source == "pytest.ini":
        text = config_text(checkout, "pytest.ini") or config_text(checkout, ".pytest.ini")
        return _ini_filters(text or "", "pytest")
    if source == "tox.ini":
        return _ini_filters(config_text(checkout, "tox.ini") or "", "pytest")
    if source == "setup.cfg":
        return _ini_filters(config_text(checkout, "setup.cfg") or "", "tool:pytest")
    if source == "pyproject":
        return _pyproject_filters(config_text(checkout, "pyproject.toml") or "")
    if source == "pytest.toml":
        return None  # pytest 9's own TOML file: not read here
    pyproject = config_text(checkout, "pyproject.toml")
    if pyproject is not None and _pyproject_filters(pyproject) is None:
        return None  # a pyproject.toml that does not parse may hold pytest's table
    return []


def _pyproject_filters(text: str) -> list[str] | None:
    try:
        tool = tomllib.loads(text).get("tool")
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    if pytest is None:
        return []
    options = pytest.get("ini_options") if isinstance(pytest, dict) else None
    if not isinstance(options, dict):
        return None  # pytest 9's native [tool.pytest] table: not read here
    value = options.get("filterwarnings", [])
    if isinstance(value, str):
        return _lines(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    return None


def _ini_filters(text: str, section: str) -> list[str] | None:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return []
    return _lines(parser.get(section, "filterwarnings", fallback=""))


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


def _names(entry: str, module: str) -> bool:
    """Whether the filter ``action:message:category:module:lineno`` names a category in
    ``module``."""
    parts = entry.split(":")
    category = parts[2].strip() if len(parts) > 2 else ""
    return category == module or category.startswith(module + ".")
