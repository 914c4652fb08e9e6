"""Access rules on reads (issue 30, docs/access.md): the read scope drawn by ``private``,
``@owner`` and ``where`` is one filter in the store query, on every engine, over HTTPS
and through the library; a document outside it is 404, never 403."""

from __future__ import annotations

from typing import Any

import pytest

from docbase import Database, Forbidden, InvalidQuery, NotFound
from docbase.core.auth import Principal
from docbase.core.errors import ValidationFailed
from docbase.core.query import Query, ReadOptions, SortKey
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase
from tests.access_fixtures import ANN, BOB, EDITOR, HR, NOTES, bearer, seed_notes, user_token


async def notes_db(db: Database, access: dict[str, Any]) -> dict[str, str]:
    await db.schemas.put(parse_schema("notes", {**NOTES, "access": access}))
    return await seed_notes(db)


async def test_private_data_in_the_library(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "create": ["*"], "private": True})
        ann = db.collection("notes", ANN)
        assert sorted(d["title"] for d in await ann.find()) == ["ann 1", "ann 2"]
        assert await ann.count() == 2
        assert await ann.count({"title": "bob 1"}) == 0
        assert (await ann.get(ids["ann 1"]))["title"] == "ann 1"
        with pytest.raises(NotFound):
            await ann.get(ids["bob 1"])
        answer = await ann.read(Query(), ReadOptions(totals=True))
        assert answer["totals"]["total"] == 2
        groups = await ann.read(Query(groupby=(("title",),), limit=None))
        assert "bob 1" not in str(groups)
        # a full-access handle and the system principal see everything
        assert await db.collection("notes").count() == 3


async def test_owner_read_and_roles_in_the_library(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["editor", "@owner"]})
        assert await db.collection("notes", EDITOR).count() == 3
        bob = db.collection("notes", BOB)
        assert [d["title"] for d in await bob.find()] == ["bob 1"]
        with pytest.raises(NotFound):
            await bob.get(ids["ann 1"])
        # a principal none of whose roles is listed: 403 for every read, even of its own
        await db.schemas.put(parse_schema("notes", {**NOTES, "access": {"read": ["editor"]}}))
        with pytest.raises(Forbidden):
            await bob.find()
        with pytest.raises(Forbidden):
            await bob.get(ids["bob 1"])
        with pytest.raises(Forbidden):
            await bob.count()


async def test_where_with_user_values_in_the_library(stores: Any) -> None:
    async with Database(*stores) as db:
        await notes_db(db, {"read": ["*"],
                            "where": {"read": {"team": {"$in": "$user.teams"}}}})
        red = Principal(author="cat@example.com", kind="user", full_access=False,
                        claims=(("teams", ["red"]),))
        both = Principal(author="dan@example.com", kind="user", full_access=False,
                         claims=(("teams", ["red", "blue"]),))
        nobody = Principal(author="eve@example.com", kind="user", full_access=False)
        assert sorted(d["title"] for d in await db.collection("notes", red).find()) == [
            "ann 1", "bob 1"]
        assert await db.collection("notes", both).count() == 3
        assert await db.collection("notes", nobody).count() == 0


async def test_children_and_lookups_follow_the_read_scope(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "private": True})
        await db.schemas.put(parse_schema("links", {"fields": [
            {"name": "note", "type": "lookup", "collection": "notes"}]}))
        link = await db.collection("links").insert({"note": [ids["bob 1"], ids["ann 1"]]})
        seen = await db.collection("links", ANN).get(link["_id"])
        by_id = {item["_id"]: item for item in seen["note"]}
        assert by_id[ids["ann 1"]].get("title") == "ann 1"
        assert by_id[ids["bob 1"]] == {"_id": ids["bob 1"]}
        # children of a readable parent: rules of the child collection apply
        folder = await db.collection("folders").insert({"name": "f"})
        kids = db.collection("folders").children(folder["_id"], "notes")
        await db.collection("folders", BOB).children(folder["_id"], "notes").find()
        await kids.insert({"title": "child", "team": "red"})
        assert await db.collection("folders", ANN).children(folder["_id"], "notes").find() == []
        embedded = await db.collection("folders", ANN).get(folder["_id"], fetchchildren=True)
        assert embedded.get("notes", []) == []


async def test_field_read_rules_in_the_library(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "fields": {"salary": {"read": ["hr"]}}})
        ann = db.collection("notes", ANN)
        assert all("salary" not in d for d in await ann.find())
        assert "salary" not in await ann.get(ids["ann 1"])
        assert (await db.collection("notes", HR).get(ids["ann 1"]))["salary"] == 100
        for query in (Query(sort=(SortKey(("salary",)),)), Query(groupby=(("salary",),))):
            with pytest.raises(Forbidden, match="salary"):
                await ann.find(query=query)
        with pytest.raises(Forbidden, match="salary"):
            await ann.count({"salary": {"$gt": 50}})


async def test_embedded_children_leave_out_the_fields_the_reader_may_not_read(
        stores: Any) -> None:
    """``fetchchildren`` embeds a child as its own collection's read shows it: a field
    rule of the child collection holds there too (the embedding once kept the read
    scope's filter but dropped its projection, and handed the salary over)."""
    async with Database(*stores) as db:
        await notes_db(db, {"read": ["*"], "fields": {"salary": {"read": ["hr"]}}})
        folder = await db.collection("folders").insert({"name": "f"})
        await db.collection("folders").children(folder["_id"], "notes").insert(
            {"title": "child", "team": "red", "salary": 95156})
        for reader in (ANN, EDITOR):
            embedded = await db.collection("folders", reader).get(folder["_id"],
                                                                  fetchchildren=True)
            assert [child["title"] for child in embedded["notes"]] == ["child"]
            assert "salary" not in embedded["notes"][0]
            listed = await db.collection("folders", reader).children(
                folder["_id"], "notes").find()
            assert "salary" not in listed[0]
        embedded = await db.collection("folders", HR).get(folder["_id"], fetchchildren=True)
        assert embedded["notes"][0]["salary"] == 95156


async def test_bad_access_rules_are_refused_naming_the_key(stores: Any) -> None:
    for access, key in [({"read": "*"}, "access.read"), ({"raed": ["*"]}, "access.raed"),
                        ({"private": "yes"}, "access.private"),
                        ({"where": {"read": {"$bad": 1}}}, "access.where.read"),
                        ({"fields": {"salary": {"read": "hr"}}}, "access.fields.salary")]:
        with pytest.raises(ValidationFailed) as refused:
            parse_schema("notes", {**NOTES, "access": access})
        assert [f.field for f in refused.value.fields] == [key]
    with pytest.raises(InvalidQuery, match="access"):
        parse_schema("notes", {**NOTES, "access": ["*"]})


# ------------------------------------------------------------------ over HTTPS


async def test_meta_round_trips_access(live: LiveDocbase) -> None:
    access = {"read": ["editor", "@owner"], "create": ["*"], "private": True,
              "where": {"read": {"team": {"$in": "$user.teams"}}},
              "fields": {"salary": {"read": ["hr"], "write": ["hr"]}}}
    put = await live.client.put("/rest/notes/_meta", json={**NOTES, "access": access},
                                headers=live.auth())
    assert put.status_code == 200, put.text
    got = await live.client.get("/rest/notes/_meta", headers=live.auth())
    assert got.json()["access"] == access
    again = await live.client.put("/rest/notes/_meta", json=got.json(), headers=live.auth())
    assert again.status_code == 200, again.text
    assert again.json()["access"] == access
    bad = await live.client.put("/rest/notes/_meta", json={**NOTES, "access": {"read": 1}},
                                headers=live.auth())
    assert bad.status_code in (400, 422), bad.text
    assert "access.read" in bad.text


async def test_private_data_over_https(live: LiveDocbase) -> None:
    ids = await notes_db(live.db, {"read": ["*"], "private": True})
    ann = bearer(await user_token(live, "ann@example.com"))
    listed = await live.client.get("/rest/notes", headers=ann, params={"totals": "true"})
    assert listed.status_code == 200, listed.text
    assert sorted(d["title"] for d in listed.json()["data"]) == ["ann 1", "ann 2"]
    assert listed.json()["totals"]["total"] == 2
    hidden = await live.client.get(f"/rest/notes/{ids['bob 1']}", headers=ann)
    assert hidden.status_code == 404, hidden.text
    count = await live.client.get("/rest/notes", headers=ann, params={
        "q": '{"team": "red"}', "count": "true", "totals": "true"})
    assert count.json()["totals"]["count"] == 1
    csv = await live.client.get("/rest/notes", headers={**ann, "Accept": "text/csv"})
    assert "bob 1" not in csv.text
    assert "ann 1" in csv.text
    ndjson = await live.client.get("/rest/notes",
                                   headers={**ann, "Accept": "application/x-ndjson"})
    assert "bob 1" not in ndjson.text
    assert "ann 2" in ndjson.text
    admin = await live.client.get("/rest/notes", headers=live.auth())
    assert len(admin.json()) == 3


async def test_field_rules_over_https(live: LiveDocbase) -> None:
    ids = await notes_db(live.db, {"read": ["*"], "fields": {"salary": {"read": ["hr"]}}})
    ann = bearer(await user_token(live, "ann@example.com"))
    listed = await live.client.get("/rest/notes", headers=ann)
    assert listed.status_code == 200
    assert all("salary" not in d for d in listed.json())
    one = await live.client.get(f"/rest/notes/{ids['ann 1']}", headers=ann)
    assert one.status_code == 200
    assert "salary" not in one.json()
    for params in ({"sort": "salary"}, {"q": '{"salary": 100}'},
                   {"h": '{"$fields": {"salary": 1}}'}, {"groupby": "salary"},
                   {"aggregate": "SUM:salary"}):
        refused = await live.client.get("/rest/notes", headers=ann, params=params)
        assert refused.status_code == 403, (params, refused.text)


async def test_schema_files_apply_access_rules(stores: Any) -> None:
    from docbase.core.schema.files import apply_plan, parse_schema_file, plan

    async with Database(*stores) as db:
        wanted = parse_schema_file({"collections": {"notes": {
            **NOTES, "access": {"read": ["*"], "private": True}}}})
        await apply_plan(db, wanted, plan(await db.schemas.all(), "schemaless", wanted))
        ids = await seed_notes(db)
        with pytest.raises(NotFound):
            await db.collection("notes", ANN).get(ids["bob 1"])
        looser = parse_schema_file({"collections": {"notes": {
            **NOTES, "access": {"read": ["*"]}}}})
        changes = plan(await db.schemas.all(), "schemaless", looser)
        assert [c.what for c in changes] == ["notes"]
        await apply_plan(db, looser, changes)
        assert (await db.collection("notes", ANN).get(ids["bob 1"]))["title"] == "bob 1"


async def test_a_lookup_hands_over_no_field_the_reader_may_not_read(stores: Any) -> None:
    async with Database(*stores) as db:
        ids = await notes_db(db, {"read": ["*"], "fields": {"salary": {"read": ["hr"]}}})
        await db.schemas.put(parse_schema("links", {"fields": [
            {"name": "note", "type": "lookup", "collection": "notes"}]}))
        link = await db.collection("links").insert({"note": [ids["ann 1"]]})
        [seen] = (await db.collection("links", ANN).get(link["_id"]))["note"]
        assert seen["title"] == "ann 1"
        assert "salary" not in seen
        [paid] = (await db.collection("links", HR).get(link["_id"]))["note"]
        assert paid["salary"] == 100
