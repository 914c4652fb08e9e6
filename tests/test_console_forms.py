"""The console's forms over real HTTPS against ``docbase serve`` (issue 33's defects).

A version-checked save, a key scope that is never silently full access, POST/redirect/GET
with a secret shown once, the last administrator kept, flash messages, escaped bidi
characters, the media id and URL, and the small ones (charset, favicon, unknown pages,
no live-update stream when live updates are off, back to the page after signing in).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.console_browser import ADMIN
from tests.test_console_security import signed_in
from tests.test_serve_harness import Served, run_cli, serving

RLO = "\u202e"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cwd = tmp_path_factory.mktemp("console-forms")
    with serving(cwd) as server:
        run_cli(cwd, "users", "create", "--email", ADMIN, "--password",
                "correct horse battery", "--admin")
        yield server


@pytest.fixture
def console(served: Served) -> Iterator[tuple[httpx.Client, str]]:
    with signed_in(served) as pair:
        yield pair


def _version(page: str) -> str:
    found = re.search(r'name="version" value="(\d+)"', page)
    assert found is not None, page
    return found.group(1)


def test_a_save_over_a_change_made_meanwhile_shows_the_conflict_and_can_overwrite(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    created = served.request("POST", "/rest/conflicts", key=served.admin_key,
                             json={"title": "First", "pages": 1}).json()
    url = f"/_/c/conflicts/{created['_id']}"
    opened = _version(client.get(url).text)
    changed = served.request("PATCH", f"/rest/conflicts/{created['_id']}",
                             key=served.admin_key, json={"pages": 2, "isbn": "x"})
    assert changed.status_code == 200, changed.text
    edit = {"csrf": csrf, "version": opened,
            "document": '{"title": "Mine", "pages": 1}'}
    refused = client.post(url, data=edit)
    assert refused.status_code == 409, refused.text
    assert "changed by someone else" in refused.text
    assert "Overwrite with my edit" in refused.text
    assert "Reload (drop my edit)" in refused.text
    stored = served.request("GET", f"/rest/conflicts/{created['_id']}",
                            key=served.admin_key).json()
    assert (stored["title"], stored["pages"], stored["isbn"]) == ("First", 2, "x")
    overwrite = client.post(url, data={**edit, "version": _version(refused.text)})
    assert overwrite.status_code == 303, overwrite.text
    stored = served.request("GET", f"/rest/conflicts/{created['_id']}",
                            key=served.admin_key).json()
    assert (stored["title"], stored["pages"], "isbn" in stored) == ("Mine", 1, False)


def test_a_key_without_full_access_paths_or_methods_is_refused(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    before = client.get("/_/keys").text.count('name="id"')
    refused = client.post("/_/keys", data={"csrf": csrf, "description": "nothing ticked"})
    assert refused.status_code == 400, refused.text
    assert "needs paths or methods" in refused.text
    assert client.get("/_/keys").text.count('name="id"') == before


def test_a_new_key_is_shown_once_after_a_redirect_and_a_reload_creates_no_other(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    before = client.get("/_/keys").text.count('name="id"')
    created = client.post("/_/keys", data={"csrf": csrf, "description": "prg",
                                           "methods": "GET"})
    assert (created.status_code, created.headers["location"]) == (303, "/_/keys")
    shown = client.get("/_/keys")
    key = re.search(r'<code id="new-key">([^<]+)</code>', shown.text)
    assert key is not None, shown.text
    assert served.client.get("/rest/people", headers={"x-apikey": key.group(1)}
                             ).status_code == 200
    again = client.get("/_/keys")  # the reload: a GET, the key no more
    assert key.group(1) not in again.text
    assert again.text.count('name="id"') == before + 1


def test_a_new_webhook_secret_is_shown_once_after_a_redirect(
        console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    added = client.post("/_/delivery/webhooks", data={
        "csrf": csrf, "url": "https://93.184.216.34/hook", "collections": "people"})
    assert (added.status_code, added.headers["location"]) == (303, "/_/delivery")
    shown = client.get("/_/delivery").text
    secret = re.search(r'<code id="webhook-secret">([^<]+)</code>', shown)
    assert secret is not None, shown
    assert "Webhook added." in shown
    again = client.get("/_/delivery").text
    assert secret.group(1) not in again
    assert "93.184.216.34/hook" in again


def test_the_last_administrator_keeps_the_flag_and_actions_say_what_they_did(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    refused = client.post("/_/users/admin", data={"csrf": csrf, "email": ADMIN})
    assert refused.status_code == 403, refused.text
    assert "last administrator" in refused.text
    refused = client.post("/_/users/delete", data={"csrf": csrf, "email": ADMIN})
    assert refused.status_code == 403, refused.text
    assert client.get("/_/").status_code == 200  # still signed in, still an administrator
    for action, data, message in (
            ("create", {"email": "bo@example.com", "password": "long enough"},
             "User bo@example.com created."),
            ("delete", {"email": "bo@example.com"}, "User bo@example.com deleted.")):
        done = client.post(f"/_/users/{action}", data={"csrf": csrf, **data})
        assert done.status_code == 303, done.text
        assert message in client.get(done.headers["location"]).text
    saved = client.post("/_/settings", data={"csrf": csrf, "path": "mail.from",
                                             "value": "a@example.com"})
    assert "Setting mail.from saved." in client.get(saved.headers["location"]).text
    for n in range(3):
        served.request("POST", "/rest/flashy", key=served.admin_key, json={"n": n})
    deleted = client.post("/_/c/flashy/_delete", data={"csrf": csrf, "q": '{"n": {"$lt": 2}}'})
    page = client.get(deleted.headers["location"]).text
    assert "Deleted 2 matching document(s)." in page
    assert "Deleted 2" not in client.get(deleted.headers["location"]).text  # shown once


def test_bidi_controls_are_shown_escaped_in_cells_names_and_the_editor(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, _ = console
    created = served.request("POST", "/rest/bidi", key=served.admin_key,
                             json={"file": f"invoice_{RLO}fdp.exe", "n": 1})
    assert created.status_code == 201, created.text
    for path in ("/_/c/bidi", f"/_/c/bidi/{created.json()['_id']}"):
        page = client.get(path).text
        assert RLO not in page, path
        assert "invoice_\\u202efdp.exe" in page, path


def test_the_media_page_shows_each_file_id_and_url(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, _ = console
    uploaded = served.request("POST", "/media", key=served.admin_key,
                              files={"file": ("notes.txt", b"plain", "text/plain")})
    assert uploaded.status_code == 201, uploaded.text
    media_id = uploaded.json()["ids"][0]
    page = client.get("/_/media").text
    assert f"<code>{media_id}</code>" in page
    assert f'href="/media/{media_id}"' in page


def test_small_ones_charset_favicon_unknown_pages_and_no_stream_without_live_updates(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, _ = console
    assert client.get("/_/").headers["content-type"] == "text/html; charset=utf-8"
    assert client.get("/_/static/console.css").headers["content-type"] == \
        "text/css; charset=utf-8"
    icon = client.get("/_/static/favicon.svg")
    assert (icon.status_code, icon.headers["content-type"]) == (200, "image/svg+xml")
    assert 'rel="icon"' in client.get("/_/").text
    unknown = client.get("/_/no/such/page")
    assert unknown.status_code == 404
    assert unknown.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in unknown.headers["content-security-policy"]
    assert unknown.headers["x-frame-options"] == "DENY"
    assert "data-events" not in client.get("/_/c/people").text  # realtime.global is off
    settings = client.get("/_/settings").text
    assert 'id="setting-value" name="value" type="text"' in settings


def test_a_save_after_the_session_ended_signs_in_and_returns_to_the_document(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    created = served.request("POST", "/rest/later", key=served.admin_key,
                             json={"title": "x"}).json()
    url = f"/_/c/later/{created['_id']}"
    client.post("/_/signout", data={"csrf": csrf})  # as if the session had run out
    late = client.post(url, data={"csrf": csrf, "document": '{"title": "y"}'})
    assert late.status_code == 303
    location = urlsplit(late.headers["location"])
    assert location.path == "/_/signin"
    after = parse_qs(location.query)["next"][0]
    assert after == f"{url}?draft=1"
    form = client.get(late.headers["location"]).text
    assert f'name="next" value="{url}?draft=1"' in form
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    back = client.post("/_/signin", data={"csrf": token.group(1), "email": ADMIN,
                                          "password": "correct horse battery",
                                          "next": after})
    assert (back.status_code, back.headers["location"]) == (303, after)
    for elsewhere in ("https://evil.example/", "//evil.example/_/", "/db/other/_/"):
        assert client.get("/_/signin", params={"next": elsewhere}).text.count(
            'name="next"') == 0


def test_a_reload_of_a_form_action_goes_back_to_its_page(
        console: tuple[httpx.Client, str]) -> None:
    client, _ = console
    for action, page in (("/_/users/admin", "/_/users"), ("/_/keys/revoke", "/_/keys"),
                         ("/_/delivery/webhooks/remove", "/_/delivery"),
                         ("/_/media/delete", "/_/media")):
        answer = client.get(action)
        assert (answer.status_code, answer.headers.get("location")) == (303, page), action
