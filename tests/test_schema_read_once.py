"""Each request reads the collection's schemas once, however many stages ask them.

The validate and access stages, the store that enforces unique and password fields and
the read road all ask the schemas; inside one request they share one read
(``docbase/core/request_schemas.py``). Counted where the schemas come from: a store that
passes every call through and counts the reads of ``_schemas``, with the registry's
cache trusting nothing (every read of the registry reaches the store), so each read a
request makes is counted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from docbase import Database
from docbase.adapters.memory.store import MemoryDocumentStore
from docbase.core.auth.cache import SystemCache
from docbase.core.ports import DocumentStore
from docbase.core.query import Query
from docbase.core.schema import SCHEMAS_COLLECTION, parse_schema
from docbase.http.testing import LiveDocbase, live_docbase
from tests.store_probes import ReadCounting

SCHEMA = {"fields": [{"name": "name", "type": "text", "unique": True},
                     {"name": "secret", "type": "password"},
                     {"name": "friend", "type": "lookup", "collection": "people"},
                     {"name": "kids", "type": "child"}],
          "access": {"read": ["*"], "create": ["*"], "update": ["*"], "delete": ["*"],
                     "fields": {"name": {"write": ["*"]}}}}


async def counted_database() -> tuple[Database, ReadCounting]:
    store = ReadCounting(MemoryDocumentStore(), (SCHEMAS_COLLECTION,))
    db = Database(cast(DocumentStore, store), name="main")
    db.schemas.cache = SystemCache(ttl=0)  # every read of the registry reaches the store
    await db.schemas.put(parse_schema("people", SCHEMA))
    return db, store


async def reads_of(store: ReadCounting, request: Callable[[], Awaitable[Any]]) -> int:
    store.reads = 0
    await request()
    return store.reads


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[tuple[LiveDocbase, ReadCounting]]:
    db, store = await counted_database()
    async with live_docbase({"main": db}, tmp_path) as running:
        yield running, store


async def test_each_request_over_https_reads_the_schemas_once(
    live: tuple[LiveDocbase, ReadCounting],
) -> None:
    served, store = live
    client = served.client
    key = {"x-apikey": await served.key(paths=["/rest/**"],
                                        methods=["GET", "POST", "PUT", "PATCH", "DELETE"])}
    created = await client.post("/rest/people", json={"name": "Ada", "secret": "s3cret!"},
                                headers=key)
    assert created.status_code == 201, created.text
    doc = created.json()["_id"]
    child = await client.post(f"/rest/people/{doc}/kids", json={"n": 1}, headers=key)
    assert child.status_code == 201, child.text
    tag = {"if-match": created.headers["etag"]}

    async def send(method: str, path: str, **options: Any) -> None:
        answer = await client.request(method, path, **options)
        assert answer.status_code < 300, (method, path, answer.text)

    requests: dict[str, Callable[[], Awaitable[None]]] = {
        "create": lambda: send("POST", "/rest/people", json={"name": "Bob"}, headers=key),
        "get": lambda: send("GET", f"/rest/people/{doc}?fetchchildren=true", headers=key),
        "list": lambda: send("GET", "/rest/people?totals=true", headers=key),
        "patch": lambda: send("PATCH", f"/rest/people/{doc}", json={"friend": doc},
                              headers={**key, **tag}),
        "put": lambda: send("PUT", f"/rest/people/{doc}", json={"name": "Ada L."},
                            headers=key),
        "child list": lambda: send("GET", f"/rest/people/{doc}/kids", headers=key),
    }
    reads = {name: await reads_of(store, request) for name, request in requests.items()}
    victim = (await client.post("/rest/people", json={"name": "Cy"}, headers=key)).json()
    reads["delete"] = await reads_of(store, lambda: send(
        "DELETE", f"/rest/people/{victim['_id']}",
        headers={**key, "if-match": f'"{victim["_id"]}-{victim["_version"]}"'}))
    assert reads == dict.fromkeys(reads, 1)


async def test_each_call_of_the_library_reads_the_schemas_once() -> None:
    db, store = await counted_database()
    async with db:
        people = db.collection("people")
        ada = await people.insert({"name": "Ada"})
        await people.children(ada["_id"], "kids").insert({"n": 1})
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "insert": lambda: people.insert({"name": "Bob"}),
            "get": lambda: people.get(ada["_id"], fetchchildren=True),
            "find": lambda: people.find({"name": "Ada"}),
            "read": lambda: people.read(Query()),
            "count": people.count,
            "patch": lambda: people.patch(ada["_id"], {"friend": ada["_id"]}),
            "put": lambda: people.update(ada["_id"], {"name": "Ada L."}),
            "children": lambda: people.children(ada["_id"], "kids").find(),
            "delete": lambda: people.delete(ada["_id"]),
        }
        reads = {name: await reads_of(store, call) for name, call in calls.items()}
    assert reads == dict.fromkeys(reads, 1)


async def test_a_schema_changed_by_another_process_applies_to_the_next_request() -> None:
    db, store = await counted_database()
    async with db:
        other = Database(cast(DocumentStore, store), name="main")  # another process's view
        await db.collection("people").insert({"name": "Ada"})
        changed = {**SCHEMA, "fields": [*SCHEMA["fields"],  # type: ignore[list-item]
                                        {"name": "age", "type": "number"}]}
        await other.schemas.put(parse_schema("people", changed))
        with pytest.raises(Exception, match="age"):
            await db.collection("people").insert({"name": "Bob", "age": "old"})
