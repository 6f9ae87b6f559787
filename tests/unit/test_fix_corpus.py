"""The fix corpus (bench/fix_corpus/cases): each case is a small project with one
single-line bug; its tests fail as shipped and pass once ``case.json``'s fix is applied."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

CASES_DIR = Path(__file__).resolve().parents[2] / "bench" / "fix_corpus" / "cases"
CASE_NAMES = sorted(p.name for p in CASES_DIR.iterdir() if (p / "case.json").is_file())

# The fix agent's operator names (workers/fix/operators.py), one per kind of bug.
OPERATORS = {
    "comparison",
    "arithmetic",
    "off-by-one",
    "slice-bound",
    "boolean-operator",
    "negate-condition",
    "swap-arguments",
    "none-check",
    "wrong-variable",
    "return-value",
    "constant",
    "membership",
    "identity",
    "min-max",
}
REQUIRED_KEYS = {"issue", "bug_file", "bug_line", "operator", "fix_kind", "fixed_line"}


def load_case(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((CASES_DIR / name / "case.json").read_text())
    return case


def apply_fix(text: str, case: dict[str, Any]) -> str:
    """The bug file's text with the case's one-line fix applied."""
    lines = text.splitlines(keepends=True)
    index = case["bug_line"] - 1
    if case["fix_kind"] == "replace":
        lines[index] = case["fixed_line"] + "\n"
    else:
        lines.insert(index, case["fixed_line"] + "\n")
    return "".join(lines)


def run_pytest(project: Path) -> tuple[dict[str, int], str]:
    """Run the project's tests; the counts of the summary line, and the output."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_ADDOPTS", "PYTHONPATH"}}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The cases need no plugins; not loading the venv's (hypothesis, anyio...) is 4x faster.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = proc.stdout + proc.stderr
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    counts = {
        word: int(m.group(1)) if (m := re.search(rf"(\d+) {word}", summary)) else 0
        for word in ("failed", "passed", "error")
    }
    return counts, output


def test_corpus_size_and_operator_spread() -> None:
    assert len(CASE_NAMES) >= 32
    counts = Counter(load_case(name)["operator"] for name in CASE_NAMES)
    assert set(counts) == OPERATORS
    assert all(n >= 2 for n in counts.values()), counts
    assert max(counts.values()) <= len(CASE_NAMES) // 8, counts


def test_operator_names_are_the_fix_agents() -> None:
    from workers.fix.operators import OPERATORS as AGENT_OPERATORS

    assert set(AGENT_OPERATORS) >= OPERATORS


@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_metadata(name: str) -> None:
    case = load_case(name)
    root = CASES_DIR / name
    assert case.keys() >= REQUIRED_KEYS
    assert case["operator"] in OPERATORS
    assert case["issue"].strip()
    assert (case["fix_kind"] == "insert") == (case["operator"] == "none-check")

    lines = (root / case["bug_file"]).read_text().splitlines()
    assert 1 <= case["bug_line"] <= len(lines)
    line = lines[case["bug_line"] - 1]
    indent = line[: len(line) - len(line.lstrip())]
    fixed = case["fixed_line"]
    assert fixed.startswith(indent)
    assert fixed.strip()
    assert not fixed[len(indent) :].startswith((" ", "\t"))
    if case["fix_kind"] == "replace":
        assert case.get("buggy_line", line) == line
        assert fixed != line
    else:
        assert fixed.strip().startswith("if ")

    tests = sorted((root / "tests").glob("test_*.py"))
    assert tests


@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_imports_only_stdlib(name: str) -> None:
    root = CASES_DIR / name
    local = {p.name for p in root.iterdir() if p.is_dir()} | {p.stem for p in root.glob("*.py")}
    allowed = set(sys.stdlib_module_names) | local | {"pytest"}
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for module in names:
                assert module.split(".")[0] in allowed, f"{path}: imports {module}"


@pytest.mark.slow
@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_fails_as_shipped_and_passes_when_fixed(name: str, tmp_path: Path) -> None:
    case = load_case(name)
    project = tmp_path / name
    shutil.copytree(
        CASES_DIR / name, project, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )

    buggy, output = run_pytest(project)
    assert buggy["error"] == 0, output
    assert 1 <= buggy["failed"] <= 3, output
    assert 4 <= buggy["failed"] + buggy["passed"] <= 12, output

    bug_file = project / case["bug_file"]
    bug_file.write_text(apply_fix(bug_file.read_text(), case))
    fixed, output = run_pytest(project)
    assert fixed == {"failed": 0, "passed": buggy["failed"] + buggy["passed"], "error": 0}, output
