"""A real headless Chromium for tests, kept on this machine.

``Browser`` drives Debian's ``chromium`` through Debian's ``chromedriver`` (Selenium, with
both paths given, so Selenium Manager never runs and nothing is downloaded). Chromium
cannot reach past loopback: every host name but ``127.0.0.1`` and ``localhost`` resolves
to nothing, and every non-loopback connection goes to a proxy port on which nothing
listens (Chromium never proxies loopback). Every request the page makes is recorded from
Chromium's performance log (``Network.requestWillBeSent``), so a test can assert that
all of them stayed on ``http://127.0.0.1:PORT/`` (``Browser.offsite_requests()``).
(Chromium itself still tries ``accounts.google.com`` once its profile's network is up, a
request no switch turns off: the refusing proxy is what stops it. Being the browser's,
not the page's, it is not in ``requests()``.)

    reason = browser_available()      # None, or why a browser cannot run here
    require_browser_or_skip()         # at a test module's top: skip, or fail in CI
    with Browser() as b:
        b.open(f"http://127.0.0.1:{port}/", headers={"Authorization": "Bearer ..."})
        assert b.status() == 200 and b.offsite_requests() == []
        b.screenshot(tmp_path / "page.png")

CI sets ``KAIZEN_REQUIRE_BROWSER=1``: there a missing browser is an error, not a skip.
``KAIZEN_TEST_CHROMIUM`` and ``KAIZEN_TEST_CHROMEDRIVER`` override the binaries' paths.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

# Read when this module is imported (at collection), before tests/conftest.py's autouse
# fixture strips KAIZEN_* variables from each test's environment.
BROWSER_REQUIRED = os.environ.get("KAIZEN_REQUIRE_BROWSER") == "1"
CHROMIUM = os.environ.get("KAIZEN_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = (
    os.environ.get("KAIZEN_TEST_CHROMEDRIVER")
    or shutil.which("chromedriver")
    or "/usr/bin/chromedriver"
)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# Schemes that never touch the network.
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})


def is_local_url(url: str) -> bool:
    """True for a URL that cannot leave this machine: loopback http(s), data:, blob:, about:."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname in LOOPBACK_HOSTS


def _major(version_output: str) -> str | None:
    match = re.search(r"\b(\d+)\.\d+\.\d+\.\d+\b", version_output)
    return match.group(1) if match else None


@functools.cache
def browser_available() -> str | None:
    """None when a headless Chromium can run here, else why not."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install selenium)"
    for name, path in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"{name} not found at {path} (apt-get install chromium chromium-driver)"
    majors = {}
    for name, path in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)):
        try:
            proc = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{path} --version failed: {exc}"
        majors[name] = _major(proc.stdout)
        if majors[name] is None:
            return f"{path} --version printed no version: {proc.stdout!r} {proc.stderr!r}"
    if majors["chromium"] != majors["chromedriver"]:
        return f"chromium {majors['chromium']} and chromedriver {majors['chromedriver']} differ"
    return None


def require_browser_or_skip() -> None:
    """At a test module's top: skip it when no browser can run, or fail where CI needs one."""
    reason = browser_available()
    if reason is None:
        return
    if BROWSER_REQUIRED:
        raise RuntimeError(f"KAIZEN_REQUIRE_BROWSER=1 but no browser can run: {reason}")
    pytest.skip(f"headless Chromium unavailable: {reason}", allow_module_level=True)


class Browser:
    """One headless Chromium tab, confined to loopback, recording what it requests.

    A context manager: ``__enter__`` starts chromedriver and Chromium, ``__exit__`` ends
    both and removes the temporary profile. ``driver`` is the Selenium WebDriver for
    anything the methods here do not cover.
    """

    def __init__(
        self,
        *,
        window_size: tuple[int, int] = (1280, 900),
        page_load_timeout: float = 30.0,
    ) -> None:
        self.window_size = window_size
        self.page_load_timeout = page_load_timeout
        self._driver: WebDriver | None = None
        self._profile: Path | None = None
        self._proxy_sink: socket.socket | None = None
        self._events: list[dict[str, Any]] = []
        self.driver_log: Path | None = None

    # -- lifecycle -------------------------------------------------------------------

    def __enter__(self) -> Browser:
        reason = browser_available()
        if reason is not None:
            raise RuntimeError(f"no browser can run: {reason}")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = Path(tempfile.mkdtemp(prefix="kaizen-chromium-"))
        self.driver_log = self._profile / "chromedriver.log"
        # A loopback port that is bound but never listens: connecting to it is refused at
        # once, and no other process can take it while the browser runs.
        sink = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sink.bind(("127.0.0.1", 0))
        self._proxy_sink = sink
        sink_port = sink.getsockname()[1]

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in (
            "--headless=new",
            "--no-sandbox",  # tests run as root
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={self._profile / 'profile'}",
            f"--window-size={self.window_size[0]},{self.window_size[1]}",
            # Confinement: no name resolves but loopback's, and whatever is not loopback
            # goes to a proxy that refuses (loopback is never proxied).
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
            f"--proxy-server=http://127.0.0.1:{sink_port}",
            # Chromium's own background traffic, off.
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-sync",
            "--disable-domain-reliability",
            "--disable-client-side-phishing-detection",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--no-pings",
            "--disable-features=Translate,OptimizationHints,MediaRouter,DnsOverHttps,"
            "AutofillServerCommunication,InterestFeedContentSuggestions",
            "--lang=en-US",
        ):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        with warnings.catch_warnings():
            # Talk to chromedriver directly, whatever http_proxy says. (The replacement
            # Selenium suggests, a ClientConfig, is not accepted by webdriver.Chrome.)
            warnings.simplefilter("ignore", DeprecationWarning)
            options.ignore_local_proxy_environment_variables()

        service = Service(executable_path=CHROMEDRIVER, log_output=str(self.driver_log))
        try:
            self._driver = webdriver.Chrome(service=service, options=options)
            self._driver.set_page_load_timeout(self.page_load_timeout)
            self._cdp("Network.enable")
            self._cdp("Page.enable")
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close()

    def _close(self) -> None:
        if self._driver is not None:
            try:
                self._driver.quit()
            finally:
                self._driver = None
        if self._proxy_sink is not None:
            self._proxy_sink.close()
            self._proxy_sink = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    @property
    def driver(self) -> WebDriver:
        if self._driver is None:
            raise RuntimeError("Browser is not started: use it as a context manager")
        return self._driver

    def _cdp(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.execute_cdp_cmd(method, params or {})
        return result

    # -- navigation --------------------------------------------------------------------

    def open(self, url: str, *, headers: dict[str, str] | None = None) -> None:
        """Load ``url`` (loopback only) and wait for its load event.

        ``headers`` (e.g. ``{"Authorization": "Bearer ..."}``) go with every request the
        page makes from now until the next ``open()``. The request record restarts here.
        """
        if not is_local_url(url):
            raise ValueError(f"Browser.open is for loopback pages only, not {url!r}")
        self._cdp("Network.setExtraHTTPHeaders", {"headers": dict(headers or {})})
        self._drain()
        self._events = []
        self.driver.get(url)
        self._wait_ready()

    def _wait_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.page_load_timeout)
        while self.driver.execute_script("return document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.driver.current_url} did not finish loading")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return str(self.driver.current_url)

    @property
    def title(self) -> str:
        return str(self.driver.title)

    # -- what the page asked for ------------------------------------------------------

    def _drain(self) -> None:
        for entry in self.driver.get_log("performance"):  # type: ignore[no-untyped-call]
            message = json.loads(entry["message"])["message"]
            self._events.append(message)

    def events(self, method: str | None = None) -> list[dict[str, Any]]:
        """DevTools events since ``open()`` (``{"method", "params"}``), of one method or all."""
        self._drain()
        return [e for e in self._events if method is None or e.get("method") == method]

    def requests(self) -> list[str]:
        """Every URL requested since ``open()``, in order, redirects' targets included."""
        return [e["params"]["request"]["url"] for e in self.events("Network.requestWillBeSent")]

    def offsite_requests(self) -> list[str]:
        """The requests since ``open()`` that were headed past loopback (blocked or not)."""
        return [url for url in self.requests() if not is_local_url(url)]

    def failed_requests(self) -> dict[str, str]:
        """URL -> Chromium's error text, for each request since ``open()`` that failed."""
        urls = {
            e["params"]["requestId"]: e["params"]["request"]["url"]
            for e in self.events("Network.requestWillBeSent")
        }
        return {
            urls.get(e["params"]["requestId"], "?"): e["params"].get("errorText", "")
            for e in self.events("Network.loadingFailed")
        }

    def responses(self) -> dict[str, int]:
        """URL -> HTTP status, for each response received since ``open()``."""
        return {
            e["params"]["response"]["url"]: int(e["params"]["response"]["status"])
            for e in self.events("Network.responseReceived")
        }

    def status(self) -> int | None:
        """HTTP status of the main document now shown (after redirects), if it had one."""
        main_frame = self._cdp("Page.getFrameTree")["frameTree"]["frame"]["id"]
        doc_request = None
        for e in self.events("Network.requestWillBeSent"):
            p = e["params"]
            if p.get("type") == "Document" and p.get("frameId") == main_frame:
                doc_request = p["requestId"]
        if doc_request is None:
            return None
        status = None
        for e in self.events("Network.responseReceived"):
            if e["params"]["requestId"] == doc_request:
                status = int(e["params"]["response"]["status"])
        return status

    # -- the page ------------------------------------------------------------------------

    def find_all(self, css: str) -> list[WebElement]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def find(self, css: str) -> WebElement:
        found = self.find_all(css)
        if not found:
            raise LookupError(f"no element matches {css!r} on {self.url}")
        return found[0]

    def text(self) -> str:
        """The page's visible text (``document.body.innerText``)."""
        return str(
            self.driver.execute_script("return document.body ? document.body.innerText : ''")
        )

    def html(self) -> str:
        return str(self.driver.page_source)

    def cookies(self) -> dict[str, str]:
        return {c["name"]: c["value"] for c in self.driver.get_cookies()}

    def fill(self, css: str, value: str) -> None:
        element = self.find(css)
        element.clear()
        element.send_keys(value)

    def click(
        self,
        css: str,
        *,
        navigates: bool | None = None,
        settle: float = 0.5,
        timeout: float | None = None,
    ) -> None:
        """Click the first match, then wait for the page load it starts, if any.

        ``navigates=None`` waits ``settle`` seconds for a navigation to begin and, if one
        does, for the new document to load; ``True`` insists on one (``TimeoutError`` if
        none comes within ``timeout``, by default the page-load timeout); ``False``
        returns at once. Chromium may start a form's navigation after the click returns,
        so the old document is marked and the wait is for a document without the mark.
        """
        element = self.find(css)
        mark = uuid.uuid4().hex
        self.driver.execute_script("window.__kaizenDocument = arguments[0]", mark)
        since = len(self.events())
        element.click()
        if navigates is False:
            return
        load_limit = timeout if timeout is not None else self.page_load_timeout
        limit = load_limit if navigates else settle
        deadline = time.monotonic() + limit
        while self._same_document(mark):
            if navigates is None and self._navigation_started(since):
                navigates = True
                limit = load_limit
                deadline = time.monotonic() + limit
            if time.monotonic() > deadline:
                if navigates:
                    raise TimeoutError(f"clicking {css!r} loaded no new page in {limit}s")
                return
            time.sleep(0.05)
        self._wait_ready(load_limit)

    def _same_document(self, mark: str) -> bool:
        from selenium.common.exceptions import WebDriverException

        try:
            return bool(
                self.driver.execute_script("return window.__kaizenDocument === arguments[0]", mark)
            )
        except WebDriverException:  # between documents
            return True

    def _navigation_started(self, since: int) -> bool:
        main_frame = self._cdp("Page.getFrameTree")["frameTree"]["frame"]["id"]
        for e in self.events()[since:]:
            p = e.get("params", {})
            if p.get("frameId") != main_frame:
                continue
            if e.get("method") in {"Page.frameRequestedNavigation", "Page.frameStartedLoading"}:
                return True
            if e.get("method") == "Network.requestWillBeSent" and p.get("type") == "Document":
                return True
        return False

    def wait_for(self, css: str, timeout: float = 10.0) -> WebElement:
        deadline = time.monotonic() + timeout
        while True:
            found = self.find_all(css)
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise TimeoutError(f"no element matched {css!r} on {self.url} in {timeout}s")
            time.sleep(0.05)

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        """A PNG of the page (whole page by default, else the window) at ``path``."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = self._cdp("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            width = max(int(size["width"]), 1)
            height = max(int(size["height"]), 1)
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        data = base64.b64decode(self._cdp("Page.captureScreenshot", params)["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path
