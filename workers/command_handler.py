"""Answering comment commands: what to say, decided without I/O.

The task fetches the commenter's permission only if a privileged verb needs it, then posts
the one reply this module composes. Verbs answered from memory (``report``, ``patterns``,
``mute``, ``unmute``) come in as ``actions`` from the task; a caller without them gets an
honest "cannot be answered here" instead of silence or a pretend answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.commands import PRIVILEGED_VERBS, Command, has_write_access, help_text
from bot.github import Permission

_FEATURE = {
    "report": "Reports",
    "patterns": "The patterns report",
    "mute": "Muting patterns",
    "unmute": "Unmuting patterns",
}


@dataclass(frozen=True)
class Reply:
    body: str
    refused: bool = False


def compose_reply(
    commands: list[Command],
    *,
    user: str,
    app_slug: str,
    permission: Callable[[], Permission],
    config_problems: Sequence[str] = (),
    config_path: str = ".github/kaizen.yml",
    on_pull_request: bool = True,
    actions: Mapping[str, Callable[[Command], str]] | None = None,
) -> Reply | None:
    """One reply for all commands in a comment (several replies would be noise).

    Problems in the repo's config are shown with ``help``: that is where a maintainer
    looks when Kaizen does not behave as configured.
    """
    if not commands:
        return None
    parts: list[str] = []
    refused = False
    allowed: bool | None = None
    for command in commands:
        if command.error:
            parts.append(f"{command.error}\n\n{help_text(app_slug)}")
            continue
        if command.verb in PRIVILEGED_VERBS:
            if allowed is None:
                perm = permission()
                allowed = has_write_access(perm.permission, perm.role_name)
            if not allowed:
                refused = True
                parts.append(
                    f"Sorry @{user}, `{_shown(command)}` needs write access to this repository. "
                    "A maintainer can run it for you."
                )
                continue
        if command.verb == "review":
            if not on_pull_request:
                parts.append(f"`/{app_slug} review` works on pull requests, not on issues.")
            continue  # on a PR the review itself is the answer
        if command.verb == "fix":
            if on_pull_request:
                parts.append(f"`/{app_slug} fix` works on issues, not on pull requests.")
            continue  # on an issue the fix posts its own progress and result
        if command.verb == "cancel":
            parts.append("Stopping the fix on this issue after its current attempt.")
            continue
        if command.verb in ("good", "bad"):
            parts.append(
                f"To tell Kaizen whether one of its comments helped, reply to that review "
                f"comment with `/{app_slug} good` or `/{app_slug} bad <why>`, or react 👍 / 👎."
            )
            continue
        action = (actions or {}).get(command.verb)
        if action is not None:
            parts.append(action(command))
            continue
        if command.verb == "help":
            parts.append(help_text(app_slug))
            if config_problems:
                listed = "\n".join(f"- {problem}" for problem in config_problems)
                parts.append(f"**Problems in `{config_path}`** (ignored, defaults used):\n{listed}")
        else:
            feature = _FEATURE.get(command.verb, f"`{command.verb}`")
            parts.append(
                f"`{_shown(command)}`: {feature} cannot be answered here: this Kaizen has no "
                "memory to answer from. Your request was received and nothing was changed."
            )
    if not parts:
        return None
    return Reply("\n\n---\n\n".join(parts), refused=refused)


def _shown(command: Command) -> str:
    """The command as the user wrote it, safe inside backticks and of bounded length."""
    text = f"/kaizen {command.verb} {command.args}".strip()
    text = text.replace("`", "'").replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."
