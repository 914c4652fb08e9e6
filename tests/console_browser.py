"""A real ``docbase serve`` with an administrator, and Chromium driven by Playwright.

Used by ``test_console_browser.py``: :func:`console_server` starts one server per
engine (two workers, realtime on, an administrator created with the CLI) and
:func:`chromium` one browser per module. Each test gets its own browser context
(:func:`open_page`), which fails the test if the page opened a dialog, threw an
uncaught error or broke its Content-Security-Policy. With ``DOCBASE_SCREENSHOTS=1``
:func:`screenshot` saves the pictures ``docs/console.md`` shows.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.served_engines import engine_storage
from tests.test_serve_harness import Served, run_cli, serving

CHROMIUM = "/usr/bin/chromium"
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
def console_server(engine: str, cwd: Path) -> Iterator[ConsoleServer]:
    """``docbase serve`` on ``engine`` with two workers, realtime on, one administrator."""
    with _storage_in_thread(engine, cwd) as storage, \
            serving(cwd, "--storage", storage, "--workers", "2") as served:
        server = ConsoleServer(served, storage, engine)
        server.cli("users", "create", "--email", ADMIN, "--password", PASSWORD, "--admin")
        server.cli("settings", "set", "realtime.global", "true")
        yield server


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright (skipped locally without it, failing in CI)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    # Playwright's waits (5 s for expect) are deadlines for hangs only: parallel workers
    # and other runs share the machine, and a page may take seconds to settle
    sync_api.expect.set_options(timeout=HANG_MS)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page and what went wrong on it: dialogs, uncaught errors, CSP violations."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", self._console)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.errors.append(message.text)


@contextlib.contextmanager
def open_page(browser: Any, *, width: int = 1280, height: int = 800) -> Iterator[Watched]:
    """A fresh browser context and page; fails on any dialog, page error or CSP report."""
    context = browser.new_context(ignore_https_errors=True,
                                  viewport={"width": width, "height": height})
    context.set_default_timeout(HANG_MS)
    watched = Watched(context.new_page())
    try:
        yield watched
    finally:
        context.close()
    assert watched.dialogs == [], f"the page opened dialogs: {watched.dialogs}"
    assert watched.errors == [], f"the page reported errors: {watched.errors}"


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
