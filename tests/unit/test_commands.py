"""Tests for the comment-command parser in bot.commands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.commands import (
    MAX_COMMANDS,
    PRIVILEGED_VERBS,
    UNKNOWN_VERB,
    VERBS,
    Command,
    contains_command,
    has_write_access,
    help_text,
    parse_commands,
    pattern_matches,
    validate_pattern,
)

SLUG = "kaizen-bot"


def verbs(body: str) -> list[tuple[str, str]]:
    """(verb, args) pairs parsed from ``body``, ignoring line numbers and errors."""
    return [(c.verb, c.args) for c in parse_commands(body, SLUG)]


# --- triggers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "/kaizen review",
        "/KAIZEN Review",
        "@kaizen-bot review",
        "@Kaizen-Bot REVIEW",
        "@kaizen-bot[bot] review",
        "@kaizen-bot: review",
        "@kaizen-bot, review",
        "   /kaizen review",
        "/kaizen\treview",
        "/kaizen review   ",
        "/kaizen review!",
    ],
)
def test_trigger_forms_are_recognised(body: str) -> None:
    assert verbs(body) == [("review", "")]


@pytest.mark.parametrize(
    "body",
    [
        "/kaizenfix",
        "/kaizen-x review",
        "/kaizen_review",
        "@kaizen-bot-staging review",
        "@kaizen-botreview",
        "@other-app review",
        "kaizen review",
        "thanks @kaizen-bot for that review",
        "please run /kaizen review",
        "- /kaizen review",
        "Use `/kaizen fix` to fix this.",
        "`/kaizen fix`",
        "",
        "   ",
    ],
)
def test_non_commands_are_ignored(body: str) -> None:
    assert parse_commands(body, SLUG) == []


@pytest.mark.parametrize("slug", ["kaizen-bot", "@kaizen-bot", "kaizen-bot[bot]", "Kaizen-Bot"])
def test_app_slug_may_be_given_in_any_form(slug: str) -> None:
    assert [c.verb for c in parse_commands("@kaizen-bot review", slug)] == ["review"]


def test_empty_slug_still_accepts_slash_command() -> None:
    assert [c.verb for c in parse_commands("/kaizen review\n@ review", "")] == ["review"]


def test_slug_is_matched_literally_not_as_regex() -> None:
    assert parse_commands("@kaizenXbot review", "kaizen.bot") == []


# --- verbs and arguments --------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/kaizen", ("help", "")),
        ("@kaizen-bot", ("help", "")),
        ("/kaizen help", ("help", "")),
        ("/kaizen review", ("review", "")),
        ("/kaizen review this again please", ("review", "")),
        ("/kaizen report", ("report", "")),
        ("/kaizen patterns", ("patterns", "")),
        ("/kaizen cancel", ("cancel", "")),
        ("/kaizen fix", ("fix", "")),
        ("/kaizen fix   use the  retry helper  ", ("fix", "use the retry helper")),
        ("/kaizen good", ("good", "")),
        ("/kaizen good  caught a real bug", ("good", "caught a real bug")),
        (
            "/kaizen bad false positive, we validate upstream",
            ("bad", "false positive, we validate upstream"),
        ),
        ("/kaizen mute ruff:B006", ("mute", "ruff:B006")),
        ("/kaizen unmute secrets:aws-key", ("unmute", "secrets:aws-key")),
        ("/kaizen mute ruff:*", ("mute", "ruff:*")),
        ("/kaizen mute llm:naming", ("mute", "llm:naming")),
    ],
)
def test_verbs_and_arguments(body: str, expected: tuple[str, str]) -> None:
    [command] = parse_commands(body, SLUG)
    assert (command.verb, command.args) == expected
    assert command.error is None
    assert command.ok


def test_fix_hint_is_only_the_rest_of_the_line() -> None:
    assert verbs("/kaizen fix use retries\nand also log it") == [("fix", "use retries")]


def test_unknown_verb_keeps_the_word_and_explains() -> None:
    [command] = parse_commands("/kaizen frobnicate now", SLUG)
    assert command.verb == UNKNOWN_VERB
    assert command.args == "frobnicate"
    assert command.error is not None
    assert "frobnicate" in command.error
    assert not command.ok


def test_unknown_verb_word_is_truncated() -> None:
    [command] = parse_commands("/kaizen " + "x" * 500, SLUG)
    assert command.args == "x" * 40


@pytest.mark.parametrize("verb", ["mute", "unmute"])
def test_mute_without_pattern_is_an_error_with_usage(verb: str) -> None:
    [command] = parse_commands(f"/kaizen {verb}", SLUG)
    assert command.verb == verb
    assert command.error is not None
    assert f"/kaizen {verb} <pattern>" in command.error


def test_echoed_user_text_cannot_break_out_of_code_span() -> None:
    [unknown, mute] = parse_commands("/kaizen x`@org/team`\n/kaizen mute a:`@org/team`", SLUG)
    for command in (unknown, mute):
        assert command.error is not None
        assert command.error.count("`") % 2 == 0
        assert "`@org/team`" not in command.error


def test_mute_with_two_patterns_is_an_error() -> None:
    [command] = parse_commands("/kaizen mute ruff:B006 ruff:E501", SLUG)
    assert command.error is not None
    assert "exactly one pattern" in command.error


@pytest.mark.parametrize(
    "pattern",
    [
        "B006",
        "ruff",
        "ruff:",
        ":B006",
        "ruff:B0$6",
        "ruff:*B",
        "ruff:**",
        "$(id):x",
        "a:" + "b" * 200,
    ],
)
def test_mute_with_bad_pattern_is_rejected(pattern: str) -> None:
    [command] = parse_commands(f"/kaizen mute {pattern}", SLUG)
    assert command.verb == "mute"
    assert command.error is not None
    assert "not a valid pattern" in command.error


@pytest.mark.parametrize(
    "pattern",
    ["ruff:B006", "secrets:aws-key", "llm:naming", "ruff:*", "ruff:E5*", "semgrep:python.lang/x_y"],
)
def test_valid_patterns(pattern: str) -> None:
    assert validate_pattern(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "finding", "expected"),
    [
        ("ruff:B006", "ruff:B006", True),
        ("ruff:b006", "RUFF:B006", True),
        ("ruff:B006", "ruff:B0061", False),
        ("ruff:*", "ruff:E501", True),
        ("ruff:*", "secrets:aws-key", False),
        ("ruff:E5*", "ruff:E501", True),
        ("ruff:E5*", "ruff:E401", False),
    ],
)
def test_pattern_matches(pattern: str, finding: str, expected: bool) -> None:
    assert pattern_matches(pattern, finding) is expected


# --- Markdown structure ---------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "```\n/kaizen fix\n```",
        "```bash\n/kaizen fix\n```",
        "~~~\n/kaizen fix\n~~~",
        "~~~~\n/kaizen fix\n~~~~",
        "   ```\n/kaizen fix\n   ```",
        "````\n```\n/kaizen fix\n````",
        "~~~\n```\n/kaizen fix\n~~~",
        "```\n~~~\n/kaizen fix\n```",
        "```\n/kaizen fix",
        "    /kaizen fix",
        "\t/kaizen fix",
        "  \t/kaizen fix",
        "> /kaizen fix",
        ">/kaizen fix",
        "  > /kaizen fix",
        "> > /kaizen fix",
        ">> /kaizen fix",
        "<!-- /kaizen fix -->",
        "<!--\n/kaizen fix\n-->",
        "<!-- note\n\n/kaizen fix\n\nend -->",
        "-->\n<!--\n/kaizen fix",
    ],
)
def test_commands_in_code_quotes_and_comments_are_ignored(body: str) -> None:
    assert parse_commands(body, SLUG) == []


@pytest.mark.parametrize(
    "body",
    [
        "```\ncode\n```\n/kaizen review",
        "~~~\ncode\n~~~\n/kaizen review",
        "````\ncode\n```\n````\n/kaizen review",
        "   ~~~\ncode\n  ~~~\n/kaizen review",
        "<!-- hidden -->\n/kaizen review",
        "<!--\nhidden\n-->\n/kaizen review",
        "> quoted\n\n/kaizen review",
        "    code\n/kaizen review",
        "```py\n```\n/kaizen review",
    ],
)
def test_commands_after_closed_blocks_are_found(body: str) -> None:
    assert verbs(body) == [("review", "")]


def test_backtick_fence_info_with_backticks_is_not_a_fence() -> None:
    assert verbs("``` not a `fence`\n/kaizen review") == [("review", "")]


def test_closing_fence_must_use_the_same_character() -> None:
    assert parse_commands("```\n~~~\n/kaizen fix", SLUG) == []


def test_indented_four_spaces_is_not_a_fence() -> None:
    assert verbs("    ```\n/kaizen review") == [("review", "")]


def test_trailing_html_comment_is_dropped_from_arguments() -> None:
    assert verbs("/kaizen fix use retries <!-- internal note -->") == [("fix", "use retries")]


def test_comment_opened_at_end_of_line_hides_following_lines() -> None:
    assert verbs("/kaizen review <!--\n/kaizen fix\n-->") == [("review", "")]


def test_comment_marker_in_inline_code_does_not_open_a_comment() -> None:
    assert verbs("Type `<!--` to hide text.\n/kaizen review") == [("review", "")]


def test_text_after_comment_close_on_same_line_is_not_a_command() -> None:
    assert parse_commands("<!--\n--> /kaizen fix", SLUG) == []


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_line_endings(newline: str) -> None:
    body = newline.join(["hi", "```", "/kaizen fix", "```", "/kaizen review", "@kaizen-bot cancel"])
    commands = parse_commands(body, SLUG)
    assert [(c.verb, c.line) for c in commands] == [("review", 5), ("cancel", 6)]


def test_crlf_does_not_leak_into_arguments() -> None:
    assert verbs("/kaizen mute ruff:B006\r\n/kaizen good nice\r\n") == [
        ("mute", "ruff:B006"),
        ("good", "nice"),
    ]


# --- several commands -----------------------------------------------------------------


def test_multiple_commands_in_order_with_line_numbers() -> None:
    body = "Thanks!\n/kaizen mute ruff:E501\n\n@kaizen-bot review\n/kaizen frob"
    assert parse_commands(body, SLUG) == [
        Command("mute", "ruff:E501", 2),
        Command("review", "", 4),
        Command(UNKNOWN_VERB, "frob", 5, "I don't know the command `frob`."),
    ]


def test_duplicates_are_reported_once_at_first_line() -> None:
    body = "/kaizen review\n@kaizen-bot REVIEW please\n/kaizen fix a\n/kaizen fix  a\n/kaizen fix b"
    assert [(c.verb, c.args, c.line) for c in parse_commands(body, SLUG)] == [
        ("review", "", 1),
        ("fix", "a", 3),
        ("fix", "b", 5),
    ]


def test_number_of_commands_is_capped() -> None:
    body = "\n".join(f"/kaizen fix hint {i}" for i in range(50))
    assert len(parse_commands(body, SLUG)) == MAX_COMMANDS


# --- contains_command ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/kaizen review", True),
        ("@KAIZEN-BOT fix", True),
        ("/kaizen nonsense", True),
        ("/kaizen mute", True),
        ("LGTM", False),
        ("thanks @kaizen-bot", False),
        ("> /kaizen review", False),
        ("```\n/kaizen review\n```", False),
        ("see /kaizenfix", False),
    ],
)
def test_contains_command(body: str, expected: bool) -> None:
    assert contains_command(body, SLUG) is expected


# --- permissions --------------------------------------------------------------------


def test_privileged_verbs() -> None:
    assert frozenset({"fix", "mute", "unmute", "cancel"}) == PRIVILEGED_VERBS
    assert set(VERBS) >= PRIVILEGED_VERBS


@pytest.mark.parametrize(
    ("permission", "role_name", "expected"),
    [
        ("admin", "admin", True),
        ("write", "maintain", True),
        ("write", "write", True),
        ("write", None, True),
        ("maintain", None, True),
        ("ADMIN", None, True),
        ("write", "security-engineer", True),
        ("read", "triage", False),
        ("read", "read", False),
        ("read", "auditor", False),
        ("none", None, False),
        ("", None, False),
    ],
)
def test_has_write_access(permission: str, role_name: str | None, expected: bool) -> None:
    assert has_write_access(permission, role_name) is expected


# --- help -----------------------------------------------------------------------------


def test_help_lists_every_verb_usage_and_audience() -> None:
    text = help_text("kaizen-bot")
    for verb in VERBS:
        assert f"`/kaizen {verb}" in text
    assert "/kaizen mute <pattern>" in text
    assert "/kaizen fix [hint...]" in text
    assert "@kaizen-bot" in text
    assert "write access" in text
    for line in text.splitlines():
        if line.startswith("| `/kaizen fix"):
            assert "write access" in line
        if line.startswith("| `/kaizen review"):
            assert "Anyone" in line


def test_help_text_commands_parse_back() -> None:
    """Every usage shown in the help must itself be accepted by the parser."""
    for verb in VERBS:
        arg = "ruff:B006" if verb in {"mute", "unmute"} else ""
        [command] = parse_commands(f"/kaizen {verb} {arg}", SLUG)
        assert command.verb == verb
        assert command.ok


# --- robustness -----------------------------------------------------------------------


@given(st.text())
def test_parsing_arbitrary_text_never_raises(body: str) -> None:
    commands = parse_commands(body, SLUG)
    assert len(commands) <= MAX_COMMANDS
    assert contains_command(body, SLUG) is bool(commands)


@given(
    st.lists(
        st.sampled_from(
            [
                "/kaizen",
                "@kaizen-bot",
                "fix",
                "mute",
                "```",
                "~~~",
                "<!--",
                "-->",
                ">",
                "    ",
                "\t",
                "`",
                "\r\n",
                "\n",
                " ",
                "ruff:*",
                "x",
            ]
        )
    )
)
def test_parsing_markdown_like_text_never_raises(parts: list[str]) -> None:
    body = "".join(parts)
    for command in parse_commands(body, SLUG):
        assert command.verb in (*VERBS, UNKNOWN_VERB)
        assert command.line >= 1
