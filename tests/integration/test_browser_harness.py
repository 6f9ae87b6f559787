"""The headless-Chromium harness (tests/browser.py) against a small server on 127.0.0.1.

A real Chromium renders an inline SVG, sends the Authorization header it is given (200
with it, 401 without), reports a page's request to an outside host while that request
never gets out, writes a full-page PNG, and logs in through a form that sets a cookie and
redirects. Selenium Manager is made to fail for the whole module, so the browser starts
only from the Debian binaries it is pointed at.

Skipped when Chromium, chromedriver or selenium is missing, unless
``KAIZEN_REQUIRE_BROWSER=1`` (set by CI), where that is a failure instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from tests.browser import Browser, is_local_url, require_browser_or_skip

require_browser_or_skip()

pytestmark = pytest.mark.slow

TOKEN = "Bearer test-token-123"
SESSION = "s3ss10n"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# A 1x1 PNG as a data: URL, so the page makes one non-http request.
DOT = (
    b"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
    b"DwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
INDEX = b"""<!doctype html>
<html><head><title>Harness index</title></head>
<body>
  <h1>Kaizen harness page</h1>
  <svg id="chart" width="240" height="120" viewBox="0 0 240 120"
       xmlns="http://www.w3.org/2000/svg">
    <rect x="10" y="60" width="40" height="50" fill="#4a90d9"/>
    <rect x="60" y="30" width="40" height="80" fill="#4a90d9"/>
    <circle cx="180" cy="60" r="40" fill="#e94e3c"/>
    <text x="10" y="20">scores</text>
  </svg>
  <form id="search" action="/search" method="get">
    <input name="q" type="text"><button type="submit">Search</button>
  </form>
  <img alt="dot" src="DOT">
  <button id="bump" type="button"
          onclick="var c = document.getElementById('count'); c.textContent = +c.textContent + 1">
    bump</button> <span id="count">0</span>
</body></html>
""".replace(b"DOT", DOT)

EXTERNAL = b"""<!doctype html>
<html><body><p>has an outside image</p>
<img src="http://example.com/x.png" alt="outside"></body></html>
"""

LOGIN = b"""<!doctype html>
<html><body>
  <form id="login" action="/login" method="post">
    <input id="user" name="user" type="text">
    <input id="password" name="password" type="password">
    <button id="go" type="submit">Log in</button>
  </form>
</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]]  # (method, path) of every request, set per server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path))
        if self.path == "/":
            self._send(200, INDEX)
        elif self.path == "/protected":
            if self.headers.get("Authorization") == TOKEN:
                self._send(200, b"<html><body><p id='secret'>the protected page</p></body></html>")
            else:
                self._send(401, b"<html><body>unauthorized</body></html>")
        elif self.path == "/external":
            self._send(200, EXTERNAL)
        elif self.path == "/login":
            self._send(200, LOGIN)
        elif self.path == "/home":
            if f"session={SESSION}" in (self.headers.get("Cookie") or ""):
                self._send(200, b"<html><body><p id='welcome'>Welcome, alice</p></body></html>")
            else:
                self._send(401, b"<html><body>log in first</body></html>")
        else:
            self._send(404, b"<html><body>not found</body></html>")

    def do_POST(self) -> None:
        self.seen.append(("POST", self.path))
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if self.path == "/login" and form == {"user": ["alice"], "password": ["hunter2"]}:
            self._send(
                303,
                b"",
                {"Location": "/home", "Set-Cookie": f"session={SESSION}; Path=/; HttpOnly"},
            )
        else:
            self._send(403, b"<html><body>bad login</body></html>")


class Site:
    def __init__(self) -> None:
        seen: list[tuple[str, str]] = []

        class Handler(_Handler):
            pass

        Handler.seen = seen
        self.seen = seen
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    s = Site()
    s.thread.start()
    yield s
    s.server.shutdown()
    s.server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    def no_selenium_manager(*args: object, **kwargs: object) -> None:
        raise AssertionError("Selenium Manager was called: it would try to download")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            "selenium.webdriver.common.selenium_manager.SeleniumManager.binary_paths",
            no_selenium_manager,
        )
        with Browser() as b:
            yield b


def _all_on(site: Site, urls: list[str]) -> list[str]:
    """The URLs that are neither on the site nor data: (a test wants this empty)."""
    return [u for u in urls if not (u.startswith(site.base + "/") or u.startswith("data:"))]


def test_page_renders_inline_svg(browser: Browser, site: Site) -> None:
    browser.open(site.url("/"))
    assert browser.status() == 200
    assert browser.title == "Harness index"
    assert "Kaizen harness page" in browser.text()
    assert len(browser.find_all("svg#chart")) == 1
    assert len(browser.find_all("svg#chart rect")) == 2
    assert len(browser.find_all("svg#chart circle")) == 1
    circle = browser.find("svg#chart circle")
    assert circle.size["width"] > 0 and circle.size["height"] > 0
    requests = browser.requests()
    assert requests[0] == site.url("/")
    assert any(u.startswith("data:image/png") for u in requests)
    assert _all_on(site, requests) == []
    assert browser.offsite_requests() == []


def test_status_follows_authorization_header(browser: Browser, site: Site) -> None:
    browser.open(site.url("/protected"))
    assert browser.status() == 401
    assert "unauthorized" in browser.text()

    browser.open(site.url("/protected"), headers={"Authorization": TOKEN})
    assert browser.status() == 200
    assert browser.find("#secret").text == "the protected page"

    # The header lasts only until the next open().
    browser.open(site.url("/protected"))
    assert browser.status() == 401


def test_outside_request_is_reported_and_never_leaves(browser: Browser, site: Site) -> None:
    browser.open(site.url("/external"))
    assert browser.status() == 200
    outside = "http://example.com/x.png"
    assert outside in browser.requests()
    assert browser.offsite_requests() == [outside]
    assert _all_on(site, browser.requests()) == [outside]
    # It failed inside Chromium (refused proxy / unresolvable name), with no response.
    failed = browser.failed_requests()
    assert outside in failed
    assert failed[outside].startswith("net::ERR_"), failed
    assert outside not in browser.responses()
    # The image did not render.
    loaded = browser.driver.execute_script(
        "return document.querySelector('img[alt=outside]').naturalWidth"
    )
    assert loaded == 0


def test_open_refuses_non_loopback_urls(browser: Browser) -> None:
    for url in ("http://example.com/", "https://10.0.0.1/", "file:///etc/passwd"):
        with pytest.raises(ValueError, match="loopback"):
            browser.open(url)
    assert is_local_url("http://localhost:8000/x")
    assert is_local_url("data:text/plain,hi")
    assert not is_local_url("http://127.0.0.1.example.com/")


def test_screenshot_is_a_png(browser: Browser, site: Site, tmp_path: Path) -> None:
    browser.open(site.url("/"))
    shot = browser.screenshot(tmp_path / "shots" / "index.png")
    assert shot == tmp_path / "shots" / "index.png"
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 1000
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    assert width > 0 and height > 0

    window = browser.screenshot(tmp_path / "window.png", full_page=False)
    assert window.read_bytes().startswith(PNG_MAGIC)


def test_login_form_sets_cookie_and_redirects(browser: Browser, site: Site) -> None:
    browser.open(site.url("/home"))
    assert browser.status() == 401

    browser.open(site.url("/login"))
    assert browser.status() == 200
    browser.fill("#user", "alice")
    browser.fill("#password", "hunter2")
    browser.click("#go")

    assert browser.url == site.url("/home")
    assert browser.status() == 200
    assert browser.wait_for("#welcome").text == "Welcome, alice"
    assert browser.cookies().get("session") == SESSION
    assert ("POST", "/login") in site.seen
    requests = browser.requests()
    assert site.url("/home") in requests
    assert _all_on(site, requests) == []


def test_click_that_does_not_navigate(browser: Browser, site: Site) -> None:
    browser.open(site.url("/"))
    browser.click("#bump")
    browser.click("#bump", navigates=False)
    assert browser.find("#count").text == "2"
    assert browser.url == site.url("/")
    with pytest.raises(TimeoutError):
        browser.click("#bump", navigates=True, timeout=1.0)
