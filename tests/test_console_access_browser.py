"""Journeys of access rules in the console, in Chromium, on SQLite and PostgreSQL (issue 33).

Rules set in the schema designer (private, a role for update) hold over ``/rest`` for
two users' login tokens, and a bad ``where.read`` filter is shown beside its input and
stores nothing; "View as user" shows only the rows that user may read; the lookup
picker's search finds a document beyond the first 200 of its target collection, and an
image field's search box an image by part of its name (its markup shown as text). Every
page fails the test on a dialog, a script error, a CSP violation or an axe-core finding
(``tests/console_browser.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests import console_browser as console
from tests import media_samples
from tests.console_browser import ConsoleServer

expect = pytest.importorskip("playwright.sync_api").expect
PASSWORD = "long enough password"
ANN, ED = "ann@example.com", "ed@example.com"
FIELDS = '{"fields": [{"name": "title", "type": "text"}]}'


@pytest.fixture(scope="module", params=console.CONSOLE_ENGINES)
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    cwd = tmp_path_factory.mktemp(f"access-browser-{request.param}")
    with console.console_server(request.param, cwd) as served:
        for email, roles in ((ANN, ""), (ED, "editor")):
            served.cli("users", "create", "--email", email, "--password", PASSWORD,
                       f"--roles={roles}")
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with console.chromium() as running:
        yield running


def _bearer(server: ConsoleServer, email: str) -> dict[str, str]:
    login = server.served.client.post("/auth/login", json={"email": email,
                                                           "password": PASSWORD})
    assert login.status_code == 200, login.text
    return {"authorization": f"Bearer {login.json()['jwt']}"}


def _as(server: ConsoleServer, who: dict[str, str], method: str, path: str,
        **kwargs: Any) -> Any:
    return server.served.request(method, path, headers=who, **kwargs)


def test_rules_set_in_the_designer_hold_over_rest_and_a_bad_filter_is_shown(
        server: ConsoleServer, browser: Any) -> None:
    with console.open_page(browser) as watched:
        page = watched.page
        console.sign_in(page, server)
        page.goto(server.url + "/_/schema/notes")
        page.get_by_label("Fields (JSON)").fill(FIELDS)
        page.get_by_label("Limit token holders with these rules").check()
        for operation, roles in (("read", "*"), ("create", "*"), ("update", "editor")):
            page.get_by_label(f"Roles that may {operation}", exact=True).fill(roles)
        page.get_by_label(re.compile("Private: a token holder")).check()
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("status").filter(has_text="Applied.")).to_be_visible()
        expect(page.locator("#schema-changes")).to_contain_text("1 field(s), access rules")
        page.locator("#access-rules").scroll_into_view_if_needed()
        console.screenshot(page, server, "access")

        ann, ed = _bearer(server, ANN), _bearer(server, ED)
        mine = _as(server, ann, "POST", "/rest/notes", json={"title": "ann's"})
        assert mine.status_code == 201, mine.text
        theirs = _as(server, ed, "POST", "/rest/notes", json={"title": "ed's"})
        assert theirs.status_code == 201, theirs.text
        assert [n["title"] for n in _as(server, ann, "GET", "/rest/notes").json()] == ["ann's"]
        assert [n["title"] for n in _as(server, ed, "GET", "/rest/notes").json()] == ["ed's"]
        assert _as(server, ann, "PUT", f"/rest/notes/{mine.json()['_id']}",
                   json={"title": "x"}).status_code == 403  # update: editors only
        assert _as(server, ed, "PUT", f"/rest/notes/{theirs.json()['_id']}",
                   json={"title": "ed's, edited"}).status_code == 200
        assert _as(server, ed, "PUT", f"/rest/notes/{mine.json()['_id']}",
                   json={"title": "x"}).status_code == 404  # private: not ed's to see

        where = page.get_by_label(re.compile("^Read scope"))
        where.fill('{"team": {"$bogus": 1}}')
        page.get_by_role("button", name="Apply").click()
        expect(page.locator("#access-where-read-error")).to_contain_text("$bogus")
        expect(where).to_have_attribute("aria-invalid", "true")
        rules = {"read": ["*"], "create": ["*"], "update": ["editor"], "private": True}
        assert server.api("GET", "/rest/notes/_meta").json()["access"] == rules

        where.fill("")  # a change of the fields alone keeps the rules the page shows
        page.get_by_label("Fields (JSON)").fill(
            '{"fields": [{"name": "title", "type": "text"}, {"name": "body", "type": "text"}]}')
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("status").filter(has_text="Applied.")).to_be_visible()
        meta = server.api("GET", "/rest/notes/_meta").json()
        assert (len(meta["fields"]), meta["access"]) == (2, rules)


def test_view_as_user_shows_only_the_rows_that_user_may_read(
        server: ConsoleServer, browser: Any) -> None:
    defined = server.api("PUT", "/rest/diary/_meta", json={
        "fields": [{"name": "title", "type": "text"}],
        "access": {"read": ["*"], "create": ["*"], "private": True}})
    assert defined.status_code == 200, defined.text
    for email, title in ((ANN, "ann's day"), (ED, "ed's day")):
        written = _as(server, _bearer(server, email), "POST", "/rest/diary",
                      json={"title": title})
        assert written.status_code == 201, written.text
    with console.open_page(browser) as watched:
        page = watched.page
        console.sign_in(page, server)
        page.goto(server.url + "/_/c/diary")
        expect(page.locator("#documents")).to_contain_text("ed's day")
        page.get_by_role("link", name="View as user…").click()
        page.get_by_label("User (email)").fill(ANN)
        page.get_by_role("button", name="View as this user").click()
        expect(page.locator("#preview-note")).to_contain_text("Preview, read-only.")
        table = page.locator("#preview-documents")
        expect(table).to_contain_text("ann's day")
        expect(table).not_to_contain_text("ed's day")
        expect(table.locator("caption")).to_contain_text("of 1 that")
        console.screenshot(page, server, "preview")
        # a user of the identity provider: no account, roles from the token (private:
        # such a user reads only what they wrote, which is nothing here)
        page.get_by_label("User (email)").fill("idp-user@example.com")
        page.get_by_label("No account here").check()
        page.get_by_label("Roles their token claims").fill("editor")
        page.get_by_role("button", name="View as this user").click()
        expect(page.locator("#preview-note")).to_contain_text(
            "idp-user@example.com (identity provider) (roles: editor)")
        expect(page.locator("#preview-documents")).to_contain_text(
            "No documents this user may read.")


def test_the_lookup_picker_finds_a_document_beyond_the_first_200(
        server: ConsoleServer, browser: Any) -> None:
    seeded = server.api("POST", "/rest/authors",
                        json=[{"name": f"author {n:03}"} for n in range(240)])
    assert seeded.status_code == 201, seeded.text
    wanted = server.api("GET", "/rest/authors", params={"q": '{"name": "author 239"}'}
                        ).json()[0]["_id"]
    defined = server.api("PUT", "/rest/shelf/_meta", json={"fields": [
        {"name": "title", "type": "text"},
        {"name": "author", "type": "lookup", "collection": "authors"}]})
    assert defined.status_code == 200, defined.text
    with console.open_page(browser) as watched:
        page = watched.page
        console.sign_in(page, server)
        page.goto(server.url + "/_/c/shelf/_new")
        assert page.locator(f'#f-1-choices option[value="{wanted}"]').count() == 0
        page.get_by_label("title").fill("Far down")
        expect(page.locator("#f-1-find-hint")).to_contain_text("every document of authors")
        page.get_by_label("Find a document to pick").fill("author 239")
        found = page.get_by_role("button", name=re.compile("author 239"))
        expect(found).to_be_visible()
        console.screenshot(page, server, "picker")
        found.click()
        expect(page.get_by_label("author lookup")).to_have_value(wanted)
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    shelf = server.api("GET", "/rest/shelf", params={"q": '{"title": "Far down"}'}).json()
    assert [a["_id"] for a in shelf[0]["author"]] == [wanted]


def test_the_image_picker_finds_an_image_by_name_and_shows_its_markup_as_text(
        server: ConsoleServer, browser: Any) -> None:
    name = "beach <b>sunset.png"
    uploaded = server.api("POST", "/media", files=[
        ("file", (name, media_samples.png(4, 4), "image/png")),
        ("file", ("beach notes.txt", b"sand", "text/plain"))])
    assert uploaded.status_code == 201, uploaded.text
    wanted, _ = uploaded.json()["ids"]
    defined = server.api("PUT", "/rest/gallery/_meta", json={"fields": [
        {"name": "title", "type": "text"}, {"name": "photo", "type": "image"}]})
    assert defined.status_code == 200, defined.text
    with console.open_page(browser) as watched:
        page = watched.page
        console.sign_in(page, server)
        page.goto(server.url + "/_/c/gallery/_new")
        page.get_by_label("title").fill("At the beach")
        expect(page.locator("#f-1-find-hint")).to_contain_text("every image of the media")
        page.get_by_label("Find an image to pick").fill("BEACH <b>")
        found = page.locator("#f-1-found button")
        expect(found).to_have_text(f"{name} · {wanted}")  # one: the notes are no image
        assert page.locator("#f-1-found b").count() == 0
        found.click()
        expect(page.get_by_label("photo image")).to_have_value(wanted)
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    gallery = server.api("GET", "/rest/gallery", params={"q": '{"title": "At the beach"}'}
                         ).json()
    assert gallery[0]["photo"] == [wanted]
