"""NDJSON and CSV on /rest/<c> over real HTTPS: streamed reads, all-or-nothing inserts."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Database
from docbase.core.hooks import Hook
from docbase.core.schema import parse_schema
from docbase.http.testing import LiveDocbase, live_docbase

pytestmark = pytest.mark.parametrize(
    "stores", ["memory", pytest.param("postgresql", marks=pytest.mark.postgres)],
    indirect=True)

PEOPLE = {"fields": [{"name": "name", "type": "text", "required": True},
                     {"name": "age", "type": "number"},
                     {"name": "active", "type": "bool"},
                     {"name": "address", "type": "json"}]}
NDJSON = "application/x-ndjson"


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    from docbase.core.settings import Limits
    db = Database(*stores, name="main", limits=Limits(max_page=100))

    @db.hook("birds", Hook.BEFORE_GET)
    async def hide_secret_birds(context: Any) -> None:
        context.where({"secret": {"$ne": True}})

    await db.schemas.put(parse_schema("people", PEOPLE))
    async with live_docbase({"main": db}, tmp_path) as running:
        yield running


async def _insert_birds(live: LiveDocbase, count: int) -> None:
    for start in range(0, count, 500):
        response = await live.client.post(
            "/rest/birds", headers=live.auth(),
            json=[{"n": i, "kind": "wren" if i % 2 else "kite", "secret": i % 10 == 0,
                   "nest": {"tree": "oak", "height": i}}
                  for i in range(start, min(start + 500, count))])
        assert response.status_code == 201, response.text


async def test_ndjson_streams_every_selected_document_beyond_the_page_limit(
        live: LiveDocbase) -> None:
    await _insert_birds(live, 1000)
    response = await live.client.get(
        "/rest/birds", params={"q": json.dumps({"kind": "wren"})},
        headers=live.auth() | {"Accept": NDJSON})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(NDJSON)
    lines = [json.loads(line) for line in response.text.splitlines()]
    # max_page is 100, the before-read hook hides every tenth bird, the query keeps wrens
    assert sorted(d["n"] for d in lines) == [i for i in range(1000) if i % 2 and i % 10]
    assert all(set(d) >= {"_id", "kind", "nest"} for d in lines)


async def test_ndjson_keeps_sort_fields_and_max(live: LiveDocbase) -> None:
    await _insert_birds(live, 500)
    response = await live.client.get(
        "/rest/birds",
        params={"sort": "n", "dir": "-1", "max": "250", "h": json.dumps({"$fields": {"n": 1}})},
        headers=live.auth() | {"Accept": NDJSON})
    lines = [json.loads(line) for line in response.text.splitlines()]
    expected = [i for i in range(499, -1, -1) if i % 10][:250]
    assert [d["n"] for d in lines] == expected
    assert all(set(d) == {"_id", "n"} for d in lines)


async def test_csv_writes_nested_values_as_json_cells(live: LiveDocbase) -> None:
    await _insert_birds(live, 20)
    response = await live.client.get("/rest/birds", params={"sort": "n"},
                                     headers=live.auth() | {"Accept": "text/csv"})
    assert response.status_code == 200, response.text
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [int(r["n"]) for r in rows] == [i for i in range(20) if i % 10]
    assert json.loads(rows[0]["nest"]) == {"tree": "oak", "height": 1}
    assert rows[0]["secret"] == "false"


async def test_csv_post_is_typed_by_the_schema_and_all_or_nothing(live: LiveDocbase) -> None:
    body = ("name,age,active,address\n"
            "Ann,7,true,\"{\"\"city\"\": \"\"Oslo\"\"}\"\n"
            "Bob,,false,\n")
    response = await live.client.post("/rest/people", content=body.encode(),
                                      headers=live.auth() | {"Content-Type": "text/csv"})
    assert response.status_code == 201, response.text
    created = response.json()
    assert [(d["name"], d.get("age"), d["active"]) for d in created] == [
        ("Ann", 7, True), ("Bob", None, False)]
    assert created[0]["address"] == {"city": "Oslo"}
    refused = await live.client.post(
        "/rest/people", content=b"name,age\nCid,1\n,2\n",
        headers=live.auth() | {"Content-Type": "text/csv"})
    assert refused.status_code == 422
    assert refused.json()["list"][0]["field"] == "line 3.name"
    listed = await live.client.get("/rest/people", headers=live.auth())
    assert sorted(d["name"] for d in listed.json()) == ["Ann", "Bob"]


async def test_ndjson_post_names_the_bad_line_and_stores_nothing(live: LiveDocbase) -> None:
    good = await live.client.post(
        "/rest/birds", content=b'{"n": 1}\n\n{"n": 2, "nest": {"tree": "elm"}}\n',
        headers=live.auth() | {"Content-Type": NDJSON})
    assert good.status_code == 201, good.text
    assert [d["n"] for d in good.json()] == [1, 2]
    bad = await live.client.post("/rest/birds", content=b'{"n": 3}\n[1, 2]\n',
                                 headers=live.auth() | {"Content-Type": NDJSON})
    assert bad.status_code == 400
    assert "line 2" in bad.json()["message"]
    listed = await live.client.get("/rest/birds", headers=live.auth())
    assert sorted(d["n"] for d in listed.json()) == [1, 2]


async def test_streamed_read_refuses_counts_and_groups(live: LiveDocbase) -> None:
    response = await live.client.get("/rest/birds", params={"groupby": "kind"},
                                     headers=live.auth() | {"Accept": NDJSON})
    assert response.status_code == 400
