"""A real ``docbase serve`` with an administrator, and Chromium driven by Playwright.

Used by ``test_console_browser.py``: :func:`console_server` starts one server per
engine (realtime on, an administrator created before it starts) and
:func:`chromium` one browser per module. Each test gets its own browser context
(:func:`open_page`), which fails the test if the page opened a dialog, threw an
uncaught error or broke its Content-Security-Policy, and runs axe-core on every kind
of page it loads that no test of the run checked before (``scripts/axe-core/install.sh``
installs it): a serious or critical accessibility violation fails the test too. With
``DOCBASE_SCREENSHOTS=1`` :func:`screenshot` saves the pictures ``docs/console.md`` shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

import docbase
from docbase.core.auth import create_user
from docbase.core.auth.cache import CACHE_SECONDS
from tests.served_engines import engine_storage
from tests.test_serve_harness import Served, run_cli, serving

CONSOLE_ENGINES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]
"""The engines a console module's served database runs on (a fixture's ``params``)."""
CHROMIUM = "/usr/bin/chromium-headless-shell"
"""Debian's build of Chromium's headless shell (package ``chromium-headless-shell``, from
the same sources as its ``chromium``): the browser Playwright itself runs for headless
tests. It renders with the same Blink in about half the memory of the full browser's
headless mode (docs/testing.md, "Memory")."""
LEAN_V8 = "--js-flags=--optimize-for-size"
"""V8 collects garbage sooner: a page's renderer, which keeps axe-core's results of every
page of a test, peaks at about two thirds of its size otherwise."""
AXE = Path(__file__).resolve().parent.parent / ".axe-core/node_modules/axe-core/axe.min.js"
AXE_RUN = """async () => {
  const result = await axe.run(document, {
    runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa",
                                    "best-practice"]},
    rules: {"label-content-name-mismatch": {enabled: true}},
  });
  return [window.location.href, result.violations
    .filter((v) => ["serious", "critical"].includes(v.impact))
    .map((v) => v.id + " (" + v.impact + "): " + v.nodes.map((n) => n.target).join(", "))];
}"""
"""axe-core's WCAG 2.1 A/AA and best-practice rules; the serious and critical findings."""
HANG_MS = 60_000
"""Milliseconds a browser step may wait (an element to appear, a page to load) before it
fails: a deadline only a hang misses, as the machine is shared (docs/testing.md)."""
ADMIN, PASSWORD = "admin@example.com", "correct horse battery"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "console"


class ConsoleServer:
    """A served database with an administrator, and how to reach it."""

    def __init__(self, served: Served, storage: str, engine: str) -> None:
        self.served = served
        self.storage = storage
        self.engine = engine
        self.url = served.url
        self.key = served.admin_key

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A ``/rest`` request with the full-access key."""
        return self.served.request(method, path, key=self.key, **kwargs)

    def cli(self, *args: str) -> str:
        """Run ``docbase ARGS --storage ...`` in the server's directory."""
        return run_cli(self.served.cwd, *args, "--storage", self.storage).stdout

    def apply_schema(self, *args: str) -> str:
        """``docbase schema apply ARGS``, then wait until the server must have read it.

        The command writes the schemas from another process; each server worker trusts
        the schemas it read for the system cache's lifetime (``CACHE_SECONDS``), so a
        write sent at once may still pass the old ones (seen: an import the new schema
        refuses was taken, once the CLI started fast enough).
        """
        out = self.cli("schema", "apply", *args)
        time.sleep(CACHE_SECONDS + 0.1)
        return out


@contextlib.contextmanager
def _storage_in_thread(engine: str, cwd: Path) -> Iterator[str]:
    """:func:`engine_storage`, made and dropped in a thread of its own: Playwright's
    sync API runs an event loop in this thread, where no other loop may run."""
    manager = engine_storage(engine, cwd)
    with ThreadPoolExecutor(1) as thread:
        storage = thread.submit(manager.__enter__).result()
        try:
            yield storage
        finally:
            thread.submit(manager.__exit__, None, None, None).result()


@contextlib.contextmanager
def console_server(engine: str, cwd: Path, *args: str,
                   workers: int = 1) -> Iterator[ConsoleServer]:
    """``docbase serve ARGS`` on ``engine``, realtime on, one administrator.

    One worker unless told: the journeys of ``test_console_browser.py`` ask for two, to
    see a session honoured and ended in every worker; another worker costs each server
    a process start and 60-80 MB.
    """
    with _storage_in_thread(engine, cwd) as storage:
        prepare_console(storage)
        with serving(cwd, "--storage", storage, "--workers", str(workers), *args) as served:
            yield ConsoleServer(served, storage, engine)


def prepare_console(storage: str) -> None:
    """Create the administrator and turn realtime on in ``storage`` before it is served.

    Through the library, in a thread of its own (Playwright's sync API runs an event
    loop in this one): two ``docbase`` commands cost a Python start each, a few seconds
    of every console module's setup. The commands themselves are tested in
    ``test_serve_operator.py``.
    """
    async def prepare() -> None:
        async with await docbase.connect(storage) as db:
            await create_user(db, ADMIN, PASSWORD, admin=True)
            await db.settings.set("realtime.global", True)

    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, prepare()).result()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright (skipped locally without it, failing in CI)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    for needed, install in ((CHROMIUM, "apt-get install chromium-headless-shell"),
                            (AXE, "bash scripts/axe-core/install.sh")):
        if not Path(needed).exists():
            if os.environ.get("CI") == "true":
                pytest.fail(f"{needed} is missing ({install})")
            pytest.skip(f"{needed} is missing ({install})")
    # Playwright's waits (5 s for expect) are deadlines for hangs only: parallel workers
    # and other runs share the machine, and a page may take seconds to settle
    sync_api.expect.set_options(timeout=HANG_MS)
    with _lean_node():
        playwright = sync_api.sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[LEAN_V8])
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@contextlib.contextmanager
def _lean_node() -> Iterator[None]:
    """Start Playwright's driver (Node.js), within this block, with a small heap, which it
    then collects sooner; Node.js processes started after the block (the Mongo wire
    server) get the usual one."""
    before = os.environ.get("NODE_OPTIONS")
    os.environ["NODE_OPTIONS"] = f"{before or ''} --max-old-space-size=64".strip()
    try:
        yield
    finally:
        if before is None:
            del os.environ["NODE_OPTIONS"]
        else:
            os.environ["NODE_OPTIONS"] = before


class Watched:
    """A page and what went wrong on it: dialogs, uncaught errors, CSP violations, and
    the serious or critical accessibility violations axe-core finds on each page."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.audited: list[str] = []
        self.missed: list[str] = []
        self.violations: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", self._console)
        page.on("load", self._audit)

    def _audit(self, page: Any) -> None:
        """Run axe-core on the page just loaded, unless its kind was audited already; if
        the test has moved on meanwhile, the page is audited at the end
        (:meth:`audit_missed`)."""
        url = page.url
        if page_kind(url) in _AUDITED_KINDS:
            self.audited.append(url)
            return
        audit = _axe(page)
        if audit is None:
            if url.startswith("https://") and "/_/" in url:
                self.missed.append(url)
            return
        self._record(url, audit)

    def audit_missed(self, context: Any) -> None:
        """Open each page the test left before axe-core was done, and audit it."""
        for url in dict.fromkeys(self.missed):
            if url in self.audited or page_kind(url) in _AUDITED_KINDS:
                continue
            page = context.new_page()
            try:
                page.goto(url)
                audit = _axe(page)
            finally:
                page.close()
            assert audit is not None, f"axe-core could not check {url}"
            self._record(url, audit)

    def _record(self, url: str, audit: tuple[str, list[str]]) -> None:
        self.audited.append(audit[0])
        self.violations.extend(f"{audit[0]}: {v}" for v in audit[1])
        _AUDITED_KINDS.add(page_kind(url))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.errors.append(message.text)


_AUDITED_KINDS: set[str] = set()
"""The kinds of page (:func:`page_kind`) axe-core has checked in this process.

axe-core took more than half of the browser journeys' time, checking the same pages
again test after test; each kind is now checked once a run (the first time a test
loads it), which still covers every page and every form a journey reaches."""
_DOCUMENT_ID = re.compile(r"/[0-9a-f]{24}(?=/|$)")


def page_kind(url: str) -> str:
    """The page ``url`` shows, whichever document: its path with ids left out, and the
    names of its query's parameters (``/_/c/books/{id}?tab``)."""
    parts = urllib.parse.urlsplit(url)
    keys = sorted({key for key, _ in urllib.parse.parse_qsl(parts.query, True)})
    return f"{_DOCUMENT_ID.sub('/{id}', parts.path)}?{'&'.join(keys)}"


@functools.cache
def _axe_source() -> str:
    return AXE.read_text()


def _axe(page: Any) -> tuple[str, list[str]] | None:
    """``(URL, axe-core's serious and critical findings)`` of ``page``; ``None`` if it
    went away (or is being audited already)."""
    try:
        if not page.evaluate("() => window.axe !== undefined"):
            page.evaluate(_axe_source())
        url, found = page.evaluate(AXE_RUN)
        return str(url), list(found)
    except Exception as exc:  # the page navigated or closed meanwhile
        if any(word in str(exc) for word in ("destroyed", "navigat", "closed",
                                              "already running")):
            return None
        raise


@contextlib.contextmanager
def open_page(browser: Any, *, width: int = 1280, height: int = 800) -> Iterator[Watched]:
    """A fresh browser context and page; fails on any dialog, page error or CSP report."""
    context = browser.new_context(ignore_https_errors=True,
                                  viewport={"width": width, "height": height})
    context.set_default_timeout(HANG_MS)
    watched = Watched(context.new_page())
    try:
        yield watched
        watched.page.remove_listener("load", watched._audit)
        watched.audit_missed(context)
    finally:
        context.close()
    assert watched.dialogs == [], f"the page opened dialogs: {watched.dialogs}"
    assert watched.errors == [], f"the page reported errors: {watched.errors}"
    assert watched.violations == [], f"axe-core found: {watched.violations}"
    assert watched.audited, "axe-core checked no page"


def sign_in(page: Any, server: ConsoleServer, email: str = ADMIN,
            password: str = PASSWORD) -> None:
    """Open the console and sign in with the form."""
    page.goto(server.url + "/_/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def screenshot(page: Any, server: ConsoleServer, name: str) -> None:
    """Save ``docs/console/NAME.png`` when ``DOCBASE_SCREENSHOTS=1`` (SQLite run only)."""
    if os.environ.get("DOCBASE_SCREENSHOTS") == "1" and server.engine == "sqlite":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
