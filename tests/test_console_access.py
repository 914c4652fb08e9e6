"""The console's access-rules editor, "view as user" and lookup search over HTTPS (issue 33).

Against a real ``docbase serve``: rules typed into the schema designer are stored as
``_meta`` shows them and hold over ``/rest`` for two users' login tokens; refused rules
name their key beside the input and store nothing; the preview reads a collection as a
user would (through the read pipeline, with the user's roles, ``private`` and field
rules), and as a scoped API key or an identity provider's user would; the lookup
picker's search finds a document beyond the first 200, and the image
and file pickers' search a file beyond the newest 200, by name or id, images only for
an image field, its name cleaned of direction overrides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from docbase.http.console.rendering import visible
from tests import media_samples
from tests.console_browser import ADMIN
from tests.console_browser import PASSWORD as ADMIN_PASSWORD
from tests.test_console_security import signed_in
from tests.test_serve_harness import Served, run_cli, serving

FIELDS = ('{"fields": [{"name": "title", "type": "text"}, '
          '{"name": "salary", "type": "number"}]}')
RLO = "\u202e"
ODD_NAME = f"old <img src=x onerror=alert(1)> report {RLO}fdp.txt"
"""A file name with markup and a right-to-left override, as an upload may bring."""
USERS = {"ann@example.com": "", "bob@example.com": "editor", "hr@example.com": "hr"}
PASSWORD = "long enough password"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cwd = tmp_path_factory.mktemp("console-access")
    people = [(ADMIN, ADMIN_PASSWORD, "--admin"),
              *((email, PASSWORD, f"--roles={roles}") for email, roles in USERS.items())]
    with serving(cwd) as server:
        for email, password, flag in people:
            run_cli(cwd, "users", "create", "--email", email, "--password", password, flag)
        yield server


@pytest.fixture
def console(served: Served) -> Iterator[tuple[httpx.Client, str]]:
    with signed_in(served) as pair:
        yield pair


def _token(served: Served, email: str) -> dict[str, str]:
    answer = served.request("POST", "/auth/login", json={"email": email,
                                                         "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"authorization": f"Bearer {answer.json()['jwt']}"}


def _rules(csrf: str, **inputs: str) -> dict[str, str]:
    """The designer's form: the fields, rules ticked on, and ``inputs``."""
    return {"csrf": csrf, "schema": FIELDS, "mode": "schemaless", "apply": "1",
            "access_on": "on", "rule-0-field": "title", "rule-1-field": "salary",
            "rule-2-field": "", **inputs}


def _new_document_form(client: httpx.Client, csrf: str, collection: str,
                       fields: list[dict[str, str]]) -> str:
    """The new-document page of ``collection`` once the designer applied ``fields``."""
    applied = client.post(f"/_/schema/{collection}", data={
        "csrf": csrf, "mode": "schemaless", "apply": "1",
        "schema": json.dumps({"fields": fields})})
    assert "Applied." in applied.text, applied.text
    return client.get(f"/_/c/{collection}/_new").text


def _meta(served: Served, collection: str) -> dict[str, Any]:
    answer = served.request("GET", f"/rest/{collection}/_meta", key=served.admin_key)
    assert answer.status_code == 200, answer.text
    meta: dict[str, Any] = answer.json()
    return meta


def test_rules_set_in_the_designer_are_stored_and_hold_over_rest(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    applied = client.post("/_/schema/memos", data=_rules(
        csrf, access_read="*", access_create="*", access_update="editor, @owner",
        access_private="on", **{"rule-1-read": "hr", "rule-1-write": "hr"}))
    assert applied.status_code == 200, applied.text
    assert "Applied." in applied.text
    assert _meta(served, "memos")["access"] == {
        "read": ["*"], "create": ["*"], "update": ["editor", "@owner"], "private": True,
        "fields": {"salary": {"read": ["hr"], "write": ["hr"]}}}
    page = client.get("/_/schema/memos").text  # the stored rules, back in their inputs
    assert 'name="access_update" value="editor, @owner"' in page
    assert re.search(r'id="access-private" name="access_private" checked', page)
    assert 'name="rule-1-read" value="hr"' in page
    ann, bob = _token(served, "ann@example.com"), _token(served, "bob@example.com")
    mine = served.request("POST", "/rest/memos", headers=ann, json={"title": "ann's"})
    assert mine.status_code == 201, mine.text
    served.request("POST", "/rest/memos", headers=bob, json={"title": "bob's"})
    assert [m["title"] for m in served.request("GET", "/rest/memos", headers=ann).json()] \
        == ["ann's"]
    other = served.request("GET", f"/rest/memos/{mine.json()['_id']}", headers=bob)
    assert other.status_code == 404  # private: bob's roles may update, but not see it
    refused = served.request("PUT", f"/rest/memos/{mine.json()['_id']}", headers=ann,
                             json={"salary": 5})
    assert refused.status_code == 403, refused.text  # salary: hr only
    edited = served.request("PUT", f"/rest/memos/{mine.json()['_id']}", headers=ann,
                            json={"title": "ann's, edited"})
    assert edited.status_code == 200, edited.text
    off = client.post("/_/schema/memos", data={
        "csrf": csrf, "schema": FIELDS, "mode": "schemaless", "apply": "1",
        "access_read": "*"})
    assert "Applied." in off.text, off.text  # unticked: the rules are removed
    assert "~ memos: access rules removed" in off.text
    assert 'id="rules-off"' in off.text  # the roles typed are said not to be applied
    assert 'id="rules-off"' not in client.get("/_/schema/memos").text
    assert "access" not in _meta(served, "memos")


def test_refused_rules_are_named_beside_their_inputs_and_nothing_is_stored(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    before = client.post("/_/schema/guarded", data=_rules(csrf, access_read="*"))
    assert "Applied." in before.text, before.text
    refused = client.post("/_/schema/guarded", data=_rules(
        csrf, access_read="editor", access_where_read='{"team": {"$bogus": 1}}',
        access_where_write="{not json", **{"rule-2-field": "_secret",
                                           "rule-2-read": "hr"}))
    assert refused.status_code == 422, refused.text
    where = re.search(r'<span class="error" id="access-where-read-error">([^<]+)</span>',
                      refused.text)
    assert where is not None, refused.text
    assert "$bogus" in where.group(1)
    assert 'id="access-where-write-error">not valid JSON' in refused.text
    assert re.search(r'id="rule-2-error">names no user field', refused.text)
    assert 'aria-describedby="access-where-read-error"' in refused.text
    assert 'name="access_read" value="editor"' in refused.text  # the edit is kept
    assert _meta(served, "guarded")["access"] == {"read": ["*"]}
    in_json = client.post("/_/schema/guarded", data={
        **_rules(csrf), "schema": '{"fields": [], "access": {"read": ["*"]}}'})
    assert in_json.status_code == 422
    assert "set in their inputs below" in in_json.text


def test_view_as_user_reads_through_the_users_rules_and_changes_nothing(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    applied = client.post("/_/schema/diary", data=_rules(
        csrf, access_read="*", access_create="*", access_private="on",
        **{"rule-1-read": "hr", "rule-1-write": "hr"}))
    assert "Applied." in applied.text, applied.text
    for email, title in (("ann@example.com", "ann's day"), ("hr@example.com", "payday")):
        written = served.request("POST", "/rest/diary", headers=_token(served, email),
                                 json={"title": title, "salary": 1} if email[0] == "h"
                                 else {"title": title})
        assert written.status_code == 201, written.text
    assert 'href="/_/preview/diary"' in client.get("/_/c/diary").text
    picker = client.get("/_/preview/diary").text
    assert "<option value=\"ann@example.com\">" in picker
    ann = client.get("/_/preview/diary", params={"email": "ann@example.com"})
    assert ann.status_code == 200, ann.text
    assert "Preview, read-only." in ann.text
    table = ann.text.split('id="preview-documents"')[1]
    assert "ann&#39;s day" in table
    assert "payday" not in table
    assert "Fields hidden from this user: salary." in ann.text
    assert "of 1 that ann@example.com may read" in ann.text
    hr = client.get("/_/preview/diary", params={"email": "hr@example.com"}).text
    table = hr.split('id="preview-documents"')[1]
    assert ("payday" in table, "ann&#39;s day" in table, "<th scope=\"col\">salary</th>"
            in table) == (True, False, True)
    client.post("/_/schema/diary", data=_rules(csrf, access_read="editor"))
    refused = client.get("/_/preview/diary", params={"email": "ann@example.com"}).text
    assert "This user is refused:" in refused
    assert "ann&#39;s day" not in refused
    bob = client.get("/_/preview/diary", params={"email": "bob@example.com"}).text
    assert "ann&#39;s day" in bob.split('id="preview-documents"')[1]  # an editor, no private
    unknown = client.get("/_/preview/diary", params={"email": "cy@example.com"})
    assert unknown.status_code == 400
    assert "no user with email" in unknown.text
    malformed = client.get("/_/preview/diary", params={"email": "not an email"})
    assert malformed.status_code == 400
    assert 'id="preview-error"' in malformed.text
    everything = served.request("GET", "/rest/diary", key=served.admin_key).json()
    assert sorted(d["title"] for d in everything) == ["ann's day", "payday"]



def _key_id(served: Served, raw: str) -> str:
    """The id of the key ``raw`` (what the preview's key box sends), by its prefix."""
    listed = run_cli(served.cwd, "keys", "list", "--json").stdout.splitlines()
    return str(next(key["id"] for key in map(json.loads, listed)
                    if raw.startswith(key["prefix"])))


def test_view_as_a_scoped_key_or_a_provider_user_reads_as_their_requests_would(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    applied = client.post("/_/schema/payroll", data=_rules(
        csrf, access_read="hr, auditor", access_create="hr",
        **{"rule-1-read": "hr", "rule-1-write": "hr"}))
    assert "Applied." in applied.text, applied.text
    written = served.request("POST", "/rest/payroll", key=served.admin_key,
                             json={"title": "march", "salary": 4100})
    assert written.status_code == 201, written.text
    auditor = run_cli(served.cwd, "keys", "create", "--path", "/rest/payroll/**",
                      "/rest/payroll", "--method", "GET", "--role", "auditor",
                      "--description", "audit").stdout.strip()
    elsewhere = run_cli(served.cwd, "keys", "create", "--path", "/rest/memos/**",
                        "--method", "GET", "--role", "hr",
                        "--description", "memos only").stdout.strip()
    over_rest = served.request("GET", "/rest/payroll", key=auditor)
    assert [d.get("salary") for d in over_rest.json()] == [None]  # what the preview shows
    picker = client.get("/_/preview/payroll").text
    auditor_id, elsewhere_id = _key_id(served, auditor), _key_id(served, elsewhere)
    assert f'<option value="{auditor_id}">' in picker
    assert served.admin_key[:8] not in picker  # full-access keys are not offered
    as_key = client.get("/_/preview/payroll", params={"key": auditor_id})
    assert as_key.status_code == 200, as_key.text
    table = as_key.text.split('id="preview-documents"')[1]
    assert "march" in table
    assert "4100" not in table
    assert "Fields hidden from this key: salary." in as_key.text
    assert "the key's paths and methods" in as_key.text
    refused = client.get("/_/preview/payroll", params={"key": elsewhere_id}).text
    assert "This key is refused: this API key may not GET /rest/payroll" in refused
    assert served.request("GET", "/rest/payroll", key=elsewhere).status_code == 403
    unknown_key = client.get("/_/preview/payroll", params={"key": "nope"})
    assert unknown_key.status_code == 400
    assert "no usable API key" in unknown_key.text
    typed = {"email": "dee@idp.example", "roles": "hr"}
    untold = client.get("/_/preview/payroll", params=typed)
    assert untold.status_code == 400  # no account, and not said to be the provider's
    assert "no user with email" in untold.text
    provider = client.get("/_/preview/payroll", params={**typed, "provider": "on"})
    assert provider.status_code == 200, provider.text
    assert "dee@idp.example (identity provider)" in provider.text
    table = provider.text.split('id="preview-documents"')[1]
    assert "march" in table
    assert "4100" in table
    claimless = client.get("/_/preview/payroll", params={
        "email": "dee@idp.example", "roles": "", "provider": "on"}).text
    assert "This user is refused:" in claimless
    bad_role = client.get("/_/preview/payroll", params={**typed, "roles": "*",
                                                        "provider": "on"})
    assert bad_role.status_code == 400
    stored = served.request("GET", "/rest/payroll", key=served.admin_key).json()
    assert [(d["title"], d["salary"]) for d in stored] == [("march", 4100)]


def test_the_lookup_search_finds_a_document_beyond_the_first_200_within_a_bound(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    authors = served.request("POST", "/rest/authors", key=served.admin_key, json=[
        {"name": f"author {n:03}"} for n in range(260)])
    assert authors.status_code == 201, authors.text
    ids = {d["name"]: d["_id"] for d in served.request(
        "GET", "/rest/authors?max=1000", key=served.admin_key).json()}
    form = _new_document_form(client, csrf, "books", [
        {"name": "title", "type": "text"},
        {"name": "author", "type": "lookup", "collection": "authors"}])
    assert 'data-pick="/_/pick/authors"' in form
    assert "/_/static/pickers.js" in form
    last = ids["author 259"]
    assert last not in form  # not among the 200 the page offers
    found = client.get("/_/pick/authors", params={"text": "AUTHOR 259"})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].startswith("application/json")
    assert found.json() == [{"id": last, "label": "author 259"}]
    assert [d["id"] for d in client.get("/_/pick/authors",
                                        params={"text": last}).json()] == [last]
    assert len(client.get("/_/pick/authors", params={"text": "author"}).json()) == 50
    assert client.get("/_/pick/authors", params={"text": ""}).json() == []
    assert client.get("/_/static/pickers.js").status_code == 200


def _upload(served: Served, files: list[tuple[str, bytes, str]]) -> list[str]:
    answer = served.request("POST", "/media", key=served.admin_key,
                            files=[("file", file) for file in files])
    assert answer.status_code == 201, answer.text
    ids: list[str] = answer.json()["ids"]
    return ids


def test_the_media_search_finds_a_file_beyond_the_newest_200_by_name_or_id(
        served: Served, console: tuple[httpx.Client, str]) -> None:
    client, csrf = console
    report, photo = _upload(served, [(ODD_NAME, b"old", "text/plain"),
                                     ("old-photo.png", media_samples.png(4, 4), "image/png")])
    for batch in range(2):  # two uploads of 100 (limits.max_upload_files): 200 newer files
        _upload(served, [(f"filler {batch}-{n:03}.txt", b"x", "text/plain")
                         for n in range(100)])
    form = _new_document_form(client, csrf, "reports", [
        {"name": "photo", "type": "image"}, {"name": "attachment", "type": "file"}])
    assert 'data-pick="/_/pick-media/image"' in form
    assert 'data-pick="/_/pick-media/file"' in form
    assert report not in form  # not among the newest 200 the page offers
    found = client.get("/_/pick-media/file", params={"text": "OLD <IMG SRC"})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].startswith("application/json")
    # the upload keeps the name without its override; the picker passes it through visible
    assert found.json() == [{"id": report, "label": visible(ODD_NAME.replace(RLO, ""))}]
    assert RLO not in found.json()[0]["label"]
    assert [f["id"] for f in client.get("/_/pick-media/file",
                                        params={"text": report}).json()] == [report]
    assert [f["id"] for f in client.get("/_/pick-media/file",
                                        params={"text": "old"}).json()] == [photo, report]
    assert [f["id"] for f in client.get("/_/pick-media/image",
                                        params={"text": "old"}).json()] == [photo]
    assert client.get("/_/pick-media/image", params={"text": report}).json() == []
    assert client.get("/_/pick-media/file", params={"text": ".*"}).json() == []
    assert len(client.get("/_/pick-media/file", params={"text": "filler"}).json()) == 50
    assert client.get("/_/pick-media/file", params={"text": ""}).json() == []
    assert client.get("/_/pick-media/video", params={"text": "old"}).status_code == 404


def test_the_media_search_refuses_one_not_signed_in_as_the_lookup_search_does(
        served: Served) -> None:
    lookup = served.request("GET", "/_/pick/authors", params={"text": "x"})
    media = served.request("GET", "/_/pick-media/file", params={"text": "x"})
    assert (media.status_code, lookup.status_code) == (303, 303)
    assert media.headers["location"].startswith("/_/signin?next=")
    assert media.headers["location"].endswith("next=%2F_%2Fpick-media%2Ffile%3Ftext%3Dx")
    assert media.headers["content-security-policy"] == \
        lookup.headers["content-security-policy"]
