"""The fix agent's offline (template-only) policy over the fix corpus, before and after learning.

Every case of ``bench/fix_corpus/cases`` is a small project with one single-line bug and a
failing test (see ``bench/fix_corpus/README.md``). Each run copies the case **without**
``case.json`` (the answer key) into a fresh temporary directory and runs
``FixLoop(sandbox, memory, llm=None, budget=FixBudget(max_sandbox_runs=--max-runs))`` on it,
exactly as the bot would with no LLM configured. ``case.json`` is read only by this script,
to split the corpus and to label the results (the case's operator, whether the winning patch
is the reference fix); the agent never sees it.

Two protocols, both reported:

* ``same-set``: pass 1 over every case starting from empty memory, then pass 2 over the same
  cases with the memory pass 1 left behind;
* ``split``: a deterministic train/test split (cases sorted by operator then name, dealt
  alternately, so every operator kind is on both sides where it has two or more cases).
  The test half runs once on its own empty memory (then thrown away), then a fresh memory
  learns from the train half and the test half runs again on it.

Memory learns online in every pass (each candidate's sandbox verdict moves its pattern's
score as soon as it is known), as it does in production, so a "cold" pass already gets
some help from the cases before it; pass 2 / the learned test pass start warm.

Scope: each case is its own repository in one organisation, ``corpus/<case>`` (``--scope
org``). Scores are kept per repo and shrunk to the org and global scopes, and recalled
skills are searched repo-first then org-wide, so what one repository taught reaches the
others only through the org level, the way a new repository of a known organisation would
benefit. ``--scope shared`` runs every case as the one repository ``corpus/all`` instead
(evidence pooled directly; an upper bound on transfer).

Reported per pass: bugs fixed, sandbox runs per fixed bug (median and mean; the baseline run
counts), time per bug (median over all cases), and per-case rows (runs, patterns tried,
winning operator against the case's operator, where the bug line ranked among the
suspects). Target (the issue): at least a 40 % drop in the median sandbox runs per fixed bug
after learning, with no fewer bugs fixed.

    .venv/bin/python bench/fix_corpus.py [--backend auto|docker|bwrap] [--cases a,b,...]
        [--max-runs 60] [--protocols same-set,split] [--scope org|shared]
        [--out bench/results/fix_corpus.json] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.archive import SignalArchive  # noqa: E402
from memory.embedding import CachedEmbedder, Embedder, LocalEmbedder  # noqa: E402
from memory.experiences import open_store  # noqa: E402
from memory.pending import PendingSignals  # noqa: E402
from memory.scores import SqliteScoreStore  # noqa: E402
from memory.service import Memory, default_paths  # noqa: E402
from memory.trajectories import TrajectoryStore  # noqa: E402
from workers.fix import loop as fix_loop  # noqa: E402
from workers.fix.loop import FixBudget, FixLoop, FixResult  # noqa: E402
from workers.sandbox.base import Sandbox  # noqa: E402
from workers.sandbox.select import choose_sandbox  # noqa: E402

CASES = ROOT / "bench" / "fix_corpus" / "cases"
RESULTS = ROOT / "bench" / "results" / "fix_corpus.json"
TARGET_DROP = 0.40
# A case whose run raises (e.g. the Docker engine refusing a container removal under load)
# is run again from scratch; the failed try's candidates stay in memory, as they would in
# production after a crashed job.
RETRIES = 2
ORG = "corpus"


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    issue: str
    operator: str
    fix_kind: str
    bug_file: str
    bug_line: int
    fixed_line: str


def load_cases(only: Iterable[str] | None = None) -> list[Case]:
    wanted = set(only or [])
    cases = []
    for folder in sorted(CASES.iterdir()):
        meta_file = folder / "case.json"
        if not meta_file.is_file() or (wanted and folder.name not in wanted):
            continue
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        cases.append(
            Case(
                folder.name,
                folder,
                meta["issue"],
                meta["operator"],
                meta["fix_kind"],
                meta["bug_file"],
                int(meta["bug_line"]),
                meta["fixed_line"],
            )
        )
    missing = wanted - {c.name for c in cases}
    if missing:
        raise SystemExit(f"unknown cases: {', '.join(sorted(missing))}")
    return cases


def split(cases: list[Case]) -> tuple[list[Case], list[Case]]:
    """Train and test halves: sorted by (operator, name) and dealt alternately, so each
    operator with two or more cases lands on both sides and the halves differ by at most one."""
    ordered = sorted(cases, key=lambda c: (c.operator, c.name))
    train = [c for i, c in enumerate(ordered) if i % 2 == 0]
    test = [c for i, c in enumerate(ordered) if i % 2 == 1]
    return sorted(train, key=lambda c: c.name), sorted(test, key=lambda c: c.name)


def build_memory(data: Path, embedder: Embedder) -> Memory:
    """SQLite scores and embedded Qdrant under ``data``, as a bot without Redis/Qdrant has."""
    data.mkdir(parents=True, exist_ok=True)
    paths = default_paths(data)
    return Memory(
        scores=SqliteScoreStore(paths["scores"], half_life_days=60),
        trajectories=TrajectoryStore(paths["trajectories"]),
        pending=PendingSignals(paths["pending"]),
        archive=SignalArchive(paths["archive"]),
        open_experiences=lambda: open_store(
            url=None, api_key=None, path=data / "qdrant", embedder=embedder, timeout=5
        ),
    )


def reference_after(case: Case) -> str:
    """The buggy file with the answer key's one-line fix applied."""
    source = (case.path / case.bug_file).read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    i = case.bug_line - 1
    if case.fix_kind == "insert":
        lines.insert(i, case.fixed_line + "\n")
    else:
        lines[i] = case.fixed_line + "\n"
    return "".join(lines)


def same_program(a: str, b: str) -> bool:
    """Equal up to layout: a guard written on two lines is the answer key's one-line guard."""
    if a == b:
        return True
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return False


def operator_of(pattern: str) -> str:
    """``fix:comparison:AssertionError`` → ``comparison``."""
    parts = pattern.split(":")
    return parts[1] if len(parts) >= 3 and parts[0] == "fix" else pattern


def run_case(
    case: Case,
    sandbox: Sandbox,
    memory: Memory | None,
    max_runs: int,
    scope: str,
    python: str,
    run_timeout_s: float,
) -> dict[str, Any]:
    repo = f"{ORG}/{case.name}" if scope == "org" else f"{ORG}/all"
    with tempfile.TemporaryDirectory(prefix=f"kaizen-corpus-{case.name}-") as tmp:
        checkout = Path(tmp) / case.name
        shutil.copytree(
            case.path,
            checkout,
            ignore=shutil.ignore_patterns("case.json", "__pycache__", ".pytest_cache"),
        )
        loop = FixLoop(
            sandbox=sandbox,
            memory=memory,
            llm=None,
            budget=FixBudget(max_sandbox_runs=max_runs, run_timeout_s=run_timeout_s),
            python=python,
        )
        result: FixResult = loop.run(
            repo=repo, issue_id=case.name, issue_text=case.issue, checkout=checkout
        )
    bug_rank = next(
        (
            i + 1
            for i, s in enumerate(result.suspects)
            if s.path == case.bug_file and s.line == case.bug_line
        ),
        None,
    )
    winning = operator_of(result.attempts[-1].pattern) if result.fixed else None
    patch = result.patches[0] if result.fixed and len(result.patches) == 1 else None
    return {
        "case": case.name,
        "repo": repo,
        "case_operator": case.operator,
        "fix_kind": case.fix_kind,
        "fixed": result.fixed,
        "sandbox_runs": result.sandbox_runs,
        "attempts": len(result.attempts),
        "patterns_tried": [operator_of(p) for p in result.patterns_tried],
        "winning_operator": winning,
        "operator_match": winning == case.operator if result.fixed else None,
        "reference_patch": (
            patch is not None
            and patch.path == case.bug_file
            and same_program(patch.after, reference_after(case))
        )
        if result.fixed
        else None,
        "winning_line": patch.line if patch is not None else None,
        "patch": result.patch,
        "bug_line_rank": bug_rank,
        "suspects": len(result.suspects),
        "error_class": result.error_class,
        "duration_s": round(result.duration_s, 3),
        "message": result.message,
    }


def run_pass(
    label: str,
    cases: list[Case],
    sandbox: Sandbox,
    memory: Memory | None,
    max_runs: int,
    scope: str,
    python: str,
    run_timeout_s: float,
) -> dict[str, Any]:
    rows = []
    started = time.monotonic()
    for n, case in enumerate(cases, 1):
        for attempt in range(1, RETRIES + 2):
            try:
                row = run_case(case, sandbox, memory, max_runs, scope, python, run_timeout_s)
                break
            except Exception as exc:  # a sandbox hiccup (engine busy), not the agent's fault
                if attempt > RETRIES:
                    raise
                print(f"  [{label}] {case.name}: {type(exc).__name__}: {exc}; retrying")
        row["retries"] = attempt - 1
        rows.append(row)
        mark = "fixed" if row["fixed"] else "NOT fixed"
        print(
            f"  [{label} {n:2}/{len(cases)}] {case.name:24} {mark:9} "
            f"runs={row['sandbox_runs']:3} op={case.operator}->{row['winning_operator']} "
            f"bug-rank={row['bug_line_rank']} {row['duration_s']:.1f}s",
            flush=True,
        )
    return {
        "label": label,
        "summary": summarise(rows, time.monotonic() - started),
        "cases": rows,
    }


def summarise(rows: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    fixed = [r for r in rows if r["fixed"]]
    runs = [r["sandbox_runs"] for r in fixed]
    times = [r["duration_s"] for r in rows]
    return {
        "cases": len(rows),
        "fixed": len(fixed),
        "runs_per_fixed_median": statistics.median(runs) if runs else None,
        "runs_per_fixed_mean": round(statistics.fmean(runs), 2) if runs else None,
        "sandbox_runs_total": sum(r["sandbox_runs"] for r in rows),
        "time_per_bug_median_s": round(statistics.median(times), 2) if times else None,
        "time_per_bug_mean_s": round(statistics.fmean(times), 2) if times else None,
        "reference_patches": sum(1 for r in fixed if r["reference_patch"]),
        "operator_matches": sum(1 for r in fixed if r["operator_match"]),
        "wall_s": round(wall_s, 1),
    }


def compare(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    b, a = before["summary"], after["summary"]
    drop = None
    if b["runs_per_fixed_median"] and a["runs_per_fixed_median"] is not None:
        drop = 1.0 - a["runs_per_fixed_median"] / b["runs_per_fixed_median"]
    both = {r["case"]: r for r in before["cases"] if r["fixed"]}
    paired = [
        (both[r["case"]]["sandbox_runs"], r["sandbox_runs"])
        for r in after["cases"]
        if r["fixed"] and r["case"] in both
    ]
    paired_drop = None
    if paired:
        mb = statistics.median(p[0] for p in paired)
        ma = statistics.median(p[1] for p in paired)
        paired_drop = round(1.0 - ma / mb, 3) if mb else None
    return {
        "before": before["label"],
        "after": after["label"],
        "median_runs_drop": round(drop, 3) if drop is not None else None,
        "median_runs_drop_on_bugs_fixed_in_both": paired_drop,
        "fixed_before": b["fixed"],
        "fixed_after": a["fixed"],
        "lost": sorted(
            r["case"]
            for r in before["cases"]
            if r["fixed"] and not next(x for x in after["cases"] if x["case"] == r["case"])["fixed"]
        ),
        "gained": sorted(
            r["case"]
            for r in after["cases"]
            if r["fixed"]
            and not next(x for x in before["cases"] if x["case"] == r["case"])["fixed"]
        ),
        "target_met": drop is not None and drop >= TARGET_DROP and a["fixed"] >= b["fixed"],
    }


def per_operator(passes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for p in passes:
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in p["cases"]:
            groups[r["case_operator"]].append(r)
        for op, rows in sorted(groups.items()):
            fixed = [r for r in rows if r["fixed"]]
            out.setdefault(op, {})[p["label"]] = {
                "cases": len(rows),
                "fixed": len(fixed),
                "runs_median": statistics.median(r["sandbox_runs"] for r in fixed)
                if fixed
                else None,
                "won_by": sorted({r["winning_operator"] for r in fixed}),
            }
    return out


def table(passes: list[dict[str, Any]]) -> str:
    head = (
        f"{'pass':28} {'cases':>5} {'fixed':>5} {'runs/fix med':>12} {'mean':>6} "
        f"{'time/bug med':>12} {'wall':>7}"
    )
    lines = [head, "-" * len(head)]
    for p in passes:
        s = p["summary"]
        med = s["runs_per_fixed_median"]
        mean = s["runs_per_fixed_mean"]
        lines.append(
            f"{p['label']:28} {s['cases']:5} {s['fixed']:5} "
            f"{'-' if med is None else f'{med:g}':>12} {'-' if mean is None else mean:>6} "
            f"{s['time_per_bug_median_s']:>11}s {s['wall_s']:>6}s"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto", choices=("auto", "docker", "bwrap"))
    parser.add_argument("--cases", default="", help="comma-separated case names (default all)")
    parser.add_argument("--max-runs", type=int, default=60)
    parser.add_argument("--protocols", default="same-set,split")
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=20.0,
        help="seconds per sandbox run (a case's suite takes about one; a mutation that "
        "loops forever is cut off here, as a slow CI would be)",
    )
    parser.add_argument("--scope", default="org", choices=("org", "shared"))
    parser.add_argument(
        "--python",
        default=None,
        help="interpreter inside the sandbox (default: python3 in Docker's image, this "
        "process's interpreter under bubblewrap, whose venv it exposes read-only)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="keep the memories here (default: temp)"
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        default=None,
        help="combine reports written by earlier runs (e.g. one per protocol, run in "
        "parallel) into --out instead of running anything",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.merge:
        return merge(args.merge, args.out)
    protocols = [p for p in args.protocols.split(",") if p]
    unknown = set(protocols) - {"same-set", "split"}
    if unknown:
        parser.error(f"unknown protocols: {', '.join(sorted(unknown))}")
    cases = load_cases([c for c in args.cases.split(",") if c])
    sandbox = choose_sandbox(args.backend)
    python = args.python or ("python3" if sandbox.name == "docker" else sys.executable)
    print(
        f"{len(cases)} cases, sandbox {sandbox.name} ({python}), max {args.max_runs} runs, "
        f"scope {args.scope}"
    )

    temp = None
    if args.data_dir is None:
        temp = tempfile.mkdtemp(prefix="kaizen-corpus-data-")
        data_root = Path(temp)
    else:
        data_root = args.data_dir / time.strftime("run-%Y%m%d-%H%M%S")
    data_root.mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder(LocalEmbedder(), data_root / "embeddings.sqlite3")

    def pass_with(label: str, subset: list[Case], memory: Memory) -> dict[str, Any]:
        print(f"{label}:", flush=True)
        return run_pass(
            label, subset, sandbox, memory, args.max_runs, args.scope, python, args.run_timeout
        )

    report: dict[str, Any] = {
        "backend": sandbox.name,
        "sandbox_python": python,
        "max_runs": args.max_runs,
        "run_timeout_s": args.run_timeout,
        "scope": args.scope,
        "repo_naming": f"{ORG}/<case>" if args.scope == "org" else f"{ORG}/all",
        "policy": "template operators only (llm=None)",
        "plan": {
            "MAX_SUSPECTS": fix_loop.MAX_SUSPECTS,
            "SKILL_BOOST": fix_loop.SKILL_BOOST,
            "SKILL_MIN_SIMILARITY": getattr(fix_loop, "SKILL_MIN_SIMILARITY", None),
        },
        "python": platform.python_version(),
        "cases": len(cases),
        "target": f">= {TARGET_DROP:.0%} drop in median sandbox runs per fixed bug, "
        "no fewer bugs fixed",
        "note": "sandbox_runs include the baseline run; memory learns online within every pass",
        "protocols": {},
    }
    passes: list[dict[str, Any]] = []
    try:
        if "same-set" in protocols:
            memory = build_memory(data_root / "same-set", embedder)
            try:
                first = pass_with("same-set pass 1 (empty)", cases, memory)
                second = pass_with("same-set pass 2 (learned)", cases, memory)
            finally:
                memory.close()
            passes += [first, second]
            report["protocols"]["same-set"] = {
                "passes": [first, second],
                "comparison": compare(first, second),
            }
        if "split" in protocols:
            train, test = split(cases)
            cold_memory = build_memory(data_root / "split-cold", embedder)
            try:
                cold = pass_with("split test (empty)", test, cold_memory)
            finally:
                cold_memory.close()
            memory = build_memory(data_root / "split", embedder)
            try:
                trained = pass_with("split train", train, memory)
                warm = pass_with("split test (learned)", test, memory)
            finally:
                memory.close()
            passes += [cold, trained, warm]
            report["protocols"]["split"] = {
                "train": [c.name for c in train],
                "test": [c.name for c in test],
                "passes": [cold, trained, warm],
                "comparison": compare(cold, warm),
            }
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)

    finish(report, passes, args.out)
    return 0


def finish(report: dict[str, Any], passes: list[dict[str, Any]], out: Path) -> None:
    report["per_operator"] = per_operator(passes)
    print()
    print(table(passes))
    for name, proto in report["protocols"].items():
        c = proto["comparison"]
        drop = c["median_runs_drop"]
        print(
            f"{name}: median runs/fixed bug drop {'-' if drop is None else f'{drop:.0%}'}, "
            f"fixed {c['fixed_before']} -> {c['fixed_after']}, "
            f"target {'met' if c['target_met'] else 'NOT met'}"
        )
    never = sorted(
        op
        for op, by_pass in report["per_operator"].items()
        if all(v["fixed"] == 0 for v in by_pass.values())
    )
    report["never_fixed_operators"] = never
    print(f"operator kinds never fixed: {', '.join(never) or 'none'}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


SETTINGS = ("backend", "sandbox_python", "max_runs", "run_timeout_s", "scope", "plan", "cases")


def merge(files: list[Path], out: Path) -> int:
    """One report from several runs' reports made with the same settings."""
    reports = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    first = reports[0]
    for f, r in zip(files[1:], reports[1:], strict=True):
        differ = [k for k in SETTINGS if r.get(k) != first.get(k)]
        if differ:
            raise SystemExit(f"{f}: different {', '.join(differ)}; not merging")
    merged = {k: v for k, v in first.items() if k not in ("protocols", "per_operator")}
    merged["protocols"] = {}
    for r in reports:
        merged["protocols"].update(r["protocols"])
    passes = [p for proto in merged["protocols"].values() for p in proto["passes"]]
    finish(merged, passes, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
