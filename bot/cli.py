"""The ``kaizen`` command.

Every sub-command builds the settings once, asks for exactly what it needs, and on a
problem prints one line per missing or invalid setting and exits 2. Heavy imports happen
inside the sub-commands so ``kaizen --help`` stays instant.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memory.service import Memory

EXIT_CONFIG = 2
T = TypeVar("T")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_CONFIG
    try:
        return int(args.func(args) or 0)
    except SettingsError as exc:
        print("kaizen: cannot start, settings problems:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  - {problem}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kaizen", description="Kaizen: a self-improving GitHub App for reviews and fixes."
    )
    sub = parser.add_subparsers(title="commands")

    serve = sub.add_parser("serve", help="run the webhook service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--workers", type=int, default=1, help="web processes (metrics are shared across them)"
    )
    serve.set_defaults(func=_serve)

    worker = sub.add_parser("worker", help="run a Celery worker")
    worker.add_argument("--queues", default="reviews,fixes,feedback")
    worker.add_argument("--concurrency", type=int, default=None)
    worker.add_argument("--pool", default="prefork", choices=["prefork", "solo", "threads"])
    worker.add_argument("--beat", action="store_true", help="also run the scheduler (one only)")
    worker.set_defaults(func=_worker)

    beat = sub.add_parser("beat", help="run the periodic-task scheduler (exactly one)")
    beat.set_defaults(func=_beat)

    up = sub.add_parser("up", help="web, worker and beat together, on embedded defaults")
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument("--port", type=int, default=8000)
    up.set_defaults(func=_up)

    doctor = sub.add_parser("doctor", help="check settings and every service Kaizen uses")
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.set_defaults(func=_doctor)

    redeliver = sub.add_parser("redeliver", help="ask GitHub to redeliver failed deliveries")
    redeliver.add_argument("--since", default="1h", help="how far back: 30m, 6h, 2d")
    redeliver.add_argument("--dry-run", action="store_true")
    redeliver.set_defaults(func=_redeliver)
    sandbox = sub.add_parser("sandbox", help="run a command in the sandbox")
    sandbox_sub = sandbox.add_subparsers(title="sandbox commands")
    sandbox_run = sandbox_sub.add_parser(
        "run", help="run CMD on a private copy of a workspace; prints the result as JSON"
    )
    sandbox_run.add_argument("--backend", default=None, choices=["auto", "docker", "bwrap", "none"])
    sandbox_run.add_argument("--timeout", type=float, default=600.0, help="seconds")
    sandbox_run.add_argument("--memory", type=int, default=2048, help="MB")
    sandbox_run.add_argument("--workspace", default=".", help="copied; the copy is discarded")
    sandbox_run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD...")
    sandbox_run.set_defaults(func=_sandbox_run)

    memory = sub.add_parser("memory", help="inspect or rebuild what Kaizen has learned")
    memory_sub = memory.add_subparsers(title="memory commands")
    stats = memory_sub.add_parser("stats", help="experiences, patterns, signals, trajectories")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(func=_memory_stats)
    rebuild = memory_sub.add_parser("rebuild", help="recompute pattern scores from experiences")
    rebuild.set_defaults(func=_memory_rebuild)
    move = memory_sub.add_parser(
        "move",
        help="carry what was learned about a renamed or transferred repository to its new name",
    )
    move.add_argument("old", help="the old full name, owner/name")
    move.add_argument("new", help="the new full name, owner/name")
    move.set_defaults(func=_memory_move)
    forget = memory_sub.add_parser(
        "forget",
        help="erase everything learned about a repository (its code, signals and scores)",
    )
    forget.add_argument("repo", help="the repository's full name, owner/name")
    forget.add_argument("--yes", action="store_true", help="really erase; it cannot be undone")
    forget.set_defaults(func=_memory_forget)

    feedback = sub.add_parser("feedback", help="give feedback on a finding (local use)")
    feedback.add_argument("--finding", required=True, help="the finding's experience id")
    feedback.add_argument("--signal", required=True, help="thumbs_up, thumbs_down, applied, ...")
    feedback.add_argument("--reason", default=None)
    feedback.add_argument("--actor", default=None)
    feedback.add_argument(
        "--undo",
        action="store_true",
        help="take back the feedback this actor gave with --signal (it stops counting)",
    )
    feedback.set_defaults(func=_feedback)

    review = sub.add_parser("review", help="review a local git diff (nothing is posted)")
    review.add_argument("--repo", type=Path, default=Path("."), help="git repository path")
    review.add_argument("--base", required=True, help="base ref, e.g. main")
    review.add_argument("--head", default="HEAD", help="head ref (default HEAD)")
    review.add_argument("--name", default=None, help="OWNER/REPO to learn under")
    review.add_argument("--json", action="store_true", help="print JSON")
    review.add_argument("--no-llm", action="store_true", help="static findings only")
    review.set_defaults(func=_review)

    fix = sub.add_parser("fix", help="try to fix a bug in a local repository (never pushes)")
    fix.add_argument("--repo", type=Path, default=Path("."), help="repository path")
    text = fix.add_mutually_exclusive_group()
    text.add_argument("--issue-text", default=None, help="the issue, as a user wrote it")
    text.add_argument("--issue-file", type=Path, default=None, help="a file holding the issue")
    fix.add_argument("--test-cmd", default=None, help="test command (default: detect pytest)")
    fix.add_argument(
        "--install-cmd",
        default=None,
        help="run once in the sandbox before the tests, into the workspace (e.g. a .venv)",
    )
    fix.add_argument(
        "--allow-network-install",
        action="store_true",
        help="let the install command reach the network (never the tests)",
    )
    fix.add_argument("--max-attempts", type=int, default=3, help="LLM attempts")
    fix.add_argument("--max-runs", type=int, default=40, help="sandbox runs, all policies")
    fix.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        help="seconds for the whole fix (one test run may take up to 300 of them)",
    )
    fix.add_argument("--name", default=None, help="OWNER/REPO to learn under")
    fix.add_argument("--json", action="store_true", help="print JSON")
    fix.add_argument("--no-llm", action="store_true", help="offline template repair only")
    fix.set_defaults(func=_fix)

    report = sub.add_parser("report", help="what Kaizen learned: Markdown, HTML or JSON")
    report.add_argument("--repo", default=None, help="OWNER/REPO (default: all repositories)")
    report.add_argument("--format", choices=("md", "html", "json"), default="md")
    report.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    report.set_defaults(func=_report)

    export = sub.add_parser("export", help="export LLM trajectories as training data")
    export.add_argument("--format", required=True, choices=["agent-lightning", "openai-sft", "dpo"])
    export.add_argument("--out", required=True)
    export.add_argument("--min-reward", type=float, default=0.5)
    export.set_defaults(func=_export)

    simulate = sub.add_parser("simulate", help="simulate a team and compare learning policies")
    simulate.add_argument("--prs", type=int, default=1000)
    simulate.add_argument("--seed", type=int, default=0)
    simulate.add_argument("--json", action="store_true")
    simulate.add_argument("--png", default=None, help="write the curves to this PNG file")
    simulate.set_defaults(func=_simulate)
    return parser


def _sandbox_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from workers.sandbox.base import Limits, SandboxUnavailable
    from workers.sandbox.select import choose_sandbox
    from workers.sandbox.workspace import workspace_copy

    settings = load_settings()
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("kaizen sandbox run: give the command after --", file=sys.stderr)
        return EXIT_CONFIG
    try:
        sandbox = choose_sandbox(
            args.backend or settings.sandbox,
            image=settings.sandbox_image,
            hide_paths=settings.sandbox_hidden_paths(),
        )
    except SandboxUnavailable as exc:
        print(f"kaizen sandbox run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    limits = Limits(timeout_s=args.timeout, memory_mb=args.memory)
    with workspace_copy(Path(args.workspace).resolve()) as workspace:
        result = sandbox.run(command, workspace=workspace, limits=limits)
    shown = {
        key: getattr(result, key)
        for key in (
            "exit_code",
            "timed_out",
            "oom_killed",
            "disk_limit_exceeded",
            "duration_s",
            "stdout",
            "stderr",
        )
    }
    shown["backend"] = result.backend
    shown["output_truncated"] = result.output_truncated
    if result.disk_limit_exceeded:
        shown["disk_limit"] = result.details.get("disk_limit", "")
    print(json.dumps(shown, indent=2))
    if result.disk_limit_exceeded:
        print(f"kaizen sandbox run: killed: {shown['disk_limit']}", file=sys.stderr)
    if result.timed_out:
        return 124  # as timeout(1) does
    return result.exit_code if result.exit_code is not None else 1


def _memory_stats(args: argparse.Namespace) -> int:
    from bot.memory_setup import build_memory

    memory = build_memory(load_settings())
    try:
        stats = memory.stats()
    finally:
        memory.close()
    if args.json:
        print(json.dumps(stats, indent=2, default=str))
    else:
        for key, value in stats.items():
            print(f"{key}: {json.dumps(value, default=str)}")
    return 0


def _on_memory(command: str, action: Callable[[Memory], T]) -> T | None:
    """Run ``action`` on the configured memory, closed afterwards; an experience store that
    cannot be opened (embedded Qdrant held by a running worker) is a one-line error."""
    from bot.memory_setup import build_memory
    from memory.experiences import ExperienceStoreError

    memory = build_memory(load_settings())
    try:
        return action(memory)
    except ExperienceStoreError as exc:
        print(f"kaizen {command}: {exc}", file=sys.stderr)
        return None
    finally:
        memory.close()


def _memory_rebuild(args: argparse.Namespace) -> int:
    report = _on_memory("memory rebuild", lambda memory: memory.rebuild())
    if report is None:
        return 1
    print(
        f"rebuilt {report.patterns} patterns from {report.signals} signals; "
        + ("scores unchanged" if report.unchanged else "scores differed and were replaced")
    )
    for line in report.differences:
        print(f"  {line}")
    return 0


def _memory_move(args: argparse.Namespace) -> int:
    """For moves Kaizen did not hear of (it was down, or not subscribed to the event)."""
    from memory.scores import validate_repo
    from workers.review.state import review_state

    try:
        old, new = validate_repo(args.old), validate_repo(args.new)
    except ValueError as exc:
        print(f"kaizen memory move: {exc}", file=sys.stderr)
        return 2
    report = _on_memory("memory move", lambda memory: memory.move_repo(old, new))
    if report is None:
        return 1
    settings = load_settings()
    watched = review_state(settings.redis_url, settings.data_dir).move_repo(old, new)
    print(
        f"moved {old} -> {new}: {report.experiences} experiences, {report.patterns} patterns,"
        f" {report.archived_signals} archived signals, {report.events} report events,"
        f" {report.transitions} LLM calls, {watched} watched pull requests"
    )
    return 0


def _memory_forget(args: argparse.Namespace) -> int:
    """For erasure requests, and for repositories lost while Kaizen was not listening."""
    from memory.scores import validate_repo
    from workers.review.state import review_state

    try:
        repo = validate_repo(args.repo)
    except ValueError as exc:
        print(f"kaizen memory forget: {exc}", file=sys.stderr)
        return 2
    if not args.yes:
        print(
            f"kaizen memory forget: this erases everything Kaizen learned about {repo} and"
            " cannot be undone; run it again with --yes",
            file=sys.stderr,
        )
        return 2
    report = _on_memory("memory forget", lambda memory: memory.forget_repo(repo))
    if report is None:
        return 1
    settings = load_settings()
    state = review_state(settings.redis_url, settings.data_dir).forget_repo(repo)
    print(
        f"forgot {repo}: {report.experiences} experiences, {report.patterns} patterns,"
        f" {report.archived_signals} archived and {report.pending_signals} parked signals,"
        f" {report.events} report events, {report.transitions} LLM calls,"
        f" {state} review-state entries (watched pull requests, locks, memos)"
    )
    return 0


def _feedback(args: argparse.Namespace) -> int:
    import hashlib

    from bot.memory_setup import build_memory
    from memory.experiences import ExperienceStoreError
    from memory.feedback import UnknownSignal, effect_of
    from memory.service import UnknownExperience
    from memory.types import Signal

    memory = build_memory(load_settings())
    try:
        effect_of(args.signal, memory.table)  # a word it does not know: say so first
        experience = memory.experiences.get(args.finding)
        if experience is None:
            print(f"kaizen feedback: no finding {args.finding} in memory", file=sys.stderr)
            return 1
        actor = args.actor or os.environ.get("USER")
        # One person's word on one finding counts once, as one person's 👍 does on GitHub:
        # running the same command again (a retry, the shell's history) changes nothing.
        key = "\0".join((args.finding, args.signal, actor or ""))
        signal_id = f"cli:{hashlib.sha256(key.encode()).hexdigest()[:32]}"
        if args.undo:
            undone = memory.retract_signal(signal_id, args.finding)
            if undone.status == "unknown":
                who = actor or "you"
                print(
                    f"kaizen feedback: {who} gave no {args.signal} on this finding",
                    file=sys.stderr,
                )
                return 1
            print(
                f"{'retracted' if undone.status == 'applied' else 'duplicate'}:"
                f" {experience.pattern} in {experience.repo} is now {undone.outcome}"
            )
            return 0
        signal = Signal(
            id=signal_id,
            kind=args.signal,
            experience_id=args.finding,
            repo=experience.repo,
            pattern=experience.pattern,
            at=time.time(),
            reason=args.reason,
            actor=actor,
        )
        result = memory.apply_signal(signal)
    except (UnknownSignal, UnknownExperience) as exc:
        print(f"kaizen feedback: {exc}", file=sys.stderr)
        return 2
    except ExperienceStoreError as exc:
        print(f"kaizen feedback: {exc}", file=sys.stderr)
        return 1
    finally:
        memory.close()
    if result.status == "duplicate":
        who = actor or "you"
        print(
            f"duplicate: {who} already gave {args.signal} on this finding;"
            f" {experience.pattern} in {experience.repo} stays {result.outcome}"
        )
        return 0
    print(f"{result.status}: {experience.pattern} in {experience.repo} is now {result.outcome}")
    return 0


def _review(args: argparse.Namespace) -> int:
    from bot.memory_setup import build_memory
    from memory.scores import validate_repo
    from workers.llm import chat_from_settings
    from workers.review.local import LocalReviewError, as_json, as_text, review_local

    settings = load_settings()
    if args.name is not None:
        try:
            validate_repo(args.name)
        except ValueError as exc:
            print(f"kaizen review: --name: {exc}", file=sys.stderr)
            return 2
    chat = None if args.no_llm else chat_from_settings(settings)
    memory = build_memory(settings)
    try:
        outcome, repo = review_local(
            args.repo, base=args.base, head=args.head, memory=memory, chat=chat, repo_name=args.name
        )
    except LocalReviewError as exc:
        print(f"kaizen review: {exc}", file=sys.stderr)
        return 2
    finally:
        memory.close()
    if args.json:
        print(json.dumps(as_json(outcome, settings.app_slug), indent=2))
    else:
        print(as_text(outcome, repo))
    return 0


def _fix(args: argparse.Namespace) -> int:
    from bot.memory_setup import build_memory
    from memory.scores import validate_repo
    from workers.fix.llm_policy import LlmFixPolicy
    from workers.fix.loop import FixBudget, FixLoop
    from workers.llm import chat_from_settings
    from workers.review.local import local_repo_name
    from workers.sandbox.base import SandboxUnavailable
    from workers.sandbox.select import choose_sandbox

    settings = load_settings()
    repo_path = args.repo.resolve()
    if not repo_path.is_dir():
        print(f"kaizen fix: {args.repo} is not a directory", file=sys.stderr)
        return 2
    if args.issue_file is not None:
        try:
            issue_text = args.issue_file.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"kaizen fix: cannot read {args.issue_file}: {exc}", file=sys.stderr)
            return 2
    else:
        issue_text = args.issue_text or ""
    name = args.name or local_repo_name(repo_path)
    try:
        validate_repo(name)
    except ValueError as exc:
        print(f"kaizen fix: --name: {exc}", file=sys.stderr)
        return 2
    if args.max_attempts < 1 or args.max_runs < 1:
        print("kaizen fix: --max-attempts and --max-runs must be at least 1", file=sys.stderr)
        return 2
    if not 10 <= args.time_limit <= 86_400:
        print("kaizen fix: --time-limit must be between 10 and 86400 seconds", file=sys.stderr)
        return 2
    try:
        sandbox = choose_sandbox(
            settings.sandbox,
            image=settings.sandbox_image,
            hide_paths=settings.sandbox_hidden_paths(),
        )
    except SandboxUnavailable as exc:
        print(f"kaizen fix: {exc}", file=sys.stderr)
        return 2
    memory = build_memory(settings)
    chat = None if args.no_llm else chat_from_settings(settings)

    def progress(text: str) -> None:
        if not args.json:
            print(f"  {text}", file=sys.stderr)

    loop = FixLoop(
        sandbox=sandbox,
        memory=memory,
        llm=LlmFixPolicy(chat, memory) if chat is not None else None,
        budget=FixBudget.within(
            args.time_limit, max_attempts=args.max_attempts, max_sandbox_runs=args.max_runs
        ),
        progress=progress,
    )
    issue_id = "local-" + hashlib.sha256(issue_text.encode()).hexdigest()[:12]
    try:
        result = loop.run(
            repo=name,
            issue_id=issue_id,
            issue_text=issue_text,
            checkout=repo_path,
            test_command=args.test_cmd,
            install_command=args.install_cmd,
            allow_network_install=args.allow_network_install,
        )
    finally:
        memory.close()
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
    else:
        print(result.message)
        if result.patch:
            print(result.patch)
    return 0 if result.fixed else 1


def _report(args: argparse.Namespace) -> int:
    from bot.memory_setup import build_memory
    from bot.report_html import render_html
    from bot.report_markdown import render_markdown
    from memory.scores import validate_repo

    settings = load_settings()
    if args.repo is not None:
        try:
            validate_repo(args.repo)
        except ValueError as exc:
            print(f"kaizen report: --repo: {exc}", file=sys.stderr)
            return 2
    memory = build_memory(settings)  # reads scores, activity and trajectories only
    try:
        assert memory.activity is not None
        model = _build_report_or_none(
            scores=memory.scores,
            activity=memory.activity,
            trajectories=memory.trajectories,
            repo=args.repo,
            usd_per_million_tokens=(
                settings.llm_usd_per_million_prompt_tokens,
                settings.llm_usd_per_million_completion_tokens,
            ),
        )
        repos = memory.activity.repos()
    finally:
        memory.close()
    if model is None:
        return 1
    if args.format == "json":
        text = json.dumps(model.as_dict(), indent=2, default=str)
    elif args.format == "html":
        text = render_html(model, repos=repos, standalone=True)
    else:
        text = render_markdown(model)
    if args.out is None:
        print(text)
    else:
        try:
            args.out.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"kaizen report: cannot write {args.out}: {exc}", file=sys.stderr)
            return 1
    return 0


def _build_report_or_none(**kwargs: Any) -> Any:
    from memory.report import build_report
    from memory.scores import NeedsRebuild

    try:
        return build_report(**kwargs)
    except NeedsRebuild as exc:
        print(f"kaizen report: {exc}", file=sys.stderr)
        return None


def _export(args: argparse.Namespace) -> int:
    from memory.export import export
    from memory.service import default_paths
    from memory.trajectories import TrajectoryStore

    settings = load_settings()
    store = TrajectoryStore(default_paths(settings.data_dir)["trajectories"])
    with open(args.out, "w", encoding="utf-8") as out:
        count = export(store, args.format, out, min_reward=args.min_reward)
    print(f"wrote {count} records in {args.format} format to {args.out}")
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from bot.simulate_report import format_table, write_png
    from memory.simulation import run_simulation_with_curves

    result, curves = run_simulation_with_curves(prs=args.prs, seed=args.seed)
    if args.png:
        write_png(curves, args.png)
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


def setup_logging(settings: Settings) -> None:
    from bot.log_setup import configure_logging

    configure_logging(
        settings.log_level, json_output=settings.log_json, secrets=settings.secret_values()
    )


def build_web_app(settings: Settings) -> FastAPI:
    """The production wiring of the web app: broker, ledger and enqueuer from settings."""
    from bot.app import create_app
    from bot.deliveries import DeliveryLedger, RedisLedger, SqliteLedger
    from bot.queueing import CeleryEnqueuer
    from workers.celery_app import make_celery

    celery = make_celery(settings, publisher=True)
    ledger: DeliveryLedger
    if settings.redis_url:
        ledger = RedisLedger(
            settings.redis_url, ttl_s=settings.delivery_ttl_s, timeout_s=settings.enqueue_timeout_s
        )
    else:
        ledger = SqliteLedger(
            settings.data_dir / "deliveries.sqlite3", ttl_s=settings.delivery_ttl_s
        )
    enqueuer = CeleryEnqueuer(celery, timeout_s=settings.enqueue_timeout_s)
    return create_app(settings, ledger=ledger, enqueuer=enqueuer)


def _run_uvicorn(app: FastAPI, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False, lifespan="off")


def _serve(args: argparse.Namespace) -> int:
    from bot.app_manifest import setup_pending

    settings = load_settings()
    if setup_pending(settings):  # no App anywhere: serve the registration page at /
        print(
            f"kaizen serve: no GitHub App registered yet; open http://{args.host}:{args.port}/ "
            "to register one.",
            file=sys.stderr,
        )
    else:
        settings.require("webhook_secret")
    setup_logging(settings)
    if args.workers > 1:
        import uvicorn

        _multiproc_metrics_dir(settings)
        uvicorn.run(
            "bot.asgi:create",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_config=None,
            access_log=False,
            lifespan="off",
        )
        return 0
    _run_uvicorn(build_web_app(settings), args.host, args.port)
    return 0


def _multiproc_metrics_dir(settings: Settings) -> None:
    """Share metric values across this machine's processes (must precede metric creation)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    folder = settings.data_dir.resolve() / "metrics"
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)


def _worker(args: argparse.Namespace) -> int:
    settings = load_settings()
    setup_logging(settings)
    _multiproc_metrics_dir(settings)
    from workers.celery_app import make_celery
    from workers.tasks import install_task_metrics, install_worker_lifecycle

    install_task_metrics()
    install_worker_lifecycle()
    app = make_celery(settings)
    argv = ["worker", "--queues", args.queues, "--pool", args.pool, "--loglevel", "INFO"]
    if args.concurrency:
        argv += ["--concurrency", str(args.concurrency)]
    if args.beat:
        argv += ["--beat", "--schedule", str(settings.data_dir / "celerybeat-schedule")]
    if settings.worker_metrics_port:
        _serve_worker_metrics(settings.worker_metrics_port)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app.worker_main(argv)
    return 0


def _serve_worker_metrics(port: int) -> None:
    from prometheus_client import CollectorRegistry, multiprocess, start_http_server

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    start_http_server(port, addr="0.0.0.0", registry=registry)  # noqa: S104 - scraped by Prometheus


def _beat(args: argparse.Namespace) -> int:
    settings = load_settings()
    setup_logging(settings)
    from workers.celery_app import make_celery

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app = make_celery(settings)
    app.start(["beat", "--loglevel", "INFO"])
    return 0


def _up(args: argparse.Namespace) -> int:
    """Everything on one machine: the worker (with beat) as a child, the web in-process."""
    settings = load_settings()
    setup_logging(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # This run owns the folder: values left by processes of an earlier run would
        # otherwise be summed into this run's counters.
        for stale in (settings.data_dir / "metrics").glob("*.db"):
            stale.unlink()
    _multiproc_metrics_dir(settings)
    if settings.webhook_secret is None:
        print(
            "kaizen up: no GitHub App registered yet; open "
            f"http://{args.host}:{args.port}/ for how to register one.",
            file=sys.stderr,
        )
    env = dict(os.environ)
    # The embedded broker is a folder: the worker must use the same one as the web.
    env["KAIZEN_DATA_DIR"] = str(settings.data_dir.resolve())
    # Embedded Qdrant may be opened by one process only: without a Qdrant server the
    # worker runs its tasks in threads of one process (Celery's hard time limits need
    # prefork, so they apply only with KAIZEN_QDRANT_URL).
    pool = ["--pool", "prefork", "--concurrency", "2"]
    if not settings.qdrant_url:
        pool = ["--pool", "threads", "--concurrency", "4"]
    worker = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "worker", "--beat", *pool],
        env=env,
        preexec_fn=_die_with_parent,
    )
    # uvicorn re-raises SIGTERM after its own shutdown; with Python's default handler that
    # would end this process before the worker is stopped, leaving it orphaned.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        _run_uvicorn(build_web_app(settings), args.host, args.port)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
    return 0


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM if ``kaizen up`` itself is killed (even SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def _doctor(args: argparse.Namespace) -> int:
    from bot.doctor import run_checks

    try:
        settings = load_settings()
    except SettingsError as exc:
        results = [{"name": "settings", "status": "fail", "detail": p} for p in exc.problems]
        _print_checks(results, args.json)
        return 1
    results = [r.as_dict() for r in run_checks(settings)]
    _print_checks(results, args.json)
    return 1 if any(r["status"] == "fail" for r in results) else 0


def _print_checks(results: list[dict[str, str]], as_json: bool) -> None:
    if as_json:
        print(json.dumps({"checks": results}, indent=2))
        return
    marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}
    for r in results:
        print(f"[{marks.get(r['status'], r['status'])}] {r['name']}: {r['detail']}")


def _redeliver(args: argparse.Namespace) -> int:
    from bot.github import GitHubApp
    from bot.redeliver import parse_since, redeliver_failed

    settings = load_settings()
    settings.require("app_id", "private_key")
    setup_logging(settings)
    try:
        since = parse_since(args.since)
    except ValueError as exc:
        print(f"kaizen redeliver: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    from github import GithubException

    gh = GitHubApp(settings)
    try:
        result = redeliver_failed(gh, since_s=since, dry_run=args.dry_run, now=time.time())
    except GithubException as exc:
        message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
        print(f"kaizen redeliver: GitHub answered {exc.status}: {message}", file=sys.stderr)
        return 1
    finally:
        gh.close()
    verb = "would redeliver" if args.dry_run else "redelivered"
    for item in result.selected:
        print(
            f"{verb} {item['guid']} ({item.get('event')}.{item.get('action') or ''}, "
            f"status {item.get('status_code')} at {item.get('delivered_at')})"
        )
    print(f"{len(result.selected)} failed deliveries {verb}; {result.scanned} scanned")
    return 0


def _module_main() -> None:  # pragma: no cover - exercised through subprocesses
    sys.exit(main())


if __name__ == "__main__":
    _module_main()
