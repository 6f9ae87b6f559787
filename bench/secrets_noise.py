"""How often the leaked-credential scanner fires on real code that holds no leaked secret.

A ``secrets:*`` finding is never silenced by learning, so every false alarm is posted on
every PR that adds such a line, whatever the team says. Published packages are a corpus
of real code, docs and docstrings that is full of connection-string templates, token
*names* and PEM markers and (nearly) free of live credentials, so nearly every hit on it
is noise. This scans every line of every text file under ``--root`` (by default the
site-packages of the running interpreter) with ``workers.review.secrets_scan`` and
reports hits per rule, per thousand files, with examples to read.

Prints a table and writes ``bench/results/secrets_noise.json``.

    .venv/bin/python bench/secrets_noise.py [--root DIR] [--out FILE] [--examples 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import sysconfig
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workers.review.secrets_scan import find_secrets  # noqa: E402

SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt", ".cfg", ".toml", ".ini", ".yaml", ".yml")
MAX_FILE_BYTES = 2_000_000
MAX_LINE_CHARS = 2_000  # minified or generated lines are not what a reviewer reads


def scan(root: Path, examples: int) -> dict[str, object]:
    hits: Counter[str] = Counter()
    shown: dict[str, list[dict[str, str]]] = defaultdict(list)
    files = lines = 0
    for directory, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(SUFFIXES):
                continue
            path = Path(directory, name)
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            files += 1
            for line in text.splitlines():
                if len(line) > MAX_LINE_CHARS:
                    continue
                lines += 1
                for hit in find_secrets(line):
                    hits[hit.rule.kind] += 1
                    if len(shown[hit.rule.kind]) < examples:
                        shown[hit.rule.kind].append(
                            {"file": str(path.relative_to(root)), "line": line.strip()[:160]}
                        )
    total = sum(hits.values())
    return {
        "files": files,
        "lines": lines,
        "hits": total,
        "hits_per_1000_files": round(1000 * total / max(1, files), 2),
        "by_rule": dict(hits.most_common()),
        "examples": dict(shown),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=sysconfig.get_paths()["purelib"])
    parser.add_argument("--out", default=str(ROOT / "bench/results/secrets_noise.json"))
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    started = time.perf_counter()
    result = scan(root, args.examples)
    report = {
        "bench": "secrets_noise",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "root": str(root),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        **result,
    }
    print(f"{result['files']} files, {result['lines']} lines under {root}")
    print(f"{result['hits']} hits ({result['hits_per_1000_files']} per 1,000 files)")
    for kind, n in report["by_rule"].items():  # type: ignore[attr-defined]
        print(f"  {kind:20s} {n:6d}")
    for kind, rows in report["examples"].items():  # type: ignore[attr-defined]
        print(f"-- {kind}")
        for row in rows:
            print(f"   {row['file']}: {row['line']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
