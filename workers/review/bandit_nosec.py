"""Ruff's bandit checks (the S rules) on a line where the team wrote bandit's ``# nosec``.

Ruff implements bandit's checks under the same numbers (bandit's B608 is ruff's S608)
but reads only its own ``# noqa``. A team that runs bandit marks a line it has looked at
with ``# nosec`` (every check) or ``# nosec B608`` (that check): kedro-datasets 9.6
builds ``f"SELECT * FROM {self.table_name}"  # nosec B608`` under a comment saying the
table name comes from the catalog's configuration, and Kaizen made it an "important" SQL
injection remark on the very line the team had cleared. The comment is read as bandit
reads it: IDs or test names after ``nosec`` silence those checks; anything else after it
(a reason in words) leaves it a blanket ``nosec``.
"""

from __future__ import annotations

import re

__all__ = ["silenced_by_nosec"]

_COMMENT = re.compile(r"#[^'\"]*$")  # a comment with no quote after its "#"
_NOSEC = re.compile(r"#\s*nosec\b:?([^#]*)", re.IGNORECASE)
_BANDIT_ID = re.compile(r"^B(\d{3})$", re.IGNORECASE)
_RUFF_BANDIT_CODE = re.compile(r"^S\d{3}$")

# bandit's test names for the checks teams name most, by ID (``# nosec exec_used``)
_TEST_NAMES = {
    "assert_used": "101",
    "exec_used": "102",
    "set_bad_file_permissions": "103",
    "hardcoded_bind_all_interfaces": "104",
    "hardcoded_password_string": "105",
    "hardcoded_password_funcarg": "106",
    "hardcoded_password_default": "107",
    "hardcoded_tmp_directory": "108",
    "try_except_pass": "110",
    "try_except_continue": "112",
    "request_without_timeout": "113",
    "request_with_no_cert_validation": "501",
    "subprocess_popen_with_shell_equals_true": "602",
    "subprocess_without_shell_equals_true": "603",
    "start_process_with_a_shell": "605",
    "start_process_with_partial_path": "607",
    "hardcoded_sql_expressions": "608",
    "jinja2_autoescape_false": "701",
}


def silenced_by_nosec(text: str, row: int, code: str) -> bool:
    """Whether ``row`` of ``text`` carries a ``# nosec`` comment that covers the ruff
    bandit rule ``code`` (``S608``)."""
    if not _RUFF_BANDIT_CODE.match(code):
        return False
    lines = text.splitlines()
    if not 0 < row <= len(lines):
        return False
    comment = _COMMENT.search(lines[row - 1])
    if comment is None:
        return False
    number = code[1:]
    for found in _NOSEC.finditer(comment.group()):
        named = {_number_of(word) for word in re.split(r"[\s,]+", found.group(1)) if word}
        named.discard(None)
        if not named or number in named:
            return True
    return False


def _number_of(word: str) -> str | None:
    """``B608`` or ``hardcoded_sql_expressions`` → ``608``; None for other words."""
    by_id = _BANDIT_ID.match(word)
    return by_id.group(1) if by_id else _TEST_NAMES.get(word.lower())
