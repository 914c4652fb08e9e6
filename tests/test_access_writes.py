"""Access rules on writes (issue 30, docs/access.md): roles per operation, ``@owner``,
``where.write`` with ``$user`` values and field write rules, decided in the one write
pipeline, on every engine, over HTTPS and through the library."""

from __future__ import annotations

from typing import Any

import pytest

from docbase import Database, Forbidden, NotFound
from docbase.core.auth import Principal
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase
from tests.access_fixtures import ANN, BOB, EDITOR, HR, NOTES, bearer, seed_notes, user_token


async def notes_db(db: Database, access: dict[str, Any]) -> dict[str, str]:
    await db.schemas.put(parse_schema("notes", {**NOTES, "access": access}))
    return await seed_notes(db)


async def titles(db: Database) -> list[str]:
    return sorted(d["title"] for d in await db.collection("notes").find())


async def test_roles_per_operation_in_the_library(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["editor"],
                                  "update": ["editor", "@owner"], "delete": ["@owner"]})
        ann, editor = db.collection("notes", ANN), db.collection("notes", EDITOR)
        with pytest.raises(Forbidden):
            await ann.insert({"title": "mine"})
        await editor.insert({"title": "edited"})
        await editor.update(ids["bob 1"], {"title": "bob 1!"})
        await ann.update(ids["ann 1"], {"title": "ann 1!"})
        with pytest.raises(Forbidden, match="owner"):  # readable, not hers: 403
            await ann.update(ids["bob 1"], {"title": "taken"})
        with pytest.raises(Forbidden):  # editors may update anything, delete only theirs
            await editor.delete(ids["ann 2"])
        await ann.delete(ids["ann 2"])
        assert await titles(db) == ["ann 1!", "bob 1!", "edited"]
        # an operation left out is allowed to no token holder; full access is unlimited
        await db.schemas.put(parse_schema("notes", {**NOTES, "access": {"read": ["*"]}}))
        with pytest.raises(Forbidden):
            await editor.insert({"title": "no"})
        await db.collection("notes").insert({"title": "system"})
        assert "no" not in await titles(db)


async def test_private_writes_are_404_outside_and_bulk_deletes_skip(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["*"], "update": ["*"],
                                  "delete": ["*"], "private": True})
        ann = db.collection("notes", ANN)
        with pytest.raises(NotFound):
            await ann.update(ids["bob 1"], {"title": "taken"})
        with pytest.raises(NotFound):
            await ann.delete(ids["bob 1"])
        deleted = await ann.delete_many([ids["bob 1"], ids["ann 1"]])
        assert deleted == [ids["ann 1"]]
        assert await titles(db) == ["ann 2", "bob 1"]


async def test_where_write_refuses_a_document_the_rule_refuses(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["*"], "update": ["*"],
                                  "where": {"read": {"team": {"$in": "$user.teams"}},
                                            "write": {"team": {"$in": "$user.teams"}}}})
        red = db.collection("notes", Principal(
            author="cat@example.com", kind="user", full_access=False,
            claims=(("teams", ["red"]),)))
        await red.insert({"title": "red one", "team": "red"})
        with pytest.raises(Forbidden, match="write rule"):
            await red.insert({"title": "blue one", "team": "blue"})
        with pytest.raises(Forbidden, match="write rule"):
            await red.update(ids["bob 1"], {"team": "blue"})
        with pytest.raises(NotFound):  # blue is outside her read scope
            await red.update(ids["ann 2"], {"title": "x"})
        stored = await db.collection("notes").get(ids["bob 1"])
        assert stored["team"] == "red"
        assert await titles(db) == ["ann 1", "ann 2", "bob 1", "red one"]


async def test_field_write_rules_in_the_library(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["*"], "update": ["*"],
                                  "fields": {"salary": {"read": ["hr"], "write": ["hr"]}}})
        ann, hr = db.collection("notes", ANN), db.collection("notes", HR)
        with pytest.raises(Forbidden, match="salary"):
            await ann.update(ids["ann 1"], {"salary": 1})
        with pytest.raises(Forbidden, match="salary"):
            await ann.insert({"title": "rich", "salary": 1})
        await hr.update(ids["ann 1"], {"salary": 7})
        written = await ann.insert({"title": "plain"})
        assert "salary" not in written
        assert (await db.collection("notes").get(ids["ann 1"]))["salary"] == 7
        assert await titles(db) == ["ann 1", "ann 2", "bob 1", "plain"]


async def test_writes_over_https(live: LiveDocbase) -> None:
    ids = await notes_db(live.db, {"read": ["*"], "create": ["*"], "update": ["@owner"],
                                   "delete": ["@owner"],
                                   "where": {"write": {"title": {"$regex": "^ok"}}}})
    ann = bearer(await user_token(live, "ann@example.com"))
    refused = await live.client.post("/rest/notes", json={"title": "bad"}, headers=ann)
    assert refused.status_code == 403, refused.text
    created = await live.client.post("/rest/notes", json={"title": "ok 1"}, headers=ann)
    assert created.status_code == 201, created.text
    mine = created.json()["_id"]
    assert (await live.client.put(f"/rest/notes/{mine}", json={"title": "bad"},
                                  headers=ann)).status_code == 403
    assert (await live.client.put(f"/rest/notes/{mine}", json={"title": "ok 2"},
                                  headers=ann)).status_code == 200
    other = await live.client.put(f"/rest/notes/{ids['bob 1']}", json={"title": "ok"},
                                  headers=ann)
    assert other.status_code == 403, other.text
    gone = await live.client.delete(f"/rest/notes/{ids['bob 1']}", headers=ann)
    assert gone.status_code == 403, gone.text
    assert (await live.client.delete(f"/rest/notes/{mine}", headers=ann)).status_code == 200
    assert await titles(live.db) == ["ann 1", "ann 2", "bob 1"]


async def test_private_writes_over_https_answer_404(live: LiveDocbase) -> None:
    ids = await notes_db(live.db, {"read": ["*"], "create": ["*"], "update": ["*"],
                                   "delete": ["*"], "private": True})
    bob = bearer(await user_token(live, "bob@example.com"))
    for response in [
        await live.client.put(f"/rest/notes/{ids['ann 1']}", json={"title": "x"}, headers=bob),
        await live.client.patch(f"/rest/notes/{ids['ann 1']}", json={"title": "x"},
                                headers=bob),
        await live.client.delete(f"/rest/notes/{ids['ann 1']}", headers=bob),
        await live.client.get(f"/rest/notes/{ids['ann 1']}", headers=bob),
    ]:
        assert response.status_code == 404, response.text
    bulk = await live.client.request("DELETE", "/rest/notes/*", headers=bob,
                                     json=[ids["ann 1"], ids["bob 1"]])
    assert bulk.status_code == 200, bulk.text
    assert ids["ann 1"] not in bulk.text
    assert await titles(live.db) == ["ann 1", "ann 2"]


async def test_a_parent_outside_the_scope_hides_its_children(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["*"], "private": True})
        admin_kids = db.collection("notes").children(ids["bob 1"], "comments")
        await admin_kids.insert({"text": "on bob's note"})
        ann_kids = db.collection("notes", ANN).children(ids["bob 1"], "comments")
        with pytest.raises(NotFound):
            await ann_kids.find()
        with pytest.raises(NotFound):
            await ann_kids.insert({"text": "sneaking in"})
        with pytest.raises(NotFound):
            await ann_kids.count()
        bob = db.collection("notes", BOB).children(ids["bob 1"], "comments")
        assert [c["text"] for c in await bob.find()] == ["on bob's note"]
        await db.collection("notes", ANN).children(ids["ann 1"], "comments").insert(
            {"text": "on her own"})
        assert await admin_kids.count() == 1


async def test_an_operation_no_role_allows_is_403_even_outside_the_scope(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "update": ["editor"], "private": True})
        ann = db.collection("notes", ANN)
        for document_id in (ids["bob 1"], ids["ann 1"], "0" * 24):
            with pytest.raises(Forbidden):
                await ann.update(document_id, {"title": "x"})
            with pytest.raises(Forbidden):
                await ann.delete(document_id)


async def test_where_with_the_users_email_over_https(live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("tasks", {
        "fields": [{"name": "title", "type": "text"}, {"name": "assignee", "type": "email"}],
        "access": {"read": ["*"], "create": ["*"], "update": ["*"],
                   "where": {"read": {"assignee": "$user.email"},
                             "write": {"assignee": "$user.email"}}}}))
    theirs = await live.db.collection("tasks").insert({"title": "bob's",
                                                       "assignee": "bob@example.com"})
    ann = bearer(await user_token(live, "ann@example.com"))
    mine = await live.client.post("/rest/tasks", headers=ann, json={
        "title": "mine", "assignee": "ann@example.com"})
    assert mine.status_code == 201, mine.text
    for body in ({"title": "for bob", "assignee": "bob@example.com"}, {"title": "nobody's"}):
        refused = await live.client.post("/rest/tasks", headers=ann, json=body)
        assert refused.status_code == 403, refused.text
    handed = await live.client.patch(f"/rest/tasks/{mine.json()['_id']}", headers=ann,
                                     json={"assignee": "bob@example.com"})
    assert handed.status_code == 403, handed.text
    hidden = await live.client.get(f"/rest/tasks/{theirs['_id']}", headers=ann)
    assert hidden.status_code == 404, hidden.text
    listed = await live.client.get("/rest/tasks", headers=ann)
    assert [t["title"] for t in listed.json()] == ["mine"]
    stored = await live.db.collection("tasks").find()
    assert sorted((t["title"], t["assignee"]) for t in stored) == [
        ("bob's", "bob@example.com"), ("mine", "ann@example.com")]


async def test_an_operation_no_role_grants_is_403_even_outside_the_read_scope(
        stores: Any) -> None:
    """docs/access.md: no role for the operation is 403 "whether or not the document
    exists", so a document outside the read scope answers 403 too, not 404."""
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "update": ["editor"], "delete": ["editor"],
                                  "where": {"read": {"team": "$user.email"}}})
        ann = db.collection("notes", ANN)
        for write in (lambda: ann.delete(ids["bob 1"]), lambda: ann.delete("0" * 24),
                      lambda: ann.update(ids["bob 1"], {"title": "x"})):
            with pytest.raises(Forbidden, match="do not allow"):
                await write()
        assert await titles(db) == ["ann 1", "ann 2", "bob 1"]


async def test_the_answer_to_a_write_hides_the_fields_the_reader_may_not_read(
        stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["*"], "update": ["*"],
                                  "fields": {"salary": {"read": ["hr"], "write": ["hr"]}}})
        editor = db.collection("notes", EDITOR)
        for answer in (await editor.update(ids["ann 1"], {"title": "put"}),
                       await editor.patch(ids["ann 1"], {"title": "patched"}),
                       await editor.insert({"title": "new"})):
            assert "salary" not in answer, answer
        assert (await db.collection("notes", HR).get(ids["ann 1"]))["salary"] == 100
        assert "salary" in await db.collection("notes", HR).update(ids["ann 1"], {"title": "x"})
