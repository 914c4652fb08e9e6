"""Schemas in the write pipeline, on every storage backend, through the library."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Conflict, Database, InvalidQuery, NotFound, ValidationFailed
from docbase.core.auth.passwords import verify_password
from docbase.core.documents import new_document
from docbase.core.query import Query
from docbase.core.schema import parse_schema
from docbase.core.schema.uniqueness import CLAIMS_COLLECTION
from tests.remote_backends import served_pair

PEOPLE = {"fields": [
    {"name": "name", "type": "text", "required": True, "max": 20},
    {"name": "age", "type": "number", "min": 0, "max": 150},
    {"name": "email", "type": "email", "unique": True},
    {"name": "born", "type": "date"},
    {"name": "active", "type": "bool", "default": True},
    {"name": "level", "type": "option", "options": ["gold", "silver"], "default": "silver"},
    {"name": "tags", "type": "tags", "max": 3},
    {"name": "orders", "type": "child"},
]}


@pytest.fixture(params=["embedded", "remote"])
async def db(request: pytest.FixtureRequest, stores: Any,
             tmp_path: Path) -> AsyncIterator[Database]:
    """The database, and (``remote``) the same served over HTTPS with its collections
    reached through the client (tests/remote_backends.py)."""
    async with Database(*stores, name="main") as database:
        await database.schemas.put(parse_schema("people", PEOPLE))
        if request.param == "embedded":
            yield database
            return
        async with served_pair(database, tmp_path) as pair:
            yield pair  # type: ignore[misc]


async def problems(call: Any) -> dict[str, tuple[str, ...]]:
    with pytest.raises(ValidationFailed) as refused:
        await call
    return {f.field: f.message for f in refused.value.fields}


async def test_insert_normalises_values_and_applies_defaults(db: Database) -> None:
    joe = await db.collection("people").insert(
        {"name": "Joe", "age": "42", "born": "1980-02-03", "tags": "a,b", "extra": 1})
    assert (joe["age"], joe["born"], joe["tags"]) == (42, "1980-02-03T00:00:00.000Z", ["a", "b"])
    assert (joe["active"], joe["level"], joe["extra"]) == (True, "silver", 1)
    assert await db.collection("people").get(joe["_id"]) == joe


async def test_every_failing_field_is_reported_at_once_and_nothing_stored(db: Database) -> None:
    found = await problems(db.collection("people").insert(
        {"age": -1, "email": "nope", "born": "soon", "active": "perhaps", "level": "bronze",
         "tags": ["a", "b", "c", "d"], "orders": [{}]}))
    assert found == {
        "name": ("is required",),
        "age": ("must be at least 0",),
        "email": ("must be a valid email address",),
        "born": ("must be a date (ISO 8601 text or milliseconds since 1970)",),
        "active": ("must be true or false",),
        "level": ("must be one of: gold, silver",),
        "tags": ("must be at most 3 elements",),
        "orders": ("is a subcollection: create its documents with POST "
                   "/rest/<collection>/<id>/orders",),
    }
    assert await db.collection("people").count() == 0


async def test_a_bulk_insert_names_each_item_and_stores_nothing(db: Database) -> None:
    found = await problems(db.collection("people").insert_many(
        [{"name": "Ann"}, {"age": 3}, {"name": "x" * 21}]))
    assert found == {"1.name": ("is required",), "2.name": ("must be at most 20 characters",)}
    assert await db.collection("people").count() == 0


async def test_validate_false_skips_checks_but_not_uniqueness(db: Database) -> None:
    people = db.collection("people")
    results = await people.insert_each(
        [{"age": "old", "email": "a@x.org"}, {"email": "a@x.org"}, {"name": "Bo"}],
        validate=False)
    assert results[0]["age"] == "old"  # stored as sent
    assert isinstance(results[1], Conflict)
    assert results[2]["name"] == "Bo"
    assert await people.count() == 2


async def test_put_and_patch_are_validated_and_normalised(db: Database) -> None:
    people = db.collection("people")
    joe = await people.insert({"name": "Joe", "age": 40})
    assert (await people.patch(joe["_id"], {"born": "2000-01-02T05:00:00Z"}))["born"] == \
        "2000-01-02T00:00:00.000Z"
    assert await problems(people.update(joe["_id"], {"age": "many", "$unset": {"name": ""}})) \
        == {"age": ("must be a number",), "name": ("is required",)}
    assert await problems(people.patch(joe["_id"], {"name": None})) == {
        "name": ("is required",)}
    assert await problems(people.update(joe["_id"], {"$inc": {"age": 200}})) == {
        "age": ("would become invalid: must be at most 150",)}
    assert await problems(people.update(joe["_id"], {"$push": {"level": "gold"}})) == {
        "level": ("a option field is not an array",)}
    assert (await people.update(joe["_id"], {"$inc": {"age": 1}, "$push": {"tags": "x"}})
            )["tags"] == ["x"]
    stored = await people.get(joe["_id"])
    assert (stored["age"], stored["name"], stored["_version"]) == (41, "Joe", 2)


async def test_unique_values_conflict_and_are_released(db: Database) -> None:
    people = db.collection("people")
    ann = await people.insert({"name": "Ann", "email": "ann@x.org"})
    with pytest.raises(Conflict, match="duplicate value for unique field 'email'"):
        await people.insert({"name": "Other", "email": "ann@x.org"})
    with pytest.raises(Conflict):
        await people.insert_many([{"name": "A", "email": "b@x.org"},
                                  {"name": "B", "email": "b@x.org"}])
    bob = await people.insert({"name": "Bob", "email": "bob@x.org"})
    with pytest.raises(Conflict):
        await people.patch(bob["_id"], {"email": "ann@x.org"})
    await people.patch(ann["_id"], {"email": "ann2@x.org"})  # releases ann@x.org
    await people.patch(bob["_id"], {"email": "ann@x.org"})
    await people.delete(bob["_id"])
    assert (await people.insert({"name": "New", "email": "ann@x.org"}))["email"] == "ann@x.org"
    assert await people.count() == 2
    claims = await db.store.find(CLAIMS_COLLECTION, Query(limit=None))
    assert sorted(c["value"] for c in claims) == ["ann2@x.org", "ann@x.org"]


async def test_a_field_becoming_unique_over_duplicates_fails_listing_them(
        db: Database) -> None:
    items = db.collection("items")
    first = await items.insert({"code": "A"})
    second = await items.insert({"code": "A"})
    await items.insert({"code": "B"})
    with pytest.raises(Conflict) as refused:
        await db.schemas.put(parse_schema("items", {"fields": [
            {"name": "code", "type": "text", "unique": True}]}))
    assert f'"A" in {first["_id"]}, {second["_id"]}' in refused.value.message
    assert await db.schemas.get("items") is None
    await items.delete(second["_id"])
    await db.schemas.put(parse_schema("items", {"fields": [
        {"name": "code", "type": "text", "unique": True}]}))
    with pytest.raises(Conflict):
        await items.insert({"code": "B"})


async def test_lookups_resolve_to_embedded_documents(db: Database) -> None:
    await db.schemas.put(parse_schema("orders2", {"fields": [
        {"name": "buyer", "type": "lookup", "collection": "people", "required": True}]}))
    ann = await db.collection("people").insert({"name": "Ann"})
    order = await db.collection("orders2").insert({"buyer": ann["_id"]})
    assert order["buyer"] == [{"_id": ann["_id"], "name": "Ann", "active": True,
                               "level": "silver"}]
    missing = "0" * 24
    assert await problems(db.collection("orders2").insert({"buyer": [{"_id": missing}]})) \
        == {"buyer": (f"no document {missing} in 'people'",)}


async def test_media_fields_need_existing_media(db: Database) -> None:
    await db.schemas.put(parse_schema("products", {"fields": [
        {"name": "photos", "type": "image"}, {"name": "manual", "type": "file"}]}))
    media = new_document({"origname": "a.png"}, "api")  # stands for an uploaded file
    await db.store.insert("_media", [media])
    product = await db.collection("products").insert({"photos": media["_id"]})
    assert product["photos"] == [media["_id"]]
    missing = "f" * 24
    assert await problems(db.collection("products").insert({"manual": [missing]})) == {
        "manual": (f"no media {missing}",)}


async def test_passwords_are_hashed_and_never_returned(db: Database) -> None:
    await db.schemas.put(parse_schema("accounts", {"fields": [
        {"name": "login", "type": "text"},
        {"name": "secret", "type": "password", "min": 8, "required": True}]}))
    accounts = db.collection("accounts")
    created = await accounts.insert({"login": "ann", "secret": "correct horse"})
    assert "secret" not in created
    stored = await db.store.get("accounts", created["_id"])
    assert await verify_password(stored["secret"], "correct horse")
    assert "secret" not in await accounts.get(created["_id"])
    assert all("secret" not in d for d in await accounts.find())
    updated = await accounts.patch(created["_id"], {"secret": "battery staple"})
    assert "secret" not in updated
    assert await verify_password((await db.store.get("accounts", created["_id"]))["secret"],
                                 "battery staple")
    assert await problems(accounts.insert({"login": "bo", "secret": "short"})) == {
        "secret": ("must be at least 8 characters",)}
    for query in ({"secret": {"$regex": "^\\$argon"}}, {"$or": [{"secret": {"$exists": 1}}]}):
        with pytest.raises(InvalidQuery, match="password field 'secret'"):
            await accounts.find(query)


async def test_children_are_validated_against_their_collection(db: Database) -> None:
    await db.schemas.put(parse_schema("orders", {"fields": [
        {"name": "qty", "type": "number", "required": True}]}))
    joe = await db.collection("people").insert({"name": "Joe"})
    orders = db.collection("people").children(joe["_id"], "orders")
    assert (await orders.insert({"qty": "2"}))["qty"] == 2
    assert await problems(orders.insert({})) == {"qty": ("is required",)}
    with pytest.raises(NotFound, match="'name' is not a child field"):
        await db.collection("people").children(joe["_id"], "name").insert({"qty": 1})


async def test_strict_mode_refuses_undefined_collections_and_fields(db: Database) -> None:
    await db.collection("loose").insert({"a": 1})
    await db.settings.set("schema.mode", "strict")
    with pytest.raises(NotFound, match="strict mode"):
        await db.collection("loose").insert({"a": 2})
    with pytest.raises(NotFound, match="strict mode"):
        await db.collection("loose").find()
    assert await problems(db.collection("people").insert({"name": "Ann", "nick": "A"})) == {
        "nick": ("is not a field of 'people'",)}
    joe = await db.collection("people").insert({"name": "Joe"})
    assert await problems(db.collection("people").patch(joe["_id"], {"nick": "J"})) == {
        "nick": ("is not a field of 'people'",)}
    with pytest.raises(NotFound, match="strict mode"):  # 'orders' has no schema yet
        await db.collection("people").children(joe["_id"], "orders").insert({"qty": 1})
    await db.settings.set("schema.mode", "schemaless")
    assert len(await db.collection("loose").find()) == 1


async def test_a_stale_claim_is_taken_over_only_after_its_grace(db: Database) -> None:
    from docbase.core.schema.uniqueness import UniqueClaims, claims_of

    ghost = {"_id": "0" * 24, "email": "ghost@x.org"}  # a writer that died after claiming
    await db.schemas.claims.claim(claims_of("people", ["email"], ghost))
    people = db.collection("people")
    with pytest.raises(Conflict):  # young: it may be a write in flight
        await people.insert({"name": "Ann", "email": "ghost@x.org"})
    db.schemas.claims.grace = 0.0
    ann = await people.insert({"name": "Ann", "email": "ghost@x.org"})
    with pytest.raises(Conflict):  # now Ann's, and Ann holds the value: not stale
        await UniqueClaims(db.store, grace=0.0).claim(
            claims_of("people", ["email"], {"_id": "1" * 24, "email": "ghost@x.org"}))
    assert (await people.get(ann["_id"]))["email"] == "ghost@x.org"


async def test_indexed_fields_get_a_store_index(tmp_path: Any) -> None:
    from docbase.core.query import Eq
    from tests.backends import sql_backend
    from tests.test_sql_indexes import _uses_index

    async with sql_backend(f"sqlite:///{tmp_path}/indexed.db") as (store, blobs):
        db = Database(store, blobs)
        await db.collection("people").insert_many(
            [{"code": f"c{i}", "n": i} for i in range(500)])
        assert not _uses_index(await store.explain("people", Eq(("code",), "c7")), "sqlite")
        await db.schemas.put(parse_schema("people", {"fields": [
            {"name": "code", "type": "text", "index": True}, {"name": "n", "type": "number"}]}))
        assert _uses_index(await store.explain("people", Eq(("code",), "c7")), "sqlite")
        assert not _uses_index(await store.explain("people", Eq(("n",), 7)), "sqlite")


async def test_a_schema_put_without_access_leaves_no_rules_behind(stores: Any) -> None:
    """``put`` replaces the schema, its rules too (they once stayed, set key by key)."""
    async with Database(*stores, name="main") as database:
        fields = {"fields": [{"name": "title", "type": "text"}]}
        await database.schemas.put(parse_schema("memos", {**fields, "access": {
            "read": ["*"], "private": True}}))
        stored = await database.schemas.get("memos")
        assert stored is not None
        assert stored.access is not None
        await database.schemas.put(parse_schema("memos", fields))
        again = await database.schemas.get("memos")
        assert again is not None
        assert again.access is None
