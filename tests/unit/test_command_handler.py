from __future__ import annotations

import pytest

from bot.commands import parse_commands
from bot.github import Permission
from workers.command_handler import compose_reply


def perm(level: str, role: str | None = None) -> Permission:
    return Permission(level, role or level)


class Lookup:
    """Counts permission look-ups: each costs a GitHub call."""

    def __init__(self, permission: Permission) -> None:
        self.permission = permission
        self.calls = 0

    def __call__(self) -> Permission:
        self.calls += 1
        return self.permission


READ = perm("read")


def reply(body: str, permission: Permission = READ, **kw: object) -> tuple[str, bool, int]:
    lookup = Lookup(permission)
    result = compose_reply(
        parse_commands(body, "kaizen"), user="octocat", app_slug="kaizen", permission=lookup, **kw
    )
    assert result is not None
    return result.body, result.refused, lookup.calls


def test_no_commands_no_reply() -> None:
    assert compose_reply([], user="a", app_slug="kaizen", permission=Lookup(perm("admin"))) is None


def test_help_needs_no_permission_lookup() -> None:
    body, refused, calls = reply("/kaizen help")
    assert "/kaizen fix" in body and not refused and calls == 0


@pytest.mark.parametrize("verb", ["fix", "mute ruff:E501", "unmute ruff:E501", "cancel"])
def test_privileged_verbs_refused_without_write_access(verb: str) -> None:
    body, refused, _ = reply(f"/kaizen {verb}", perm("read"))
    assert refused
    assert body.startswith("Sorry @octocat")
    assert "needs write access" in body


@pytest.mark.parametrize(
    ("level", "role"), [("write", "write"), ("write", "maintain"), ("admin", None)]
)
def test_privileged_verbs_allowed_with_write_access(level: str, role: str | None) -> None:
    body, refused, _ = reply("/kaizen mute ruff:E501", perm(level, role))
    assert not refused
    assert "cannot be answered here" in body


def test_fix_on_an_issue_needs_no_reply_the_fix_answers() -> None:
    lookup = Lookup(perm("write"))
    result = compose_reply(
        parse_commands("/kaizen fix", "kaizen"),
        user="octocat",
        app_slug="kaizen",
        permission=lookup,
        on_pull_request=False,
    )
    assert result is None


def test_cancel_is_acknowledged() -> None:
    body, refused, _ = reply("/kaizen cancel", perm("write"))
    assert not refused and "Stopping the fix" in body


def test_permission_is_looked_up_once_per_comment() -> None:
    _, _, calls = reply("/kaizen fix\n/kaizen cancel\n/kaizen mute ruff:E501", perm("write"))
    assert calls == 1


def test_unknown_verb_gets_help() -> None:
    body, refused, _ = reply("/kaizen frobnicate")
    assert "frobnicate" in body and "/kaizen fix" in body and not refused


def test_memory_verbs_without_memory_say_so_honestly() -> None:
    body, _, _ = reply("/kaizen report")
    assert "`/kaizen report`: Reports cannot be answered here" in body


def test_review_on_a_pull_request_needs_no_reply_the_review_answers() -> None:
    lookup = Lookup(READ)
    result = compose_reply(
        parse_commands("/kaizen review", "kaizen"),
        user="octocat",
        app_slug="kaizen",
        permission=lookup,
    )
    assert result is None


def test_review_on_an_issue_explains_where_it_works() -> None:
    body, _, _ = reply("/kaizen review", on_pull_request=False)
    assert "works on pull requests" in body


def test_good_and_bad_as_top_level_comments_explain_how_to_give_feedback() -> None:
    body, _, _ = reply("/kaizen bad")
    assert "reply to that review comment" in body


def test_user_text_cannot_break_out_of_code_span() -> None:
    body, _, _ = reply("/kaizen fix `rm -rf` " + "x" * 200, perm("write"))
    shown = body.split("`")[1]
    assert "rm -rf" not in shown or "'" in shown
    assert len(shown) <= 80


def test_config_problems_are_listed_with_help() -> None:
    body, _, _ = reply(
        "/kaizen help",
        config_problems=["unknown key review.maxcomments (did you mean review.max_comments?)"],
        config_path="octo/app:.github/kaizen.yml",
    )
    assert "Problems in `octo/app:.github/kaizen.yml`" in body
    assert "- unknown key review.maxcomments" in body
