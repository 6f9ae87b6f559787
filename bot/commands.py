"""Parse the commands users write to Kaizen in issue and pull-request comments.

Users address Kaizen with a line that starts with ``/kaizen <verb> [args]`` or with a
mention of the app, ``@<app-slug> <verb> [args]`` (also ``@<app-slug>[bot]``). This module
turns a comment body into a list of :class:`Command` values and nothing else: it does no
I/O, knows nothing about GitHub, and never raises on user input, so the webhook can call
it on untrusted text and the worker can decide what to do with each result.

Why the Markdown awareness: people quote earlier comments, paste logs and show examples
("you can type `/kaizen fix` here"). Only text the author actually wrote as a command
should trigger work, so lines that GitHub renders as code, quotes or hidden HTML comments
are never commands. When in doubt the parser errs towards *not* running a command: a
missed command costs the user a retry, a spurious ``fix`` costs a sandbox run and a PR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_COMMANDS",
    "PRIVILEGED_VERBS",
    "SLASH_COMMAND",
    "UNKNOWN_VERB",
    "VERBS",
    "Command",
    "contains_command",
    "has_write_access",
    "help_text",
    "parse_commands",
    "pattern_matches",
    "validate_pattern",
]

SLASH_COMMAND = "/kaizen"
"""The slash-style trigger. Matched case-insensitively, like mentions."""

UNKNOWN_VERB = "unknown"
"""Verb of a :class:`Command` whose word was not recognised; ``args`` holds that word."""

MAX_COMMANDS = 10
"""At most this many commands are taken from one comment.

One comment should not be able to enqueue unbounded work; ten is far more than any
person types by hand, and extra lines are simply ignored.
"""

PRIVILEGED_VERBS: frozenset[str] = frozenset({"fix", "mute", "unmute", "cancel"})
"""Verbs that change the repository or Kaizen's behaviour for everyone.

They need write access (see :func:`has_write_access`). Everything else only reads or
records feedback, so anyone who can comment may use it.
"""

_WRITE_LEVELS: frozenset[str] = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True, slots=True)
class _VerbSpec:
    """How a verb is written and explained; the single source for parsing and help."""

    name: str
    usage: str
    summary: str
    takes_args: bool = False
    required_arg: str | None = None
    reply_only: bool = False


_VERB_SPECS: tuple[_VerbSpec, ...] = (
    _VerbSpec("help", "help", "Show this list of commands."),
    _VerbSpec("review", "review", "Review this pull request now (again, if it was reviewed)."),
    _VerbSpec(
        "fix",
        "fix [hint...]",
        "Try to fix this issue or the findings on this pull request, and open a pull "
        "request with the change. Anything after `fix` is passed on as a hint.",
        takes_args=True,
    ),
    _VerbSpec("report", "report", "Post a summary of Kaizen's findings for this thread."),
    _VerbSpec(
        "patterns", "patterns", "List the patterns Kaizen has learned or muted in this repo."
    ),
    _VerbSpec(
        "mute",
        "mute <pattern>",
        "Stop reporting a kind of finding in this repository, e.g. `ruff:B006`, "
        "`secrets:aws-key`, `llm:naming`, or a whole family such as `ruff:*`.",
        takes_args=True,
        required_arg="pattern",
    ),
    _VerbSpec(
        "unmute",
        "unmute <pattern>",
        "Report a muted kind of finding again.",
        takes_args=True,
        required_arg="pattern",
    ),
    _VerbSpec("cancel", "cancel", "Stop the review or fix Kaizen is running for this thread."),
    _VerbSpec(
        "good",
        "good [why...]",
        "Reply to one of Kaizen's comments to say it was useful (and optionally why).",
        takes_args=True,
        reply_only=True,
    ),
    _VerbSpec(
        "bad",
        "bad [why...]",
        "Reply to one of Kaizen's comments to say it was wrong or noisy (and optionally why).",
        takes_args=True,
        reply_only=True,
    ),
)
_SPECS_BY_NAME: dict[str, _VerbSpec] = {spec.name: spec for spec in _VERB_SPECS}

VERBS: tuple[str, ...] = tuple(spec.name for spec in _VERB_SPECS)
"""Every verb Kaizen understands, in the order the help text lists them."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command found in a comment.

    Attributes:
        verb: A name from :data:`VERBS`, or :data:`UNKNOWN_VERB` when the word after the
            trigger was not recognised.
        args: The rest of the line with whitespace collapsed: the ``fix`` hint, the
            ``mute``/``unmute`` pattern, the ``good``/``bad`` reason. It is raw user text:
            escape it before echoing it into a comment. Empty for verbs that
            take no arguments (extra words are dropped so repeats dedupe). For an unknown
            verb it is the word the user typed (at most 40 characters).
        line: 1-based line number in the comment body, so replies can point at it.
        error: ``None`` when the command is usable. Otherwise a short user-facing sentence
            (unknown verb, missing or invalid pattern); the handler should reply with it
            followed by :func:`help_text` and not run anything.
    """

    verb: str
    args: str
    line: int
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the command can be executed (no parse error)."""
        return self.error is None


# --- Markdown structure -------------------------------------------------------------

_LINE_SPLIT_RE = re.compile(r"\r\n|\r|\n")
_FENCE_OPEN_RE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE_RE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*$")
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"


def _indent_width(line: str) -> int:
    """Columns of leading whitespace, with tabs to the next multiple of 4 (CommonMark)."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


_BACKTICK_RUN_RE = re.compile(r"`+")


def _scan_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """Split off HTML comments from one line.

    Returns the text before the first comment opened on this line (empty if the line
    starts inside a comment) and whether a comment is still open at the end of the line.
    Backtick code spans are skipped so that an example like ``<!--`` written in inline
    code does not hide the rest of the comment.
    """
    if not in_comment and _COMMENT_OPEN not in line:
        return line, False
    prefix: str | None = "" if in_comment else None
    i = 0
    n = len(line)
    while i < n:
        if in_comment:
            end = line.find(_COMMENT_CLOSE, i)
            if end < 0:
                return prefix or "", True
            in_comment = False
            i = end + len(_COMMENT_CLOSE)
            continue
        if line.startswith(_COMMENT_OPEN, i):
            if prefix is None:
                prefix = line[:i]
            in_comment = True
            i += len(_COMMENT_OPEN)
            continue
        if line[i] == "`":
            run = _BACKTICK_RUN_RE.match(line, i)
            assert run is not None
            i = _code_span_end(line, run.end(), len(run.group()))
            continue
        i += 1
    return (line if prefix is None else prefix), in_comment


def _code_span_end(line: str, start: int, length: int) -> int:
    """Where scanning resumes after a backtick run of ``length`` ending at ``start``.

    That is just past the closing run of exactly ``length`` backticks when there is one
    (the span is code), else ``start`` (the backticks are literal text).
    """
    for run in _BACKTICK_RUN_RE.finditer(line, start):
        if len(run.group()) == length:
            return run.end()
    return start


def _candidate_lines(body: str) -> list[tuple[int, str]]:
    """Lines (1-based number, text) that GitHub would render as ordinary prose.

    Drops fenced and indented code, quotes and HTML comments; what remains may start
    with a command. Line endings ``\\r\\n``, ``\\r`` and ``\\n`` are all accepted.
    """
    candidates: list[tuple[int, str]] = []
    fence: str | None = None
    in_comment = False
    for number, line in enumerate(_LINE_SPLIT_RE.split(body), start=1):
        if fence is not None:
            closing = _FENCE_CLOSE_RE.match(line)
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence):
                fence = None
            continue
        if in_comment:
            _, in_comment = _scan_comments(line, in_comment=True)
            continue
        if line.lstrip(" \t").startswith(">"):
            continue
        opening = _FENCE_OPEN_RE.match(line)
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = opening["fence"]
            continue
        if _indent_width(line) >= 4:
            continue
        visible, in_comment = _scan_comments(line, in_comment=False)
        if visible.strip():
            candidates.append((number, visible.strip()))
    return candidates


# --- Commands -------------------------------------------------------------------------


def _normalise_slug(app_slug: str) -> str:
    """Accept ``kaizen``, ``@kaizen`` or ``kaizen[bot]`` for the same app."""
    slug = app_slug.strip().lstrip("@")
    if slug.lower().endswith("[bot]"):
        slug = slug[: -len("[bot]")]
    return slug


def _trigger_re(app_slug: str) -> re.Pattern[str]:
    """Regex matching a command line's trigger and capturing the rest of the line.

    The trigger must be followed by whitespace or the end of the line, so
    ``/kaizenfix``, ``/kaizen-x`` and ``@kaizen-other`` are not triggers. A mention may be
    followed by ``:`` or ``,`` because people address someone that way.
    """
    alternatives = [re.escape(SLASH_COMMAND)]
    slug = _normalise_slug(app_slug)
    if slug:
        alternatives.append(rf"@{re.escape(slug)}(?:\[bot\])?[:,]?")
    return re.compile(rf"^(?:{'|'.join(alternatives)})(?=\s|$)(?P<rest>.*)$", re.IGNORECASE)


_PATTERN_RE = re.compile(
    r"^[a-z0-9][a-z0-9_-]{0,31}:(?:\*|[a-z0-9][a-z0-9_.:/-]{0,99}\*?)$", re.IGNORECASE
)
_PATTERN_EXAMPLES = "`ruff:B006`, `secrets:aws-key`, `llm:naming` or `ruff:*`"


def validate_pattern(pattern: str) -> str | None:
    """Return why ``pattern`` is not a valid mute pattern, or ``None`` if it is.

    A pattern is ``<family>:<rule>`` made of letters, digits and ``_ - . / :``; the rule
    may be ``*`` (the whole family) or end in ``*`` (a prefix such as ``ruff:E5*``).
    The check is deliberately narrow because patterns are stored, echoed back into
    comments and matched against finding ids; anything else is more likely a typo.
    """
    if _PATTERN_RE.fullmatch(pattern):
        return None
    return (
        f"`{_code(pattern)}` is not a valid pattern: use `family:rule` with letters, digits, "
        f"`_ - . / :` and an optional trailing `*`, e.g. {_PATTERN_EXAMPLES}."
    )


def _code(text: str, limit: int = 60) -> str:
    """User text made safe to echo inside a Markdown code span in a bot reply.

    Backticks are removed so the text cannot close the span and turn into live Markdown
    (links, ``@team`` mentions that notify people); long text is shortened.
    """
    cleaned = text.replace("`", "")
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def pattern_matches(pattern: str, finding_id: str) -> bool:
    """Whether a mute pattern covers a finding id such as ``ruff:B006`` (case-insensitive).

    A trailing ``*`` matches any suffix, so ``ruff:*`` covers every ruff rule and
    ``ruff:E5*`` covers ``ruff:E501``; otherwise the ids must be equal.
    """
    pat = pattern.casefold()
    target = finding_id.casefold()
    if pat.endswith("*"):
        return target.startswith(pat[:-1])
    return pat == target


def _build(verb_word: str, args: str, line: int) -> Command:
    """Turn the verb word and the rest of the line into a :class:`Command`."""
    verb = verb_word.lower().rstrip(".!?,;:")
    spec = _SPECS_BY_NAME.get(verb)
    if spec is None:
        word = verb_word[:40]
        return Command(UNKNOWN_VERB, word, line, f"I don't know the command `{_code(word)}`.")
    if not spec.takes_args:
        return Command(verb, "", line)
    if spec.required_arg is None:
        return Command(verb, args, line)
    usage = f"usage: `{SLASH_COMMAND} {spec.usage}` (e.g. {_PATTERN_EXAMPLES})"
    parts = args.split()
    if not parts:
        return Command(verb, "", line, f"`{verb}` needs a {spec.required_arg}; {usage}.")
    if len(parts) > 1:
        return Command(verb, args, line, f"`{verb}` takes exactly one pattern; {usage}.")
    problem = validate_pattern(parts[0])
    return Command(verb, parts[0], line, problem)


def parse_commands(body: str, app_slug: str) -> list[Command]:
    """Find every command in a comment body, in order, each distinct command once.

    A command is a line whose first token is ``/kaizen`` or ``@<app_slug>`` (optionally
    ``@<app_slug>[bot]``); the trigger and verb are case-insensitive and ``/kaizen``
    alone means ``help``. Lines in fenced or indented code, quotes and HTML comments are
    ignored, as are mentions in the middle of a sentence. Repeats of the same verb and
    arguments are reported once (at their first line), and at most
    :data:`MAX_COMMANDS` are returned. Never raises for any input string.

    ``good``/``bad`` are parsed wherever they appear; only the caller knows whether the
    comment is a reply to one of Kaizen's own comments, and must check that.
    """
    if not body:
        return []
    trigger = _trigger_re(app_slug)
    commands: list[Command] = []
    seen: set[tuple[str, str]] = set()
    for number, text in _candidate_lines(body):
        match = trigger.match(text)
        if match is None:
            continue
        words = match["rest"].split()
        if words:
            command = _build(words[0], " ".join(words[1:]), number)
        else:
            command = Command("help", "", number)
        key = (command.verb, command.args.casefold())
        if key in seen:
            continue
        seen.add(key)
        commands.append(command)
        if len(commands) >= MAX_COMMANDS:
            break
    return commands


def contains_command(body: str, app_slug: str) -> bool:
    """Cheap check whether a comment holds any command (including unknown verbs).

    The webhook uses this to decide whether a comment is worth queueing. A substring
    test rejects almost every comment without parsing; the rest get the full parse so
    that quoted or fenced examples do not queue work.
    """
    lowered = body.lower()
    slug = _normalise_slug(app_slug).lower()
    if SLASH_COMMAND not in lowered and not (slug and f"@{slug}" in lowered):
        return False
    return bool(parse_commands(body, app_slug))


def has_write_access(permission: str, role_name: str | None) -> bool:
    """Whether a collaborator may run :data:`PRIVILEGED_VERBS`.

    Takes the two fields of GitHub's "get repository permissions for a user" response.
    ``permission`` is the legacy level, where ``maintain`` is reported as ``write`` and a
    custom role reports its base role; ``role_name`` is the actual role (``maintain``, or
    a custom role's name). Either one naming admin, maintain or write grants access;
    ``triage``, ``read`` and ``none`` do not.
    """
    levels = {permission.strip().lower(), (role_name or "").strip().lower()}
    return not levels.isdisjoint(_WRITE_LEVELS)


def help_text(app_slug: str) -> str:
    """The Markdown reply explaining every command, its arguments and who may use it."""
    slug = _normalise_slug(app_slug) or "kaizen"
    rows = []
    for spec in _VERB_SPECS:
        if spec.name in PRIVILEGED_VERBS:
            who = "People with write access"
        elif spec.reply_only:
            who = "Anyone, as a reply to a Kaizen comment"
        else:
            who = "Anyone who can comment"
        rows.append(f"| `{SLASH_COMMAND} {spec.usage}` | {spec.summary} | {who} |")
    table = "\n".join(rows)
    return (
        "### Kaizen commands\n\n"
        f"Start a line of a comment with `{SLASH_COMMAND}` or `@{slug}`, followed by a "
        f"command. For example `{SLASH_COMMAND} review` or `@{slug} fix use the retry "
        "helper`. Commands inside code blocks, quotes and HTML comments are ignored, and "
        "a comment may hold several commands, one per line.\n\n"
        "| Command | What it does | Who can use it |\n"
        "| --- | --- | --- |\n"
        f"{table}\n\n"
        "Patterns name a kind of finding as `family:rule`, e.g. "
        f"{_PATTERN_EXAMPLES}; a trailing `*` covers every rule that starts that way.\n"
    )
