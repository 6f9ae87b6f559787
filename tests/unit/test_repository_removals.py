"""Which repositories a GitHub event takes away from the App, for forgetting them."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft7Validator

from bot.routing import Route, route
from tests.helpers import WEBHOOKS, load_webhook
from workers.repository_removals import Removal, repositories_removed

# Built from a real payload (the crafted rename's repository, organization, sender and
# installation) and checked against @octokit/webhooks' schema below.
DELETED = "crafted-repository.deleted.json"


def test_the_crafted_payload_matches_githubs_schema() -> None:
    schema = json.loads((WEBHOOKS / "repository-events.schema.json").read_text())
    validator = Draft7Validator(
        {"definitions": schema["definitions"], "$ref": "#/definitions/repository$deleted"}
    )
    assert [e.message for e in validator.iter_errors(load_webhook(DELETED))] == []


def test_a_deleted_repository_is_removed() -> None:
    assert repositories_removed("repository", "deleted", load_webhook(DELETED)) == Removal(
        ("github/hello-world",), 1, whole_installation=False
    )


def test_repositories_taken_out_of_the_installation_are_removed() -> None:
    payload = load_webhook("installation_repositories.removed.json")
    assert repositories_removed("installation_repositories", "removed", payload) == Removal(
        ("octocat/Hello-World",), payload["installation"]["id"], whole_installation=False
    )


@pytest.mark.parametrize("name", ["installation.deleted.json", "installation.deleted.2.json"])
def test_an_uninstall_removes_the_whole_installation(name: str) -> None:
    payload = load_webhook(name)
    removal = repositories_removed("installation", "deleted", payload)
    assert removal == Removal(("octocat/Hello-World",), payload["installation"]["id"], True)


def test_an_uninstall_listing_no_repositories_still_names_the_installation() -> None:
    payload = {**load_webhook("installation.deleted.json"), "repositories": None}
    assert repositories_removed("installation", "deleted", payload).repos == ()


@pytest.mark.parametrize(
    ("event", "action", "payload", "message"),
    [
        ("repository", "archived", {}, "does not remove"),
        ("installation", "suspend", {}, "does not remove"),
        ("repository", "deleted", {"repository": {"name": "x"}}, "without full_name"),
        ("repository", "deleted", {"repository": {"full_name": "no-slash"}}, "owner/name"),
        ("installation_repositories", "removed", {"repositories_removed": []}, "no repository"),
        ("installation_repositories", "removed", {"repositories_removed": "x"}, "no list"),
        ("installation", "deleted", {"repositories": []}, "installation.id"),
    ],
)
def test_payloads_that_remove_nothing_say_why(
    event: str, action: str, payload: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        repositories_removed(event, action, payload)


@pytest.mark.parametrize(
    ("event", "action"),
    [
        ("repository", "deleted"),
        ("installation", "deleted"),
        ("installation_repositories", "removed"),
    ],
)
def test_removals_reach_the_installation_task(event: str, action: str) -> None:
    assert route(event, {"action": action}, app_slug="kaizen") == Route(
        "kaizen.installation_changed", "feedback"
    )
