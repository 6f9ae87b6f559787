"""The review pipeline on real memory: what is posted follows what the team accepted."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.repo_config import CriticConfig, RepoConfig, ReviewConfig
from memory.embedding import CachedEmbedder, Embedder, LocalEmbedder
from memory.scores import SqliteScoreStore
from memory.service import Memory
from memory.types import Signal
from tests.fakes.chat import FakeChat
from tests.integration.test_memory_service import build
from workers.review.diff_model import DiffModel
from workers.review.pipeline import ReviewOutcome, ReviewRequest, remember_posted, run_review
from workers.review.selection import choose_findings

REPO = "octo-org/app"
SOURCE = """\
import os


def add(item, bucket=[]):
    bucket.append(item)
    return bucket


def read(path):
    try:
        return open(path).read()
    except:
        return None


AWS_KEY = "AKIAQ3EGRTZNVK7XJ4PL"
"""


def pr_diff(path: str = "app/util.py", text: str = SOURCE) -> DiffModel:
    lines = text.splitlines()
    patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(f"+{ln}" for ln in lines)
    return DiffModel.from_github_files([{"filename": path, "status": "added", "patch": patch}])


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return CachedEmbedder(LocalEmbedder(), tmp_path_factory.mktemp("emb") / "cache.sqlite3")


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:
    mem = build(tmp_path, embedder)
    yield mem
    mem.close()


def request(pr: str, diff: DiffModel, config: RepoConfig | None = None) -> ReviewRequest:
    text = {f.path: SOURCE for f in diff.files}
    return ReviewRequest(
        repo=REPO, pr=pr, diff=diff, file_text=text.get, config=config or RepoConfig()
    )


def patterns(choices: list) -> set[str]:  # type: ignore[type-arg]
    return {c.finding.pattern for c in choices}


def teach(memory: Memory, pr: str, kind: str, pattern: str, times: int = 3) -> None:
    """Review PRs and give ``kind`` on every comment of ``pattern``."""
    for round_ in range(times):
        req = request(f"{pr}-{round_}", pr_diff(f"pkg{round_}/m.py"))
        outcome = run_review(req, chat=None, memory=memory, rng=random.Random(round_))
        remember_posted(memory, req, outcome, {})
        for choice in outcome.chosen.posted:
            if choice.finding.pattern == pattern:
                memory.apply_signal(
                    Signal(
                        id=f"{kind}:{choice.experience_id}",
                        kind=kind,
                        experience_id=choice.experience_id,
                        repo=REPO,
                        pattern=pattern,
                        at=time.time(),
                    )
                )


def test_rules_the_teams_ruff_config_ignores_are_not_raised(memory: Memory) -> None:
    diff = pr_diff()
    text = {f.path: SOURCE for f in diff.files}
    text["pyproject.toml"] = "[tool.ruff.lint]\nignore = ['E7']\n"  # E722, bare except
    team = ReviewRequest(repo=REPO, pr="7", diff=diff, file_text=text.get, config=RepoConfig())
    outcome = run_review(team, chat=None, memory=None, rng=random.Random(1))
    found = patterns(outcome.chosen.posted) | patterns(outcome.chosen.suppressed)
    assert "ruff:B006" in found and "secrets:aws-access-key" in found
    assert "ruff:E722" not in found
    # kaizen.yml naming the rule wins over the team's lint config
    asked = RepoConfig.model_validate({"review": {"ruff": {"select": ["E722", "B006"]}}})
    again = run_review(
        ReviewRequest(repo=REPO, pr="8", diff=diff, file_text=text.get, config=asked),
        chat=None,
        memory=None,
        rng=random.Random(1),
    )
    found = patterns(again.chosen.posted) | patterns(again.chosen.suppressed)
    assert "ruff:E722" in found


def test_code_moved_out_of_a_file_that_only_lost_lines_draws_no_remark() -> None:
    """A module split in two: ``util.py`` loses ``add`` (its mutable default) and
    ``items.py`` gains it. The remark was made, or let pass, where the code stood."""
    kept = "import os\n"
    moved = "def add(item, bucket=[]):\n    bucket.append(item)\n    return bucket\n"
    lines = (kept + "\n\n" + moved).splitlines()
    files = [
        {
            "filename": "app/util.py",
            "status": "modified",
            "patch": f"@@ -1,{len(lines)} +1 @@\n {lines[0]}\n"
            + "\n".join(f"-{ln}" for ln in lines[1:]),
        },
        {
            "filename": "app/items.py",
            "status": "added",
            "patch": "@@ -0,0 +1,3 @@\n" + "\n".join(f"+{ln}" for ln in moved.splitlines()),
        },
    ]
    text = {"app/util.py": kept, "app/items.py": moved}
    diff = DiffModel.from_github_files(files)
    split = ReviewRequest(repo=REPO, pr="9", diff=diff, file_text=text.get, config=RepoConfig())
    outcome = run_review(split, chat=None, memory=None, rng=random.Random(1))
    assert "ruff:B006" not in patterns(outcome.chosen.posted) | patterns(outcome.chosen.suppressed)

    fresh = DiffModel.from_github_files(files[1:])
    added = ReviewRequest(repo=REPO, pr="10", diff=fresh, file_text=text.get, config=RepoConfig())
    outcome = run_review(added, chat=None, memory=None, rng=random.Random(1))
    assert "ruff:B006" in patterns(outcome.chosen.posted) | patterns(outcome.chosen.suppressed)


def test_first_review_posts_static_findings(memory: Memory) -> None:
    outcome = run_review(request("1", pr_diff()), chat=None, memory=memory, rng=random.Random(1))
    found = patterns(outcome.chosen.posted) | patterns(outcome.chosen.suppressed)
    assert {"ruff:B006", "ruff:E722", "secrets:aws-access-key"} <= found
    assert "secrets:aws-access-key" in patterns(outcome.chosen.posted)
    assert outcome.usage["llm_calls"] == 0


def test_a_leaked_credential_is_one_comment_not_a_secret_and_a_ruff_one(memory: Memory) -> None:
    source = 'API_TOKEN = "AKIAQ3EGRTZNVK7XJ4PL"\nDB_PASSWORD = "hunter22"\n'
    diff = pr_diff(text=source)
    req = ReviewRequest(
        repo=REPO, pr="12", diff=diff, file_text={"app/util.py": source}.get, config=RepoConfig()
    )
    outcome = run_review(req, chat=None, memory=memory, rng=random.Random(1))
    posted = {(c.finding.line, c.finding.pattern) for c in outcome.chosen.posted}
    assert (1, "secrets:aws-access-key") in posted
    assert (1, "ruff:S105") not in posted  # the scanner's comment already says it
    assert {c.reason for c in outcome.chosen.suppressed if c.finding.line == 1} == {"duplicate"}
    assert (2, "ruff:S105") in posted  # no credential the scanner knows: ruff's is the only one


def test_rejected_pattern_is_held_back_and_accepted_one_posted(memory: Memory) -> None:
    teach(memory, "a", "thumbs_down", "ruff:B006")
    teach(memory, "b", "thumbs_up", "ruff:E722")
    outcome = run_review(request("9", pr_diff()), chat=None, memory=memory, rng=random.Random(9))
    assert "ruff:E722" in patterns(outcome.chosen.posted)
    held = {c.finding.pattern: c.reason for c in outcome.chosen.suppressed}
    assert held.get("ruff:B006") in ("learned", "neighbours")
    assert memory.scores.shadow(REPO)  # kept for audit, with its sampled score


def test_near_identical_rejections_fade_as_the_pattern_scores_do(memory: Memory) -> None:
    teach(memory, "a", "thumbs_down", "ruff:B006")
    outcome = run_review(request("9", pr_diff()), chat=None, memory=memory, rng=random.Random(9))
    findings = [c.finding for c in outcome.chosen.choices]

    def b006_vote(now: float) -> tuple[float, float]:
        chosen = choose_findings(
            findings, repo=REPO, pr="10", config=RepoConfig(), memory=memory, now=now
        )
        return next(c.neighbours for c in chosen.choices if c.finding.pattern == "ruff:B006")

    now = time.time()
    today = b006_vote(now)
    assert today[1] >= 0.99  # 👎 on comments like it, just now
    half_life = memory.scores.half_life_days * 86_400.0
    assert b006_vote(now + half_life)[1] == pytest.approx(today[1] / 2, rel=0.01)
    assert b006_vote(now + 5 * half_life) == (0.0, 0.0)  # beyond the horizon: no vote


def test_security_is_never_held_back_by_learning(memory: Memory) -> None:
    teach(memory, "s", "thumbs_down", "secrets:aws-access-key", times=4)
    outcome = run_review(request("10", pr_diff()), chat=None, memory=memory, rng=random.Random(3))
    assert "secrets:aws-access-key" in patterns(outcome.chosen.posted)


def test_what_was_already_posted_on_this_pr_is_not_posted_again(memory: Memory) -> None:
    first = run_review(request("7", pr_diff()), chat=None, memory=memory, rng=random.Random(1))
    said = {c.finding.fingerprint for c in first.chosen.posted}
    again = run_review(
        request("7", pr_diff()), chat=None, memory=memory, already_posted=said, rng=random.Random(1)
    )
    assert not {c.finding.fingerprint for c in again.chosen.posted} & said
    assert {c.reason for c in again.chosen.suppressed} >= {"already posted"}


def test_min_severity_and_budget_come_from_the_repo_config(memory: Memory) -> None:
    config = RepoConfig(review=ReviewConfig(max_comments=0, min_severity="high"))
    outcome = run_review(
        request("8", pr_diff(), config), chat=None, memory=memory, rng=random.Random(1)
    )
    assert patterns(outcome.chosen.posted) == {"secrets:aws-access-key"}
    reasons = {c.reason for c in outcome.chosen.suppressed}
    assert "below min_severity" in reasons


def test_muted_pattern_in_config_is_never_posted(memory: Memory) -> None:
    config = RepoConfig(mutes=("ruff:*",))
    outcome = run_review(
        request("11", pr_diff(), config), chat=None, memory=memory, rng=random.Random(1)
    )
    assert not any(p.startswith("ruff:") for p in patterns(outcome.chosen.posted))
    assert {c.reason for c in outcome.chosen.suppressed if c.finding.source == "ruff"} == {"muted"}


def test_memory_outage_still_reviews(tmp_path: Path) -> None:
    def broken() -> object:
        raise RuntimeError("qdrant down")

    memory = Memory(
        scores=SqliteScoreStore(tmp_path / "s.sqlite3", half_life_days=30),
        trajectories=build(tmp_path / "t", LocalEmbedder()).trajectories,
        pending=build(tmp_path / "p", LocalEmbedder()).pending,
        archive=build(tmp_path / "a", LocalEmbedder()).archive,
        open_experiences=broken,  # type: ignore[arg-type]
    )
    outcome = run_review(request("12", pr_diff()), chat=None, memory=memory, rng=random.Random(1))
    assert outcome.chosen.posted
    assert any("could not be consulted" in n for n in outcome.notes)


def critic_scores_low(messages: list[dict[str, str]]) -> str:
    """A stand-in model: no review findings, and a critic that scores every comment low."""
    if messages[0]["content"].startswith("You predict"):
        keys = re.findall(r"^\[([^\]]+)\]", messages[-1]["content"], re.M)
        return json.dumps({"scores": [{"key": k, "score": 0.05, "rationale": "x"} for k in keys]})
    return '{"findings": []}'


@pytest.mark.parametrize("decide", [False, True])
def test_critic_scores_are_kept_and_decide_only_when_asked(memory: Memory, decide: bool) -> None:
    config = RepoConfig(
        review=ReviewConfig(critic=CriticConfig(enabled=True, decide=decide, threshold=0.3))
    )
    chat = FakeChat(default=critic_scores_low)
    outcome = run_review(
        request(f"c{decide}", pr_diff(), config), chat=chat, memory=memory, rng=random.Random(1)
    )
    assert any(m[0]["content"].startswith("You predict") for m in chat.requests)
    ruff = [c for c in outcome.chosen.choices if c.finding.source == "ruff"]
    assert len(ruff) == 3  # B006, F401, E722
    assert all(c.finding.extra.get("critic_score") == 0.05 for c in ruff)
    if decide:
        assert {c.reason for c in ruff} == {"critic"}
        assert "secrets:aws-access-key" in patterns(outcome.chosen.posted)  # never gated
    else:
        assert not any(c.reason == "critic" for c in ruff)


def lookup_change(pr: str, path: str, places: int) -> ReviewRequest:
    """A PR adding one ``k in d.keys()`` (ruff SIM118, low) to a file that has ``places``."""
    has = "def has_{n}(d, k):\n    return k in d.keys()\n"
    old = [line for n in range(places) for line in has.format(n=n).splitlines()]
    new = [*old, *has.format(n=places).splitlines()]
    start = 1 if old else 0
    patch = f"@@ -{start},{len(old)} +1,{len(new)} @@\n" + "".join(f" {ln}\n" for ln in old)
    patch += "".join(f"+{ln}\n" for ln in new[len(old) :])
    status = "modified" if old else "added"
    diff = DiffModel.from_github_files([{"filename": path, "status": status, "patch": patch}])
    text = "".join(f"{ln}\n" for ln in new)
    return ReviewRequest(
        repo=REPO, pr=pr, diff=diff, file_text={path: text}.get, config=RepoConfig()
    )


def test_the_files_own_convention_holds_until_the_team_accepts_the_rule(memory: Memory) -> None:
    def sim118(req: ReviewRequest) -> str:
        outcome = run_review(req, chat=None, memory=memory, rng=random.Random(1))
        remember_posted(memory, req, outcome, {})
        (choice,) = [c for c in outcome.chosen.choices if c.finding.pattern == "ruff:SIM118"]
        if choice.posted:
            memory.apply_signal(
                Signal(
                    id=f"thumbs_up:{choice.experience_id}",
                    kind="thumbs_up",
                    experience_id=choice.experience_id,
                    repo=REPO,
                    pattern="ruff:SIM118",
                    at=time.time(),
                )
            )
        return "posted" if choice.posted else choice.reason

    assert sim118(lookup_change("1", "app/legacy.py", 3)) == "convention"
    assert sim118(lookup_change("2", "app/fresh.py", 0)) == "posted"  # and the team 👍 it
    assert sim118(lookup_change("3", "app/legacy.py", 3)) == "posted"


def review_of_added(added: dict[str, str], repo_files: dict[str, str]) -> ReviewOutcome:
    """A review, without memory, of a PR adding ``added`` (path → text) to a repository
    that also holds ``repo_files``."""
    files = []
    for path, text in added.items():
        lines = text.splitlines()
        patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines)
        files.append({"filename": path, "status": "added", "patch": patch})
    req = ReviewRequest(
        repo=REPO,
        pr="3",
        diff=DiffModel.from_github_files(files),
        file_text={**added, **repo_files}.get,
        config=RepoConfig(),
    )
    return run_review(req, chat=None, memory=None, rng=random.Random(1))


def test_code_under_the_repositorys_pytest_testpaths_is_test_code() -> None:
    """celery keeps its tests in ``t/unit`` (pyproject's testpaths): a /tmp path there is a
    minor remark, as in any tests/ folder, and a warning (bandit's medium) in the code that
    ships."""
    source = 'BEAT_SCHEDULE = "/tmp/beat-schedule"\n'
    paths = ("t/unit/bin/proj/daemon_config.py", "celery/bin/config.py")
    pyproject = '[tool.pytest.ini_options]\ntestpaths = "t/unit/"\n'

    outcome = review_of_added(dict.fromkeys(paths, source), {"pyproject.toml": pyproject})

    severity = {c.finding.path: c.finding.severity for c in outcome.chosen.choices}
    assert severity == {
        "t/unit/bin/proj/daemon_config.py": "low",
        "celery/bin/config.py": "medium",
    }


MIGRATION = """\
# Generated by Django 4.1.3 on 2022-11-24 08:58

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("authtoken", "0003_tokenproxy")]
    operations = []
    key = "AKIAQ3EGRTZNVK7XJ4PL"
"""


@pytest.mark.parametrize("skip", [True, False])
def test_a_file_a_tool_wrote_gets_no_remarks_but_a_leak_in_it_is_found(skip: bool) -> None:
    """djangorestframework 3.15: two RUF012 remarks on a migration's class attributes."""
    path = "rest_framework/authtoken/migrations/0004_alter_tokenproxy_options.py"
    diff = pr_diff(path, MIGRATION)
    config = RepoConfig(review=ReviewConfig(skip_generated=skip))
    req = ReviewRequest(
        repo=REPO, pr="6", diff=diff, file_text={path: MIGRATION}.get, config=config
    )

    outcome = run_review(req, chat=None, memory=None, rng=random.Random(1))

    found = patterns(outcome.chosen.choices)
    assert "secrets:aws-access-key" in found
    assert ("ruff:RUF012" in found) is not skip
    if skip:
        (entry,) = diff.skipped()
        assert entry.skipped == (
            "generated, as its header says: # Generated by Django 4.1.3 on 2022-11-24 08:58"
        )
    else:
        assert not diff.skipped()


def test_a_file_named_as_generated_gets_no_remarks() -> None:
    """tyro 1.0's ``tests/test_py311_generated/test_errors_generated.py``, written by
    the project's ``_generate.py`` from its tests, with no header: remarks on code nobody
    edits by hand. The name says it; ``generated_ids.py`` does not."""
    source = "def f(x=[]):\n    return x\n"
    made = "tests/py311_generated/test_errors_generated.py"
    other = "pkg/generated_ids.py"
    lines = source.splitlines()
    patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(f"+{ln}" for ln in lines)
    diff = DiffModel.from_github_files(
        [{"filename": p, "status": "added", "patch": patch} for p in (made, other)]
    )
    req = ReviewRequest(
        repo=REPO,
        pr="8",
        diff=diff,
        file_text={made: source, other: source}.get,
        config=RepoConfig(),
    )

    outcome = run_review(req, chat=None, memory=None, rng=random.Random(1))

    assert {c.finding.path for c in outcome.chosen.choices} == {other}
    (entry,) = diff.skipped()
    assert (entry.path, entry.skipped) == (made, "generated, as its name says")


def test_a_file_named_as_a_copy_of_another_is_not_reviewed_but_named() -> None:
    """parsimonious 0.11 shipped ``grammar.py pre-rewriting-resolve_refs.py`` beside
    ``grammar.py``: the old module's lint remarks came out as new; the copy is what to
    say. A leaked key in it is still found."""
    path = "pkg/grammar.py pre-rewrite.py"
    diff = pr_diff(path, SOURCE)
    texts = {path: SOURCE, "pkg/grammar.py": SOURCE}
    req = ReviewRequest(repo=REPO, pr="7", diff=diff, file_text=texts.get, config=RepoConfig())

    outcome = run_review(req, chat=None, memory=None, rng=random.Random(1))

    assert patterns(outcome.chosen.choices) == {"secrets:aws-access-key"}
    (entry,) = diff.skipped()
    assert entry.skipped == "named as a copy of `pkg/grammar.py`: left in the change by accident?"


def test_a_file_an_editor_left_behind_is_named_for_what_it_is() -> None:
    """uritemplate 4.2 shipped vim's ``tests/.test_uritemplate.py.swp``: "binary file"
    said nothing of why it was there. A text leftover (a patch's ``.rej``) is still
    scanned for keys."""
    rejected = "app/util.py.rej"
    lines = SOURCE.splitlines()
    patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(f"+{ln}" for ln in lines)
    diff = DiffModel.from_github_files(
        [
            {"filename": "tests/.test_util.py.swp", "status": "added"},  # binary: no patch
            {"filename": ".DS_Store", "status": "added"},
            {"filename": rejected, "status": "added", "patch": patch},
            {"filename": "app/util.py", "status": "added", "patch": patch},
        ]
    )
    req = ReviewRequest(
        repo=REPO, pr="8", diff=diff, file_text={"app/util.py": SOURCE}.get, config=RepoConfig()
    )

    outcome = run_review(req, chat=None, memory=None, rng=random.Random(1))

    assert {(e.path, e.skipped) for e in diff.skipped()} == {
        ("tests/.test_util.py.swp", "an editor's swap file (vim): left in the change by accident?"),
        (".DS_Store", "a macOS folder settings file: left in the change by accident?"),
        (rejected, "what a patch that did not apply left: left in the change by accident?"),
    }
    found = [c.finding for c in outcome.chosen.choices]
    assert {f.path for f in found if f.pattern.startswith("secrets:")} == {
        rejected,
        "app/util.py",
    }


def test_a_test_file_its_conftest_keeps_from_older_pythons_may_use_newer_syntax() -> None:
    source = "type Pair[T] = tuple[T, T]\n"
    paths = ("tests/test_generics_695.py", "tests/test_generics.py")
    conftest = (
        "import sys\n\ncollect_ignore_glob = []\nif sys.version_info < (3, 12):\n"
        "    collect_ignore_glob.append('*_695.py')\n"
    )
    repo_files = {
        "pyproject.toml": "[project]\nname = 'pkg'\nrequires-python = '>=3.8'\n",
        "tests/conftest.py": conftest,
    }

    outcome = review_of_added(dict.fromkeys(paths, source), repo_files)

    assert {(c.finding.path, c.finding.pattern) for c in outcome.chosen.choices} == {
        ("tests/test_generics.py", "ruff:unsupported-syntax")
    }


def test_a_project_nested_in_the_repository_is_linted_for_its_own_python() -> None:
    """pyramid 2.1 asks for Python 3.10 at its root; its tutorials are projects of their
    own (``docs/tutorials/wiki2/src/authentication/pyproject.toml``, ``>=3.8``) whose
    SQLAlchemy models evaluate ``Mapped[Optional[str]]`` at run time: ``str | None``
    there breaks them on 3.8 and 3.9. Code outside the nested project follows the root."""
    source = (
        "from typing import Optional\n\n\ndef name(x: Optional[str]) -> str:\n    return x or ''\n"
    )
    paths = ("docs/tutorial/src/tutorial/models.py", "src/pkg/models.py")
    repo_files = {
        "pyproject.toml": "[project]\nname = 'pkg'\nrequires-python = '>=3.10'\n",
        "docs/tutorial/pyproject.toml": "[project]\nname = 'tutorial'\nrequires-python = '>=3.8'\n",
    }

    outcome = review_of_added(dict.fromkeys(paths, source), repo_files)

    assert {(c.finding.path, c.finding.pattern) for c in outcome.chosen.choices} == {
        ("src/pkg/models.py", "ruff:UP045")
    }
