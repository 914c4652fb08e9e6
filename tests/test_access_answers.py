"""The answer to a write carries only what the writer may read (docs/access.md, "The
answer to a write"): a credential allowed to write a collection but not to read the
written document (a key scoped to PUT/POST/PATCH, a role that may create but not
read, a document the write leaves outside the writer's read scope) is answered the
document's ``_id`` and system fields, never its data. On every engine, over HTTPS and
through the library."""

from __future__ import annotations

from typing import Any

from docbase import Database
from docbase.core.access.visible import read_view
from docbase.core.auth import Principal
from docbase.core.auth.scopes import Scope
from docbase.core.documents import SYSTEM_FIELDS
from docbase.core.query import MATCH_ALL, Eq
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase
from tests.access_fixtures import ANN, EDITOR, HR, NOTES

SECRET = {"title": "the plan", "team": "red", "salary": 100}


def blind(answer: dict[str, Any]) -> None:
    """``answer`` holds the document's id and system fields, none of its data."""
    assert "_id" in answer, answer
    assert set(answer) <= SYSTEM_FIELDS, answer


async def test_read_view_is_the_scope_and_hidden_fields_of_the_rules(stores: Any) -> None:
    """One function says what a principal may read: the read stage and write answers use it."""
    async with Database(*stores) as db:
        assert await read_view(db.schemas, ANN, "notes") is None  # no rules: not limited
        await db.schemas.put(parse_schema("notes", {**NOTES, "access": {
            "read": ["editor", "hr", "@owner"],
            "fields": {"salary": {"read": ["hr"]}}}}))
        assert await read_view(db.schemas, EDITOR, "notes") == (MATCH_ALL, ("salary",))
        assert await read_view(db.schemas, HR, "notes") == (MATCH_ALL, ())
        assert await read_view(db.schemas, ANN, "notes") == (
            Eq(("_createdby",), ANN.author), ("salary",))
        assert await read_view(db.schemas, Principal(), "notes") is None  # full access


async def test_a_key_that_may_write_but_not_get_is_answered_no_data(
        live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("notes", NOTES))
    writer = {"x-apikey": await live.key(paths=["/rest/notes", "/rest/notes/*"],
                                         methods=["POST", "PUT", "PATCH"])}
    created = await live.client.post("/rest/notes", json=SECRET, headers=writer)
    assert created.status_code == 201, created.text
    blind(created.json())
    note = created.json()["_id"]
    for method in ("PUT", "PATCH"):
        answer = await live.client.request(method, f"/rest/notes/{note}", headers=writer,
                                           json={"title": f"the {method} plan"})
        assert answer.status_code == 200, answer.text
        blind(answer.json())
    bulk = await live.client.post("/rest/notes", json=[SECRET, SECRET], headers=writer)
    assert bulk.status_code == 201, bulk.text
    for answer in bulk.json():
        blind(answer)
    assert (await live.client.get(f"/rest/notes/{note}", headers=writer)).status_code == 403
    stored = await live.client.get(f"/rest/notes/{note}", headers=live.auth())
    assert stored.json()["title"] == "the PATCH plan"  # the writes were made
    # a key that may GET as well is answered the whole document, as before
    both = {"x-apikey": await live.key(paths=["/rest/notes", "/rest/notes/*"],
                                       methods=["GET", "POST", "PUT"])}
    whole = await live.client.put(f"/rest/notes/{note}", json={"team": "blue"}, headers=both)
    assert (whole.json()["title"], whole.json()["team"]) == ("the PATCH plan", "blue")


async def test_a_role_that_may_create_but_not_read_is_answered_no_data(
        live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("notes", {**NOTES, "access": {
        "read": ["editor"], "create": ["writer", "editor"]}}))
    writer = {"x-apikey": await live.key(paths=["/rest/**"], roles=["writer"])}
    created = await live.client.post("/rest/notes", json=SECRET, headers=writer)
    assert created.status_code == 201, created.text
    blind(created.json())
    assert (await live.client.get("/rest/notes", headers=writer)).status_code == 403
    editor = {"x-apikey": await live.key(paths=["/rest/**"], roles=["editor"])}
    whole = await live.client.post("/rest/notes", json=SECRET, headers=editor)
    assert whole.json()["title"] == "the plan"


async def test_a_write_leaving_the_read_scope_is_answered_no_data(live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("notes", {**NOTES, "access": {
        "read": ["*"], "create": ["*"], "update": ["*"],
        "where": {"read": {"team": "red"}}}}))
    writer = {"x-apikey": await live.key(paths=["/rest/**"])}
    red = await live.client.post("/rest/notes", json=SECRET, headers=writer)
    assert red.json()["title"] == "the plan"  # inside the scope: the whole document
    moved = await live.client.put(f"/rest/notes/{red.json()['_id']}", json={"team": "blue"},
                                  headers=writer)
    assert moved.status_code == 200, moved.text
    blind(moved.json())
    blue = await live.client.post("/rest/notes", json={**SECRET, "team": "blue"},
                                  headers=writer)
    assert blue.status_code == 201, blue.text
    blind(blue.json())


async def test_the_library_answers_a_writer_what_it_may_read(stores: Any) -> None:
    async with Database(*stores) as db:
        await db.schemas.put(parse_schema("notes", NOTES))
        writer = db.collection("notes", Principal(
            kind="key", full_access=False,
            scope=Scope(paths=("/rest/notes", "/rest/notes/*"), methods=("POST", "PUT"))))
        created = await writer.insert(SECRET)
        blind(created)
        blind(await writer.update(created["_id"], {"title": "x"}))
        assert (await db.collection("notes").get(created["_id"]))["title"] == "x"
