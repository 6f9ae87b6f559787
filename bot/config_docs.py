"""The configuration reference (``docs/configuration.md``), generated from the code.

Two sources, both read at run time so the page can never describe settings that do not
exist:

* :class:`bot.settings.Settings`: every server setting with its environment variable,
  type, default, constraints and a description. The description is the field's
  ``description=`` when it has one, else the comment block written just above the field
  in ``bot/settings.py`` (plus a comment at the end of its line), else what the settings
  module says a missing value means. Comment blocks that open a paragraph of the class
  body (after a blank line) are section headings, so the page follows the file's layout.
* :class:`bot.repo_config.RepoConfig`: every key of ``.github/kaizen.yml``, section by
  section, with the section classes' docstrings.

Secrets never appear: a secret field's default is shown as ``(secret, unset)``.

``python -m bot.config_docs`` rewrites the page; ``--check`` exits 1 with a diff when the
committed page differs from what the code says (the unit tests run the same comparison).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import inspect
import io
import json
import re
import sys
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePath
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, SecretBytes, SecretStr
from pydantic.fields import FieldInfo

__all__ = [
    "DOC_PATH",
    "check",
    "main",
    "render",
    "render_repo_config_reference",
    "render_settings_reference",
]

DOC_PATH = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
"""Where the generated page is committed."""

SECRET_DEFAULT = "(secret, unset)"  # noqa: S105 - a label, not a password
_SECRET_WORDS = ("token", "secret", "key", "password", "passwd", "credential", "credentials")
_OTHER_SECTION = "Other settings"
_REGENERATE = "python -m bot.config_docs"


# --- Source comments ----------------------------------------------------------------------


@dataclass
class _FieldSource:
    """What the source says about one field: its comments and the section it opens."""

    comment: str = ""
    section: str | None = None  # heading comment, when this field opens a paragraph
    opens_paragraph: bool = False


@dataclass
class _Section:
    title: str
    intro: str = ""
    names: list[str] = field(default_factory=list)


def _comments_by_line(source: str) -> dict[int, str]:
    """The text of every ``#`` comment, by 1-based line number."""
    comments: dict[int, str] = {}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    return comments


def _class_field_sources(cls: type) -> dict[str, _FieldSource]:
    """Comments around each annotated field of ``cls``, read from its module's source.

    A comment block directly above a field (no blank line between) belongs to it; so does
    a comment at the end of its first line. If the block follows a blank line (or opens
    the class body), it starts a new paragraph and is read as a section heading instead.
    Returns an empty mapping when the source cannot be read (an installed wheel without
    sources still renders, only without comments).
    """
    try:
        source = inspect.getsource(sys.modules[cls.__module__])
    except (OSError, TypeError, KeyError):
        return {}
    tree = ast.parse(source)
    lines = source.splitlines()
    comments = _comments_by_line(source)
    node = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__),
        None,
    )
    if node is None:
        return {}
    found: dict[str, _FieldSource] = {}
    previous_end = node.lineno  # the ``class`` line (or the previous statement's last line)
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            previous_end = stmt.end_lineno or stmt.lineno
            continue
        info = _FieldSource()
        block: list[str] = []
        line = stmt.lineno - 1
        while line > previous_end and line in comments and lines[line - 1].lstrip().startswith("#"):
            block.insert(0, comments[line])
            line -= 1
        between = lines[previous_end:line]  # lines after the previous statement, above block
        blank_before = any(not text.strip() for text in between) or previous_end == node.lineno
        text = " ".join(part for part in block if part)
        if blank_before:
            info.opens_paragraph = True
            info.section = text or None
        else:
            info.comment = text
        trailing = comments.get(stmt.lineno)
        if trailing and not lines[stmt.lineno - 1].lstrip().startswith("#"):
            info.comment = f"{info.comment} {trailing}".strip()
        found[stmt.target.id] = info
        previous_end = stmt.end_lineno or stmt.lineno
    return found


def _heading(comment: str) -> tuple[str, str]:
    """``(title, intro)`` from a section comment such as ``Task limits: why ...``."""
    text = comment.strip()
    match = re.match(r"^(.+?)(?:\s*[:;(]|\.(?:\s|$))", text)
    title = (match.group(1) if match else text).strip().rstrip(".")
    intro = "" if text.rstrip(".") == title else text
    return title, intro


def _sections(model: type[BaseModel]) -> list[_Section]:
    """The fields of ``model`` grouped by the paragraphs of its class body."""
    sources = _class_field_sources(model)
    sections: list[_Section] = []
    other = _Section(_OTHER_SECTION)
    current: _Section | None = None
    for name in model.model_fields:
        info = sources.get(name, _FieldSource())
        if current is None or info.opens_paragraph:
            if info.section:
                title, intro = _heading(info.section)
                current = _Section(title, intro)
                sections.append(current)
            else:
                current = other
        current.names.append(name)
    if other.names:
        sections.append(other)
    return sections


# --- Types, defaults, constraints --------------------------------------------------------


def _strip_annotated(annotation: Any) -> tuple[Any, list[Any]]:
    """``(inner type, metadata)`` of ``Annotated[...]``; anything else as is."""
    if get_origin(annotation) is Annotated:
        inner, *metadata = get_args(annotation)
        return inner, metadata
    return annotation, []


def _optional(annotation: Any) -> tuple[Any, bool]:
    """``(T, True)`` for ``T | None``; ``(annotation, False)`` otherwise."""
    if get_origin(annotation) in (Union, UnionType):
        args = [a for a in get_args(annotation) if a is not NoneType]
        if len(args) < len(get_args(annotation)):
            return (args[0] if len(args) == 1 else Union[tuple(args)]), True  # noqa: UP007
    return annotation, False


def _is_secret_type(annotation: Any) -> bool:
    inner, _ = _strip_annotated(_optional(annotation)[0])
    return inner in (SecretStr, SecretBytes)


def is_secret(name: str, info: FieldInfo) -> bool:
    """Whether a setting holds a credential: typed as a secret or named like one."""
    words = name.lower().split("_")
    return _is_secret_type(info.annotation) or (bool(words) and words[-1] in _SECRET_WORDS)


def _type_name(annotation: Any) -> str:
    """A short, human name for a type (``integer``, ``list of strings``, ``one of``...)."""
    annotation, _ = _strip_annotated(annotation)
    inner, _ = _optional(annotation)
    inner, _ = _strip_annotated(inner)
    origin = get_origin(inner)
    if inner in (SecretStr, SecretBytes):
        name = "secret"
    elif origin is Literal:
        name = "choice"
    elif origin in (tuple, list, set, frozenset):
        args = [a for a in get_args(inner) if a is not Ellipsis]
        item = _type_name(args[0]) if args else "value"
        plural = {"section": "sections", "string": "strings", "integer": "integers"}
        name = f"list of {plural.get(item, item)}"
    elif isinstance(inner, type) and issubclass(inner, BaseModel):
        name = "section"
    elif inner is bool:
        name = "boolean"
    elif inner is int:
        name = "integer"
    elif inner is float:
        name = "number"
    elif inner is str:
        name = "string"
    elif isinstance(inner, type) and issubclass(inner, PurePath):
        name = "path"
    elif isinstance(inner, type):
        name = inner.__name__
    else:
        name = str(inner)
    return name


def _literal_choices(annotation: Any) -> list[Any]:
    inner, _ = _optional(_strip_annotated(annotation)[0])
    inner, _ = _strip_annotated(inner)
    return list(get_args(inner)) if get_origin(inner) is Literal else []


def _bound_texts(metadata: Sequence[Any], *, sized: str = "characters") -> list[str]:
    """``≥ 0``, ``at most 100 items``, ``matches ^...$`` from pydantic/annotated-types
    metadata objects (by attribute, so new metadata classes degrade to nothing)."""
    out: list[str] = []
    for item in metadata:
        for attr, symbol in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤")):
            value = getattr(item, attr, None)
            if value is not None and not isinstance(value, bool):
                out.append(f"{symbol} {_number(value)}")
        multiple = getattr(item, "multiple_of", None)
        if multiple is not None:
            out.append(f"multiple of {_number(multiple)}")
        low = getattr(item, "min_length", None)
        high = getattr(item, "max_length", None)
        if low is not None and high is not None:
            out.append(f"{low} to {high} {sized}")
        elif low is not None:
            out.append(f"at least {low} {sized}")
        elif high is not None:
            out.append(f"at most {high} {sized}")
        pattern = getattr(item, "pattern", None)
        if pattern is not None:
            text = pattern.pattern if isinstance(pattern, re.Pattern) else str(pattern)
            out.append(f"matches `{text}`")
        func = getattr(item, "func", None)
        if func is not None:
            explanation = _validator_explanation(func)
            if explanation:
                out.append(explanation)
    return out


def _validator_explanation(func: Any) -> str:
    """What an ``AfterValidator`` checks: its docstring, or the reason string it closes
    over (``_matching(regex, reason)`` in ``bot.repo_config``)."""
    doc = inspect.getdoc(func)
    if doc:
        return _first_sentence(doc)
    for cell in getattr(func, "__closure__", None) or ():
        value = cell.cell_contents
        if isinstance(value, str) and " " in value:
            return value
    return ""


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _constraints(info: FieldInfo) -> list[str]:
    """Bounds of the field itself, of its items (for lists) and its choices."""
    annotation = info.annotation
    inner, _ = _optional(annotation)
    inner, inner_meta = _strip_annotated(inner)
    is_list = get_origin(inner) in (tuple, list, set, frozenset)
    out = [f"one of {', '.join(f'`{c}`' for c in _literal_choices(annotation))}"]
    if len(out[0]) == len("one of "):
        out = []
    out += _bound_texts([*info.metadata, *inner_meta], sized="items" if is_list else "characters")
    if is_list:
        args = [a for a in get_args(inner) if a is not Ellipsis]
        if args:
            item, item_meta = _strip_annotated(args[0])
            item_bounds = _bound_texts(item_meta)
            choices = _literal_choices(item)
            if choices:
                item_bounds.insert(0, f"one of {', '.join(f'`{c}`' for c in choices)}")
            out += [f"each item: {text}" for text in item_bounds]
    return out


def _validator_notes(model: type[BaseModel]) -> dict[str, tuple[list[str], list[str]]]:
    """Per field, ``(descriptions, constraints)`` from its ``@field_validator`` functions.

    A validator's docstring (first paragraph) describes what the field accepts; without
    one, each ``ValueError`` it raises whose message starts with "must" becomes a
    constraint (``must be an http(s) URL``).
    """
    notes: dict[str, tuple[list[str], list[str]]] = {}
    decorators = getattr(model, "__pydantic_decorators__", None)
    validators = getattr(decorators, "field_validators", {}) if decorators else {}
    for decorator in validators.values():
        func = getattr(decorator.func, "__func__", decorator.func)
        doc = inspect.getdoc(func)
        described = [_first_sentence(doc)] if doc else []
        constraints = [] if doc else _raised_messages(func)
        for name in decorator.info.fields:
            texts, rules = notes.setdefault(name, ([], []))
            texts += [t for t in described if t not in texts]
            rules += [r for r in constraints if r not in rules]
    return notes


def _model_validator_notes(model: type[BaseModel]) -> list[str]:
    """The docstrings of ``@model_validator`` functions (checks across fields, other
    sources of values), one paragraph each; validators without a docstring are skipped."""
    decorators = getattr(model, "__pydantic_decorators__", None)
    validators = getattr(decorators, "model_validators", {}) if decorators else {}
    out = []
    for decorator in validators.values():
        doc = inspect.getdoc(getattr(decorator.func, "__func__", decorator.func))
        if doc:
            out.append(" ".join(doc.replace("``", "`").split()))
    return out


def _raised_messages(func: Any) -> list[str]:
    """The constant start of each ``raise ValueError("must ...")`` in ``func``."""
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        if not node.exc.args:
            continue
        arg = node.exc.args[0]
        text = ""
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            text = arg.value
        elif isinstance(arg, ast.JoinedStr):
            for part in arg.values:
                if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                    break
                text += part.value
        text = re.sub(r"[,:;]?\s*(got)?\s*$", "", text.strip())
        if text.startswith("must") and text not in out:
            out.append(text)
    return out


def _first_sentence(text: str) -> str:
    paragraph = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    return paragraph.replace("``", "`")


def _default_value(info: FieldInfo) -> Any:
    if info.default_factory is not None:
        return info.get_default(call_default_factory=True, validated_data={})
    return info.default


def _env_default(name: str, info: FieldInfo) -> str:
    """The default as it would be written in the environment."""
    if is_secret(name, info):
        return SECRET_DEFAULT if _default_value(info) in (None, "") else "(secret, not shown)"
    value = _default_value(info)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, PurePath):
        value = str(value)
    if isinstance(value, (list, tuple, dict, set)):
        return f"`{json.dumps(value, default=str)}`"
    return f"`{_number(value)}`" if value != "" else '`""`'


def _yaml_default(info: FieldInfo) -> str:
    value = _default_value(info)
    if isinstance(value, BaseModel):
        return "(section)"
    if isinstance(value, tuple | list) and any(isinstance(v, BaseModel) for v in value):
        value = [v.model_dump(mode="json") for v in value]
    text = json.dumps(_jsonable(value), ensure_ascii=False)
    return f"`{text}`"


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    return value


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    text = " ".join(text.split())
    return text.replace("|", "\\|") if text else "-"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


# --- Server settings ----------------------------------------------------------------------


def _env_names(name: str, info: FieldInfo, prefix: str) -> list[str]:
    """The environment variable(s) pydantic-settings reads for a field."""
    alias = info.validation_alias or info.alias
    if isinstance(alias, str):
        return [alias.upper()]
    choices = getattr(alias, "choices", None)
    if choices:
        return [c.upper() for c in choices if isinstance(c, str)]
    return [f"{prefix}{name}".upper()]


def render_settings_reference() -> str:
    """Markdown for every field of :class:`bot.settings.Settings` (read at call time)."""
    from bot import settings as settings_module

    model = settings_module.Settings
    prefix = str(model.model_config.get("env_prefix") or "")
    sources = _class_field_sources(model)
    notes = _validator_notes(model)
    needed_for: dict[str, str] = getattr(settings_module, "_REQUIREMENT_HELP", {})
    out = ["## Server settings (environment)", ""]
    doc = inspect.getdoc(model)
    if doc:
        out += [_first_sentence(doc), ""]
    out += [
        f"Every process reads these from its environment (prefix `{prefix}`), once, at "
        "start; an invalid value stops it with one line naming the variable, and each "
        "process asks only for the settings it uses (`kaizen doctor` checks them all). "
        "An empty value of a secret means unset. Secrets are never shown here.",
        "",
    ]
    whole_model = _model_validator_notes(model)
    if whole_model:
        out += ["Besides single variables:", ""]
        out += [f"- {text}" for text in whole_model]
        out.append("")
    for section in _sections(model):
        out += [f"### {section.title}", ""]
        if section.intro:
            out += [section.intro, ""]
        rows = []
        for name in section.names:
            info = model.model_fields[name]
            description = (info.description or "").strip()
            if not description:
                description = sources.get(name, _FieldSource()).comment
            described, rules = notes.get(name, ([], []))
            if not description and described:
                description = " ".join(described)
            if name in needed_for:
                help_text = needed_for[name]
                description = f"{description} {help_text[:1].upper()}{help_text[1:]}.".strip()
            constraints = _constraints(info) + rules
            env = ", ".join(f"`{e}`" for e in _env_names(name, info, prefix))
            rows.append(
                [
                    env,
                    _type_name(info.annotation),
                    _env_default(name, info),
                    "; ".join(constraints),
                    description,
                ]
            )
        out += _table(("Variable", "Type", "Default", "Constraints", "Description"), rows)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


# --- Repository configuration -------------------------------------------------------------


def _section_model(annotation: Any) -> type[BaseModel] | None:
    inner, _ = _optional(_strip_annotated(annotation)[0])
    inner, _ = _strip_annotated(inner)
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return inner
    return None


def _item_model(annotation: Any) -> type[BaseModel] | None:
    inner, _ = _optional(_strip_annotated(annotation)[0])
    inner, _ = _strip_annotated(inner)
    if get_origin(inner) in (tuple, list):
        for arg in get_args(inner):
            model = _section_model(arg)
            if model is not None:
                return model
    return None


def _walk_sections(
    model: type[BaseModel], path: str
) -> list[tuple[str, type[BaseModel], list[str]]]:
    """``(dotted path, model, scalar keys)`` for ``model`` and every nested section."""
    scalars: list[str] = []
    nested: list[tuple[str, type[BaseModel], list[str]]] = []
    for name, info in model.model_fields.items():
        full = f"{path}.{name}" if path else name
        section = _section_model(info.annotation)
        items = _item_model(info.annotation)
        if section is not None:
            nested += _walk_sections(section, full)
        else:
            scalars.append(name)
            if items is not None:
                nested += _walk_sections(items, f"{full}[]")
    return [(path, model, scalars), *nested]


def render_repo_config_reference() -> str:
    """Markdown for every key of ``.github/kaizen.yml`` (:class:`bot.repo_config.RepoConfig`)."""
    from bot import repo_config

    model = repo_config.RepoConfig
    out = [
        "## Repository settings (`" + repo_config.CONFIG_PATH + "`)",
        "",
        f"A repository tunes Kaizen with `{repo_config.CONFIG_PATH}` on its default branch; "
        "without one, the file in the owner's `.github` repository applies. A file may start "
        "from another repository's file with `_extends: <repo>` or `_extends: <owner>/<repo>` "
        "(one level). The effective configuration is the defaults below deep-merged with the "
        "file: mappings merge key by key, lists and scalars replace. Files over "
        f"{repo_config.MAX_CONFIG_BYTES // 1024} KiB are refused. Unknown keys, invalid "
        "values and YAML errors never stop Kaizen: each becomes a one-line problem and the "
        "key (or, for a syntax error, the whole file) falls back to its default. Keys that "
        "look like an endpoint, credential or backend setting (`url`, `token`, `api_key`, "
        "`sandbox`, ...) are refused at any depth: those are server settings.",
        "",
    ]
    for path, section, names in _walk_sections(model, ""):
        if not names:
            continue
        title = f"`{path}`" if path else "Top level"
        out += [f"### {title}", ""]
        doc = inspect.getdoc(section)
        if doc:
            out += [" ".join(doc.replace("``", "`").split()), ""]
        sources = _class_field_sources(section)
        rows = []
        for name in names:
            info = section.model_fields[name]
            key = f"{path}.{name}" if path else name
            item = _item_model(info.annotation)
            description = (info.description or "").strip() or sources.get(
                name, _FieldSource()
            ).comment
            if item is not None:
                description = f"{description} Items: see `{key}[]`.".strip()
            default = "(required)" if info.is_required() else _yaml_default(info)
            rows.append(
                [
                    f"`{key}`",
                    _type_name(info.annotation),
                    default,
                    "; ".join(_constraints(info)),
                    description,
                ]
            )
        out += _table(("Key", "Type", "Default", "Constraints", "Description"), rows)
        out.append("")
    defaults = model().model_dump(mode="json")
    out += [
        "### The defaults as a file",
        "",
        "Writing this file changes nothing; a real file sets only what differs.",
        "",
        "```yaml",
        yaml.safe_dump(defaults, sort_keys=False, allow_unicode=True).rstrip(),
        "```",
        "",
    ]
    return "\n".join(out).rstrip() + "\n"


# --- The page and the CLI -----------------------------------------------------------------


def render() -> str:
    """The whole ``docs/configuration.md``."""
    head = [
        "# Configuration reference",
        "",
        f"<!-- Generated by `{_REGENERATE}` from bot/settings.py and bot/repo_config.py; "
        "do not edit by hand. CI fails when this page is stale. -->",
        "",
        "Kaizen has two kinds of configuration: server settings, from the environment of "
        "each process, and repository settings, from a YAML file in each repository. "
        "Anything that could redirect an endpoint or touch a credential is a server setting "
        "only.",
        "",
        "- [Server settings (environment)](#server-settings-environment)",
        "- [Repository settings](#repository-settings-githubkaizenyml)",
        "",
    ]
    parts = ["\n".join(head), render_settings_reference(), render_repo_config_reference()]
    return "\n".join(parts)


def check(path: Path = DOC_PATH) -> tuple[bool, str]:
    """``(up to date, unified diff)`` of the committed page against a fresh rendering."""
    fresh = render()
    try:
        committed = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        committed = ""
    if committed == fresh:
        return True, ""
    diff = difflib.unified_diff(
        committed.splitlines(keepends=True),
        fresh.splitlines(keepends=True),
        fromfile=f"{path} (committed)",
        tofile=f"{path} (from the code)",
    )
    return False, "".join(diff)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.config_docs",
        description="Write docs/configuration.md from the settings model and repo config.",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 with a diff if the file is stale"
    )
    parser.add_argument("--out", type=Path, default=DOC_PATH, help="the file to write or check")
    args = parser.parse_args(argv)
    if args.check:
        ok, diff = check(args.out)
        if ok:
            print(f"{args.out} is up to date")
            return 0
        sys.stdout.write(diff)
        print(f"\n{args.out} is stale: run `{_REGENERATE}` and commit it", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
