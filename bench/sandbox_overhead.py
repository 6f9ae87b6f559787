"""Per-run overhead of the sandbox backends against a bare subprocess.

Two workloads, each run ``--runs`` times per target (after one warm-up), medians reported.
The targets take turns (one run each per round), so a change in the machine's load
between rounds falls on all of them alike:

* ``python -c pass``: the fixed cost of starting a contained process;
* a small pytest suite: a fresh temporary workspace with 5 trivial tests.

Targets:

* ``bare``: ``subprocess.run`` of the same command on the host (no containment);
* ``bwrap``: ``workers.sandbox.bwrap.BwrapSandbox`` when that module exists;
* ``docker``: ``workers.sandbox.docker.DockerSandbox`` (the SDK path: create, attach,
  start, wait, remove);
* ``docker_run``: plain ``docker run --rm --network none IMAGE ...`` through the CLI, the
  reference for the Docker backend (for pytest, with the workspace bind-mounted too).

Goals: bubblewrap adds under 20 ms over bare; the Docker backend is within 1.2x of plain
``docker run``. Prints a table and writes ``bench/results/sandbox_overhead.json``.

    .venv/bin/python bench/sandbox_overhead.py [--runs 15] [--image kaizen-sandbox:latest]
        [--targets bare,bwrap] [--out FILE] [--bwrap-setup auto|child|helpers]
        [--ballast-mb 900]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workers.sandbox.base import Limits  # noqa: E402
from workers.sandbox.docker import DockerSandbox, docker_available  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "sandbox_overhead.json"
BWRAP_TARGET_MS = 20.0
DOCKER_TARGET_RATIO = 1.2
SUITE = "def test_{n}():\n    assert {n} + 1 == {m}\n"


def make_suite() -> Path:
    ws = Path(tempfile.mkdtemp(prefix="kaizen-bench-ws-"))
    ws.chmod(0o755)  # plain ``docker run`` runs as the image's uid 10001
    for n in range(5):
        (ws / f"test_t{n}.py").write_text(SUITE.format(n=n, m=n + 1))
    return ws


def summary(times: list[float], runs: int) -> dict[str, Any]:
    return {
        "median_ms": round(statistics.median(times) * 1000, 1),
        "min_ms": round(min(times) * 1000, 1),
        "max_ms": round(max(times) * 1000, 1),
        "runs": runs,
    }


def measure(fns: dict[str, Callable[[Path], None]], runs: int) -> dict[str, Any]:
    """Wall seconds of each ``fn(workspace)``, each on a fresh suite copy, the targets
    taking turns; a target that fails once is dropped (its error under ``"error"``)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    errors: dict[str, str] = {}
    for i in range(runs + 1):
        for name, fn in fns.items():
            if name in errors:
                continue
            ws = make_suite()
            try:
                start = time.perf_counter()
                fn(ws)
                elapsed = time.perf_counter() - start
            except Exception as exc:  # one target failing must not hide the others
                errors[name] = str(exc)[:500]
                continue
            finally:
                shutil.rmtree(ws, ignore_errors=True)
            if i:  # the first round warms caches
                times[name].append(elapsed)
    result: dict[str, Any] = {n: summary(t, runs) for n, t in times.items() if n not in errors}
    if errors:
        result["error"] = errors
    return result


def check(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(what)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--image", default="kaizen-sandbox:latest")
    parser.add_argument(
        "--targets",
        default="bare,bwrap,docker,docker_run",
        help="comma-separated subset of bare,bwrap,docker,docker_run",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON")
    parser.add_argument(
        "--bwrap-setup",
        choices=["auto", "child", "helpers"],
        default="auto",
        help="how bwrap runs make their setup: by this process's size (auto), always in "
        "the forked child, or always by helper programs (what a big worker gets)",
    )
    parser.add_argument(
        "--ballast-mb",
        type=int,
        default=0,
        help="touch this much memory first, to measure as a worker with a model loaded",
    )
    args = parser.parse_args()
    wanted = set(args.targets.split(","))
    ballast = bytearray(args.ballast_mb << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1

    limits = Limits(timeout_s=120)
    # The venv's pytest and the image's differ in installed plugins; no autoloading keeps
    # the suite's own cost comparable between host and container interpreters.
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider"]
    workloads = {
        "python_pass": (["-c", "pass"], lambda out: True),
        "pytest_5_tests": (pytest_args, lambda out: "5 passed" in out),
    }
    # The host interpreter that has pytest: the one running this script.
    host_python = sys.executable

    targets: dict[str, Callable[[list[str], Callable[[str], bool]], Callable[[Path], None]]] = {}

    def bare(argv: list[str], ok: Callable[[str], bool]) -> Callable[[Path], None]:
        def go(ws: Path) -> None:
            p = subprocess.run(
                [host_python, *argv],
                cwd=ws,
                capture_output=True,
                text=True,
                env={**os.environ, **env},
            )
            check(p.returncode == 0 and ok(p.stdout), f"bare: {p}")

        return go

    targets["bare"] = bare
    notes: dict[str, str] = {}

    try:
        bwrap_mod = importlib.import_module("workers.sandbox.bwrap")
        bwrap_sb = bwrap_mod.BwrapSandbox()
        if args.bwrap_setup != "auto":
            bwrap_sb._setup_in_child = args.bwrap_setup == "child"

        def bwrap(argv: list[str], ok: Callable[[str], bool]) -> Callable[[Path], None]:
            def go(ws: Path) -> None:
                # bwrap shares the host's files: the same interpreter as ``bare``.
                r = bwrap_sb.run([host_python, *argv], workspace=ws, limits=limits, env=env)
                check(r.exit_code == 0 and ok(r.stdout), f"bwrap: {r}")

            return go

        targets["bwrap"] = bwrap
    except Exception as exc:  # module not written yet, or bwrap cannot run here
        notes["bwrap"] = f"skipped: {type(exc).__name__}: {exc}"

    reason = docker_available(args.image)
    if reason is None:
        docker_sb = DockerSandbox(image=args.image)

        def docker_backend(argv: list[str], ok: Callable[[str], bool]) -> Callable[[Path], None]:
            def go(ws: Path) -> None:
                r = docker_sb.run(["python3", *argv], workspace=ws, limits=limits, env=env)
                check(r.exit_code == 0 and ok(r.stdout), f"docker: {r}")

            return go

        def docker_run(argv: list[str], ok: Callable[[str], bool]) -> Callable[[Path], None]:
            def go(ws: Path) -> None:
                mount = ["-v", f"{ws}:/workspace"] if "pytest" in argv else []
                cmd = ["docker", "run", "--rm", "--network", "none", *mount]
                cmd += [f"-e{k}={v}" for k, v in env.items()] + [args.image]
                p = subprocess.run([*cmd, "python3", *argv], capture_output=True, text=True)
                check(p.returncode == 0 and ok(p.stdout), f"docker run: {p}")

            return go

        targets["docker"] = docker_backend
        targets["docker_run"] = docker_run
    else:
        notes["docker"] = f"skipped: {reason}"

    targets = {name: make for name, make in targets.items() if name in wanted}
    # The machine is shared and the figures move with its load: record it with them.
    load_before = os.getloadavg()
    results: dict[str, dict[str, Any]] = {}
    for workload, (argv, ok) in workloads.items():
        measured = measure({t: make(argv, ok) for t, make in targets.items()}, args.runs)
        for target, error in measured.pop("error", {}).items():
            notes[f"{workload}/{target}"] = f"failed: {error}"
            print(f"{workload:16} {target:11} FAILED {error[:300]}", flush=True)
        results[workload] = measured
        for target, row in measured.items():
            print(f"{workload:16} {target:11} {row}", flush=True)

    verdict: dict[str, Any] = {}
    for workload, row in results.items():
        v: dict[str, Any] = {}
        if "bwrap" in row and "bare" in row:
            added = row["bwrap"]["median_ms"] - row["bare"]["median_ms"]
            v["bwrap_added_ms"] = round(added, 1)
            v["bwrap_ok"] = added < BWRAP_TARGET_MS
        if "docker" in row and "docker_run" in row and "bare" in row:
            added = row["docker"]["median_ms"] - row["bare"]["median_ms"]
            ratio = row["docker"]["median_ms"] / row["docker_run"]["median_ms"]
            v["docker_added_ms"] = round(added, 1)
            v["docker_vs_docker_run"] = round(ratio, 3)
            v["docker_ok"] = ratio <= DOCKER_TARGET_RATIO
        verdict[workload] = v

    report = {
        "benchmark": "sandbox_overhead",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_avg_1_5_15_before": [round(x, 2) for x in load_before],
            "load_avg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        },
        "runs": args.runs,
        "image": args.image,
        "bwrap_setup": args.bwrap_setup,
        "ballast_mb": args.ballast_mb,
        "targets": {
            "bwrap_added_ms_under": BWRAP_TARGET_MS,
            "docker_vs_docker_run_at_most": DOCKER_TARGET_RATIO,
        },
        "results": results,
        "verdict": verdict,
        "notes": notes,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    load = {k: v for k, v in report["machine"].items() if k.startswith("load")}
    print(json.dumps({"verdict": verdict, "notes": notes, "load": load}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
