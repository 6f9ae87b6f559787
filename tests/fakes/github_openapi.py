"""Contract checking for the fake GitHub: GitHub's own OpenAPI description is the judge.

Why this exists: a fake that is only checked against our own idea of GitHub drifts from
GitHub and then approves code that the real API rejects. Every request the fake receives
and every response and webhook it sends is checked against the subset of GitHub's
published OpenAPI description (``tests/fixtures/github-openapi-subset.json``) that covers
the operations the fake serves. ``make_openapi_subset.py`` regenerates that file from the
full description; the list of operations below is the single source of truth for both.

The checks:

* routing: ``(method, path)`` must match a path template and method of the subset;
* query parameters must be documented for the operation and of the documented type;
* JSON request bodies must match the ``requestBody`` schema. Unknown keys are rejected as
  GitHub's server does (``"x" is not a permitted key.``), although the published schemas
  rarely say ``additionalProperties: false``;
* JSON responses must match the schema documented for their status code, and 2xx codes
  must be documented at all;
* webhook payloads must match the ``x-webhooks`` request body schema of their event.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jsonschema.exceptions import ValidationError
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

SUBSET_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "github-openapi-subset.json"
"""Where the generated subset lives (committed, so tests never need ``../shared``)."""

DOC_URI = "urn:kaizen:github-openapi-subset"

# (method, path template) of every REST operation the fake serves. Keep sorted by area.
SERVED_OPERATIONS: tuple[tuple[str, str], ...] = (
    # GitHub App and installations
    ("GET", "/app"),
    ("GET", "/app/installations"),
    ("GET", "/app/installations/{installation_id}"),
    ("POST", "/app/installations/{installation_id}/access_tokens"),
    ("GET", "/repos/{owner}/{repo}/installation"),
    ("GET", "/orgs/{org}/installation"),
    ("GET", "/users/{username}/installation"),
    ("GET", "/installation/repositories"),
    ("GET", "/app/hook/deliveries"),
    ("GET", "/app/hook/deliveries/{delivery_id}"),
    ("POST", "/app/hook/deliveries/{delivery_id}/attempts"),
    ("GET", "/rate_limit"),
    ("POST", "/app-manifests/{code}/conversions"),
    # repositories, contents, git
    ("GET", "/repos/{owner}/{repo}"),
    ("GET", "/repos/{owner}/{repo}/contents/{path}"),
    ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("GET", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("GET", "/repos/{owner}/{repo}/commits/{ref}"),
    ("GET", "/repos/{owner}/{repo}/git/ref/{ref}"),
    ("POST", "/repos/{owner}/{repo}/git/refs"),
    ("PATCH", "/repos/{owner}/{repo}/git/refs/{ref}"),
    # issues and issue comments
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("GET", "/repos/{owner}/{repo}/issues"),
    ("POST", "/repos/{owner}/{repo}/issues"),
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"),
    # pull requests, review comments, reviews
    ("GET", "/repos/{owner}/{repo}/pulls"),
    ("POST", "/repos/{owner}/{repo}/pulls"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/commits"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"),
    ("GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}"),
    ("PATCH", "/repos/{owner}/{repo}/pulls/comments/{comment_id}"),
    ("GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"),
    ("POST", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("POST", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    # checks
    ("POST", "/repos/{owner}/{repo}/check-runs"),
    ("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
)

# x-webhooks keys (event-action) of every webhook the fake sends.
SENT_WEBHOOKS: tuple[str, ...] = (
    "issues-opened",
    "issues-edited",
    "issues-closed",
    "issues-reopened",
    "issues-labeled",
    "issues-unlabeled",
    "issue-comment-created",
    "issue-comment-edited",
    "issue-comment-deleted",
    "pull-request-opened",
    "pull-request-synchronize",
    "pull-request-closed",
    "pull-request-reopened",
    "pull-request-edited",
    "pull-request-labeled",
    "pull-request-unlabeled",
    "pull-request-review-submitted",
    "pull-request-review-comment-created",
    "pull-request-review-comment-deleted",
    "pull-request-review-comment-edited",
    "pull-request-review-thread-resolved",
    "pull-request-review-thread-unresolved",
    "repository-renamed",
    "repository-transferred",
    "repository-deleted",
    "installation-repositories-removed",
)

# Path parameters that may contain slashes (file paths, git refs, "base...head").
_MULTI_SEGMENT_PARAMS = frozenset({"path", "ref", "basehead"})
_METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


# --------------------------------------------------------------------------- subset builder


def _iter_refs(node: Any) -> Iterator[str]:
    """Yield every ``$ref`` string inside ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _iter_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _iter_refs(item)


def _strip_examples(node: Any) -> Any:
    """Drop media-type ``examples`` maps: large, and not used for validation."""
    if isinstance(node, dict):
        return {
            key: _strip_examples(value)
            for key, value in node.items()
            if not (key == "examples" and isinstance(value, dict))
        }
    if isinstance(node, list):
        return [_strip_examples(item) for item in node]
    return node


def build_subset(
    full: dict[str, Any],
    operations: Iterable[tuple[str, str]] = SERVED_OPERATIONS,
    webhooks: Iterable[str] = SENT_WEBHOOKS,
) -> dict[str, Any]:
    """Return the part of GitHub's OpenAPI description that the fake needs.

    Only the given operations and webhooks are kept, plus every ``#/components/...``
    object they reference, transitively, so that every reference in the result resolves.
    """
    paths: dict[str, dict[str, Any]] = {}
    for method, template in operations:
        item = full["paths"].get(template)
        if item is None or method.lower() not in item:
            raise KeyError(f"{method} {template} is not in GitHub's OpenAPI description")
        kept = paths.setdefault(template, {})
        if "parameters" in item:
            kept["parameters"] = item["parameters"]
        kept[method.lower()] = item[method.lower()]
    hooks: dict[str, Any] = {}
    for name in webhooks:
        if name not in full.get("x-webhooks", {}):
            raise KeyError(f"webhook {name} is not in GitHub's OpenAPI description")
        hooks[name] = full["x-webhooks"][name]
    body = _strip_examples({"paths": paths, "x-webhooks": hooks})

    components: dict[str, dict[str, Any]] = {}
    pending = list(_iter_refs(body))
    while pending:
        ref = pending.pop()
        if not ref.startswith("#/components/"):
            raise ValueError(f"unexpected reference {ref}")
        _, _, kind, name = ref.split("/", 3)
        if name in components.get(kind, {}):
            continue
        target = _strip_examples(full["components"][kind][name])
        components.setdefault(kind, {})[name] = target
        pending.extend(_iter_refs(target))
    return {
        "openapi": full["openapi"],
        "info": {
            **full["info"],
            "x-kaizen-subset": (
                "Generated by tests/fakes/make_openapi_subset.py: only the operations and "
                "webhooks that tests/fakes/github_api.py serves, with the components they "
                "reference; media-type examples removed."
            ),
        },
        "servers": full.get("servers", []),
        "paths": body["paths"],
        "x-webhooks": body["x-webhooks"],
        "components": {kind: dict(sorted(items.items())) for kind, items in components.items()},
    }


# --------------------------------------------------------------------------- contract


def _strip_discriminators(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_discriminators(v) for k, v in node.items() if k != "discriminator"}
    if isinstance(node, list):
        return [_strip_discriminators(v) for v in node]
    return node


def _fix_description(document: dict[str, Any]) -> dict[str, Any]:
    """Repair the few places where GitHub's description contradicts GitHub's answers.

    Each fix is applied when the contract is loaded (the committed subset stays verbatim):

    * ``discriminator`` is dropped everywhere: it is only a hint, and the validator
      insists on an object, while ``GET .../contents/{path}`` discriminates an array
      (a directory listing) from objects.
    * ``GET /app/installations`` describes ``account`` as ``allOf`` user *and*
      enterprise; GitHub sends a user (``GET /app/installations/{id}`` says ``anyOf``).
    """
    document = _strip_discriminators(document)
    listing = document["paths"].get("/app/installations", {}).get("get")
    if listing is not None:
        items = listing["responses"]["200"]["content"]["application/json"]["schema"]["items"]
        account = items.get("properties", {}).get("account", {})
        if "allOf" in account:
            account["anyOf"] = account.pop("allOf")
    return document


@dataclass
class Operation:
    """One documented operation with what is needed to check calls against it."""

    method: str
    template: str
    spec: dict[str, Any]
    regex: re.Pattern[str]
    literal_chars: int
    path_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    query_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    request_schema: dict[str, Any] | None = None
    request_required: bool = False

    @property
    def operation_id(self) -> str:
        return str(self.spec["operationId"])

    @property
    def documentation_url(self) -> str:
        docs = self.spec.get("externalDocs", {})
        return str(docs.get("url", "https://docs.github.com/rest"))


def _pointer(parts: Iterable[str]) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def ruby_inspect(value: Any) -> str:
    """Render a JSON value the way GitHub's (Ruby) validation messages do."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"))


_TYPE_WORDS = {
    "string": "a string",
    "integer": "a number",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
}


class OpenAPIContract:
    """Routes calls to documented operations and validates bodies against their schemas."""

    def __init__(self, document: dict[str, Any]) -> None:
        document = _fix_description(copy.deepcopy(document))
        self.document = document
        self._registry: Registry[Any] = Registry().with_resource(
            DOC_URI, Resource.from_contents(document, default_specification=DRAFT4)
        )
        self._validators: dict[str, Any] = {}
        self.operations: list[Operation] = []
        for template, item in document["paths"].items():
            shared = item.get("parameters", [])
            for method in _METHODS:
                if method in item:
                    self.operations.append(self._build(method.upper(), template, item, shared))
        # Most literal characters first, so ".../commits/{ref}/check-runs" wins over
        # ".../commits/{ref}" whose ref may contain slashes.
        self.operations.sort(key=lambda op: -op.literal_chars)

    @classmethod
    def load(cls, path: Path = SUBSET_PATH) -> OpenAPIContract:
        """The contract for ``path``, parsed once per process (it is read-only)."""
        return _load_cached(path.resolve())

    # ---- construction

    def resolve(self, node: Any) -> Any:
        """Follow ``$ref`` chains inside the document (one level object)."""
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            target: Any = self.document
            for part in ref.lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def _build(
        self, method: str, template: str, item: dict[str, Any], shared: list[Any]
    ) -> Operation:
        spec = item[method.lower()]
        regex_parts: list[str] = []
        literal = 0
        for piece in re.split(r"(\{[^}]+\})", template):
            if piece.startswith("{") and piece.endswith("}"):
                name = piece[1:-1]
                pattern = ".+" if name in _MULTI_SEGMENT_PARAMS else "[^/]+"
                regex_parts.append(f"(?P<{name}>{pattern})")
            else:
                regex_parts.append(re.escape(piece))
                literal += len(piece)
        op = Operation(
            method=method,
            template=template,
            spec=spec,
            regex=re.compile("^" + "".join(regex_parts) + "$"),
            literal_chars=literal,
        )
        for raw in [*shared, *spec.get("parameters", [])]:
            param = self.resolve(raw)
            target = op.path_params if param["in"] == "path" else op.query_params
            if param["in"] in ("path", "query"):
                target[param["name"]] = param
        body = spec.get("requestBody")
        if body is not None:
            body = self.resolve(body)
            media = body.get("content", {}).get("application/json")
            op.request_required = bool(body.get("required"))
            if media is not None and "schema" in media:
                op.request_schema = _close_objects(self._inline(media["schema"], depth=0))
        return op

    def _inline(self, node: Any, depth: int) -> Any:
        """Copy a (request) schema with every ``$ref`` replaced by its target."""
        if depth > 40:
            raise RecursionError("request schema too deep to inline")
        if isinstance(node, dict):
            if "$ref" in node:
                return self._inline(self.resolve(node), depth + 1)
            return {k: self._inline(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self._inline(v, depth + 1) for v in node]
        return node

    # ---- routing

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """Return the documented operation for a call and its path parameters, if any."""
        for op in self.operations:
            if op.method != method:
                continue
            found = op.regex.match(path)
            if found is None:
                continue
            # Like GitHub, match on the raw path, then percent-decode each parameter
            # (a file named "a#b.md" arrives as "a%23b.md").
            params = {k: unquote(v) for k, v in found.groupdict().items()}
            if all(self._param_ok(op.path_params.get(k), v) for k, v in params.items()):
                return op, params
        return None

    def path_documented(self, path: str) -> bool:
        return any(op.regex.match(path) for op in self.operations)

    @staticmethod
    def _param_ok(param: dict[str, Any] | None, value: str) -> bool:
        schema = (param or {}).get("schema", {})
        if schema.get("type") == "integer":
            return value.isdigit()
        return True

    # ---- requests

    def check_query(self, op: Operation, query: Iterable[tuple[str, str]]) -> list[str]:
        """Undocumented or mistyped query parameters (GitHub ignores them silently)."""
        problems: list[str] = []
        for name, value in query:
            param = op.query_params.get(name)
            if param is None:
                problems.append(f"query parameter {name!r} is not documented")
                continue
            schema = self.resolve(param.get("schema", {}))
            kind = schema.get("type")
            if kind == "integer" and not re.fullmatch(r"-?\d+", value):
                problems.append(f"query parameter {name}={value!r} is not an integer")
            elif kind == "boolean" and value not in ("true", "false"):
                problems.append(f"query parameter {name}={value!r} is not a boolean")
            elif "enum" in schema and value not in [str(v) for v in schema["enum"]]:
                problems.append(f"query parameter {name}={value!r} is not one of {schema['enum']}")
        return problems

    def check_request_body(self, op: Operation, body: Any) -> list[str]:
        """GitHub-style validation messages for a JSON body (empty list: valid)."""
        if op.request_schema is None:
            if body in (None, {}):
                return []
            return (
                [f'"{key}" is not a permitted key.' for key in body]
                if isinstance(body, dict)
                else ["Body should be a JSON object"]
            )
        if body is None:
            if op.request_required:
                # What GitHub answers to a POST/PATCH without any body.
                return ["For 'links/0/schema', nil is not an object."]
            body = {}
        validator = OAS30Validator(op.request_schema, format_checker=OAS30Validator.FORMAT_CHECKER)
        messages: list[str] = []
        for error in sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path)):
            messages.extend(_github_message(error))
        return list(dict.fromkeys(messages))

    # ---- responses and webhooks

    def check_response(self, op: Operation, status: int, body: Any, is_json: bool) -> list[str]:
        """Contract problems of a response the fake is about to send."""
        responses = op.spec.get("responses", {})
        documented = responses.get(str(status))
        if documented is None:
            if status < 400:
                return [f"status {status} is not documented (documented: {sorted(responses)})"]
            if is_json and not (isinstance(body, dict) and "message" in body):
                return [f"error response {status} lacks GitHub's 'message'"]
            return []
        documented = self.resolve(documented)
        content = documented.get("content", {})
        media = content.get("application/json")
        if media is None:
            if is_json and body is not None and status < 400:
                return [f"status {status} is documented without a JSON body"]
            return []
        if not is_json:
            return []
        raw = responses[str(status)]
        if "$ref" in raw:
            base = raw["$ref"]
        else:
            base = "#/" + _pointer(["paths", op.template, op.method.lower(), "responses"])
            base += f"/{status}"
        target = base + "/content/application~1json/schema"
        return self._validate(target, body)

    def check_webhook(self, name: str, payload: Any) -> list[str]:
        """Contract problems of a webhook payload for ``x-webhooks`` entry ``name``."""
        hook = self.document.get("x-webhooks", {}).get(name)
        if hook is None:
            return [f"webhook {name} is not in the OpenAPI subset"]
        schema = hook["post"]["requestBody"]["content"]["application/json"]["schema"]
        if "$ref" in schema:
            return self._validate(schema["$ref"], payload)
        return self._validate(
            "#/"
            + _pointer(["x-webhooks", name, "post", "requestBody", "content"])
            + "/application~1json/schema",
            payload,
        )

    def _validate(self, ref: str, instance: Any) -> list[str]:
        validator = self._validators.get(ref)
        if validator is None:
            validator = OAS30Validator(
                {"$ref": DOC_URI + ref},
                registry=self._registry,
                format_checker=OAS30Validator.FORMAT_CHECKER,
            )
            self._validators[ref] = validator
        problems = []
        for error in validator.iter_errors(instance):
            if _nullable_enum(error) or _outdated_anchor(error):
                continue
            where = error.json_path
            detail = _short(_deepest(error).message)
            problems.append(f"{where}: {detail}")
            if len(problems) >= 8:
                problems.append("... (more)")
                break
        return problems


def _nullable_enum(error: ValidationError) -> bool:
    """OAS 3.0 ``nullable: true`` with an ``enum`` lacking null: GitHub sends null there.

    The 3.0.3 text left it open whether ``nullable`` admits null past ``enum``; GitHub's
    description relies on it (``state_reason``, ``start_side``...), so null is accepted.
    """
    schema = error.schema if isinstance(error.schema, dict) else {}
    return error.validator == "enum" and error.instance is None and bool(schema.get("nullable"))


# Review-comment fields GitHub sends as null once the comment is outdated (its line changed
# in a later push), although the description types them as plain integers.
_OUTDATED_NULLS = frozenset({"position", "line"})


def _outdated_anchor(error: ValidationError) -> bool:
    """``position``/``line`` null on an outdated review comment, as GitHub answers."""
    if error.validator != "type" or error.instance is not None or not error.path:
        return False
    schema = error.schema if isinstance(error.schema, dict) else {}
    described = str(schema.get("description") or "")
    return error.path[-1] in _OUTDATED_NULLS and "to which the comment applies" in described


@functools.lru_cache(maxsize=4)
def _load_cached(path: Path) -> OpenAPIContract:
    return OpenAPIContract(json.loads(path.read_text(encoding="utf-8")))


def _deepest(error: ValidationError) -> ValidationError:
    """For oneOf/anyOf failures the useful message is in the best sub-error."""
    if error.context:
        best = max(error.context, key=lambda e: len(e.absolute_path))
        return _deepest(best)
    return error


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _close_objects(schema: Any, in_combinator: bool = False) -> Any:
    """Add ``additionalProperties: false`` where GitHub's server rejects unknown keys.

    Objects that are branches of ``allOf``/``anyOf``/``oneOf`` are left open: closing them
    would make the combination unsatisfiable.
    """
    if isinstance(schema, list):
        return [_close_objects(s, in_combinator) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = copy.copy(schema)
    for key in ("allOf", "anyOf", "oneOf"):
        if key in out:
            out[key] = [_close_objects(s, True) for s in out[key]]
    if "properties" in out:
        out["properties"] = {k: _close_objects(v) for k, v in out["properties"].items()}
        if "additionalProperties" not in out and not in_combinator:
            out["additionalProperties"] = False
    if "items" in out:
        out["items"] = _close_objects(out["items"])
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = _close_objects(out["additionalProperties"])
    return out


def _github_path(parts: list[Any]) -> str:
    """GitHub names the failing place like ``properties/body`` or ``comments/0/line``."""
    if len(parts) == 1 and isinstance(parts[0], str):
        return f"properties/{parts[0]}"
    if len(parts) == 1:
        return "items"
    return "/".join(str(p) for p in parts)


def _github_message(error: ValidationError) -> list[str]:
    """Translate one jsonschema error into GitHub's ``Invalid request`` sentences."""
    instance = error.instance
    prefix = [str(p) for p in error.absolute_path]
    where = _github_path(list(error.absolute_path))
    if error.validator == "required" and isinstance(instance, dict):
        missing = [k for k in error.validator_value if k not in instance]
        if prefix:
            return [f"For '{where}', \"{k}\" wasn't supplied." for k in missing]
        return [f'"{k}" wasn\'t supplied.' for k in missing]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        extras = [k for k in instance if k not in known]
        if prefix:
            return [f"For '{where}', \"{k}\" is not a permitted key." for k in extras]
        return [f'"{k}" is not a permitted key.' for k in extras]
    if error.validator == "type":
        kinds = (
            error.validator_value
            if isinstance(error.validator_value, list)
            else [error.validator_value]
        )
        words = " or ".join(_TYPE_WORDS.get(str(k), str(k)) for k in kinds)
        return [f"For '{where}', {ruby_inspect(instance)} is not {words}."]
    if error.validator in ("anyOf", "oneOf"):
        branches = [s for s in error.validator_value if isinstance(s, dict)]
        kinds = [str(s["type"]) for s in branches if "type" in s]
        if kinds and len(kinds) == len(branches):
            words = " or ".join(_TYPE_WORDS.get(k, f"a {k}").split(" ", 1)[1] for k in kinds)
            return [f"For '{where}', {ruby_inspect(instance)} is not a {words}."]
    if error.validator == "enum":
        options = ", ".join(ruby_inspect(v) for v in error.validator_value)
        return [f"For '{where}', {ruby_inspect(instance)} is not a member of [{options}]."]
    return [f"For '{where}', {_short(error.message)}."]
