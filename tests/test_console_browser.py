"""The console's journeys in Chromium against a real ``docbase serve``, on SQLite and PostgreSQL.

One server per engine and one browser per module; each journey is one test in its own
browser context, which fails on any dialog, uncaught script error or CSP violation
(``tests/console_browser.py``).
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.console_browser import (
    ADMIN,
    PASSWORD,
    ConsoleServer,
    chromium,
    console_server,
    open_page,
    page_kind,
    screenshot,
    sign_in,
)
from tests.test_serve_harness import eventually

expect = pytest.importorskip("playwright.sync_api").expect

SCHEMA = {"collections": {"books": {"fields": [
    {"name": "title", "type": "text", "required": True},
    {"name": "pages", "type": "number"},
]}}}


@pytest.fixture(scope="module", params=[
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    with console_server(request.param, tmp_path_factory.mktemp(request.param),
                        workers=2) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def _cookie(page: Any) -> dict[str, Any]:
    [cookie] = [c for c in page.context.cookies() if c["name"] == "docbase_console"]
    return cookie


def _with_cookie(server: ConsoleServer, path: str, token: str) -> httpx.Response:
    return server.served.client.get(path, headers={"cookie": f"docbase_console={token}"})


def test_an_administrator_signs_in_and_out_and_the_session_ends_everywhere(
        server: ConsoleServer, browser: Any) -> None:
    with open_page(browser) as watched:
        page = watched.page
        page.goto(server.url + "/_/")
        expect(page).to_have_url(re.compile(r"/_/signin$"))
        screenshot(page, server, "signin")
        sign_in(page, server)
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()
        cookie = _cookie(page)
        assert (cookie["httpOnly"], cookie["secure"], cookie["sameSite"]) == (True, True,
                                                                                "Strict")
        assert cookie["path"] == "/_"
        token = cookie["value"]
        for _ in range(4):  # two workers: each one honours the session
            assert _with_cookie(server, "/_/", token).status_code == 200
        assert _with_cookie(server, "/rest/people", token).status_code == 401
        page.get_by_role("button", name="Sign out").click()
        expect(page).to_have_url(re.compile(r"/_/signin$"))
        for _ in range(4):  # signed out in every worker at once
            refused = _with_cookie(server, "/_/", token)
            assert (refused.status_code, refused.headers["location"]) == (303, "/_/signin")


def test_wrong_passwords_are_throttled_and_plain_users_cannot_sign_in(
        server: ConsoleServer, browser: Any) -> None:
    guarded, plain = f"guard-{server.engine}@example.com", f"plain-{server.engine}@example.com"
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Users").click()
        for email, admin in ((guarded, True), (plain, False)):
            page.get_by_label("Email").fill(email)
            page.get_by_label("Password (at least 8 characters)").fill("right password")
            page.get_by_label("Administrator (may sign in here)").set_checked(admin)
            page.get_by_role("button", name="Create user").click()
            expect(page.get_by_role("cell", name=email, exact=True)).to_be_visible()
        page.get_by_label(f"New password for {plain}").fill("second password")
        page.get_by_role("button", name=f"Set password of {plain}").click()
        login = server.served.client.post("/auth/login", json={"email": plain,
                                                               "password": "second password"})
        assert login.status_code == 200, login.text
        screenshot(page, server, "users")
        page.get_by_role("button", name="Sign out").click()

        sign_in(page, server, plain, "second password")
        expect(page.get_by_role("alert")).to_have_text(f"{plain} is not an administrator "
                                                       "of this database.")
        for _ in range(5):
            sign_in(page, server, guarded, "wrong password")
            expect(page.get_by_role("alert")).to_have_text("wrong email or password")
        sign_in(page, server, guarded, "right password")  # locked out: even the right one
        expect(page.get_by_role("alert")).to_contain_text("too many failed logins")
        assert not [c for c in page.context.cookies() if c["name"] == "docbase_console"]


def test_documents_are_added_edited_searched_sorted_and_paged(
        server: ConsoleServer, browser: Any, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    server.apply_schema(str(schema))
    seeded = server.api("POST", "/rest/books", json=[{"title": f"Book {n:02}", "pages": 100 + n}
                                                     for n in range(30)])
    assert seeded.status_code == 201, seeded.text
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        books = page.locator("#collections").get_by_role("link", name="books")
        expect(books).to_be_visible()
        expect(page.locator("#changes")).to_contain_text("books")  # the seeding, logged
        screenshot(page, server, "overview")
        books.click()
        rows = page.locator("#documents tbody tr")
        expect(rows).to_have_count(25)
        page.get_by_role("link", name="Next page").click()
        expect(rows).to_have_count(5)
        page.get_by_role("link", name="Previous page").click()
        page.get_by_role("link", name="pages").click()
        expect(rows.first).to_contain_text("100")
        page.get_by_role("link", name="pages").click()  # again: descending
        expect(rows.first).to_contain_text("129")
        screenshot(page, server, "collection")

        page.get_by_role("link", name="New document").click()
        page.get_by_label("Document (JSON)").fill('{"title": "Zed", "pages": 999}')
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        document_id = page.url.split("?")[0].rsplit("/", 1)[1]

        pages = page.get_by_label("pages")
        expect(pages).to_have_value("999")  # a schema field: an input of its own
        pages.fill("many")
        page.get_by_role("button", name="Save").click()
        expect(page.locator("#field-errors")).to_contain_text("pages")
        expect(page.get_by_label("pages")).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#f-1-error")).to_have_text("must be a number")
        screenshot(page, server, "document")
        assert server.api("GET", f"/rest/books/{document_id}").json()["pages"] == 999

        page.goto(f"{server.url}/_/c/books")
        page.get_by_label("Query q").fill('{"title": "Zed"}')
        page.get_by_role("button", name="Search").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("999")
        expect(page.locator("#rest-url")).to_contain_text("/rest/books?q=")

        page.get_by_role("link", name=document_id).click()
        page.get_by_role("link", name="Duplicate").click()
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_role("status")).to_have_text("Saved.")
        assert len(server.api("GET", '/rest/books?q={"title": "Zed"}').json()) == 2

        page.get_by_role("link", name="Delete…").click()
        page.get_by_role("button", name="Delete").click()
        expect(page).to_have_url(re.compile(r"/_/c/books$"))
        assert len(server.api("GET", '/rest/books?q={"title": "Zed"}').json()) == 1

        page.get_by_label("Query q").fill('{"pages": {"$gt": 125, "$lt": 200}}')
        page.get_by_role("button", name="Search").click()
        page.get_by_role("link", name="Delete matching…").click()
        expect(page.locator("#match-count")).to_contain_text("4 documents")
        page.get_by_role("button", name="Delete 4 documents").click()
        expect(rows).to_have_count(25)
        assert len(server.api("GET", "/rest/books").json()) == 27


def test_a_collection_is_created_through_the_schema_designer(server: ConsoleServer,
                                                             browser: Any) -> None:
    fields = [{"name": "title", "type": "text", "required": True},
              {"name": "year", "type": "number"}]
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_label("Open or create a collection").fill("albums")
        page.get_by_role("button", name="Open").click()
        page.get_by_role("link", name="Schema").click()
        editor, changes = page.get_by_label("Fields (JSON)"), page.locator("#schema-changes")
        editor.fill(json.dumps({"fields": fields}))
        page.get_by_role("button", name="Preview changes").click()
        expect(changes).to_contain_text("+ albums")
        assert server.api("GET", "/rest/albums/_meta").json().get("fields", []) == []
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("status")).to_have_text("Applied.")
        screenshot(page, server, "schema")
        time.sleep(1.1)  # each worker trusts its cached schemas for a second
        assert server.api("POST", "/rest/albums", json={"year": 1999}).status_code == 422

        editor.fill(json.dumps({"fields": [{"name": "title", "type": "nonsense"}]}))
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("alert")).to_contain_text("nonsense")
        editor.fill(json.dumps({"fields": fields[:1]}))  # removing a field is destructive
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_role("alert")).to_contain_text("destructive")
        expect(changes).to_contain_text("- albums.year")
        stored = server.api("GET", "/rest/albums/_meta").json()["fields"]
        assert [f["name"] for f in stored] == ["title", "year"]

        page.goto(f"{server.url}/_/c/albums")
        expect(page.locator("#documents thead")).to_contain_text("title")
        expect(page.locator("#documents thead")).to_contain_text("year")


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 60, 30)).save(out, "PNG")
    return out.getvalue()


def test_uploaded_images_appear_as_thumbnails_and_can_be_deleted(
        server: ConsoleServer, browser: Any) -> None:
    name = '"><img src=x onerror="window.pwned = 5">.png'
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Media").click()
        page.get_by_label("Upload files").set_input_files([
            {"name": name, "mimeType": "image/png", "buffer": _png(300, 200)},
            {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"plain text"},
        ])
        page.get_by_role("button", name="Upload", exact=True).click()
        thumbnail = page.get_by_role("img", name=name)
        expect(thumbnail).to_be_visible()
        eventually(lambda: page.evaluate("(img) => img.naturalWidth", thumbnail.element_handle())
                   == 128, "the thumbnail loaded")
        expect(page.locator("#media")).to_contain_text("notes.txt")
        assert page.evaluate("window.pwned") is None
        screenshot(page, server, "media")
        page.locator("summary", has_text="Delete notes.txt").click()
        page.get_by_role("button", name="Confirm: delete notes.txt").click()
        expect(page.locator("#flash")).to_contain_text("Deleted file")
        expect(page.locator("#media")).not_to_contain_text("notes.txt")
    stored = server.api("GET", "/media/*/meta").json()
    assert [r["origname"] for r in stored] == [name]


def test_a_child_document_is_reached_from_its_parent(server: ConsoleServer,
                                                      browser: Any) -> None:
    parent = server.api("POST", "/rest/people", json={"name": "Ann"}).json()["_id"]
    child = server.api("POST", f"/rest/people/{parent}/notes", json={"text": "first note"})
    assert child.status_code == 201, child.text
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/people/{parent}")
        page.get_by_role("link", name="notes").click()
        expect(page.locator("#documents tbody tr")).to_have_count(1)
        page.get_by_role("link", name=child.json()["_id"]).click()
        expect(page.get_by_label("Document (JSON)")).to_contain_text("first note")


def test_a_scoped_key_created_in_the_console_works_with_an_http_client(
        server: ConsoleServer, browser: Any) -> None:
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="API keys").click()
        page.get_by_label("Description").fill("read people")
        page.get_by_label("Paths").fill("/rest/people/**")
        page.get_by_label("GET").check()
        page.get_by_role("button", name="Create key").click()
        key = page.locator("#new-key").inner_text().strip()
        screenshot(page, server, "keys")
        client = server.served.client
        assert client.get("/rest/people", headers={"x-apikey": key}).status_code == 200
        assert client.post("/rest/people", headers={"x-apikey": key},
                           json={"name": "Bo"}).status_code == 403
        assert client.get("/rest/books", headers={"x-apikey": key}).status_code == 403
        page.goto(server.url + "/_/keys")  # the key is shown once: not on the next page
        expect(page.locator("#new-key")).to_have_count(0)
        page.locator("summary", has_text=f"Revoke key {key[:8]}").click()
        page.get_by_role("button", name=f"Confirm: revoke key {key[:8]}").click()
        expect(page.locator("#flash")).to_have_text("Key revoked.")
        eventually(lambda: client.get("/rest/people", headers={"x-apikey": key}).status_code
                   == 401, "the revoked key refused")


def test_settings_are_changed_in_the_console_and_secrets_never_shown(
        server: ConsoleServer, browser: Any) -> None:
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Settings").click()
        for path, value in (("mail.smtp.host", "smtp.example.com"),
                            ("mail.smtp.password", "hunter2 secret"),
                            ("mail.smtp.port", "twenty")):  # not a port: refused
            page.get_by_label("Setting (dotted path").fill(path)
            page.get_by_label("Value (JSON").fill(value)
            page.get_by_role("button", name="Save setting").click()
        expect(page.get_by_role("alert")).to_contain_text("mail.smtp.port")
        table = page.locator("#settings")
        expect(table).to_contain_text('"smtp.example.com"')
        expect(table.get_by_role("row", name="mail.smtp.password")).to_contain_text("***")
        assert "hunter2" not in page.content()
        screenshot(page, server, "settings")
        assert "mail.smtp.port" not in server.cli("settings", "list")


def test_webhooks_are_added_and_removed_and_the_mail_log_is_listed(
        server: ConsoleServer, browser: Any) -> None:
    mail = server.api("POST", "/mail", json={"to": "bo@example.com", "subject": "Hello <b>",
                                             "html": "<p>hi</p>"})
    assert mail.status_code in (200, 201, 202, 502), mail.text  # no SMTP: logged as failed
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Webhooks and mail").click()
        expect(page.locator("#mail")).to_contain_text("Hello <b>")
        expect(page.get_by_role("heading", name="Hook and job log")).to_be_visible()
        page.get_by_label("URL (https)").fill("https://93.184.216.34/docbase")
        page.get_by_label("Collections").fill("people books")
        page.get_by_role("button", name="Add webhook").click()
        secret = page.locator("#webhook-secret").inner_text().strip()
        assert len(secret) >= 16
        page.goto(f"{server.url}/_/delivery")
        expect(page.locator("#webhooks")).to_contain_text("people, books")
        assert secret not in page.content()
        screenshot(page, server, "delivery")
        page.get_by_role("button", name="Remove webhook https://93.184.216.34/docbase").click()
        expect(page.locator("#webhooks")).to_contain_text("No webhook.")
        page.get_by_role("button", name="Retry failed messages").click()
        expect(page.get_by_role("status")).to_contain_text("retried")


def test_a_document_written_by_another_client_appears_in_the_open_table(
        server: ConsoleServer, browser: Any) -> None:
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/feed")
        expect(page.locator("#live")).to_contain_text("Live:")
        assert server.api("POST", "/rest/feed", json={"name": "Fresh"}).status_code == 201
        # no reload: the row appears because the page's event stream brought it
        expect(page.get_by_role("cell", name="Fresh", exact=True)).to_be_visible()
        page.get_by_role("link", name="Overview").click()
        expect(page.locator("#changes tbody tr").first).to_contain_text("feed")


HOSTILE = {
    "<script>window.pwned = 1</script>": '"><img src=x onerror="window.pwned = 2">',
    "link": "javascript:window.pwned = 3",
    "name": "<b>bold</b><svg onload=alert(1)>",
}


def test_hostile_values_are_shown_as_text_and_run_nothing(server: ConsoleServer,
                                                           browser: Any) -> None:
    created = server.api("POST", "/rest/hostile", json=HOSTILE)
    assert created.status_code == 201, created.text
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="API keys").click()
        page.get_by_label("Description").fill('<img src=x onerror="alert(4)">')
        page.get_by_label("Full access").check()
        page.get_by_role("button", name="Create key").click()
        expect(page.get_by_role("cell", name='<img src=x onerror="alert(4)">')).to_be_visible()
        for path in ("/_/c/hostile", f"/_/c/hostile/{created.json()['_id']}"):
            page.goto(server.url + path)
            expect(page.get_by_text("<b>bold</b><svg onload=alert(1)>").first).to_be_visible()
            assert page.evaluate("window.pwned") is None
            assert page.locator("main img, main svg, main b, main script").count() == 0
            assert page.locator("a[href^='javascript']").count() == 0
        expect(page.get_by_label("Document (JSON)")).to_contain_text(
            '"<script>window.pwned = 1</script>"')


def test_the_console_is_usable_on_a_phone_sized_screen(server: ConsoleServer,
                                                       browser: Any) -> None:
    with open_page(browser, width=390, height=844) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/books")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the screen"
        page.keyboard.press("Tab")  # the first stop is the skip link
        expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
        screenshot(page, server, "phone")


def test_a_conflicting_save_shows_the_other_change_and_can_overwrite_it(
        server: ConsoleServer, browser: Any) -> None:
    created = server.api("POST", "/rest/drafts", json={"title": "First", "n": 1}).json()
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/drafts/{created['_id']}")
        changed = server.api("PATCH", f"/rest/drafts/{created['_id']}", json={"n": 2})
        assert changed.status_code == 200, changed.text
        page.get_by_label("Document (JSON)").fill('{"title": "Mine", "n": 1}')
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("alert")).to_contain_text("changed by someone else")
        expect(page.locator("#stored-now")).to_contain_text('"n": 2')
        assert server.api("GET", f"/rest/drafts/{created['_id']}").json()["n"] == 2
        expect(page.get_by_role("link", name="Reload (drop my edit)")).to_be_visible()
        page.get_by_role("button", name="Overwrite with my edit").click()
        expect(page.get_by_role("status").first).to_have_text("Saved.")
    stored = server.api("GET", f"/rest/drafts/{created['_id']}").json()
    assert (stored["title"], stored["n"]) == ("Mine", 1)


def test_an_edit_saved_after_the_session_ended_comes_back_after_signing_in(
        server: ConsoleServer, browser: Any) -> None:
    created = server.api("POST", "/rest/drafts", json={"title": "Before"}).json()
    url = f"{server.url}/_/c/drafts/{created['_id']}"
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(url)
        page.get_by_label("Document (JSON)").fill('{"title": "Typed for an hour"}')
        page.context.clear_cookies()  # the session is gone, as after the idle limit
        page.get_by_role("button", name="Save").click()
        expect(page).to_have_url(re.compile(r"/_/signin\?next="))
        page.get_by_label("Email").fill(ADMIN)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(re.compile(re.escape(created["_id"]) + r"\?draft=1$"))
        expect(page.locator("#draft-note")).to_have_text(
            "Your unsaved edit is back: save it again.")
        expect(page.get_by_label("Document (JSON)")).to_have_value(
            '{"title": "Typed for an hour"}')
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("status").first).to_have_text("Saved.")
    assert server.api("GET", f"/rest/drafts/{created['_id']}").json()["title"] == \
        "Typed for an hour"


def test_destructive_actions_ask_first_and_the_last_administrator_stays(
        server: ConsoleServer, browser: Any) -> None:
    victim = f"victim-{server.engine}@example.com"
    server.cli("users", "create", "--email", victim, "--password", "long enough")
    others = [user["email"] for line in server.cli("users", "list", "--json").splitlines()
              if (user := json.loads(line))["admin"] and user["email"] != ADMIN]
    for other in others:  # ADMIN is to be the last administrator
        server.cli("users", "set-admin", "--email", other, "--off")
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Users").click()
        confirm = page.get_by_role("button", name=f"Confirm: delete user {victim}")
        expect(confirm).to_be_hidden()  # one click opens the question, not the deletion
        page.locator("summary", has_text=f"Delete user {victim}").click()
        confirm.click()
        expect(page.locator("#flash")).to_have_text(f"User {victim} deleted.")
        page.locator("summary", has_text=f"the administrator flag of {ADMIN}").click()
        page.get_by_role("button", name=f"Confirm: {ADMIN} is no longer an administrator"
                         ).click()
        expect(page.get_by_role("alert")).to_contain_text("last administrator")
        page.goto(f"{server.url}/_/")
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    for other in others:
        server.cli("users", "set-admin", "--email", other)


def _contrast(first: str, second: str) -> float:
    def luminance(rgb: str) -> float:
        channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
                  for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


ROW_LINES = """() => Math.max(...[...document.querySelectorAll('#documents tbody tr')].map(
  (row) => row.getBoundingClientRect().height
           / parseFloat(getComputedStyle(row.querySelector('td')).lineHeight)))"""


def test_tables_and_forms_read_well_on_a_phone_and_a_desktop(server: ConsoleServer,
                                                               browser: Any) -> None:
    server.api("POST", "/rest/wide", json=[
        {"title": f"A rather long title of a book number {n} in a series",
         "rating": 44.26, "pages": "page/s", "isbn": f"978-3-16-148410-{n}",
         "notes": "word " * 40} for n in range(25)])
    for width, height in ((390, 844), (1280, 800)):
        with open_page(browser, width=width, height=height) as watched:
            page = watched.page
            sign_in(page, server)
            page.goto(f"{server.url}/_/c/wide")
            expect(page.locator("#documents tbody tr")).to_have_count(25)
            overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
            assert overflow <= 0, f"the page is {overflow} px wider than the screen"
            assert page.evaluate(ROW_LINES) <= 3
            assert page.locator("#documents td").first.evaluate(
                "(td) => getComputedStyle(td).overflowWrap") != "anywhere"
            page.get_by_role("cell", name="44.26").first.wait_for()
            page.locator("#documents tbody a").first.click()
            expect(page.get_by_label("Document (JSON)")).to_be_visible()
            overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
            assert overflow <= 0, f"the document page is {overflow} px too wide"
            page.keyboard.press("Tab")  # keyboard focus: the skip link, with its ring
            ring, style = page.evaluate("[getComputedStyle(document.activeElement)"
                                        ".outlineColor, getComputedStyle("
                                        "document.activeElement).outlineStyle]")
            assert style != "none"
            background = page.evaluate("getComputedStyle(document.documentElement)"
                                       ".backgroundColor")
            assert _contrast(ring, background) >= 3, (ring, background)
            page.goto(f"{server.url}/_/keys")
            page.get_by_label("Description").focus()
            assert page.get_by_label("Description").evaluate(
                "(e) => parseFloat(getComputedStyle(e).height)") >= 30


def test_columns_are_chosen_and_remembered_with_a_total_and_readable_dates(
        server: ConsoleServer, browser: Any) -> None:
    seeded = server.api("POST", "/rest/shelf", json=[
        {"title": f"Shelf {n:02}", "bought": "2024-03-05T14:07:09.120Z", "n": n}
        for n in range(30)])
    assert seeded.status_code == 201, seeded.text
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/shelf")
        table = page.locator("#documents")
        expect(table.locator("caption")).to_have_text("Documents 1\N{EN DASH}25 of 30")
        expect(table.get_by_role("cell", name="2024-03-05 14:07 UTC").first).to_be_visible()
        page.locator("#columns summary").click()
        page.get_by_label("_created", exact=True).check()
        page.get_by_label("bought", exact=True).uncheck()
        page.get_by_role("button", name="Search").click()
        expect(table.locator("thead")).to_contain_text("_created")
        expect(table.locator("thead")).not_to_contain_text("bought")
        page.get_by_role("link", name="Next page").click()
        expect(table.locator("caption")).to_have_text("Documents 26\N{EN DASH}30 of 30")
        expect(table.locator("thead")).to_contain_text("_created")
        page.get_by_role("link", name="Overview").click()
        page.locator("#collections").get_by_role("link", name="shelf").click()
        expect(table.locator("thead")).to_contain_text("_created")  # remembered
        expect(table.locator("thead")).not_to_contain_text("bought")
        page.get_by_label("Query q").fill('{"n": {"$lt": 3}}')
        page.get_by_role("button", name="Search").click()
        expect(table.locator("caption")).to_have_text("Documents 1\N{EN DASH}3 of 3")


def test_ticked_documents_are_edited_and_deleted_together_and_the_sidebar_finds_collections(
        server: ConsoleServer, browser: Any) -> None:
    made = server.api("POST", "/rest/bulky", json=[{"n": n} for n in range(5)]).json()
    server.api("POST", "/rest/elsewhere", json={"n": 1})
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/bulky?sort=n")
        sidebar = page.get_by_role("navigation", name="Collections")
        page.get_by_label("Find a collection").fill("elsew")
        expect(sidebar.get_by_role("link", name="elsewhere")).to_be_visible()
        expect(sidebar.get_by_role("link", name="bulky")).to_be_hidden()
        for document in made[:3]:
            page.get_by_label(f"Select {document['_id']}").check()
        page.get_by_role("button", name="Edit selected…").click()
        page.locator("#bulk-field").fill("state")
        page.locator("#bulk-value").fill('"done"')
        page.get_by_role("button", name="Review the change").click()
        expect(page.locator("#change-count")).to_contain_text("3 of the 3 ticked documents")
        page.get_by_role("button", name="Change 3 documents").click()
        expect(page.locator("#flash")).to_contain_text("Set state on 3 document(s) in one batch")
        expect(page.locator("#documents tbody td", has_text="done")).to_have_count(3)
        for document in made[:2]:
            page.get_by_label(f"Select {document['_id']}").check()
        page.get_by_role("button", name="Delete selected…").click()
        expect(page.locator("#match-count")).to_contain_text("2 of the 2 ticked documents")
        page.get_by_role("button", name="Delete 2 documents").click()
        expect(page.locator("#flash")).to_contain_text("Deleted 2 document(s) in one batch")
        expect(page.locator("#documents tbody tr")).to_have_count(3)
        page.get_by_label("Select every document of this page").check()
        page.get_by_role("button", name="Delete selected…").click()
        page.get_by_role("button", name="Delete 3 documents").click()
        expect(page.locator("#documents tbody")).to_contain_text("No documents.")
    assert server.api("GET", "/rest/bulky").json() == []
    assert len(server.api("GET", "/rest/elsewhere").json()) == 1


def test_the_filter_builder_completes_field_names_and_adds_conditions_to_q(
        server: ConsoleServer, browser: Any) -> None:
    server.api("POST", "/rest/filters", json=[{"title": f"Item {n}", "n": n, "tag": "x"}
                                              for n in range(10)])
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/filters")
        names = page.locator("#field-names option").evaluate_all(
            "(options) => options.map((o) => o.value)")
        assert {"title", "n", "tag", "_created"} <= set(names)
        page.get_by_label("Field", exact=True).fill("n")
        page.get_by_label("Condition").select_option(label="less than")
        page.get_by_label("Value", exact=True).fill("4")
        page.get_by_role("button", name="Add condition").click()
        rows = page.locator("#documents tbody tr")
        expect(rows).to_have_count(4)
        expect(page.get_by_label("Query q")).to_have_value('{"n":{"$lt":4}}')
        page.get_by_label("Field", exact=True).fill("title")
        page.get_by_label("Condition").select_option(label="contains")
        page.get_by_label("Value", exact=True).fill("item 2")
        page.get_by_role("button", name="Add condition").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("Item 2")
        expect(page.locator("#rest-url")).to_contain_text("%24regex")


def test_typed_inputs_and_the_lookup_and_image_pickers_fill_a_document(
        server: ConsoleServer, browser: Any, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    stored = json.loads(server.cli("schema", "show"))  # other journeys' schemas stay
    schema.write_text(json.dumps({**stored, "collections": {
        **stored.get("collections", {}),
        "authors": {"fields": [{"name": "name", "type": "text"}]},
        "novels": {"fields": [
            {"name": "title", "type": "text"}, {"name": "published", "type": "date"},
            {"name": "tags", "type": "tags"}, {"name": "cover", "type": "image"},
            {"name": "author", "type": "lookup", "collection": "authors"}]}}}))
    server.cli("schema", "apply", str(schema))
    author = server.api("POST", "/rest/authors", json={"name": "Ursula"}).json()["_id"]
    cover = server.api("POST", "/media", files={"file": ("cover.png", _png(40, 60),
                                                          "image/png")}).json()["ids"][0]
    time.sleep(1.1)  # each worker trusts its cached schemas for a second
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.goto(f"{server.url}/_/c/novels/_new")
        expect(page.get_by_label("published")).to_have_attribute("type", "date")
        offered = page.locator("datalist option").evaluate_all(
            "(options) => options.map((o) => [o.value, o.textContent])")
        assert [cover, "cover.png"] in offered
        assert [author, "Ursula"] in offered
        page.get_by_label("title").fill("The Dispossessed")
        page.get_by_label("published").fill("1974-05-01")
        page.get_by_label("tags").fill("utopia, anarchy")
        page.get_by_label("cover").fill(cover)
        page.get_by_label("author").fill(author)
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_role("status").first).to_have_text("Saved.")
        expect(page.get_by_label("tags")).to_have_value("utopia, anarchy")
        expect(page.get_by_label("author")).to_have_value(author)
    [stored] = server.api("GET", "/rest/novels").json()
    assert (stored["published"][:10], stored["tags"], stored["cover"]) == (
        "1974-05-01", ["utopia", "anarchy"], [cover])
    assert [a["_id"] for a in stored["author"]] == [author]


def test_the_data_page_downloads_an_export_and_imports_it_again(
        server: ConsoleServer, browser: Any, tmp_path: Path) -> None:
    assert server.api("POST", "/rest/herons", json={"name": "grey"}).status_code == 201
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Data").click()
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        screenshot(page, server, "data")
        with page.expect_download() as started:
            page.get_by_role("button", name="Download archive").click()
        download = started.value
        assert re.fullmatch(r"docbase-\d{8}T\d{6}Z\.tar\.gz", download.suggested_filename)
        archive = tmp_path / download.suggested_filename
        download.save_as(archive)
        server.api("DELETE", "/rest/herons/*", params={"q": "{}"})
        page.get_by_label("Archive (.tar or .tar.gz made by an export)").set_input_files(
            str(archive))
        page.get_by_label("A document whose _id is stored already with other content"
                          ).select_option("skip")
        page.get_by_role("button", name="Import archive").click()
        expect(page.get_by_role("status").first).to_contain_text(
            "Imported the archive of database 'docbase'")
    assert [h["name"] for h in server.api("GET", "/rest/herons").json()] == ["grey"]


def test_a_page_kind_leaves_out_document_ids_and_query_values() -> None:
    assert page_kind("https://h:1/_/c/books/5f0000000000000000000000?tab=raw&x=1") == (
        "/_/c/books/{id}?tab&x")
    assert page_kind("https://h:1/_/c/books/5f0000000000000000000000/lines/"
                     "5f00000000000000000000ab") == "/_/c/books/{id}/lines/{id}?"
    assert page_kind("https://h:1/_/c/books?q=a") != page_kind("https://h:1/_/c/books")
