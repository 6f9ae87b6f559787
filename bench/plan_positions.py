"""Where the reference fix of each fix-corpus case sits in the template plan, per ordering.

Why: the order of template candidates decides how many sandbox runs a fix costs, and a
full corpus run (``bench/fix_corpus.py``) takes many minutes per setting. The plan itself
is cheap once the suspects are known: each case's baseline runs once in the sandbox (with
coverage, as the fix loop runs it) to get its suspects, and then every ordering is scored
offline by the position of the first candidate that is the reference fix (capped at
``--cap``, which is what a run budget would stop at). Memory is empty (cold start: every
operator's score is the prior's 0.5), so this measures localisation plus planning only.

    .venv/bin/python bench/plan_positions.py [--decays 1,0.9,0.8,0.7] [--cap 60]
        [--backend auto|docker|bwrap] [--out bench/results/plan_positions.json]

Prints, per decay, the sum and median of positions and how many cases are reachable
within the cap; writes per-case positions to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.fix_corpus import load_cases, reference_after, same_program  # noqa: E402
from workers.fix.issue_hints import operator_hints  # noqa: E402
from workers.fix.loop import MAX_SUSPECTS, FixBudget, FixLoop, python_files  # noqa: E402
from workers.fix.planning import plausibility, rank_in_tiers  # noqa: E402
from workers.fix.types import Patch, Suspect  # noqa: E402
from workers.sandbox.select import choose_sandbox  # noqa: E402


def position(
    suspects: list[Suspect],
    files: dict[str, str],
    want: str,
    path: str,
    decay: float,
    cap: int,
    hints: dict[str, float] | None = None,
) -> int:
    """1-based position of the reference fix in the plan, or ``cap + 1`` when beyond it.
    ``hints`` are the issue's operator hints, as the fix loop weighs them."""
    top = max((s.score for s in suspects), default=1.0) or 1.0
    boosts = hints or {}

    def weight(suspect: Suspect, patch: Patch) -> float:
        return suspect.score / top * 0.5 * boosts.get(patch.operator, 1.0) * plausibility(patch)

    for i, (_, patch) in enumerate(rank_in_tiers(suspects, files, weight, MAX_SUSPECTS, decay)):
        if i >= cap:
            break
        if patch.path == path and same_program(patch.after, want):
            return i + 1
    return cap + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decays", default="1,0.9,0.8,0.7")
    parser.add_argument("--cap", type=int, default=60)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--python", default=None)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "plan_positions.json"))
    args = parser.parse_args(argv)
    decays = [float(d) for d in args.decays.split(",")]
    sandbox = choose_sandbox(args.backend)
    python = args.python or ("python3" if sandbox.name == "docker" else sys.executable)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    for case in load_cases():
        with tempfile.TemporaryDirectory(prefix=f"kaizen-plan-{case.name}-") as tmp:
            checkout = Path(tmp) / case.name
            shutil.copytree(case.path, checkout, ignore=shutil.ignore_patterns("case.json"))
            loop = FixLoop(
                sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=1), python=python
            )
            result = loop.run(
                repo=f"corpus/{case.name}",
                issue_id=case.name,
                issue_text=case.issue,
                checkout=checkout,
            )
            files = python_files(checkout)
        want = reference_after(case)
        hints = operator_hints(case.issue)
        row = {"case": case.name, "suspects": len(result.suspects)}
        for decay in decays:
            row[str(decay)] = position(
                result.suspects, files, want, case.bug_file, decay, args.cap, hints
            )
        rows.append(row)
        print(f"  {case.name:28} " + " ".join(f"{d}:{row[str(d)]:>3}" for d in decays), flush=True)
    summary = {}
    for decay in decays:
        values = [r[str(decay)] for r in rows]
        summary[str(decay)] = {
            "sum": sum(values),
            "median": statistics.median(values),
            "within_cap": sum(v <= args.cap for v in values),
        }
        print(
            f"decay {decay}: sum {sum(values)}, median {statistics.median(values)}, "
            f"within {args.cap}: {summary[str(decay)]['within_cap']}/{len(values)}"
        )
    report = {
        "cap": args.cap,
        "backend": sandbox.name,
        "cases": len(rows),
        "seconds": round(time.monotonic() - started, 1),
        "summary": summary,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
