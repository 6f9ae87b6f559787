"""Regenerate ``tests/fixtures/github-openapi-subset.json`` from GitHub's full description.

Why: the fake GitHub (``tests/fakes/github_api.py``) checks every call against GitHub's
published OpenAPI description, but the full file is 13 MB and lives outside the repository
(``../shared/data/github-openapi/api.github.com.json``, from ``@octokit/openapi``). This
maintainer script keeps only the operations and webhooks the fake serves
(``SERVED_OPERATIONS`` and ``SENT_WEBHOOKS`` in ``tests/fakes/github_openapi.py``) and every
component they reference, so the committed subset is small and self-contained.

Run it after adding an operation or webhook to the fake::

    .venv/bin/python tests/fakes/make_openapi_subset.py [--source PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "data" / "github-openapi" / "api.github.com.json"

if __package__ in (None, ""):  # run as a script: make ``tests.fakes`` importable
    sys.path.insert(0, str(REPO_ROOT))

from tests.fakes.github_openapi import SUBSET_PATH, build_subset  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=SUBSET_PATH)
    args = parser.parse_args(argv)
    full = json.loads(args.source.read_text(encoding="utf-8"))
    subset = build_subset(full)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(subset, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    n_ops = sum(1 for item in subset["paths"].values() for k in item if k != "parameters")
    n_components = sum(len(v) for v in subset["components"].values())
    print(
        f"wrote {args.out}: {n_ops} operations, {len(subset['x-webhooks'])} webhooks, "
        f"{n_components} components, {args.out.stat().st_size // 1024} KiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
