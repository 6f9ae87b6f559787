"""The fix loop in the real sandbox: LLM attempts that learn from failure, refusals,
hanging suites, and template repair that gets cheaper once it has learned."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.embedding import CachedEmbedder, Embedder, LocalEmbedder
from memory.service import Memory
from memory.types import Kind
from tests.fakes.openai_api import FakeOpenAI
from tests.helpers import FIXTURES
from tests.integration.test_memory_service import build
from workers.fix import loop as fix_loop
from workers.fix.evaluate import TestRunner
from workers.fix.llm_policy import LlmFixPolicy
from workers.fix.loop import FixBudget, FixLoop
from workers.fix.types import Patch, RefusedEdit
from workers.llm import OpenAIChat
from workers.sandbox.base import Limits, Sandbox, SandboxUnavailable
from workers.sandbox.select import choose_sandbox

pytestmark = pytest.mark.slow

ISSUE = "total_price([(10, 2)], 0.1) gives 22.0; a 10 % discount should give 18.0."


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    try:
        return choose_sandbox("auto")
    except SandboxUnavailable as exc:
        if os.environ.get("KAIZEN_REQUIRE_SANDBOXES"):
            raise
        pytest.skip(f"no sandbox here: {exc}")


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return CachedEmbedder(LocalEmbedder(), tmp_path_factory.mktemp("emb") / "cache.sqlite3")


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:
    mem = build(tmp_path / "memory", embedder)
    yield mem
    mem.close()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(FIXTURES / "fix_repo", target)
    return target


def action(name: str, **args: Any) -> dict[str, Any]:
    return {"content": {"thought": name, "action": name, "args": args}}


def test_a_patch_that_breaks_other_tests_is_rejected_and_the_lesson_used_next(
    sandbox: Sandbox, memory: Memory, checkout: Path
) -> None:
    lesson = "Hard-coding 18.0 broke the no-discount test; fix the formula instead."
    with FakeOpenAI(api_key="k") as llm:
        llm.script(
            action(
                "edit",
                path="shop/pricing.py",
                search="round(amount + amount * discount, 2)",
                replace="18.0",
            ),
            action("finish", explanation="return the expected value"),
            {"content": {"reflection": lesson}},
            action(
                "edit",
                path="shop/pricing.py",
                search="amount + amount * discount",
                replace="amount - amount * discount",
            ),
            action("run_tests"),
            action("finish", explanation="subtract the discount"),
        )
        chat = OpenAIChat(base_url=llm.base_url, api_key="k", model="fake-gpt", max_retries=0)
        loop = FixLoop(
            sandbox=sandbox,
            memory=memory,
            llm=LlmFixPolicy(chat, memory),
            budget=FixBudget(max_attempts=2, max_sandbox_runs=10),
        )
        result = loop.run(repo="octo-org/shop", issue_id="7", issue_text=ISSUE, checkout=checkout)
        second_brief = llm.chat_requests[3]["messages"][1]["content"]
    assert result.fixed and "amount - amount * discount" in result.patch
    assert [a.success for a in result.attempts] == [False, True]
    assert lesson in second_brief
    stored = [e for e in memory.experiences.iter_all() if e.kind == Kind.FIX]
    assert any(e.reflection == lesson and e.outcome == "rejected" for e in stored)
    steps = memory.trajectories.stats()
    assert steps  # every LLM step was recorded


def test_edits_outside_the_repo_to_workflows_or_to_tests_are_refused(
    sandbox: Sandbox, memory: Memory, checkout: Path
) -> None:
    # tests also live where pytest's testpaths say (celery's t/unit), not only in tests/
    (checkout / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests", "checks"]\n'
    )
    (checkout / "checks").mkdir()
    (checkout / "checks" / "expected.py").write_text("DISCOUNTED = 18.0\n")
    with FakeOpenAI(api_key="k") as llm:
        llm.script(
            action("edit", path="../outside.py", search="x", replace="y"),
            action("edit", path=".github/workflows/ci.yml", search="x", replace="y"),
            action("edit", path="checks/expected.py", search="18.0", replace="22.0"),
            action("finish", explanation="gave up"),
            {"content": {"reflection": "nothing to do"}},
        )
        chat = OpenAIChat(base_url=llm.base_url, api_key="k", model="fake-gpt", max_retries=0)
        loop = FixLoop(
            sandbox=sandbox,
            memory=None,
            llm=LlmFixPolicy(chat),
            budget=FixBudget(max_attempts=1, max_sandbox_runs=2),  # the baseline, then the LLM
        )
        result = loop.run(repo="octo-org/shop", issue_id="8", issue_text=ISSUE, checkout=checkout)
        observations = [r["messages"][-1]["content"] for r in llm.chat_requests[1:4]]
    assert len(observations) == 3 and all("refused" in o for o in observations)
    assert (checkout / "checks" / "expected.py").read_text() == "DISCOUNTED = 18.0\n"
    assert not (checkout.parent / "outside.py").exists()
    assert not result.fixed
    runner = TestRunner(sandbox, checkout, Limits(timeout_s=60))
    for path in ("../evil.py", ".github/workflows/ci.yml", "/etc/passwd"):
        with pytest.raises(RefusedEdit):
            runner.run([Patch("fix:x", path, 1, "", "x = 1\n", "evil")])


def test_when_the_top_suspects_run_out_of_guesses_the_next_ones_are_tried(
    sandbox: Sandbox, checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bug moved into subtotal(): total_price's two lines (tied, so one tier even at
    # one suspect per tier) are the top suspects and every guess on them fails. (No test
    # is named after subtotal here: a failing test_subtotal that runs it alone would
    # point at the bug first, see localize.from_test_names.)
    pricing = checkout / "shop" / "pricing.py"
    source = pricing.read_text()
    source = source.replace("amount + amount * discount", "amount - amount * discount")
    pricing.write_text(source.replace("sum(price * quantity", "sum(price + quantity"))
    tests = checkout / "tests" / "test_pricing.py"
    tests.write_text(tests.read_text().replace("def test_subtotal(", "def test_line_sums("))
    monkeypatch.setattr(fix_loop, "MAX_SUSPECTS", 1)
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=40))
    issue = "total_price([(10, 2)], 0) gives 12.0 instead of 20.0."
    result = loop.run(repo="octo-org/shop", issue_id="9", issue_text=issue, checkout=checkout)
    assert result.fixed and "sum(price * quantity" in result.patch
    top, bug = {s.line for s in result.suspects[:2]}, result.patches[0].line
    assert result.suspects[0].score == result.suspects[1].score > result.suspects[2].score
    assert bug == result.suspects[2].line
    lines = [int(a.description.rsplit("at line ", 1)[1]) for a in result.attempts]
    first = lines.index(bug)
    assert set(lines[:first]) == top and set(lines[first:]) == {bug}


def test_a_hanging_suite_gets_a_clear_message_not_a_stuck_task(
    sandbox: Sandbox, checkout: Path
) -> None:
    (checkout / "tests" / "test_hang.py").write_text(
        "import time\n\n\ndef test_forever():\n    while True:\n        time.sleep(1)\n"
    )
    loop = FixLoop(
        sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=3, run_timeout_s=8)
    )
    result = loop.run(repo="octo-org/shop", issue_id="9", issue_text=ISSUE, checkout=checkout)
    assert not result.fixed
    assert result.duration_s < 120
    assert (
        "did not finish" in result.message
        or "timed out" in result.message.lower()
        or (result.baseline_failed and any("hang" in t for t in result.baseline_failed))
    )


def test_a_src_layout_repository_is_fixed_without_being_installed(
    sandbox: Sandbox, checkout: Path
) -> None:
    # Its tests import `shop` from src/, as they would after `pip install -e .`.
    (checkout / "src").mkdir()
    shutil.move(checkout / "shop", checkout / "src" / "shop")
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=40))
    result = loop.run(repo="octo-org/shop", issue_id="12", issue_text=ISSUE, checkout=checkout)
    assert result.baseline_failed and all("test_pricing" in t for t in result.baseline_failed)
    assert result.fixed and "+++ b/src/shop/pricing.py" in result.patch


def test_a_config_naming_plugins_the_sandbox_lacks_still_runs_its_tests(
    sandbox: Sandbox, checkout: Path
) -> None:
    # pytest stopped at "unrecognized arguments: --cov=shop" before running one test.
    (checkout / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\n"
        'addopts = "--cov=shop --cov-report=term-missing -n auto --reruns 1 --strict-markers"\n'
    )
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=40))
    result = loop.run(repo="octo-org/shop", issue_id="13", issue_text=ISSUE, checkout=checkout)
    assert result.fixed and "+++ b/shop/pricing.py" in result.patch


def test_warning_filters_naming_missing_plugins_no_longer_stop_the_run(
    sandbox: Sandbox, checkout: Path
) -> None:
    """python-statemachine 3.2 ignores pytest-benchmark's warning class in its filters:
    without the plugin pytest stopped before any test, one missing module at a time. The
    project's ``error`` filter still holds in the runs that follow."""
    (checkout / "pytest.ini").write_text(
        "[pytest]\nfilterwarnings =\n    error\n"
        "    ignore::pytest_benchmark.logger.PytestBenchmarkWarning\n"
        "    ignore::not_a_plugin_here.Warned\n"
    )
    (checkout / "tests" / "test_warns.py").write_text(  # passes only under "error"
        "import warnings\n\nimport pytest\n\n\ndef test_warning_is_an_error():\n"
        "    with pytest.raises(UserWarning):\n        warnings.warn('x', UserWarning)\n"
    )
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=40))
    result = loop.run(repo="octo-org/shop", issue_id="14", issue_text=ISSUE, checkout=checkout)

    assert result.baseline_failed and all("test_pricing" in t for t in result.baseline_failed)
    assert result.fixed and "+++ b/shop/pricing.py" in result.patch


def test_a_repo_without_tests_is_told_so(sandbox: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    result = FixLoop(sandbox=sandbox, memory=None).run(
        repo="octo-org/app", issue_id="1", issue_text="f is wrong", checkout=tmp_path
    )
    assert not result.fixed and "No tests found" in result.message
    assert result.sandbox_runs == 0


def test_a_suite_pytest_collects_nothing_from_is_told_so(sandbox: Sandbox, tmp_path: Path) -> None:
    """A ``tests/`` folder whose files pytest does not collect: the message said "All 0
    tests pass, so there is no failing test to fix", as if the code had been tested."""
    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "checks.py").write_text("import app\n\nassert app.f() == 2\n")
    result = FixLoop(sandbox=sandbox, memory=None).run(
        repo="octo-org/app", issue_id="1", issue_text="f is wrong", checkout=tmp_path
    )
    assert not result.fixed and "no test was collected" in result.message
    assert "fix.test_command" in result.message


def test_kaizen_fix_cli_on_a_local_repository(
    sandbox: Sandbox, checkout: Path, tmp_path: Path
) -> None:
    import json
    import subprocess

    from tests.integration.procs import kaizen_cmd, kaizen_env

    before = (checkout / "shop" / "pricing.py").read_text()
    done = subprocess.run(
        kaizen_cmd(
            "fix",
            "--repo",
            str(checkout),
            "--issue-text",
            ISSUE,
            "--json",
            "--no-llm",
            "--max-runs",
            "30",
        ),
        env=kaizen_env(data_dir=str(tmp_path / "data"), sandbox=sandbox.name),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) >= {
        "fixed",
        "attempts",
        "sandbox_runs",
        "patch",
        "patterns_tried",
        "reward",
        "duration_s",
    }
    assert result["fixed"] is True and "amount - amount * discount" in result["patch"]
    assert (checkout / "shop" / "pricing.py").read_text() == before  # never changed in place


def test_kaizen_fix_cli_refuses_a_time_limit_it_cannot_keep(checkout: Path, tmp_path: Path) -> None:
    import subprocess

    from tests.integration.procs import kaizen_cmd, kaizen_env

    for bad in ("0", "5", "1e9"):
        done = subprocess.run(
            kaizen_cmd("fix", "--repo", str(checkout), "--no-llm", "--time-limit", bad),
            env=kaizen_env(data_dir=str(tmp_path / "data")),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and "--time-limit must be between" in done.stderr


def test_a_fix_budget_gives_one_run_most_of_a_short_limit_and_5_minutes_of_a_long_one() -> None:
    short = FixBudget.within(60, max_attempts=1, max_sandbox_runs=5)
    long = FixBudget.within(1800, max_attempts=3, max_sandbox_runs=40)
    assert (short.time_limit_s, short.run_timeout_s) == (60.0, 60.0)
    assert (long.time_limit_s, long.run_timeout_s) == (1800.0, 300.0)
    assert long.max_sandbox_runs == 40 and long.max_attempts == 3


INSTALL = (
    "mkdir -p .deps/helperlib .git/hooks"
    " && printf 'def double(x):\\n    return 2 * x\\n' > .deps/helperlib/__init__.py"
    " && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit"
)


def _needs_helperlib(checkout: Path) -> None:
    """A repo whose tests need a package that only its install command provides."""
    (checkout / "conftest.py").write_text(
        "import pathlib\nimport sys\n\n"
        "sys.path.insert(0, str(pathlib.Path(__file__).parent / '.deps'))\n"
    )
    (checkout / "tests" / "test_deps.py").write_text(
        "import helperlib\n\n\ndef test_helper():\n    assert helperlib.double(2) == 4\n"
    )


def test_the_install_command_prepares_the_tests_and_never_touches_the_clone(
    sandbox: Sandbox, checkout: Path
) -> None:
    _needs_helperlib(checkout)
    without = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=1)).run(
        repo="octo-org/shop", issue_id="20", issue_text=ISSUE, checkout=checkout
    )
    # nothing installed: the test fails whatever the code does, and is set aside as such
    assert [c for t, c in without.environment_failed.items() if "test_deps" in t] == [
        "missing dependency 'helperlib'"
    ]

    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=30))
    result = loop.run(
        repo="octo-org/shop",
        issue_id="20",
        issue_text=ISSUE,
        checkout=checkout,
        install_command=INSTALL,
    )
    assert not any("test_deps" in t for t in result.baseline_failed)
    assert any("test_total_with_discount" in t for t in result.baseline_failed)
    assert result.fixed, result.message
    assert result.sandbox_runs >= 3  # the install, the baseline, at least one candidate
    # what the repository's code wrote stayed in the copy: no planted hook in the clone
    assert not (checkout / ".deps").exists()
    assert not (checkout / ".git" / "hooks" / "pre-commit").exists()


def test_the_install_may_write_more_than_a_test_run_but_not_without_bound(
    sandbox: Sandbox, checkout: Path
) -> None:
    install = "mkdir -p .deps && dd if=/dev/zero of=.deps/blob bs=1M count=24 status=none"
    small = FixBudget(max_sandbox_runs=2, workspace_mb=8, install_workspace_mb=64)
    result = FixLoop(sandbox=sandbox, memory=None, budget=small).run(
        repo="octo-org/shop",
        issue_id="22",
        issue_text=ISSUE,
        checkout=checkout,
        install_command=install,
    )
    assert "Installing" not in result.message and "stopped" not in result.message
    assert result.sandbox_runs >= 2  # the install went through and the baseline ran

    tight = FixBudget(max_sandbox_runs=2, install_workspace_mb=8)
    stopped = FixLoop(sandbox=sandbox, memory=None, budget=tight).run(
        repo="octo-org/shop",
        issue_id="23",
        issue_text=ISSUE,
        checkout=checkout,
        install_command=install.replace("count=24", "count=512"),
    )
    assert not stopped.fixed
    assert "wrote more than 8 MB into its workspace" in stopped.message, stopped.message
    assert stopped.sandbox_runs == 1


def test_a_failing_install_command_stops_the_fix_with_what_it_printed(
    sandbox: Sandbox, checkout: Path
) -> None:
    result = FixLoop(sandbox=sandbox, memory=None).run(
        repo="octo-org/shop",
        issue_id="21",
        issue_text=ISSUE,
        checkout=checkout,
        install_command="echo 'no such package: leftpad' >&2; exit 3",
    )
    assert not result.fixed
    assert "exit code 3" in result.message and "no such package: leftpad" in result.message
    assert "without network" in result.message
    assert result.sandbox_runs == 1  # no baseline without the dependencies


VENV_INSTALL = (
    "python3 -m venv --without-pip --system-site-packages .venv"
    " && site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))')"
    ' && mkdir -p "$site/helperlib"'
    " && printf 'def double(x):\\n    return 2 * x\\n' > \"$site/helperlib/__init__.py\""
)


def test_a_configured_pytest_call_runs_in_the_installed_virtualenv_test_by_test(
    sandbox: Sandbox, checkout: Path
) -> None:
    # helperlib exists only in the virtualenv the install made: the sandbox's own python3
    # cannot import it, so a passing test_deps shows which interpreter ran the tests.
    (checkout / "tests" / "test_deps.py").write_text(
        "import helperlib\n\n\ndef test_helper():\n    assert helperlib.double(2) == 4\n"
    )
    (checkout / "tests" / "test_env.py").write_text(
        "import os\n\n\ndef test_env():\n    assert os.environ.get('CURRENCY') == 'EUR'\n"
    )
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=30))
    result = loop.run(
        repo="octo-org/shop",
        issue_id="24",
        issue_text=ISSUE,
        checkout=checkout,
        install_command=VENV_INSTALL,
        test_command="CURRENCY=EUR .venv/bin/python -m pytest -q tests",
    )
    # One verdict per test (not the whole command's exit code), and only the pricing test.
    assert result.baseline_failed and all(
        t.startswith("tests/test_pricing.py::") for t in result.baseline_failed
    ), result.message
    assert result.fixed, result.message
    assert "+++ b/shop/pricing.py" in result.patch


def test_tests_that_fail_whatever_the_code_does_are_set_aside(
    sandbox: Sandbox, checkout: Path
) -> None:
    # A dependency nothing installed and a host on the internet: those tests fail in the
    # offline sandbox before and after any patch, so with them among the targets the
    # pricing bug could never be declared fixed.
    (checkout / "tests" / "test_offline.py").write_text(
        "import socket\n\n\n"
        "def test_needs_a_dependency():\n"
        "    import leftpad  # noqa: F401\n\n\n"
        "def test_needs_the_internet():\n"
        "    socket.getaddrinfo('pypi.org', 443)\n"
    )
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=30))
    result = loop.run(repo="octo-org/shop", issue_id="25", issue_text=ISSUE, checkout=checkout)
    assert result.environment_failed == {
        "tests/test_offline.py::test_needs_a_dependency": "missing dependency 'leftpad'",
        "tests/test_offline.py::test_needs_the_internet": "no network",
    }
    assert result.baseline_failed and all("test_pricing" in t for t in result.baseline_failed)
    assert result.fixed, result.message
    assert result.as_json()["environment_failed"] == result.environment_failed


def test_a_test_module_that_cannot_be_imported_does_not_hide_the_others(
    sandbox: Sandbox, checkout: Path
) -> None:
    """humanize 4.17's ``tests/test_time.py`` imports freezegun at its top; without it
    pytest stopped at collection ("Interrupted: 2 errors") and ran none of the tests
    that showed the bug, so the fix said only those two failed."""
    (checkout / "tests" / "test_clock.py").write_text(
        "import leftpad  # noqa: F401\n\n\ndef test_pads():\n    assert True\n"
    )
    result = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=30)).run(
        repo="octo-org/shop", issue_id="27", issue_text=ISSUE, checkout=checkout
    )
    assert result.environment_failed == {"tests/test_clock.py": "missing dependency 'leftpad'"}
    assert result.baseline_failed and all("test_pricing" in t for t in result.baseline_failed)
    assert result.fixed, result.message


def test_when_only_such_tests_fail_the_fix_says_what_they_need(
    sandbox: Sandbox, checkout: Path
) -> None:
    (checkout / "shop" / "pricing.py").write_text(
        (checkout / "shop" / "pricing.py")
        .read_text()
        .replace("amount + amount * discount", "amount - amount * discount")
    )
    (checkout / "tests" / "test_offline.py").write_text(
        "def test_needs_a_dependency():\n    import leftpad  # noqa: F401\n"
    )
    result = FixLoop(sandbox=sandbox, memory=None).run(
        repo="octo-org/shop", issue_id="26", issue_text=ISSUE, checkout=checkout
    )
    assert not result.fixed and result.sandbox_runs == 1
    assert "1 test(s) fail in the sandbox whatever the code does" in result.message
    assert "missing dependency 'leftpad'" in result.message
    assert "fix.install_command" in result.message


class FlakesOnTheFix:
    """The real sandbox, except that the first run of the right patch finds a marker file
    that makes one passing test fail: a flaky test, failing once, as on a real project."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.name = inner.name
        self.flaked = False

    def run(self, command: Any, *, workspace: Path, limits: Limits, env: Any = None) -> Any:
        pricing = workspace / "shop" / "pricing.py"
        if not self.flaked and "amount - amount * discount" in pricing.read_text():
            self.flaked = True
            (workspace / "FLAKE").write_text("this run only\n")
        return self.inner.run(command, workspace=workspace, limits=limits, env=env)


def test_a_fix_is_not_lost_to_a_flaky_test(sandbox: Sandbox, checkout: Path) -> None:
    (checkout / "tests" / "test_flaky.py").write_text(
        "import os\n\n\ndef test_sometimes():\n    assert not os.path.exists('FLAKE')\n"
    )
    flaky = FlakesOnTheFix(sandbox)
    loop = FixLoop(sandbox=flaky, memory=None, budget=FixBudget(max_sandbox_runs=40))
    result = loop.run(repo="octo-org/shop", issue_id="27", issue_text=ISSUE, checkout=checkout)
    assert flaky.flaked
    assert result.fixed, result.message
    assert "amount - amount * discount" in result.patch
    assert result.flaky == ["tests/test_flaky.py::test_sometimes"]
    assert result.attempts[-1].summary.endswith("1 flaky test(s) passed when run again")


def test_the_failing_tests_an_issue_names_are_the_targets(sandbox: Sandbox, checkout: Path) -> None:
    # The default branch already had a failing test unrelated to the issue: with every
    # failing test a target, the discount bug could never be declared fixed.
    (checkout / "tests" / "test_legacy.py").write_text(
        "def test_legacy_format():\n    assert 'v1' == 'v2'\n"
    )
    budget = FixBudget(max_sandbox_runs=30)
    unnamed = FixLoop(sandbox=sandbox, memory=None, budget=budget).run(
        repo="octo-org/shop", issue_id="28", issue_text=ISSUE, checkout=checkout
    )
    assert not unnamed.fixed and "tests/test_legacy.py::test_legacy_format" in (
        unnamed.baseline_failed
    )

    issue = ISSUE + "\n\nFAILED tests/test_pricing.py::test_total_with_discount - assert 22.0"
    result = FixLoop(sandbox=sandbox, memory=None, budget=budget).run(
        repo="octo-org/shop", issue_id="29", issue_text=issue, checkout=checkout
    )
    assert result.fixed, result.message
    assert result.other_failed == ["tests/test_legacy.py::test_legacy_format"]
    assert len(result.baseline_failed) == 1
    assert all("test_pricing" in t for t in result.baseline_failed)


def test_the_failing_tests_named_after_the_code_an_issue_names_are_the_targets(
    sandbox: Sandbox, checkout: Path
) -> None:
    """No test named, but the issue is about `subtotal`: test_subtotal is the target, and
    a test that failed before for its own reasons is left as it was (attrs 24.2.0 has one
    on Python 3.11)."""
    (checkout / "tests" / "test_legacy.py").write_text(
        "def test_legacy_format():\n    assert 'v1' == 'v2'\n"
    )
    pricing = checkout / "shop" / "pricing.py"
    source = pricing.read_text().replace("amount + amount * discount", "amount - amount * discount")
    pricing.write_text(source.replace("sum(price * quantity", "sum(price + quantity"))
    issue = "`subtotal([(2.5, 2), (1, 3)])` gives 8.5; it should be 8.0."
    result = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=30)).run(
        repo="octo-org/shop", issue_id="30", issue_text=issue, checkout=checkout
    )
    assert result.fixed, result.message
    assert "sum(price * quantity" in result.patch
    # the total tests ran subtotal and failed with it: fixed too, and listed as before
    assert result.baseline_failed == [
        "tests/test_pricing.py::test_subtotal",
        "tests/test_pricing.py::test_total_with_discount",
        "tests/test_pricing.py::test_total_without_discount",
    ]
    assert result.other_failed == ["tests/test_legacy.py::test_legacy_format"]


def test_a_patch_that_passes_the_named_tests_but_not_the_others_of_the_same_code_is_no_fix(
    sandbox: Sandbox, checkout: Path
) -> None:
    """The issue is about `subtotal`, so test_subtotal is the target; the total tests fail
    too because they run subtotal. A patch that makes test_subtotal pass by returning its
    number leaves them failing, and as they run the changed line it is not a fix."""
    pricing = checkout / "shop" / "pricing.py"
    source = pricing.read_text().replace("amount + amount * discount", "amount - amount * discount")
    pricing.write_text(source.replace("sum(price * quantity", "sum(price + quantity"))
    with FakeOpenAI(api_key="k") as llm:
        llm.script(
            action(
                "edit",
                path="shop/pricing.py",
                search="return sum(price + quantity for price, quantity in items)",
                replace="return 8.0",
            ),
            action("finish", explanation="return the expected value"),
            {"content": {"reflection": "Returning 8.0 fixed one test only."}},
            action(
                "edit",
                path="shop/pricing.py",
                search="price + quantity",
                replace="price * quantity",
            ),
            action("finish", explanation="multiply"),
        )
        chat = OpenAIChat(base_url=llm.base_url, api_key="k", model="fake-gpt", max_retries=0)
        loop = FixLoop(
            sandbox=sandbox,
            memory=None,
            llm=LlmFixPolicy(chat, None),
            budget=FixBudget(max_attempts=2, max_sandbox_runs=10),
        )
        issue = "`subtotal([(2.5, 2), (1, 3)])` gives 8.5; it should be 8.0."
        result = loop.run(repo="octo-org/shop", issue_id="31", issue_text=issue, checkout=checkout)
    assert [a.success for a in result.attempts] == [False, True]
    assert result.fixed and "price * quantity" in result.patch
    # the total tests failed before and pass now: the PR lists them with the others
    assert result.baseline_failed == [
        "tests/test_pricing.py::test_subtotal",
        "tests/test_pricing.py::test_total_with_discount",
        "tests/test_pricing.py::test_total_without_discount",
    ]
    assert result.other_failed == []


SHORT_HELP = '''\
def short_help(help, max_length=45):
    """The first sentence of ``help``, or as much of it as fits with "..."."""
    words = help.split()
    if not words:
        return ""
    total = 0
    last = len(words) - 1
    for i, word in enumerate(words):
        total += len(word) + (i > 0)
        if total > max_length:  # too long, truncate
            break
        if word[0] == ".":  # sentence end, truncate without "..."
            return " ".join(words[: i + 1])
        if total == max_length and i != last:
            break  # not at a sentence end, truncate with "..."
    else:
        return " ".join(words)  # no truncation needed
    total += len("...")
    while i > 0:
        total -= len(words[i]) + (i > 0)
        if total <= max_length:
            break
        i -= 1
    return " ".join(words[:i]) + "..."
'''

SHORT_HELP_TESTS = """\
import pytest

from helptext import short_help


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("", ""),
        ("Hello world.", "Hello world."),
        ("Hello world. More to say here.", "Hello world."),
        (
            "A sentence that is much too long to be shown whole in a list.",
            "A sentence that is much too long to be...",
        ),
        ("Short one", "Short one"),
        (
            "Exactly forty-five characters long right here ok",
            "Exactly forty-five characters long right...",
        ),
        ("Two words. " + "x" * 60, "Two words."),
    ],
)
def test_short_help(text, want):
    assert short_help(text) == want


def test_short_help_limit():
    assert short_help("one two three four", max_length=9) == "one..."
"""


def test_a_wrong_condition_in_one_parametrised_case_is_found_by_its_comment(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Each parametrised case has its own coverage, and the issue's words meet the
    condition's comment ("sentence end"): the broken condition is tried among the first,
    not after the truncation code the failing cases ran."""
    repo = tmp_path / "help"
    (repo / "tests").mkdir(parents=True)
    (repo / "helptext.py").write_text(SHORT_HELP)
    (repo / "tests" / "test_helptext.py").write_text(SHORT_HELP_TESTS)
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    issue = (
        "Short help no longer stops at the end of the first sentence: 'Hello world. More "
        "to say here.' shows 'Hello world. More to say...' instead of 'Hello world.'"
    )
    loop = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=12))
    result = loop.run(repo="octo-org/help", issue_id="21", issue_text=issue, checkout=repo)
    assert result.fixed, result.message
    assert '+        if word[-1] == ".":' in result.patch


PADDING = '''\
def pad_window(items, n, fillvalue=None):
    """items and n - 1 fill values: enough for the last window of n to be full."""
    return list(items) + [fillvalue] * (n if n > 1 else 0)


def pair_sums(items):
    padded = pad_window(items, 2)
    return [a + (b or 0) for a, b in zip(padded[::2], padded[1::2])]
'''

PADDING_TESTS = """\
import unittest

from padding import pad_window, pair_sums


class PadWindowTests(unittest.TestCase):
    def test_one(self):
        self.assertEqual(pad_window([1], 2), [1, None])

    def test_three(self):
        self.assertEqual(pad_window([1, 2, 3], 3, 0), [1, 2, 3, 0, 0])


class PairSumsTests(unittest.TestCase):
    def test_even(self):
        self.assertEqual(pair_sums([1, 2]), [3])

    def test_odd(self):
        self.assertEqual(pair_sums([1, 2, 3]), [3, 3])
"""


def test_tracebacks_of_tests_not_about_the_named_code_do_not_lead(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """more-itertools 10.5 with ``windowed`` padding one window too many: the issue names
    ``windowed``, its own tests (``WindowedTests``, unittest's naming) fail on an assert,
    and ``replace``'s tests crash inside ``replace`` on the extra window. That crash is
    where the wrong output broke a user of it, not the bug."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "padding.py").write_text(PADDING)
    (repo / "tests" / "test_padding.py").write_text(PADDING_TESTS)
    issue = "pad_window() adds one fill value too many: pad_window([1], 2) gives [1, None, None]."
    result = FixLoop(sandbox=sandbox, memory=None, budget=FixBudget(max_sandbox_runs=30)).run(
        repo="octo-org/padding", issue_id="31", issue_text=issue, checkout=repo
    )

    assert result.fixed, result.message
    assert "(n - 1 if n > 1 else 0)" in result.patch
    crash = (
        PADDING.splitlines().index(
            "    return [a + (b or 0) for a, b in zip(padded[::2], padded[1::2])]"
        )
        + 1
    )
    assert "tests/test_padding.py::PairSumsTests::test_even" in result.baseline_failed
    assert all("traceback" not in s.why for s in result.suspects if s.line == crash), (
        result.suspects[:3]
    )


def test_every_run_names_set_built_cases_alike(sandbox: Sandbox, tmp_path: Path) -> None:
    """isodate 0.7 builds parametrised cases from a set: their ids follow string hashing,
    which changed from run to run, and every candidate "broke" the renamed cases."""
    repo = tmp_path / "ids"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_ids.py").write_text(
        "import pytest\n\n"
        "CASES = [(word, object()) for word in {'alpha', 'beta', 'gamma', 'delta', 'eps'}]\n\n\n"
        "@pytest.mark.parametrize(('word', 'value'), CASES)\n"
        "def test_case(word, value):\n"
        "    assert word != 'gamma'\n"
    )
    runner = TestRunner(sandbox, repo, Limits(timeout_s=60))
    first, second = runner.run(), runner.run()

    assert len(first.failed) == 1 and len(first.passed) == 4
    assert first.failed == second.failed and first.passed == second.passed
