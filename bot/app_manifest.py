"""Registering Kaizen's GitHub App from its manifest, as Probot does it.

The flow (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest):

1. With no App configured, ``kaizen serve`` shows a setup form at ``/``; posting it
   (``POST /setup``) creates a random ``state``, kept server-side under the data dir for
   ``STATE_TTL_S``, and answers a page that posts the manifest (``deploy/app.yml``, packaged
   as ``bot/app_manifest.yml``, plus this instance's URLs) to GitHub: a personal account's
   ``/settings/apps/new`` or an organisation's.
2. The user confirms on GitHub; GitHub creates the App and redirects the browser to the
   manifest's ``redirect_url`` (``/setup/callback``) with a one-time ``code`` and the state.
3. Kaizen checks and consumes the state, then exchanges the code
   (``POST /app-manifests/{code}/conversions``, no authentication; the code is single-use
   and expires after an hour, GitHub answers 404 otherwise) for the App's id, slug, private
   key, webhook secret and client credentials.
4. Kaizen stores them in ``<data_dir>/github-app.json``, created mode 0600 and never
   replaced (settings read it on the next start, the environment winning), or, for people
   who keep secrets in a secret store, shows them once and writes nothing.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import ipaddress
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlparse

import httpx
import yaml

from bot.settings import Settings

MANIFEST_RESOURCE = "app_manifest.yml"
STATE_TTL_S = 3600.0
"""How long a setup started on ``/`` may take on GitHub; as long as GitHub's code lives."""
STATE_DIR = "app-setup"
APP_NAME_MAX = 34  # GitHub's limit for App names

_STATE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_ORG = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")


class SetupError(Exception):
    """A setup request that cannot go on; ``str()`` is shown to the user."""


class ManifestCodeRejected(SetupError):
    """GitHub refused the code: unknown, already used, or older than an hour."""


class GitHubUnreachable(SetupError):
    """GitHub could not be asked (network, 5xx): the same code may work on a retry."""


# --------------------------------------------------------------------------- the manifest


def manifest_template() -> dict[str, Any]:
    """``deploy/app.yml`` as packaged: name, description, permissions and events."""
    return copy.deepcopy(_packaged_manifest())


@functools.cache
def _packaged_manifest() -> dict[str, Any]:
    text = resources.files("bot").joinpath(MANIFEST_RESOURCE).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise RuntimeError(f"bot/{MANIFEST_RESOURCE} is not a mapping")
    return data


def setup_pending(settings: Settings) -> bool:
    """No App at all (neither in the environment nor stored): serve the setup page."""
    return settings.app_id is None and settings.webhook_secret is None


def public_base(settings: Settings, request_base_url: str) -> str:
    """The URL GitHub and browsers reach Kaizen at: KAIZEN_PUBLIC_URL or the request's."""
    return (settings.public_url or request_base_url).rstrip("/")


def build_manifest(public_url: str, *, name: str | None = None) -> dict[str, Any]:
    """The manifest to post to GitHub, with this instance's URLs filled in."""
    base = public_url.rstrip("/")
    manifest = manifest_template()
    if name:
        manifest["name"] = name
    manifest["url"] = base + "/"
    manifest["hook_attributes"] = {"url": base + "/webhooks/github", "active": True}
    manifest["redirect_url"] = base + "/setup/callback"
    manifest["setup_url"] = base + "/setup/installed"
    manifest["setup_on_update"] = False
    manifest["request_oauth_on_install"] = False
    return manifest


def clean_app_name(raw: str | None) -> str | None:
    """The App name typed on the setup form (None: the manifest's), or SetupError."""
    name = " ".join((raw or "").split())
    if not name:
        return None
    if len(name) > APP_NAME_MAX:
        raise SetupError(f"GitHub App names have at most {APP_NAME_MAX} characters.")
    return name


def clean_org(raw: str | None) -> str:
    org = (raw or "").strip()
    if not _ORG.match(org):
        raise SetupError("Give the organisation's login, e.g. octo-org (letters, digits, -).")
    return org


def registration_url(web_url: str, state: str, org: str | None = None) -> str:
    """GitHub's "new App from manifest" page for a personal account or an organisation."""
    base = web_url.rstrip("/")
    page = f"/organizations/{quote(org)}/settings/apps/new" if org else "/settings/apps/new"
    return f"{base}{page}?{urlencode({'state': state})}"


def unreachable_by_github(url: str) -> bool:
    """True for loopback, private and ``.local`` hosts: GitHub cannot deliver webhooks there."""
    host = (urlparse(url).hostname or "").lower()
    if host in ("localhost", "") or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class PendingSetup:
    """What ``POST /setup`` decided, kept server-side until GitHub sends the user back."""

    created: float
    print_only: bool
    org: str | None


class StateStore:
    """One file per state, named by its hash, claimed (deleted) by the callback that uses it.

    Files, not memory: with ``kaizen serve --workers N`` the callback may reach another
    process than the one that started the setup.
    """

    def __init__(self, folder: Path, ttl_s: float = STATE_TTL_S) -> None:
        self.folder = folder
        self.ttl_s = ttl_s

    def _path(self, state: str) -> Path:
        return self.folder / (hashlib.sha256(state.encode()).hexdigest() + ".json")

    def create(self, *, print_only: bool, org: str | None) -> str:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.prune()
        state = secrets.token_urlsafe(32)
        self._write(state, PendingSetup(time.time(), print_only, org))
        return state

    def restore(self, state: str, pending: PendingSetup) -> None:
        """Put a claimed state back (GitHub was unreachable: the user may retry)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._write(state, pending)

    def _write(self, state: str, pending: PendingSetup) -> None:
        record = {"created": pending.created, "print_only": pending.print_only, "org": pending.org}
        fd = os.open(self._path(state), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(record, out)

    def claim(self, state: str | None) -> PendingSetup | None:
        """The pending setup of ``state``, once: None if unknown, used or expired."""
        if not state or not _STATE.match(state):
            return None
        path = self._path(state)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            path.unlink()  # only one caller succeeds: the state is single-use
        except (OSError, ValueError):
            return None
        pending = PendingSetup(
            created=float(record.get("created", 0)),
            print_only=bool(record.get("print_only")),
            org=record.get("org"),
        )
        if time.time() - pending.created > self.ttl_s:
            return None
        return pending

    def prune(self) -> None:
        cutoff = time.time() - self.ttl_s
        for path in self.folder.glob("*.json"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                continue


def state_store(settings: Settings) -> StateStore:
    return StateStore(settings.data_dir / STATE_DIR)


# --------------------------------------------------------------------------- the exchange


@dataclass(frozen=True)
class AppCredentials:
    """What GitHub hands over once for an App registered from a manifest."""

    app_id: int
    slug: str
    name: str
    html_url: str
    owner: str | None
    client_id: str
    client_secret: str
    webhook_secret: str | None
    private_key: str

    @property
    def install_url(self) -> str:
        return self.html_url.rstrip("/") + "/installations/new"

    @classmethod
    def from_conversion(cls, data: Any) -> AppCredentials:
        if not isinstance(data, dict):
            raise GitHubUnreachable("GitHub's answer was not a JSON object.")
        try:
            return cls(
                app_id=int(data["id"]),
                slug=str(data["slug"]),
                name=str(data.get("name") or data["slug"]),
                html_url=str(data["html_url"]),
                owner=(data.get("owner") or {}).get("login"),
                client_id=str(data.get("client_id") or ""),
                client_secret=str(data.get("client_secret") or ""),
                webhook_secret=data.get("webhook_secret") or None,
                private_key=str(data["pem"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GitHubUnreachable(f"GitHub's answer lacks the App's {exc}.") from None

    def env_lines(self) -> list[str]:
        """The settings to put in a secret store (the private key is shown on its own)."""
        lines = [f"KAIZEN_APP_ID={self.app_id}", f"KAIZEN_APP_SLUG={self.slug}"]
        if self.webhook_secret:
            lines.append(f"KAIZEN_WEBHOOK_SECRET={self.webhook_secret}")
        lines.append("KAIZEN_PRIVATE_KEY=<the private key below, or the path of a file holding it>")
        return lines

    def stored_record(self, settings: Settings) -> dict[str, Any]:
        return {
            "app_id": self.app_id,
            "slug": self.slug,
            "name": self.name,
            "html_url": self.html_url,
            "owner": self.owner,
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "webhook_secret": self.webhook_secret,
            "private_key": self.private_key,
            "github_api_url": settings.github_api_url,
            "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }


def exchange_code(settings: Settings, code: str) -> AppCredentials:
    """``POST /app-manifests/{code}/conversions``: the App's credentials, once per code."""
    if not _CODE.match(code or ""):
        raise ManifestCodeRejected("GitHub's code is missing or malformed.")
    url = f"{settings.github_api_url}/app-manifests/{code}/conversions"
    headers = {
        "Accept": "application/vnd.github+json",
        "User-Agent": "kaizen-bot",
        "X-GitHub-Api-Version": "2022-11-28",
    }
    try:
        response = httpx.post(url, headers=headers, timeout=settings.github_timeout_s)
    except httpx.HTTPError as exc:
        raise GitHubUnreachable(f"GitHub could not be reached: {exc}") from None
    if response.status_code in (404, 422):
        raise ManifestCodeRejected(
            "GitHub no longer accepts this code: it is used once and expires after an hour."
        )
    if response.status_code != 201:
        raise GitHubUnreachable(f"GitHub answered {response.status_code}.")
    try:
        data = response.json()
    except ValueError:
        raise GitHubUnreachable("GitHub's answer was not JSON.") from None
    return AppCredentials.from_conversion(data)


# --------------------------------------------------------------------------- storage


def store_credentials(path: Path, record: dict[str, Any]) -> bool:
    """Write ``record`` to ``path`` with mode 0600; False (nothing written) if it exists.

    The file is written under a temporary name created 0600 with O_EXCL (never readable
    by others, not even briefly, whatever the umask), flushed, then linked to ``path``:
    ``link`` fails rather than replace, so stored credentials are never overwritten, and
    readers never see a half-written file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return False
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)  # a umask can only have removed bits
            json.dump(record, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        return True
    finally:
        temporary.unlink(missing_ok=True)
