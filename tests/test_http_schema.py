"""Schemas over real HTTPS: 422 bodies, form coercion, validate=false, unique 409, _meta."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Database
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase, live_docbase

# the HTTP shapes are the same on every store (tests/test_schema_validation.py runs the
# schemas on each): memory, and PostgreSQL, the store several servers share
pytestmark = pytest.mark.parametrize(
    "stores", ["memory", pytest.param("postgresql", marks=pytest.mark.postgres)],
    indirect=True)

PEOPLE = {"fields": [
    {"name": "name", "type": "text", "required": True},
    {"name": "age", "type": "number", "min": 0},
    {"name": "email", "type": "email", "unique": True, "description": "work address"},
    {"name": "active", "type": "bool"},
    {"name": "code", "type": "text", "index": True},
    {"name": "orders", "type": "child"},
]}


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    db = Database(*stores, name="main")
    await db.schemas.put(parse_schema("people", PEOPLE))
    async with live_docbase({"main": db}, tmp_path) as running:
        yield running


async def test_a_refused_document_answers_422_listing_every_field(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json={"age": "x", "email": "no"},
                                      headers=live.auth())
    assert response.status_code == 422
    body = response.json()
    assert (body["name"], body["status"]) == ("ValidationFailed", 422)
    assert body["list"] == [{"field": "name", "message": ["is required"]},
                            {"field": "age", "message": ["must be a number"]},
                            {"field": "email", "message": ["must be a valid email address"]}]
    listed = await live.client.get("/rest/people", headers=live.auth())
    assert listed.json() == []


async def test_form_encoded_numbers_and_bools_are_coerced(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", headers=live.auth(),
                                      data={"name": "Ann", "age": "7", "active": "on"})
    assert response.status_code == 201, response.text
    assert (response.json()["age"], response.json()["active"]) == (7, True)


async def test_bulk_validate_false_reports_each_item(live: LiveDocbase) -> None:
    response = await live.client.post(
        "/rest/people?validate=false", headers=live.auth(),
        json=[{"email": "a@x.org"}, {"email": "a@x.org", "name": "Twin"}, {"age": "old"}])
    assert response.status_code == 201
    first, second, third = response.json()
    assert first["email"] == "a@x.org"
    assert third["age"] == "old"
    assert (second["name"], second["status"]) == ("Conflict", 409)
    assert "unique field 'email'" in second["message"]
    strict = await live.client.post("/rest/people", headers=live.auth(),
                                    json=[{"name": "A"}, {"age": 1}])
    assert strict.status_code == 422
    assert strict.json()["list"] == [{"field": "1.name", "message": ["is required"]}]


async def test_a_duplicate_unique_value_answers_409(live: LiveDocbase) -> None:
    body = {"name": "Ann", "email": "ann@x.org"}
    assert (await live.client.post("/rest/people", json=body, headers=live.auth())
            ).status_code == 201
    response = await live.client.post("/rest/people", json=body, headers=live.auth())
    assert response.status_code == 409
    assert response.json()["name"] == "Conflict"


async def test_collection_meta_describes_the_schema(live: LiveDocbase) -> None:
    joe = (await live.client.post("/rest/people", json={"name": "Joe"}, headers=live.auth())
           ).json()
    await live.client.post(f"/rest/people/{joe['_id']}/notes", json={"n": 1},
                           headers=live.auth())
    response = await live.client.get("/rest/people/_meta", headers=live.auth())
    assert response.status_code == 200
    assert response.json() == {
        "name": "people",
        "fields": [
            {"name": "name", "type": "text", "required": True, "unique": False},
            {"name": "age", "type": "number", "required": False, "unique": False, "min": 0},
            {"name": "email", "type": "email", "required": False, "unique": True,
             "description": "work address"},
            {"name": "active", "type": "bool", "required": False, "unique": False},
            {"name": "code", "type": "text", "required": False, "unique": False,
             "index": True},
            {"name": "orders", "type": "child", "required": False, "unique": False},
        ],
        "children": [{"name": "orders", "type": "child", "collection": "orders"},
                     {"name": "notes", "type": "child", "collection": "notes"}],
        "indexes": [{"field": "email", "unique": True}, {"field": "code", "unique": False}],
    }
    database = (await live.client.get("/rest/_meta", headers=live.auth())).json()
    assert (database["name"], database["mode"]) == ("main", "schemaless")
    assert [c["name"] for c in database["collections"]] == ["notes", "people"]
    assert database["collections"][1] == response.json()


async def test_collection_meta_written_back_with_put_keeps_its_child_field(
    live: LiveDocbase,
) -> None:
    read = (await live.client.get("/rest/people/_meta", headers=live.auth())).json()
    written = await live.client.put("/rest/people/_meta", json=read, headers=live.auth())
    assert written.status_code == 200, written.text
    again = (await live.client.get("/rest/people/_meta", headers=live.auth())).json()
    assert again == read
    assert {"name": "orders", "type": "child", "required": False, "unique": False} \
        in again["fields"]
    joe = (await live.client.post("/rest/people", json={"name": "Joe"}, headers=live.auth())
           ).json()
    child = await live.client.post(f"/rest/people/{joe['_id']}/orders", json={"n": 1},
                                   headers=live.auth())
    assert child.status_code == 201, child.text


async def test_put_and_delete_meta_define_and_remove_a_schema(live: LiveDocbase) -> None:
    schema = {"fields": [{"name": "sku", "type": "text", "required": True, "unique": True}]}
    response = await live.client.put("/rest/products/_meta", json=schema, headers=live.auth())
    assert response.status_code == 200, response.text
    assert response.json()["fields"] == [
        {"name": "sku", "type": "text", "required": True, "unique": True}]
    refused = await live.client.post("/rest/products", json={}, headers=live.auth())
    assert refused.status_code == 422
    scoped = {"x-apikey": await live.key(paths=("/rest/**",))}
    for method in ("PUT", "DELETE"):
        forbidden = await live.client.request(method, "/rest/products/_meta", json=schema,
                                              headers=scoped)
        assert forbidden.status_code == 403
    bad = await live.client.put("/rest/products/_meta", headers=live.auth(),
                                json={"fields": [{"name": "x", "type": "option"}]})
    assert bad.status_code == 422
    assert bad.json()["list"] == [{"field": "fields.x", "message": [
        "an option field needs a non-empty options array"]}]
    deleted = await live.client.delete("/rest/products/_meta", headers=live.auth())
    assert deleted.json() == {"result": ["products"]}
    assert (await live.client.post("/rest/products", json={}, headers=live.auth())
            ).status_code == 201
    again = await live.client.delete("/rest/products/_meta", headers=live.auth())
    assert again.status_code == 404
    override = await live.client.post("/rest/products/_meta", json=schema, headers={
        **live.auth(), "X-HTTP-Method-Override": "PUT"})
    assert override.status_code == 200


async def test_adding_unique_over_duplicates_answers_409_listing_them(
        live: LiveDocbase) -> None:
    first = (await live.client.post("/rest/tags", json={"t": "x"}, headers=live.auth())).json()
    second = (await live.client.post("/rest/tags", json={"t": "x"}, headers=live.auth())).json()
    response = await live.client.put("/rest/tags/_meta", headers=live.auth(), json={
        "fields": [{"name": "t", "type": "text", "unique": True}]})
    assert response.status_code == 409
    assert f'"x" in {first["_id"]}, {second["_id"]}' in response.json()["message"]


async def test_strict_mode_hides_undefined_collections(live: LiveDocbase) -> None:
    await live.client.post("/rest/loose", json={"a": 1}, headers=live.auth())
    await live.db.settings.set("schema.mode", "strict")
    for path in ("/rest/loose", "/rest/loose/_meta"):
        assert (await live.client.get(path, headers=live.auth())).status_code == 404
    assert (await live.client.post("/rest/loose", json={}, headers=live.auth())
            ).status_code == 404
    database = (await live.client.get("/rest/_meta", headers=live.auth())).json()
    assert [c["name"] for c in database["collections"]] == ["people"]
    assert database["mode"] == "strict"


async def test_any_valid_credential_reads_the_openapi_document_of_what_it_may_use(
        live: LiveDocbase) -> None:
    """Issue 30: a scoped key got 403, though docs/schema.md says any valid key."""
    await live.db.schemas.put(parse_schema("salaries", {"fields": [
        {"name": "amount", "type": "number"}]}))
    full = await live.client.get("/rest/_openapi", headers=live.auth())
    assert {"/rest/people", "/rest/salaries"} <= set(full.json()["paths"])
    scoped = await live.key(paths=["/rest/people/**"], methods=["GET"])
    answer = await live.client.get("/rest/_openapi", headers={"x-apikey": scoped})
    assert answer.status_code == 200, answer.text
    document = answer.json()
    assert "/rest/people" in document["paths"]
    assert "salaries" not in answer.text  # neither its paths nor its fields
    assert "peopleInput" in document["components"]["schemas"]
    elsewhere = await live.key(paths=["/rest/other/**"])
    nothing = await live.client.get("/rest/_openapi", headers={"x-apikey": elsewhere})
    assert nothing.status_code == 200
    assert set(nothing.json()["paths"]) == {"/rest/_meta", "/rest/_openapi", "/batch"}
    other_origin = await live.key(paths=["/rest/people/**"], origins=["https://a.example"])
    refused = await live.client.get("/rest/_openapi", headers={
        "x-apikey": other_origin, "Origin": "https://b.example"})
    assert refused.status_code == 403
    assert (await live.client.get("/rest/_openapi")).status_code == 401
