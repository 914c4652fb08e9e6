"""Journeys of the typed settings forms and of restoring a listed backup, in Chromium.

Per engine (SQLite, PostgreSQL) two servers share one backup directory: ``source``,
whose config file sets ``limits.max_page``, and a fresh, empty ``target``. On the
source's Settings page an administrator changes login and token-holder settings and
turns the change feed off through the typed forms, and ``/auth`` and ``/rest`` then
follow them; the limit the page shows is the one ``/rest`` applies, and one lowered in
its form rules ``/rest`` at once (a higher one is named and refused). A backup taken on
the source's Data page is restored, picked from the list, into the target. Every page
fails the test on a dialog, a script error, a CSP violation or an axe-core finding
(``tests/console_browser.py``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.console_browser import (
    ADMIN,
    CONSOLE_ENGINES,
    PASSWORD,
    chromium,
    open_page,
    screenshot,
    sign_in,
)
from tests.test_console_data import Pair
from tests.test_console_settings import sharing_backups

expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture(scope="module", params=CONSOLE_ENGINES)
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with sharing_backups(request.param, tmp_path_factory.mktemp(
            f"settings-browser-{request.param}"), 40) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def _token(pair: Pair) -> str:
    answer = pair.source.served.request("POST", "/auth/login",
                                        json={"email": ADMIN, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["jwt"])


def _lifetime(token: str) -> int:
    body = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return int(claims["exp"]) - int(claims["iat"])


def test_settings_typed_into_their_forms_rule_auth_and_rest(pair: Pair, browser: Any) -> None:
    source = pair.source
    assert source.api("POST", "/rest/terns", json={"name": "arctic"}).status_code == 201
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, source)
        page.get_by_role("link", name="Settings").click()
        expect(page.locator("#limits")).to_contain_text("limits.max_page")
        expect(page.locator("#limits tr", has_text="limits.max_page ")).to_contain_text("40")
        page.get_by_label("auth.login.lifetime").fill("soon")
        page.get_by_role("button", name="Save auth.login.*").click()
        expect(page.get_by_role("alert")).to_contain_text("auth.login.lifetime must be")
        expect(page.get_by_label("auth.login.lifetime")).to_have_attribute(
            "aria-invalid", "true")
        page.get_by_label("auth.login.lifetime").fill("2m")
        page.get_by_label("auth.login.max_failures").fill("2")
        page.get_by_role("button", name="Save auth.login.*").click()
        expect(page.get_by_role("status").first).to_contain_text("Settings auth.login.* saved.")
        expect(page.get_by_label("auth.login.lifetime")).to_have_value("2m")
        page.get_by_label("auth.users.methods").fill("GET, HEAD")
        page.get_by_role("button", name="Save auth.users.*").click()
        expect(page.get_by_role("status").first).to_contain_text("Settings auth.users.* saved.")
        page.get_by_role("checkbox", name="realtime.global").uncheck()
        screenshot(page, source, "settings-forms")
        page.get_by_role("button", name="Save realtime.*").click()
        expect(page.get_by_role("status").first).to_contain_text("Settings realtime.* saved.")
        expect(page.get_by_role("checkbox", name="realtime.global")).not_to_be_checked()
    token = _token(pair)
    assert _lifetime(token) == 120
    holder = {"authorization": f"Bearer {token}"}
    served = source.served
    assert served.request("GET", "/rest/terns", headers=holder).status_code == 200
    assert served.request("POST", "/rest/terns", headers=holder,
                          json={"name": "sooty"}).status_code == 403
    assert source.api("GET", "/realtime").status_code == 403
    assert source.api("GET", "/rest/terns", params={"max": 41}).status_code == 400
    attempts = [served.request("POST", "/auth/login", json={
        "email": "nobody@example.com", "password": "wrong"}).status_code for _ in range(3)]
    assert attempts == [401, 401, 429]


def test_a_limit_lowered_on_the_page_rules_rest_and_a_higher_one_is_named(
        pair: Pair, browser: Any) -> None:
    source = pair.source
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, source)
        page.get_by_role("link", name="Settings").click()
        box = page.get_by_label("limits.max_page")
        expect(box).to_have_attribute("placeholder", "40")  # the server's, kept by a blank
        box.fill("45")
        page.get_by_role("button", name="Save limits.*").click()
        expect(page.get_by_role("alert")).to_contain_text(
            "45 is above this server's limit (40)")
        expect(page.get_by_label("limits.max_page")).to_have_attribute("aria-invalid", "true")
        page.get_by_label("limits.max_page").fill("25")
        page.get_by_label("limits.max_bulk").fill("2")
        page.get_by_role("button", name="Save limits.*").click()
        expect(page.get_by_role("status").first).to_contain_text("Settings limits.* saved.")
        expect(page.locator("#limits tr", has_text="limits.max_page ")).to_contain_text(
            "25 (this database; the server's: 40)")
        page.evaluate("document.getElementById('limits-in-force').scrollIntoView()")
        screenshot(page, source, "settings-limits")
        assert source.api("GET", "/rest/terns", params={"max": 26}).status_code == 400
        assert source.api("POST", "/rest/terns", json=[{"n": n} for n in range(3)]
                          ).status_code == 413
        page.get_by_label("limits.max_page").fill("")
        page.get_by_label("limits.max_bulk").fill("")
        page.get_by_role("button", name="Save limits.*").click()
        expect(page.locator("#limits tr", has_text="limits.max_page ")).to_have_text(
            "limits.max_page40Largest max/$max a list read may ask for (400 above it).")
    assert source.api("GET", "/rest/terns", params={"max": 40}).status_code == 200


def test_a_listed_backup_is_restored_into_a_fresh_database(pair: Pair, browser: Any) -> None:
    assert pair.source.api("POST", "/rest/avocets", json={"name": "pied"}).status_code == 201
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, pair.source)
        page.get_by_role("link", name="Data").click()
        page.get_by_role("button", name="Back up now").click()
        expect(page.get_by_role("status").first).to_contain_text("Backed up to docbase-")
        name = page.locator("#backups a").first.inner_text()
        page.get_by_role("button", name="Sign out").click()
        sign_in(page, pair.target)
        page.get_by_role("link", name="Data").click()
        page.get_by_text(f"Restore {name}…").click()
        page.get_by_label(f"Type the database's name, docbase, to restore {name} into it"
                          ).fill("docbase")
        screenshot(page, pair.target, "restore-backup")
        page.get_by_role("button", name=f"Confirm: restore {name} into docbase").click()
        expect(page.get_by_role("status").first).to_contain_text(
            "Restored the archive of database 'docbase' into 'docbase'")
        page.goto(pair.target.url + "/_/c/avocets")
        expect(page.locator("table").first).to_contain_text("pied")
        page.get_by_role("link", name="Data").click()
        page.get_by_text(f"Restore {name}…").click()
        page.get_by_label(f"Type the database's name, docbase, to restore {name} into it"
                          ).fill("docbase")
        page.get_by_role("button", name=f"Confirm: restore {name} into docbase").click()
        expect(page.get_by_role("alert")).to_contain_text(
            "Restore refused: database 'docbase' is not empty")
    assert [t["name"] for t in pair.target.api("GET", "/rest/avocets").json()] == ["pied"]
