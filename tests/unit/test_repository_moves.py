"""A renamed or transferred repository: which names the event moves memory between."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft7Validator

from bot.routing import Ignore, Route, route
from tests.helpers import WEBHOOKS, load_webhook
from workers.repository_moves import NotAMove, repository_move

# Built from a real payload's repository, organization, sender and installation, with the
# ``changes`` GitHub documents; checked against @octokit/webhooks' schema below.
RENAMED = "crafted-repository.renamed.json"
TRANSFERRED = "crafted-repository.transferred.json"


@pytest.mark.parametrize(
    ("name", "definition"),
    [(RENAMED, "repository$renamed"), (TRANSFERRED, "repository$transferred")],
)
def test_the_crafted_payloads_match_githubs_schema(name: str, definition: str) -> None:
    schema = json.loads((WEBHOOKS / "repository-events.schema.json").read_text())
    validator = Draft7Validator(
        {"definitions": schema["definitions"], "$ref": f"#/definitions/{definition}"}
    )
    assert [e.message for e in validator.iter_errors(load_webhook(name))] == []


def test_a_rename_moves_from_the_old_name_under_the_same_owner() -> None:
    assert repository_move("renamed", load_webhook(RENAMED)) == (
        "github/hello-world-old",
        "github/hello-world",
    )


def test_a_transfer_moves_from_the_old_owner() -> None:
    assert repository_move("transferred", load_webhook(TRANSFERRED)) == (
        "octocat/hello-world",
        "github/hello-world",
    )


def test_a_transfer_from_an_organization_names_it() -> None:
    payload = load_webhook(TRANSFERRED)
    payload["changes"]["owner"]["from"] = {"organization": {"login": "acme", "id": 9}}
    assert repository_move("transferred", payload)[0] == "acme/hello-world"


def _without(path: list[str], name: str) -> dict[str, Any]:
    payload = copy.deepcopy(load_webhook(name))
    node = payload
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return payload


@pytest.mark.parametrize(
    ("action", "payload"),
    [
        ("renamed", _without(["changes", "repository", "name", "from"], RENAMED)),
        ("renamed", _without(["changes"], RENAMED)),
        ("transferred", _without(["changes", "owner", "from", "user"], TRANSFERRED)),
        ("renamed", _without(["repository"], RENAMED)),
        ("edited", load_webhook(RENAMED)),
    ],
)
def test_a_payload_that_does_not_say_where_from_is_refused(
    action: str, payload: dict[str, Any]
) -> None:
    with pytest.raises(NotAMove):
        repository_move(action, payload)


def test_renames_and_transfers_are_routed_and_other_repository_events_ignored() -> None:
    for name in (RENAMED, TRANSFERRED):
        payload = load_webhook(name)
        assert route("repository", payload, app_slug="kaizen") == Route(
            "kaizen.repository_moved", "feedback"
        )
    archived = {**load_webhook(RENAMED), "action": "archived"}
    assert route("repository", archived, app_slug="kaizen") == Ignore(
        "repository.archived is not used"
    )
