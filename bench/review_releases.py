"""What a cold-start review says about real projects' changes: consecutive releases.

Kaizen is judged on real repositories, not on the code its tests write. This takes pairs
of releases of well-known Python projects from PyPI (source distributions: the project as
its authors package it, configs included), makes a two-commit git repository of each pair
and runs ``kaizen review --no-llm --json`` on the difference, with an empty memory (a new
installation: what learning has not yet filtered). For each project it counts the
candidate findings (posted and held back) by pattern family, and the comments that would
be posted, so changes to the static analysis can be compared on the same material.

Measured (2026-12-05, nine pairs): before the ruff pass read the project's Python version,
per-file ignores and lint excludes (0a06c7d) 667 candidates, 440 of them pyupgrade (UP)
remarks (3 are left after: the rest asked for syntax newer than the projects support),
100 comments posted; after, 92 candidates and 57 comments. Later the same day: 91 and 57
once a newer builtin behind a version check was no longer a remark (pytest), then 91 and
56 with at most two comments of one rule per review (fastapi's five LOG015). On six
projects that played no part in any of this (anyio, typer, coverage, urllib3, starlette,
packaging), anyio's nine S610 "Django extra" remarks on its own ``extra()`` are gone and
typer's seven comments of one rule are two. On 2026-12-05 (later): 91 and 53, once a
remark the rest of its file already earns in three places was left out as the file's
convention (requests' ``raise`` without ``from`` in ``adapters.py``, 13 places; its tests'
``pickle.loads``, now minor in test code; httpx's ``None | X``); then 90 and 52 once a
bare ``raise`` under a ``sys.exc_info()`` check was no longer "misplaced" (flask). Twenty
more projects that
played no part (werkzeug, jinja2, marshmallow, tornado, celery, sphinx, pydantic, scrapy,
djangorestframework, aiohttp, sqlalchemy, trio, sanic, cattrs, dulwich, …) gave the other
changes of that day: generated files (Django migrations), test code by pytest's
``testpaths``, a conftest's version-guarded ``collect_ignore``. On 2026-12-05 (night): 90 and 48,
once credentials in test code were listed after two comments like any repeated remark
(requests' six test keys, ``tests/certs``); forty more held-out releases (redis-py, bottle,
peewee, paho-mqtt, rq, python-dateutil, pexpect, pyparsing, ipython, sentry-sdk, django,
…) gave that day's other changes (classifiers and Python 2, type comments, names the
file already uses, expressions there to raise or warn). On 2026-12-06: 85 and 45, once an
assert in test code that tests an operator as written (requests' ``assert "x" == y``
under SIM300) and a ``subprocess.run`` whose return code is read after it (fastapi)
were no remarks; sixty
more held-out releases (gunicorn, loguru, babel, pygments, omegaconf, rsa, pyserial,
flask-wtf, click-repl, requests-toolbelt, …) gave that day's other changes (pytest
fixtures taken as parameters, lines that only lost a carriage return, Python 2 support
and advice that breaks it, bandit's own severities). On 2026-12-06: 57 and 41 once the
changed files were linted as they were too (a remark the old code already drew is not
new); then 55 and 39 once such a remark was matched by its function, not only its hunk
(flask's SIM101 and black's SIM103 in functions that had them before). Later that day,
still 55 and 39 (none of the nine pairs has such code): fifty more held-out releases
(intervaltree, croniter, semver, addict, jsonpatch, python-box, pyramid, simplejson,
cherrypy, pyyaml, behave, …) gave that session's changes: a package's ``__init__``
importing its own modules, look-alike characters among their own script, one remark
two rules make on one line, a comparison under ``pytest.raises``, a nested project's
own Python, a function re-importing its module's import, Gherkin steps. On 2026-12-06
(evening): 49 and 35 once a remark on code the change moved from another file (or a
deleted one) was the old remark it is: httpx 0.28 moved its form-encoding helpers and
their tests out of ``_utils.py`` (9 and 7 → 5 and 3), fastapi copied a logging line
another script lost (two LOG015 fewer). Found on uncertainties 3.2.3, which split
``core.py`` in four (113 candidates → 72); forty more held-out releases (natsort,
pycparser, cbor2, pyrsistent, databases, …) gave that session's other changes. On
2026-12-07: 48 and 34 once the files a project keeps black off were left out like its
linters' excludes (black's ``scripts/generate_schema.py``, excluded "Uses match syntax",
drew the one remark on black); found on flake8-bugbear, whose ``tests/eval_files/`` drew
10 comments on code written to be wrong. Later on 2026-12-07: 47 and 34 once unpickling
what the same function pickled was no remark (requests' tests copy objects with
``pickle.loads(pickle.dumps(…))``); sixty more held-out releases (intelhex, anytree,
parameterized, desert, grappa, asyncclick, pottery, flasgger, ping3, …) gave that
session's other changes. In the evening of 2026-12-07: 45 and 32 once the last of a run of
``if …: return`` cases kept its ``if`` (SIM103 on fastapi's ``_should_embed_body_fields``
and pytest's ``istestclass``, found on pylint-django); sixty more held-out releases
(ezdxf, asyncpg, cartopy, lizard, diagrams, dspy, keras, flax, optax, …) gave that
session's other changes. On 2026-12-08: still 45 and 32, the same comments, after a new
module was asked how the modules beside it are written and bandit's ``# nosec`` was
honoured; about 170 more held-out releases (pingouin, pymunk, fugue, telethon,
troposphere, feature-engine, ansible-lint, kedro-datasets, ase, vedo, devito, kornia,
momepy, lm-eval, rocketry, sse-starlette, …) gave that session's changes.

Needs the package index (``pip download``); sdists are cached in ``--cache``. Compare two
checkouts with ``--kaizen`` (the ``kaizen`` executable of the other checkout's venv). Not a
timed test: it prints its figures and writes them to ``bench/results/review_releases.json``.

    .venv/bin/python bench/review_releases.py [--kaizen PATH] [--out FILE] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

PAIRS: tuple[tuple[str, str, str], ...] = (
    ("requests", "2.31.0", "2.32.3"),
    ("httpx", "0.27.0", "0.28.1"),
    ("rich", "13.7.0", "13.9.4"),
    ("click", "8.1.3", "8.1.7"),
    ("flask", "2.3.3", "3.0.3"),
    ("attrs", "23.1.0", "24.2.0"),
    ("fastapi", "0.110.0", "0.115.0"),
    ("pytest", "8.0.0", "8.3.3"),
    ("black", "24.1.0", "24.8.0"),
)


def _normalised(name: str) -> str:
    """PEP 503/625: ``pytest-xdist`` ships as ``pytest_xdist-3.6.1.tar.gz``."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _cached(name: str, version: str, cache: Path) -> Path | None:
    wanted = f"{_normalised(name)}-{version}.tar.gz"
    found = [p for p in cache.glob("*.tar.gz") if _normalised_file(p.name) == wanted]
    return found[0] if found else None


def _normalised_file(file_name: str) -> str:
    project, sep, rest = file_name.partition("-")
    while rest and not rest[0].isdigit():  # a dash inside the project's name
        more, sep, rest = rest.partition("-")
        project += "-" + more
    return f"{_normalised(project)}{sep}{rest}"


def sdist(name: str, version: str, cache: Path) -> Path:
    """The project's source distribution, downloaded once."""
    found = _cached(name, version, cache)
    if found is not None:
        return found
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    subprocess.run(
        [*pip, "--no-binary", ":all:", f"{name}=={version}", "-d", str(cache)], check=True
    )
    found = _cached(name, version, cache)
    if found is None:
        raise FileNotFoundError(f"pip downloaded no {name} {version} sdist into {cache}")
    return found


def _unpack(archive: Path, into: Path) -> None:
    """The archive's single top folder's contents into ``into`` (replacing what is there)."""
    for child in into.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
        (top,) = Path(tmp).iterdir()
        for child in top.iterdir():
            shutil.move(str(child), into / child.name)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def release_repo(name: str, old: str, new: str, cache: Path, where: Path) -> Path:
    repo = where / name
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    _unpack(sdist(name, old, cache), repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", old)
    _git(repo, "tag", "old")
    _unpack(sdist(name, new, cache), repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", new)
    return repo


def family(pattern: str) -> str:
    """``ruff:UP006`` → ``ruff:UP``; ``secrets:private-key`` stays whole."""
    source, _, rule = pattern.partition(":")
    if source != "ruff" or not rule[:1].isupper():
        return pattern
    return f"ruff:{rule.rstrip('0123456789')}"


def review(kaizen: str, repo: Path, data_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "KAIZEN_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [kaizen, "review", "--repo", str(repo), "--base", "old", "--no-llm", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - started
    result = json.loads(done.stdout)
    posted = result["findings"]
    candidates = posted + result["suppressed"]
    return {
        "seconds": round(seconds, 2),
        "candidates": len(candidates),
        "posted": len(posted),
        "candidates_by_family": dict(Counter(family(f["pattern"]) for f in candidates)),
        "posted_patterns": sorted(f"{f['path']}:{f['line']} {f['pattern']}" for f in posted),
        "notes": result["notes"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kaizen", default=str(Path(sys.executable).parent / "kaizen"))
    parser.add_argument("--out", default=str(ROOT / "bench/results/review_releases.json"))
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "kaizen-sdists"))
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    projects: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kaizen-releases-") as tmp:
        for name, old, new in PAIRS:
            repo = release_repo(name, old, new, cache, Path(tmp) / "repos")
            row = review(args.kaizen, repo, Path(tmp) / "data" / name)
            projects[f"{name} {old}→{new}"] = row
            families = Counter(row["candidates_by_family"]).most_common(4)
            top = ", ".join(f"{k} {v}" for k, v in families)
            print(
                f"{name:8} {old:>8} → {new:<8} candidates {row['candidates']:4}  "
                f"posted {row['posted']:3}  {row['seconds']:6.1f}s  ({top})"
            )
    total = {
        "candidates": sum(p["candidates"] for p in projects.values()),
        "posted": sum(p["posted"] for p in projects.values()),
        "by_family": dict(
            sum((Counter(p["candidates_by_family"]) for p in projects.values()), Counter())
        ),
    }
    print(f"total: candidates {total['candidates']}, posted {total['posted']}")
    out = {
        "bench": "review_releases",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "kaizen": args.kaizen,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "total": total,
        "projects": projects,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
