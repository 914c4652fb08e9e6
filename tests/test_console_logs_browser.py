"""Journey of the Logs page in Chromium (issue 33), on SQLite and PostgreSQL.

A burst of real HTTPS requests (a key's reads and writes, a login token's read, 404s
and 401s) is made to a served database; the administrator then opens Logs from the
console's menu and reads them there, with their route templates, statuses and kinds of
credential, and the per-minute charts. Every page fails the test on a dialog, a script
error, a CSP violation or an axe-core finding (``tests/console_browser.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.console_browser import (
    ADMIN,
    CONSOLE_ENGINES,
    PASSWORD,
    ConsoleServer,
    chromium,
    console_server,
    open_page,
    screenshot,
    sign_in,
)
from tests.test_serve_harness import eventually

expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module", params=CONSOLE_ENGINES)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    cwd = tmp_path_factory.mktemp(f"logs-browser-{request.param}")
    with console_server(request.param, cwd, workers=2) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def _burst(server: ConsoleServer) -> None:
    """Real requests of every kind of credential, some refused."""
    ids = [server.api("POST", "/rest/terns", json={"name": f"tern {n}"}).json()["_id"]
           for n in range(5)]
    for document_id in ids:
        assert server.api("GET", f"/rest/terns/{document_id}").status_code == 200
    for _ in range(3):
        assert server.api("GET", "/rest/terns/000000000000000000000000").status_code == 404
        assert server.served.request("GET", "/rest/terns").status_code == 401
    login = server.served.request("POST", "/auth/login",
                                  json={"email": ADMIN, "password": PASSWORD})
    assert login.status_code == 200, login.text
    bearer = {"authorization": f"Bearer {login.json()['jwt']}"}
    assert server.served.request("GET", "/rest/terns", headers=bearer).status_code == 200


def test_read_the_logs_page_after_a_burst_of_requests(server: ConsoleServer,
                                                      browser: Any) -> None:
    _burst(server)
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("navigation", name="Console").get_by_role("link", name="Logs").click()
        expect(page.get_by_role("heading", name="Logs", exact=True)).to_be_visible()
        table = page.locator("#requests")

        def shown() -> bool:
            text = table.inner_text()
            # each worker writes what it served once a second: the sign-in may be on the
            # other worker, and come after the burst
            if all(part in text for part in ("JWT", "/rest/{collection}/{document_id}",
                                             "console session")):
                return True
            page.reload()
            return False

        eventually(shown, "the burst in the Logs table")
        for text in ("/rest/{collection}/{document_id}", "/rest/{collection}", "/auth/login",
                     "404", "401", "201", "anonymous", "JWT", "API key (full access)",
                     "console session"):
            expect(table).to_contain_text(text)
        expect(table).not_to_contain_text(server.key)
        charts = page.locator("figure.chart svg")
        expect(charts).to_have_count(3)
        expect(page.get_by_role("img", name="Requests per minute")).to_be_visible()
        expect(page.get_by_role("img", name="Errors per minute")).to_contain_text("answers 4xx")
        expect(page.locator("figure.chart polyline").first).to_be_attached()
        screenshot(page, server, "logs")
        page.get_by_role("link", name="Last 24 h").click()
        expect(page.get_by_text("Last 24 h", exact=True)).to_have_attribute(
            "aria-current", "page")
