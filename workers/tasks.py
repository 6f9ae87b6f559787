"""Celery task entry points: thin wrappers that load, call the domain, and save.

Tasks are registered by name (``kaizen.*``) so the web process can enqueue them without
importing this module. Every task receives the *delivery* the webhook built: ``id``,
``event``, ``action``, ``installation_id``, ``repo`` and the GitHub ``payload``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from celery import Task, shared_task
from celery.signals import (
    task_failure,
    task_postrun,
    task_prerun,
    task_retry,
    worker_process_shutdown,
    worker_shutdown,
)

from bot.commands import Command, has_write_access, parse_commands
from bot.deliveries import SqliteLedger
from bot.github import REACTIONS_LISTED, Permission
from bot.log_setup import log_context
from bot.metrics import Metrics, make_metrics
from bot.repo_config import RepoConfig, load_repo_config
from bot.report_markdown import render_markdown
from memory.report import build_report
from memory.scores import validate_pattern
from workers.celery_app import KaizenCelery
from workers.command_handler import compose_reply
from workers.context import WorkerContext, close_contexts, context_for
from workers.fix import acceptance
from workers.fix.github_fix import cancel_key
from workers.repository_moves import MOVING_TTL_S, moving_key, repository_move
from workers.repository_removals import REMOVALS, Removal, repositories_removed
from workers.review import feedback
from workers.review.github_review import Busy, ReviewJob
from workers.review.github_review import review_pull_request as review_pull_request_job
from workers.review.render import parse_finding_marker

log = logging.getLogger(__name__)

Delivery = dict[str, Any]


def _context(task: Task) -> WorkerContext:
    app = task.app
    assert isinstance(app, KaizenCelery), "tasks run only in a Kaizen Celery app"
    return context_for(app.settings)


def _delivery_context(delivery: Delivery) -> Any:
    return log_context(
        delivery_id=delivery.get("id"),
        event=delivery.get("event"),
        repo=delivery.get("repo"),
        installation_id=delivery.get("installation_id"),
    )


@shared_task(bind=True, name="kaizen.handle_command")
def handle_command(self: Task, delivery: Delivery) -> dict[str, Any]:
    """Reply to ``/kaizen …`` comments: one reply per comment, posted exactly once."""
    ctx = _context(self)
    settings = ctx.settings
    with _delivery_context(delivery):
        payload = delivery["payload"]
        comment = payload.get("comment") or {}
        issue = payload.get("issue") or {}
        user = str((comment.get("user") or {}).get("login") or "")
        commands = parse_commands(str(comment.get("body") or ""), settings.app_slug)
        if not commands:
            return {"status": "ignored", "reason": "no command"}
        repo = str(delivery["repo"])
        github = ctx.github.installation(int(delivery["installation_id"]))
        owner, _, name = repo.partition("/")
        loaded = load_repo_config(github, owner, name)
        if not loaded.config.commands.enabled:
            log.info("commands are disabled by %s", loaded.source_path)
            return {"status": "ignored", "reason": "commands disabled by repo config"}
        on_pull_request = bool(issue.get("pull_request"))
        reviewed: dict[str, Any] | None = None
        if on_pull_request and any(c.verb == "review" and not c.error for c in commands):
            job = _job(ctx, delivery, int(issue["number"]), "command")
            reviewed = _run_review(self, ctx, job)
        permission = _memo(lambda: github.get_permission(repo, user))
        verbs = {c.verb for c in commands if not c.error}
        allowed = bool(verbs & {"fix", "cancel"}) and has_write_access(
            permission().permission, permission().role_name
        )
        if allowed and "cancel" in verbs:
            ctx.review_state.remember(cancel_key(repo, int(issue["number"])), "1", 86400)
        fixed: dict[str, Any] | None = None
        if allowed and "fix" in verbs and not on_pull_request:
            hint = next(c.args for c in commands if c.verb == "fix")
            fixed = _run_fix(ctx, delivery, issue, user, hint, loaded.config)
        reply = compose_reply(
            commands,
            user=user,
            app_slug=settings.app_slug,
            permission=permission,
            config_problems=loaded.problems,
            config_path=loaded.source_path,
            on_pull_request=on_pull_request,
            actions=_report_actions(ctx, repo, user),
        )
        if reply is None:
            if reviewed is not None:
                return {"status": "reviewed", "review": reviewed}
            if fixed is not None:
                return {"status": "fix", "fix": fixed}
            return {"status": "ignored", "reason": "no command"}
        comment_id = github.post_issue_comment(
            repo, int(issue["number"]), reply.body, key=f"reply:{delivery['id']}"
        )
        log.info(
            "answered command",
            extra={"verbs": [c.verb for c in commands], "refused": reply.refused},
        )
        return {"status": "refused" if reply.refused else "answered", "comment_id": comment_id}


def _job(ctx: WorkerContext, delivery: Delivery, number: int, trigger: str) -> ReviewJob:
    return ReviewJob(
        repo=str(delivery["repo"]),
        number=number,
        installation_id=int(delivery["installation_id"]),
        delivery_id=str(delivery["id"]),
        trigger=trigger,
        bot_login=ctx.settings.bot_login,
        app_slug=ctx.settings.app_slug,
        usd_per_million_tokens=(
            ctx.settings.llm_usd_per_million_prompt_tokens,
            ctx.settings.llm_usd_per_million_completion_tokens,
        ),
    )


def _run_review(task: Task, ctx: WorkerContext, job: ReviewJob) -> dict[str, Any]:
    github = ctx.github.installation(job.installation_id)
    memory = ctx.memory

    def before_review(pull: dict[str, Any], bot_comments: list[dict[str, Any]]) -> None:
        if job.trigger == "synchronize" and bot_comments:
            feedback.on_push(memory, github, job.repo, str(pull["head"]["sha"]), bot_comments)

    try:
        result = review_pull_request_job(
            github,
            job,
            memory=memory,
            state=ctx.review_state,
            chat=ctx.chat,
            before_review=before_review,
        )
    except Busy as exc:
        raise task.retry(countdown=15, max_retries=40, exc=exc) from exc
    log.info("review %s", result.status, extra=result.as_dict())
    return result.as_dict()


@shared_task(bind=True, name="kaizen.review_pull_request")
def review_pull_request(self: Task, delivery: Delivery) -> dict[str, Any]:
    """Review a PR on open / reopen / ready for review, and the new commits on a push."""
    ctx = _context(self)
    with _delivery_context(delivery):
        number = int(delivery["payload"]["pull_request"]["number"])
        trigger = str(delivery.get("action") or "opened")
        return _run_review(self, ctx, _job(ctx, delivery, number, trigger))


def _report_actions(
    ctx: WorkerContext, repo: str, user: str
) -> dict[str, Callable[[Command], str]]:
    """``report``, ``patterns``, ``mute`` and ``unmute``: answered from memory."""
    settings = ctx.settings

    def report(command: Command) -> str:
        memory = ctx.memory
        assert memory.activity is not None
        model = build_report(
            scores=memory.scores,
            activity=memory.activity,
            trajectories=memory.trajectories,
            repo=repo,
            usd_per_million_tokens=(
                settings.llm_usd_per_million_prompt_tokens,
                settings.llm_usd_per_million_completion_tokens,
            ),
        )
        url = f"{settings.public_url.rstrip('/')}/reports/{repo}" if settings.public_url else None
        return render_markdown(model, patterns_only=command.verb == "patterns", url=url)

    def mute(command: Command) -> str:
        pattern = command.args.strip().strip("`")
        try:
            validate_pattern(pattern, family=True)
        except ValueError as exc:
            return f"Nothing muted: {exc}. Example: `/{settings.app_slug} mute ruff:E501`."
        if command.verb == "mute":
            ctx.memory.scores.mute(repo, pattern, by=user, at=time.time())
            return (
                f"Muted `{pattern}` in this repository: Kaizen will not post it (security "
                f"findings included) until `/{settings.app_slug} unmute {pattern}`."
            )
        if ctx.memory.scores.unmute(repo, pattern):
            return f"Unmuted `{pattern}`: learning decides again whether it is posted."
        return f"`{pattern}` was not muted in this repository."

    return {"report": report, "patterns": report, "mute": mute, "unmute": mute}


def _memo(fetch: Callable[[], Permission]) -> Callable[[], Permission]:
    """Ask GitHub for a permission at most once per task."""
    cache: list[Permission] = []

    def get() -> Permission:
        if not cache:
            cache.append(fetch())
        return cache[0]

    return get


def _run_fix(
    ctx: WorkerContext,
    delivery: Delivery,
    issue: dict[str, Any],
    user: str,
    hint: str,
    config: RepoConfig,
) -> dict[str, Any]:
    settings = ctx.settings
    repo = str(delivery["repo"])
    github = ctx.github.installation(int(delivery["installation_id"]))
    if not config.fix.enabled:
        github.post_issue_comment(
            repo,
            int(issue["number"]),
            "Fixes are turned off for this repository (`fix.enabled: false`).",
            key=f"fix-off:{delivery['id']}",
        )
        return {"status": "disabled"}
    from workers.fix.github_fix import FixJob
    from workers.fix.github_fix import fix_issue as run_fix_job
    from workers.fix.llm_policy import LlmFixPolicy
    from workers.fix.loop import FixBudget, FixLoop
    from workers.sandbox.select import choose_sandbox

    chat = ctx.chat
    loop = FixLoop(
        sandbox=choose_sandbox(
            settings.sandbox,
            image=settings.sandbox_image,
            hide_paths=settings.sandbox_hidden_paths(),
        ),
        memory=ctx.memory,
        llm=LlmFixPolicy(chat, ctx.memory) if chat is not None else None,
        budget=FixBudget.within(
            config.fix.time_limit_s,
            max_attempts=config.fix.max_attempts,
            max_sandbox_runs=config.fix.max_test_runs,
        ),
    )
    job = FixJob(
        repo=repo,
        issue=int(issue["number"]),
        title=str(issue.get("title") or ""),
        body=str(issue.get("body") or ""),
        delivery_id=str(delivery["id"]),
        requested_by=user,
        hint=hint,
        bot_login=settings.bot_login,
        test_command=config.fix.test_command,
        install_command=config.fix.install_command,
        allow_network_install=config.fix.allow_network_install,
    )
    result = run_fix_job(
        github,
        job,
        loop=loop,
        state=ctx.review_state,
        lock_ttl_s=float(config.fix.time_limit_s) + 600,
        work_dir=settings.data_dir / "work",
    )
    log.info("fix %s", result.get("status"), extra={"issue": job.issue})
    return result


@shared_task(bind=True, name="kaizen.fix_issue")
def fix_issue(self: Task, delivery: Delivery) -> dict[str, Any]:
    """The ``kaizen:fix`` label: the same as ``/kaizen fix`` by whoever added it."""
    ctx = _context(self)
    with _delivery_context(delivery):
        payload = delivery["payload"]
        issue = payload.get("issue") or {}
        user = str((payload.get("sender") or {}).get("login") or "")
        repo = str(delivery["repo"])
        github = ctx.github.installation(int(delivery["installation_id"]))
        perm = github.get_permission(repo, user)
        if not has_write_access(perm.permission, perm.role_name):
            github.post_issue_comment(
                repo,
                int(issue["number"]),
                f"Sorry @{user}, the `kaizen:fix` label needs write access to this repository.",
                key=f"fix-refused:{delivery['id']}",
            )
            return {"status": "refused"}
        owner, _, name = repo.partition("/")
        config = load_repo_config(github, owner, name).config
        return _run_fix(ctx, delivery, issue, user, "", config)


@shared_task(bind=True, name="kaizen.record_feedback")
def record_feedback(self: Task, delivery: Delivery) -> dict[str, Any]:
    """Replies to Kaizen's comments (and their edits and deletions), resolved and reopened
    threads become signals, or take back the ones they gave."""
    ctx = _context(self)
    settings = ctx.settings
    with _delivery_context(delivery):
        event, payload = delivery.get("event"), delivery["payload"]
        repo = str(delivery["repo"])
        applied: feedback.Applied | None = None
        if event == "pull_request_review_comment":
            reply = payload.get("comment") or {}
            parent_id = reply.get("in_reply_to_id")
            if not parent_id:
                return {"status": "ignored", "reason": "not a reply"}
            github = ctx.github.installation(int(delivery["installation_id"]))
            parent = github.get_review_comment(repo, int(parent_id))
            action = delivery.get("action")
            if parent is not None and action == "deleted":
                applied = feedback.on_reply_deleted(
                    ctx.memory, parent, reply, bot_login=settings.bot_login
                )
            elif parent is not None:
                said = feedback.on_reply_edited if action == "edited" else feedback.on_reply
                applied = said(
                    ctx.memory,
                    parent,
                    reply,
                    bot_login=settings.bot_login,
                    app_slug=settings.app_slug,
                )
        elif event == "pull_request_review" and delivery.get("action") == "submitted":
            applied = acceptance.on_fix_pull_reviewed(
                ctx.memory,
                payload.get("pull_request") or {},
                payload.get("review") or {},
                bot_login=settings.bot_login,
            )
        elif event == "pull_request_review_thread" and delivery.get("action") == "resolved":
            applied = feedback.on_thread_resolved(
                ctx.memory,
                payload.get("thread") or {},
                bot_login=settings.bot_login,
                actor=(payload.get("sender") or {}).get("login"),
                delivery_id=str(delivery["id"]),
            )
        elif event == "pull_request_review_thread" and delivery.get("action") == "unresolved":
            applied = feedback.on_thread_unresolved(
                ctx.memory, payload.get("thread") or {}, bot_login=settings.bot_login
            )
        if applied is None:
            return {"status": "ignored", "reason": "not feedback on a Kaizen comment"}
        log.info("feedback %s", applied.status, extra={"signal": applied.signal})
        return {"status": applied.status, "signal": applied.signal}


@shared_task(bind=True, name="kaizen.finalize_pull_request")
def finalize_pull_request(self: Task, delivery: Delivery) -> dict[str, Any]:
    """A closed PR: comments nobody reacted to are counted as ignored."""
    ctx = _context(self)
    with _delivery_context(delivery):
        repo = str(delivery["repo"])
        number = int(delivery["payload"]["pull_request"]["number"])
        github = ctx.github.installation(int(delivery["installation_id"]))
        pull = delivery["payload"]["pull_request"]
        bot = ctx.settings.bot_login
        fix_outcome = acceptance.on_fix_pull_closed(github, ctx.memory, repo, pull, bot_login=bot)
        experts = acceptance.on_human_fix_merged(
            github, ctx.memory, ctx.review_state, repo, pull, bot_login=bot
        )
        ours = _bot_comments(github.list_review_comments(repo, number), bot)
        _collect_reactions(ctx, github, repo, ours)
        applied = feedback.on_close(ctx.memory, ours)
        ctx.review_state.unwatch(repo, number)
        return {
            "status": "finalized",
            "ignored": sum(a.status == "applied" for a in applied),
            "fix_outcome": fix_outcome.status if fix_outcome else None,
            "expert_examples": len(experts),
        }


def _bot_comments(comments: list[dict[str, Any]], bot_login: str) -> list[dict[str, Any]]:
    return [
        c
        for c in comments
        if (c.get("user") or {}).get("login") == bot_login
        and parse_finding_marker(c.get("body")) is not None
    ]


def _collect_reactions(
    ctx: WorkerContext, github: Any, repo: str, comments: list[dict[str, Any]]
) -> int:
    """List reactions only for comments whose 👍/👎 counts changed since the last look
    (back to none included: a 👍 taken back is retracted)."""
    applied = 0
    for comment in comments:
        rollup = comment.get("reactions") or {}
        counts = f"{rollup.get('+1', 0)}/{rollup.get('-1', 0)}"
        memo = f"reactions:{repo}:{comment['id']}"
        seen = ctx.review_state.recall(memo)
        if seen == counts or (seen is None and counts == "0/0"):
            continue
        reactions = github.list_review_comment_reactions(repo, int(comment["id"]))
        results = feedback.on_reactions(
            ctx.memory,
            comment,
            reactions,
            bot_login=ctx.settings.bot_login,
            # a list cut at the client's cap may leave out reactions that are still there
            complete=len(reactions) < REACTIONS_LISTED,
        )
        applied += sum(r.status == "applied" for r in results)
        ctx.review_state.remember(memo, counts, 90 * 86400)
    return applied


@shared_task(bind=True, name="kaizen.poll_reactions")
def poll_reactions(self: Task) -> dict[str, Any]:
    """👍/👎 on Kaizen's comments of open PRs (GitHub sends no webhook for reactions)."""
    ctx = _context(self)
    if not ctx.settings.github_configured:
        return {"status": "skipped", "reason": "no GitHub App configured"}
    horizon = time.time() - ctx.settings.reaction_poll_max_age_days * 86400
    polled = applied = 0
    for watched in ctx.review_state.watched():
        repo, number = str(watched["repo"]), int(watched["number"])
        if float(watched["at"]) < horizon:
            ctx.review_state.unwatch(repo, number)
            continue
        try:
            github = ctx.github.installation(int(watched["installation_id"]))
            ours = _bot_comments(github.list_review_comments(repo, number), ctx.settings.bot_login)
            applied += _collect_reactions(ctx, github, repo, ours)
            polled += 1
        except Exception as exc:  # one repo's trouble must not stop the others
            log.warning("reaction poll failed", extra={"repo": repo, "error": str(exc)})
    return {"status": "polled", "pull_requests": polled, "applied": applied}


@shared_task(bind=True, name="kaizen.installation_changed")
def installation_changed(self: Task, delivery: Delivery) -> dict[str, Any]:
    """The App's reach changed. A removed or suspended installation loses its cached client;
    a deleted or removed repository, or an uninstall, erases what was learned about the
    repositories lost when ``KAIZEN_FORGET_REMOVED_REPOS`` is on, ``KAIZEN_FORGET_DELAY_S``
    later: a transfer also tells the old installation it lost the repository, and the
    memory must be moved (``repository_moved``) before the old name is forgotten."""
    ctx = _context(self)
    with _delivery_context(delivery):
        event, action = delivery.get("event"), delivery.get("action")
        installation_id = delivery.get("installation_id")
        if (
            event == "installation"
            and action in ("deleted", "suspend")
            and installation_id
            and ctx.settings.github_configured
        ):
            ctx.github.forget_installation(int(installation_id))
        log.info("%s %s", event, action)
        if (str(event), str(action)) not in REMOVALS:
            return {"status": "recorded", "action": action}
        try:
            removal = repositories_removed(str(event), action, delivery["payload"])
        except ValueError as exc:
            log.warning("%s.%s not understood: %s", event, action, exc)
            return {"status": "ignored", "action": action, "reason": str(exc)}
        if not ctx.settings.forget_removed_repos:
            log.info("memory of %s kept: KAIZEN_FORGET_REMOVED_REPOS is off", removal.repos)
            return {"status": "kept", "action": action, "repos": list(removal.repos)}
        delay = ctx.settings.forget_delay_s
        if delay and not self.request.retries:  # a transfer's move goes first
            log.info("forgetting %s in %d s", removal.repos or "the installation", delay)
            raise self.retry(countdown=delay, max_retries=41)
        try:
            forgotten, moving = _forget(ctx, removal)
        except Exception as exc:  # Qdrant or Redis down: forgetting again finishes it
            raise self.retry(countdown=30, max_retries=41, exc=exc) from exc
    return {"status": "forgotten", "action": action, "repos": forgotten, "moving": moving}


def _forget(
    ctx: WorkerContext, removal: Removal
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Forget each lost repository (on an uninstall, also those only memory knows of),
    except one a move is still carrying to its new name: what was forgotten, by repo, and
    what was left to its move (old name → new)."""
    repos = list(removal.repos)
    if removal.whole_installation and removal.installation_id is not None:
        known = ctx.memory.known_repos()  # an uninstall may list every repository it saw
        repos = [r for r in repos if r in known]
        repos += ctx.memory.repos_of_installation(removal.installation_id)
    forgotten: dict[str, dict[str, Any]] = {}
    moving: dict[str, str] = {}
    for repo in dict.fromkeys(repos):
        target = ctx.review_state.recall(moving_key(repo))
        if target is not None:
            moving[repo] = target
            log.info("memory of %s kept: it is being moved to %s", repo, target)
            continue
        report = asdict(ctx.memory.forget_repo(repo))
        report["review_state"] = ctx.review_state.forget_repo(repo)
        forgotten[repo] = report
        log.info("memory of %s forgotten", repo)
    return forgotten, moving


@shared_task(bind=True, name="kaizen.repository_moved")
def repository_moved(self: Task, delivery: Delivery) -> dict[str, Any]:
    """A renamed or transferred repository keeps what Kaizen learned about it."""
    ctx = _context(self)
    with _delivery_context(delivery):
        action = delivery.get("action")
        try:
            old, new = repository_move(action, delivery["payload"])
        except ValueError as exc:  # NotAMove, or a name memory cannot keep
            log.warning("repository.%s not understood: %s", action, exc)
            return {"status": "ignored", "reason": str(exc)}
        installation = delivery.get("installation_id") if action == "transferred" else None
        try:
            into = int(installation) if installation else None
            # Said first, so that a forget of the old name (a transfer also removes the repo
            # from the old installation) leaves it alone while this move is retried.
            ctx.review_state.remember(moving_key(old), new, MOVING_TTL_S)
            report = ctx.memory.move_repo(old, new, installation_id=into)
            watched = ctx.review_state.move_repo(old, new, installation_id=into)
            ctx.review_state.drop(moving_key(old))
        except Exception as exc:  # Qdrant or Redis down: every step is idempotent
            raise self.retry(countdown=30, max_retries=40, exc=exc) from exc
        log.info("memory moved from %s to %s", old, new)
    return {"status": "moved", **asdict(report), "watched": watched}


@shared_task(bind=True, name="kaizen.purge_deliveries")
def purge_deliveries(self: Task) -> dict[str, Any]:
    """Expire old delivery claims in the embedded ledger (Redis expires its own keys)."""
    settings = _context(self).settings
    if settings.redis_url:
        return {"status": "skipped", "reason": "redis expires claims itself"}
    ledger = SqliteLedger(settings.data_dir / "deliveries.sqlite3", ttl_s=settings.delivery_ttl_s)
    return {"status": "purged", "count": ledger.purge()}


@shared_task(bind=True, name="kaizen.retry_pending_signals")
def retry_pending_signals(self: Task) -> dict[str, Any]:
    """Apply feedback parked while the experience store was unreachable."""
    memory = _context(self).memory
    waiting = memory.pending.count()
    if not waiting:  # cheap: never opens (and locks) embedded Qdrant for nothing
        return {"status": "idle"}
    applied = memory.retry_pending()
    log.info("applied %d of %d parked signals", applied, waiting)
    return {"status": "retried", "applied": applied, "waiting": waiting}


@shared_task(bind=True, name="kaizen.weekly_digest")
def weekly_digest(self: Task) -> dict[str, Any]:
    """Refresh each active repository's "Kaizen weekly report" issue, when switched on."""
    ctx = _context(self)
    settings = ctx.settings
    if not settings.weekly_digest or not settings.github_configured:
        return {"status": "off"}
    from workers.digest import update_digests

    installations = {i: ctx.github.installation(i) for i in ctx.github.installation_ids()}
    result = update_digests(dict(installations), ctx.memory, public_url=settings.public_url)
    return {"status": "updated", **result}


# -- task metrics ------------------------------------------------------------------------

_metrics: Metrics | None = None
_started: dict[str, float] = {}


def _task_metrics() -> Metrics:
    global _metrics
    if _metrics is None:
        _metrics = make_metrics()
    return _metrics


def _on_prerun(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        _started[task_id] = time.perf_counter()


def _on_postrun(
    task_id: str | None = None, task: Task | None = None, state: str | None = None, **_: Any
) -> None:
    started = _started.pop(task_id or "", None)
    if task is None:
        return
    metrics = _task_metrics()
    if started is not None:
        metrics.task_seconds.labels(task.name).observe(time.perf_counter() - started)
    if state == "SUCCESS":
        metrics.task_outcomes.labels(task.name, "success").inc()


def _on_failure(
    sender: Task | None = None, exception: BaseException | None = None, **_: Any
) -> None:
    name = sender.name if sender else "unknown"
    _task_metrics().task_outcomes.labels(name, "failure").inc()
    log.error("task failed", extra={"task": name, "error": repr(exception)})


def _on_retry(sender: Task | None = None, **_: Any) -> None:
    _task_metrics().task_outcomes.labels(sender.name if sender else "unknown", "retry").inc()


def install_task_metrics() -> None:
    """Record task outcomes and durations; called by the worker command, not at import."""
    task_prerun.connect(_on_prerun, weak=False, dispatch_uid="kaizen-prerun")
    task_postrun.connect(_on_postrun, weak=False, dispatch_uid="kaizen-postrun")
    task_failure.connect(_on_failure, weak=False, dispatch_uid="kaizen-failure")
    task_retry.connect(_on_retry, weak=False, dispatch_uid="kaizen-retry")


def _on_shutdown(**_: Any) -> None:
    close_contexts()


def install_worker_lifecycle() -> None:
    """Close memory and GitHub clients when a worker (or a pool process) stops, so the
    embedded Qdrant lock is released and nothing is torn down half-way at exit."""
    worker_process_shutdown.connect(_on_shutdown, weak=False, dispatch_uid="kaizen-proc-stop")
    worker_shutdown.connect(_on_shutdown, weak=False, dispatch_uid="kaizen-worker-stop")
