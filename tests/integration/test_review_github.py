"""A review against the OpenAPI-checked fake GitHub, in-process: anchors GitHub accepts,
422 repair, LLM trouble, superseded and busy reviews, budgets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.github import GitHubApp, InstallationClient
from bot.settings import Settings
from tests.fakes.github_api import FakeGitHub, generate_private_key_pem
from tests.fakes.github_git import Symlink
from tests.fakes.openai_api import FakeOpenAI
from workers.llm import OpenAIChat
from workers.review.github_review import Busy, ReviewJob, review_pull_request
from workers.review.state import SqliteReviewState

REPO = "octo-org/anchors"
BOT = "kaizen[bot]"
OLD = "".join(f"line {i}\n" for i in range(1, 21))


@dataclass
class World:
    fake: FakeGitHub
    llm: FakeOpenAI
    gh: InstallationClient
    chat: OpenAIChat
    state: SqliteReviewState
    installation: int


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    pem = generate_private_key_pem()
    with FakeGitHub(tmp_path / "gh") as fake, FakeOpenAI(api_key="k") as llm:
        fake.register_app(app_id=77, slug="kaizen", private_key_pem=pem)
        installation = fake.add_installation("octo-org", repos=[])
        fake.add_repo(
            REPO,
            files={"README.md": "# a\n", "old_name.py": OLD, "shrink.py": OLD, "end.txt": "a\nb"},
            installation_id=installation,
        )
        fake.add_user("alice")
        settings = Settings(
            app_id=77,
            private_key=pem,
            github_api_url=fake.base_url,
            github_seconds_between_requests=0,
            github_seconds_between_writes=0,
            data_dir=tmp_path / "data",
        )
        app = GitHubApp(settings)
        chat = OpenAIChat(base_url=llm.base_url, api_key="k", model="fake-gpt", max_retries=0)
        try:
            yield World(
                fake,
                llm,
                app.installation(installation),
                chat,
                SqliteReviewState(tmp_path / "state.sqlite3"),
                installation,
            )
        finally:
            app.close()


def everywhere(body: dict[str, Any]) -> dict[str, Any]:
    """A model that comments on every removed line and on the last line of every file."""
    text = "\n".join(str(m.get("content") or "") for m in body["messages"])
    findings: list[dict[str, Any]] = []
    path, last = None, None
    for row in [*text.splitlines(), "## <end>"]:
        if row.startswith("## "):
            if path and last:
                findings.append(_finding(path, last, "RIGHT"))
            path, last = row[3:].strip(), None
            continue
        match = re.match(r"^(\d+)([+ -])", row)
        if match and path:
            if match.group(2) == "-":
                findings.append(_finding(path, int(match.group(1)), "LEFT"))
            else:
                last = int(match.group(1))
    return {"content": {"findings": findings}}


def _finding(path: str, line: int, side: str) -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "side": side,
        "category": "correctness",
        "severity": "medium",
        "message": f"Check {path} {side} {line}.",
    }


def job(world: World, number: int, trigger: str = "opened", delivery: str = "d1") -> ReviewJob:
    return ReviewJob(REPO, number, world.installation, delivery, trigger, BOT, "kaizen")


def ours(world: World, number: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    reviews = [r for r in world.fake.reviews(REPO, number) if r["user"]["login"] == BOT]
    comments = [c for c in world.fake.review_comments(REPO, number) if c["user"]["login"] == BOT]
    return reviews, comments


def check_run(world: World, sha: str) -> dict[str, Any]:
    (run,) = [r for r in world.fake.check_runs(REPO, sha) if r["name"] == "Kaizen review"]
    return run


def test_awkward_anchors_never_get_a_422(world: World) -> None:
    world.llm.on(lambda body: True, everywhere)
    big = "".join(f"value_{i} = {i}\n" for i in range(3000))
    pr = world.fake.open_pull_request(
        REPO,
        head="awkward",
        changes={
            "old_name.py": None,
            "new_name.py": OLD.replace("line 10\n", "line ten\n"),  # a rename with an edit
            "shrink.py": "".join(f"line {i}\n" for i in range(1, 21) if i % 4),  # deletions
            "end.txt": "a\nc",  # last line without a newline
            "big.py": big,
            "logo.png": "\x89PNG\x00\x01\x02binary\x00",
        },
        title="Awkward",
        user="alice",
    )
    result = review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=world.chat
    )
    assert result.status == "posted"
    assert not [r for r in world.fake.requests if r.status == 422]
    reviews, comments = ours(world, pr["number"])
    assert len(reviews) == 1
    anchored = {(c["path"], c["side"]) for c in comments}
    assert ("shrink.py", "LEFT") in anchored
    assert ("new_name.py", "RIGHT") in anchored
    assert ("end.txt", "RIGHT") in anchored
    assert any(c["path"] == "big.py" and c["line"] == 3000 for c in comments)
    assert "logo.png" not in {c["path"] for c in comments}
    assert check_run(world, pr["head"]["sha"])["conclusion"] == "neutral"
    states = [
        (r.json or {}).get("status")
        for r in world.fake.requests
        if "/check-runs" in r.path and r.method in ("POST", "PATCH")
    ]
    assert states == ["queued", "in_progress", "completed"]


def test_a_moved_file_is_not_listed_as_not_reviewed(world: World) -> None:
    world.llm.on(lambda body: True, everywhere)
    pr = world.fake.open_pull_request(
        REPO,
        head="move",
        changes={
            "old_name.py": None,
            "moved/old_name.py": OLD,  # moved as it is: GitHub sends no patch for it
            "logo.png": "\x89PNG\x00\x01\x02binary\x00",
            "added.py": "value = 1\n",
        },
        title="Move",
        user="alice",
    )
    files = world.gh.list_pull_files(REPO, pr["number"])
    (moved,) = [f for f in files if f["filename"] == "moved/old_name.py"]
    assert moved["status"] == "renamed" and "patch" not in moved
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=world.chat
    )
    bodies = [r["body"] for r in world.fake.reviews(REPO, pr["number"])]
    bodies += [check_run(world, pr["head"]["sha"])["output"]["summary"]]
    text = "\n".join(bodies)
    assert "`logo.png`: no textual diff (binary file)" in text
    assert "Files reviewed: 1; skipped: 1." in text
    assert "old_name.py" not in text


def test_a_file_over_githubs_1_mb_contents_limit_is_noted_and_the_rest_reviewed(
    world: World,
) -> None:
    """GitHub answers 403 ``too_large`` for the text of a file over 1 MB (a generated
    module, say): that file goes unchecked, with a note, and the others are reviewed."""
    world.llm.on(lambda body: True, lambda body: {"content": {"findings": []}})
    repo = "octo-org/generated"
    big = "".join(f"VALUE_{i} = {i}\n" for i in range(80_000))  # 1.3 MB
    world.fake.add_repo(
        repo, files={"gen_pb2.py": big, "small.py": "x = 1\n"}, installation_id=world.installation
    )
    pr = world.fake.open_pull_request(
        repo,
        head="grow",
        changes={
            "gen_pb2.py": big + "def add(item, bucket=[]):\n    return bucket\n",
            "small.py": "def put(item, into=[]):\n    return into\n",
        },
        title="Grow",
        user="alice",
    )
    assert world.gh.file_at(repo, "gen_pb2.py", pr["head"]["sha"]) is None
    review_pull_request(
        world.gh,
        ReviewJob(repo, pr["number"], world.installation, "d-big", "opened", BOT, "kaizen"),
        memory=None,
        state=world.state,
        chat=world.chat,
    )
    comments = [
        c for c in world.fake.review_comments(repo, pr["number"]) if c["user"]["login"] == BOT
    ]
    assert [(c["path"], "ruff:B006" in c["body"]) for c in comments] == [("small.py", True)]
    (run,) = [
        r for r in world.fake.check_runs(repo, pr["head"]["sha"]) if r["name"] == "Kaizen review"
    ]
    assert run["conclusion"] != "failure"
    text = "\n".join(
        [*(r["body"] for r in world.fake.reviews(repo, pr["number"])), run["output"]["summary"]]
    )
    assert "`gen_pb2.py`: not checked by ruff" in text and "over GitHub's 1 MB" in text


def test_a_symbolic_link_is_not_linted_as_the_file_it_points_at(world: World) -> None:
    # GitHub's contents API answers a symlink with its target's text; the PR's diff shows
    # the target's name as the link's one line.
    pr = world.fake.open_pull_request(
        REPO,
        head="link",
        changes={"alias.py": Symlink("old_name.py"), "app.py": "def f(x=[]):\n    return x\n"},
        title="Link",
        user="alice",
    )
    assert world.fake.file_content(REPO, "alias.py", pr["head"]["sha"]) == "old_name.py"
    assert world.gh.file_at(REPO, "alias.py", pr["head"]["sha"]) is None
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    _, comments = ours(world, pr["number"])
    assert [c["path"] for c in comments] == ["app.py"]


def test_a_push_of_more_files_than_compare_lists_is_reviewed_in_full(world: World) -> None:
    """GitHub's compare lists at most 300 changed files: an incremental review built on it
    would take the rest for unchanged since the last review and never look at them."""
    pr = world.fake.open_pull_request(
        REPO, head="wide", changes={"a.py": "def f(x=[]):\n    return x\n"}, title="W", user="alice"
    )
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    changes: dict[str, str | None] = {f"gen/m{i:03}.py": f"M = {i}\n" for i in range(300)}
    changes["z_last.py"] = "def put(item, into=[]):\n    return into\n"  # listed 301st
    head = world.fake.push_to_pull_request(REPO, pr["number"], changes, user="alice")
    compared = world.gh.compare(REPO, pr["head"]["sha"], head)
    assert len(compared["files"]) == 300
    assert "z_last.py" not in {f["filename"] for f in compared["files"]}
    review_pull_request(
        world.gh,
        job(world, pr["number"], trigger="synchronize", delivery="d2"),
        memory=None,
        state=world.state,
        chat=None,
    )
    _, comments = ours(world, pr["number"])
    assert sorted(c["path"] for c in comments) == ["a.py", "z_last.py"]


@pytest.mark.slow
def test_files_beyond_the_3000_github_lists_are_said_to_be_unreviewed(world: World) -> None:
    changes: dict[str, str | None] = {f"data/f{i:04}.txt": f"{i}\n" for i in range(3001)}
    changes["app.py"] = "def f(x=[]):\n    return x\n"
    pr = world.fake.open_pull_request(REPO, head="huge", changes=changes, title="H", user="alice")
    assert len(world.gh.list_pull_files(REPO, pr["number"])) == 3000
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    text = "\n".join(r["body"] for r in world.fake.reviews(REPO, pr["number"]))
    text += check_run(world, pr["head"]["sha"])["output"]["summary"]
    assert (
        "This pull request changes 3,002 files and GitHub lists only the first 3,000 to apps: "
        "the other 2 were not reviewed." in text
    )


@pytest.mark.parametrize("team_ignores", [False, True])
def test_a_rule_the_teams_ruff_config_ignores_is_not_posted(
    world: World, team_ignores: bool
) -> None:
    world.llm.on(lambda body: True, lambda body: {"content": {"findings": []}})
    changes = {"helpers.py": "def add(item, bucket=[]):\n    bucket.append(item)\n"}
    if team_ignores:
        changes["pyproject.toml"] = "[tool.ruff.lint]\nextend-ignore = ['B006']\n"
    pr = world.fake.open_pull_request(
        REPO, head=f"team-{team_ignores}", changes=changes, title="Helpers", user="alice"
    )
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=world.chat
    )
    _, comments = ours(world, pr["number"])
    posted = {c["body"].split("`")[1] for c in comments if "`" in c["body"]}
    assert ("ruff:B006" in posted) is not team_ignores


def review_of(world: World, head: str, changes: dict[str, str]) -> tuple[set[tuple[str, str]], str]:
    """Open a PR of ``changes``, review it: (path, pattern) of each comment posted, and the
    review's and check run's text."""
    world.llm.on(lambda body: True, lambda body: {"content": {"findings": []}})
    pr = world.fake.open_pull_request(REPO, head=head, changes=changes, title=head, user="alice")
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=world.chat
    )
    _, comments = ours(world, pr["number"])
    posted = {(c["path"], c["body"].split("`")[1]) for c in comments if "`" in c["body"]}
    text = "\n".join(r["body"] for r in world.fake.reviews(REPO, pr["number"]))
    return posted, text + check_run(world, pr["head"]["sha"])["output"]["summary"]


def test_the_review_lints_for_the_repositorys_python_and_its_per_file_ignores(
    world: World,
) -> None:
    """A project on Python 3.8 is not told to write ``X | None``, and what its ruff config
    ignores in ``__init__.py`` files is not posted there (it is elsewhere)."""
    star = "from os.path import *\n"
    optional = "from typing import Optional\n\n\ndef f(a: Optional[int]) -> int:\n    return 1\n"
    changes = {
        "setup.cfg": "[metadata]\nname = pkg\n\n[options]\npython_requires = >=3.8\n",
        "ruff.toml": "[lint.per-file-ignores]\n'__init__.py' = ['F403']\n",
        "pkg/__init__.py": star,
        "pkg/paths.py": star,
        "pkg/types.py": optional,
    }
    posted, _ = review_of(world, "py38", changes)
    assert ("pkg/paths.py", "ruff:F403") in posted
    assert ("pkg/__init__.py", "ruff:F403") not in posted
    assert not [p for p in posted if p[0] == "pkg/types.py" and p[1].startswith("ruff:UP")]


def test_one_remark_on_many_files_is_two_comments_and_a_list(world: World) -> None:
    """The same rule in five files: two inline comments make the point, the review body
    names the other places, and the head count does not call them held back by learning."""
    changes = {f"pkg/mod{n}.py": "def add(item, bucket=[]):\n    return bucket\n" for n in range(5)}

    _, text = review_of(world, "repeats", changes)
    _, comments = ours(world, 1)

    assert [c["path"] for c in comments] == ["pkg/mod0.py", "pkg/mod1.py"]
    assert "The same remark applies to (one comment each is enough):" in text
    assert (
        "- `ruff:B006` also at `pkg/mod2.py` line 1; `pkg/mod3.py` line 1; `pkg/mod4.py` line 1"
        in text
    )
    assert "held back" not in text.split("\n")[0]


def test_what_the_file_already_does_everywhere_is_not_said_and_the_review_says_so(
    world: World,
) -> None:
    """A file that tests ``k in d.keys()`` in three places gets a fourth: no comment (that
    is how this file is written), a line in the review body, and no "held back" head count.
    A new file with the same line gets its comment."""
    has = "def has_{n}(d, k):\n    return k in d.keys()\n\n\n"
    world.fake.put_file(REPO, "pkg/legacy.py", "".join(has.format(n=n) for n in range(3)))

    posted, text = review_of(
        world,
        "conventions",
        {
            "pkg/legacy.py": "".join(has.format(n=n) for n in range(4)),
            "pkg/fresh.py": has.format(n=0),
        },
    )

    assert posted == {("pkg/fresh.py", "ruff:SIM118")}
    assert (
        "- `ruff:SIM118` at `pkg/legacy.py` line 14 "
        "(the rest of the file does the same in 3 places)" in text
    )
    assert "held back" not in text.split("\n")[0]


def test_a_migration_django_wrote_is_not_reviewed_and_the_review_says_why(world: World) -> None:
    migration = (
        "# Generated by Django 5.0 on 2024-03-01 10:00\n\n"
        "from django.db import migrations\n\n\n"
        "class Migration(migrations.Migration):\n"
        "    dependencies = [('app', '0001_initial')]\n"
    )
    changes = {
        "app/migrations/0002_auto.py": migration,
        "app/models.py": "class Options:\n    choices = ['a']\n",
    }

    posted, text = review_of(world, "migration", changes)

    assert posted == {("app/models.py", "ruff:RUF012")}
    assert (
        "- `app/migrations/0002_auto.py`: generated, as its header says: "
        "# Generated by Django 5.0 on 2024-03-01 10:00" in text
    )


def test_files_the_teams_linters_leave_out_are_not_linted_and_the_review_says_so(
    world: World,
) -> None:
    odd = "def f():\n    return undefined_name\n"
    changes = {
        ".pre-commit-config.yaml": "exclude: ^tests/data/\nrepos: []\n",
        "tests/data/cases/odd.py": odd,
        "src/real.py": odd,
    }
    posted, text = review_of(world, "data-cases", changes)
    assert posted == {("src/real.py", "ruff:F821")}
    assert (
        "1 changed Python file(s) not checked by ruff: the repository's own lint configuration "
        "leaves them out (`.pre-commit-config.yaml`): `tests/data/cases/odd.py`" in text
    )


@pytest.mark.parametrize(
    "answers",
    [
        ["this is not JSON at all"] * 3,
        [{"content": {"comments": "wrong shape"}}] * 3,
        [""] * 3,
    ],
    ids=["not-json", "wrong-shape", "empty"],
)
def test_llm_garbage_is_retried_then_static_findings_posted_and_the_check_says_so(
    world: World, answers: list[Any]
) -> None:
    pr = world.fake.open_pull_request(
        REPO,
        head="garbage",
        changes={"app.py": "def f(x=[]):\n    return x\n"},
        title="Garbage",
        user="alice",
    )
    with FakeOpenAI(api_key="k", weak_json=True) as weak:
        weak.script(*answers)
        chat = OpenAIChat(base_url=weak.base_url, api_key="k", model="fake-gpt", max_retries=0)
        result = review_pull_request(
            world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=chat
        )
        assert len(weak.chat_requests) == 3  # asked, then retried with the error quoted
    _, comments = ours(world, pr["number"])
    assert {c["body"].split("`")[1] for c in comments} == {"ruff:B006"}
    summary = check_run(world, pr["head"]["sha"])["output"]["summary"]
    assert "LLM reviewer" in summary and "static findings only" in summary
    assert result.notes


def test_a_422_anyway_moves_the_comments_into_the_review_body(world: World) -> None:
    pr = world.fake.open_pull_request(
        REPO,
        head="refused",
        changes={"app.py": "def f(x=[]):\n    return x\n"},
        title="R",
        user="alice",
    )
    world.fake.inject_error(
        "POST",
        rf"/repos/{REPO}/pulls/{pr['number']}/reviews$",
        status=422,
        times=2,
        body={"message": "Unprocessable Entity", "errors": ["Line could not be resolved"]},
    )
    result = review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    assert result.review_id is not None
    reviews, comments = ours(world, pr["number"])
    assert len(reviews) == 1 and comments == []
    assert "could not be placed" in reviews[0]["body"]
    assert "kaizen:finding=" in reviews[0]["body"]


def test_a_newer_push_supersedes_a_running_review(world: World) -> None:
    pr = world.fake.open_pull_request(
        REPO,
        head="raced",
        changes={"app.py": "def f(x=[]):\n    return x\n"},
        title="R",
        user="alice",
    )
    key = f"{REPO}#{pr['number']}"
    result = review_pull_request(
        world.gh,
        job(world, pr["number"]),
        memory=None,
        state=world.state,
        chat=None,
        before_review=lambda pull, comments: world.state.set_latest(key, "f" * 40),
    )
    assert result.status == "superseded"
    assert ours(world, pr["number"]) == ([], [])
    assert check_run(world, pr["head"]["sha"])["output"]["title"] == "Superseded"


def test_one_pr_is_never_reviewed_twice_at_once(world: World) -> None:
    pr = world.fake.open_pull_request(
        REPO, head="busy", changes={"app.py": "x = 1\n"}, title="B", user="alice"
    )
    world.state.claim(f"{REPO}#{pr['number']}", "another-worker", 60)
    with pytest.raises(Busy):
        review_pull_request(
            world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
        )


def test_spent_daily_budget_skips_the_llm_and_says_so(world: World) -> None:
    world.state.add_tokens(REPO, 10**9)
    pr = world.fake.open_pull_request(
        REPO,
        head="budget",
        changes={"app.py": "def f(x=[]):\n    return x\n"},
        title="B",
        user="alice",
    )
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=world.chat
    )
    assert world.llm.chat_requests == []
    assert "daily token budget" in check_run(world, pr["head"]["sha"])["output"]["summary"]


def test_drafts_and_closed_prs_are_skipped(world: World) -> None:
    pr = world.fake.open_pull_request(
        REPO, head="draft", changes={"app.py": "x = 1\n"}, title="D", user="alice", draft=True
    )
    result = review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    assert result.status == "skipped" and "draft" in result.reason
    forced = review_pull_request(
        world.gh, job(world, pr["number"], "command"), memory=None, state=world.state, chat=None
    )
    assert forced.status == "posted"  # /kaizen review on a draft is an explicit ask


def test_review_command_again_posts_a_body_but_repeats_no_comment(world: World) -> None:
    pr = world.fake.open_pull_request(
        REPO,
        head="again",
        changes={"app.py": "def f(x=[]):\n    return x\n"},
        title="A",
        user="alice",
    )
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    again = review_pull_request(
        world.gh,
        job(world, pr["number"], "command", delivery="d2"),
        memory=None,
        state=world.state,
        chat=None,
    )
    reviews, comments = ours(world, pr["number"])
    assert len(reviews) == 2 and len(comments) == 1
    assert again.posted == 0


def test_a_retried_post_after_a_502_gives_one_review(world: World) -> None:
    pr = world.fake.open_pull_request(
        REPO,
        head="flaky",
        changes={"app.py": "def f(x=[]):\n    return x\n"},
        title="F",
        user="alice",
    )
    world.fake.inject_error("POST", rf"/repos/{REPO}/pulls/{pr['number']}/reviews$", status=502)
    review_pull_request(
        world.gh, job(world, pr["number"]), memory=None, state=world.state, chat=None
    )
    assert len(ours(world, pr["number"])[0]) == 1
    assert json.dumps(world.fake.contract_errors) == "[]"


def test_a_new_module_written_like_its_neighbours_keeps_their_convention(world: World) -> None:
    """ansible-lint 26.11 added a rule that sets ``tags = [...]`` as every rule beside it
    does (RUF012): the folder is listed at the PR's head through the contents API, its
    unchanged modules linted, and the remark left out with why; the new module's own
    slip (a mutable default) is still said."""
    rule = "class Rule:\n    tags = ['{name}']\n"
    world.fake.add_repo(
        "octo-org/lint",
        files={
            "rules/a.py": rule.format(name="a"),
            "rules/b.py": rule.format(name="b"),
            "rules/sub/c.py": "x = 1\n",
            "rules/README.md": "# rules\n",
        },
        installation_id=world.installation,
    )
    pr = world.fake.open_pull_request(
        "octo-org/lint",
        head="new-rule",
        changes={
            "rules/new.py": rule.format(name="new") + "\n\ndef f(x=[]):\n    return x\n",
            "rules/link.py": Symlink("a.py"),
        },
        title="New rule",
        user="alice",
    )
    head = pr["head"]["sha"]
    assert world.gh.folder_at("octo-org/lint", "rules", head) == [
        "rules/README.md",
        "rules/a.py",
        "rules/b.py",
        "rules/new.py",
    ]
    assert world.gh.folder_at("octo-org/lint", "rules/a.py", head) is None
    assert world.gh.folder_at("octo-org/lint", "nowhere", head) is None
    assert world.gh.folder_at("octo-org/lint", "", head) is None

    review_pull_request(
        world.gh,
        ReviewJob("octo-org/lint", pr["number"], world.installation, "d-n", "opened", BOT, "k"),
        memory=None,
        state=world.state,
        chat=None,
    )

    comments = world.fake.review_comments("octo-org/lint", pr["number"])
    assert [(c["path"], c["line"]) for c in comments if "ruff:B006" in c["body"]] == [
        ("rules/new.py", 5)
    ]
    assert not [c for c in comments if "RUF012" in c["body"]]
    (body,) = [r["body"] for r in world.fake.reviews("octo-org/lint", pr["number"])]
    assert "`ruff:RUF012` at `rules/new.py` line 2 (2 of 2 modules beside it do the same)" in body
