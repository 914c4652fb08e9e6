"""Schemas over real HTTPS: 422 bodies, form coercion, validate=false, unique 409, _meta."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Database
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase, live_docbase

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
