"""``kaizen review`` on a local git repository, and ``kaizen feedback`` teaching it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.procs import kaizen_cmd, kaizen_env

pytestmark = pytest.mark.slow


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def a_repo(path: Path, name: str, before: str) -> Path:
    """A repository whose ``main`` holds ``name`` with ``before``, on branch ``feature``."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / name).write_text(before)
    git(path, "add", ".")
    git(path, "commit", "-qm", "init")
    git(path, "checkout", "-qb", "feature")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = a_repo(tmp_path / "project", "app.py", "def f(x):\n    return x\n")
    (path / "app.py").write_text(
        "def f(x, acc=[]):\n    acc.append(x)\n    try:\n        return x\n"
        "    except:\n        return None\n"
    )
    (path / "logo.png").write_bytes(b"\x89PNG\x00\x00binary")
    git(path, "add", ".")
    git(path, "commit", "-qm", "change")
    return path


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(kaizen_cmd(*args), env=env, capture_output=True, text=True, timeout=300)


def review(env: dict[str, str], repo: Path) -> dict[str, Any]:
    done = run(env, "review", "--repo", str(repo), "--base", "main", "--json", "--no-llm")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_local_review_prints_findings_and_learns_from_feedback(repo: Path, tmp_path: Path) -> None:
    env = kaizen_env(data_dir=str(tmp_path / "data"))
    first = review(env, repo)
    assert set(first) >= {"findings", "suppressed", "usage"}
    by_pattern = {f["pattern"]: f for f in first["findings"]}
    assert {"ruff:B006", "ruff:E722"} <= set(by_pattern)
    row = by_pattern["ruff:B006"]
    assert set(row) >= {"id", "path", "line", "side", "pattern", "severity", "body", "suggestion"}
    assert row["posted"] is True and row["path"] == "app.py" and row["side"] == "RIGHT"
    for reason in ("noise for us", "we like mutable defaults"):
        done = run(
            env, "feedback", "--finding", row["id"], "--signal", "thumbs_down", "--reason", reason
        )
        assert done.returncode == 0, done.stderr
    second = review(env, repo)
    assert "ruff:B006" not in {f["pattern"] for f in second["findings"]}
    held = {f["pattern"]: f for f in second["suppressed"]}
    assert held["ruff:B006"]["posted"] is False and held["ruff:B006"]["reason"] == "learned"
    assert "ruff:E722" in {f["pattern"] for f in second["findings"]}


def test_bad_refs_and_non_repositories_get_a_clear_error(repo: Path, tmp_path: Path) -> None:
    env = kaizen_env(data_dir=str(tmp_path / "data"))
    done = run(env, "review", "--repo", str(repo), "--base", "no-such-branch", "--no-llm")
    assert done.returncode == 2
    assert (
        f"kaizen review: 'no-such-branch' is not a branch, tag or commit of {repo}" in done.stderr
    )
    done = run(env, "review", "--repo", str(tmp_path), "--base", "main", "--no-llm")
    assert done.returncode == 2 and "kaizen review:" in done.stderr


def test_a_developers_git_config_does_not_change_what_is_reviewed(
    repo: Path, tmp_path: Path
) -> None:
    # diff.noprefix made `git diff` drop the a/ b/ prefixes, and the review crashed with
    # "not a unified diff"; the others change paths or lines a review reads as well.
    # git quotes a path with a space or non-ASCII letters; without a/ b/ in front of it
    # the diff did not parse.
    (repo / "sp ace").mkdir()
    (repo / "sp ace" / "ünïcode.py").write_text("def g(y={}):\n    return y\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a quoted path")
    config = tmp_path / "gitconfig"
    config.write_text(
        "[diff]\n\tnoprefix = true\n\tmnemonicPrefix = true\n\trelative = true\n"
        "\tsuppressBlankEmpty = true\n\texternal = false\n[color]\n\tui = always\n"
    )
    plain = review(kaizen_env(data_dir=str(tmp_path / "plain")), repo)
    configured = review(
        {**kaizen_env(data_dir=str(tmp_path / "configured")), "GIT_CONFIG_GLOBAL": str(config)},
        repo,
    )

    def found(result: dict[str, Any]) -> list[tuple[str, str, int, str]]:
        # the set of findings; their order comes from sampled pattern scores
        rows = result["findings"] + result.get("suppressed", [])
        return sorted((f["id"], f["path"], f["line"], f["pattern"]) for f in rows)

    assert {f[1] for f in found(plain)} == {"app.py", "sp ace/ünïcode.py"}
    assert found(configured) == found(plain)


def test_keys_made_for_the_tests_are_one_remark_and_a_list(repo: Path, tmp_path: Path) -> None:
    """paho-mqtt 2.0 added nine private keys for its TLS tests; its tests live where
    pytest's ``testpaths`` says (``t/``), not under a folder named for tests."""
    (repo / "pytest.ini").write_text("[pytest]\ntestpaths = t\n")
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----\n"
    (repo / "t" / "ssl").mkdir(parents=True)
    for name in ("ca", "client", "server", "revoked"):
        (repo / "t" / "ssl" / f"{name}.key").write_text(key)
    (repo / "deploy").mkdir()
    (repo / "deploy" / "prod.key").write_text(key)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "tls tests")

    result = review(kaizen_env(data_dir=str(tmp_path / "data")), repo)

    keys = [f for f in result["findings"] if f["pattern"] == "secrets:private-key"]
    repeats = [f for f in result["suppressed"] if f["pattern"] == "secrets:private-key"]
    assert sorted(f["path"] for f in keys) == [
        "deploy/prod.key",
        "t/ssl/ca.key",
        "t/ssl/client.key",
    ]
    assert sorted(f["path"] for f in repeats) == ["t/ssl/revoked.key", "t/ssl/server.key"]
    assert {f["reason"] for f in repeats} == {"repeat"}


def test_files_left_out_are_listed_with_why(repo: Path, tmp_path: Path) -> None:
    """A copy of a module (parsimonious 0.11's ``grammar.py pre-rewriting-….py``) is not
    reviewed: the local review says so, as the PR review does."""
    (repo / "app copy.py").write_text("def f(x, acc=[]):\n    return acc\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "copy")
    env = kaizen_env(data_dir=str(tmp_path / "data"))

    found = review(env, repo)
    text = run(env, "review", "--repo", str(repo), "--base", "main", "--no-llm")

    why = "named as a copy of `app.py`: left in the change by accident?"
    assert {"path": "app copy.py", "why": why} in found["not_reviewed"]
    assert all(f["path"] != "app copy.py" for f in found["findings"] + found["suppressed"])
    assert f"  app copy.py: {why}" in text.stdout


def test_a_condition_copied_and_edited_half_way_is_a_comment(tmp_path: Path) -> None:
    """volatility3 2.28's socket scan, as a PR: the destination's half of the condition
    still tests ``src``. No ruff rule sees it; the review says it on the line."""
    path = a_repo(tmp_path / "scan", "scan.py", "def row(src, dst, na):\n    return src, dst\n")
    (path / "scan.py").write_text(
        "def row(src, dst, na):\n"
        '    if (src == "0.0.0.0" or isinstance(src, na)) and (\n'
        '        dst == "0.0.0.0" or isinstance(src, na)\n'
        "    ):\n"
        "        return None\n"
        "    return src, dst\n"
    )
    git(path, "commit", "-qam", "drop empty rows")

    found = review(kaizen_env(data_dir=str(tmp_path / "data")), path)

    (copied,) = [f for f in found["findings"] if f["pattern"] == "static:copied-condition"]
    assert (copied["path"], copied["line"], copied["posted"]) == ("scan.py", 3, True)
    assert "`src` changed to `dst`" in copied["body"]


def test_a_new_module_written_like_its_neighbours_keeps_their_convention(tmp_path: Path) -> None:
    """A new rule module set up like the two beside it (``tags = [...]``, RUF012) is not
    told to differ from them; its mutable default still is."""
    rule = "class Rule:\n    tags = ['{name}']\n"
    path = a_repo(tmp_path / "lint", "README.md", "# lint\n")
    (path / "rules").mkdir()
    for name in ("a", "b"):
        (path / "rules" / f"{name}.py").write_text(rule.format(name=name))
    git(path, "add", ".")
    git(path, "commit", "-qm", "two rules")
    git(path, "branch", "-f", "main")
    (path / "rules" / "new.py").write_text(
        rule.format(name="new") + "\n\ndef f(x=[]):\n    return x\n"
    )
    git(path, "add", ".")
    git(path, "commit", "-qm", "a third")

    found = review(kaizen_env(data_dir=str(tmp_path / "data")), path)

    assert [f["pattern"] for f in found["findings"]] == ["ruff:B006"]
    (held,) = [f for f in found["suppressed"] if f["pattern"] == "ruff:RUF012"]
    assert (held["path"], held["reason"]) == ("rules/new.py", "convention")
