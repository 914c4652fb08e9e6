"""PostgreSQL gets by id and plain lists go through asyncpg, the usual way when they cannot."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec
import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.adapters.sql.executors import AsyncEngineExecutor
from docbase.adapters.sql.postgresql.connections import CONNECTIONS
from docbase.core.errors import NotFound
from docbase.core.query import MATCH_ALL, Eq, Gt, Query
from tests.backends import numbered, postgresql_schema, refuse_usual_path, sql_backend

pytestmark = pytest.mark.postgres


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with postgresql_schema() as schema_url:
        yield schema_url


@pytest.fixture
async def store(url: str) -> AsyncIterator[SqlDocumentStore]:
    async with sql_backend(url) as (opened, _blobs):
        yield opened


async def test_get_by_id_goes_through_asyncpg(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1), numbered(2, name="two")])
    await store.get("items", numbered(1)["_id"])
    refuse_usual_path(store, monkeypatch)
    assert await store.get("items", numbered(2)["_id"]) == numbered(2, name="two")
    with pytest.raises(NotFound):
        await store.get("items", numbered(3)["_id"])


async def test_more_concurrent_gets_than_connections_wait_for_one(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(n) for n in range(40)])
    await store.get("items", numbered(0)["_id"])
    refuse_usual_path(store, monkeypatch)  # queued for asyncpg, never the costly way
    found = await asyncio.gather(*(store.get("items", numbered(n)["_id"]) for n in range(40)))
    assert [d["n"] for d in found] == list(range(40))
    executor = store.backend.executor
    assert isinstance(executor, AsyncEngineExecutor)
    reader = executor.points
    assert reader is not None
    assert reader.pool._open <= CONNECTIONS


async def test_collection_recreated_by_another_store_reads_the_new_table(
    store: SqlDocumentStore, url: str
) -> None:
    await store.insert("items", [numbered(1, v="old")])
    assert (await store.get("items", numbered(1)["_id"]))["v"] == "old"
    async with sql_backend(url) as (other, _blobs):
        await other.drop("items")
        await other.insert("items", [numbered(1, v="new")])
    assert (await store.get("items", numbered(1)["_id"]))["v"] == "new"


async def test_a_lost_connection_is_dropped_and_the_get_answered(
    store: SqlDocumentStore,
) -> None:
    await store.insert("items", [numbered(1)])
    await store.get("items", numbered(1)["_id"])
    executor = store.backend.executor
    assert isinstance(executor, AsyncEngineExecutor)
    reader = executor.points
    assert reader is not None
    assert reader.pool._idle
    for connection in reader.pool._idle:
        connection.terminate()
    assert (await store.get("items", numbered(1)["_id"]))["n"] == 1
    assert (await store.get("items", numbered(1)["_id"]))["n"] == 1


async def test_lists_without_filter_or_sort_and_counts_go_through_asyncpg(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(n, even=n % 2 == 0) for n in range(300)])
    await store.get("items", numbered(0)["_id"])
    refuse_usual_path(store, monkeypatch)
    first = await store.find("items", Query(limit=100))
    assert [d["n"] for d in first] == list(range(100))
    deep = await store.find("items", Query(skip=270, limit=20))  # beyond a short walk
    assert [d["n"] for d in deep] == list(range(270, 290))
    encoded = await store.find_encoded("items", Query(skip=290, limit=5), hide=("even",))
    assert [msgspec.json.decode(raw) for raw in encoded] == [
        numbered(n) for n in range(290, 295)]
    assert await store.count("items", MATCH_ALL) == 300
    monkeypatch.undo()  # statements with typed values (arrays) take SQLAlchemy's way
    assert await store.count("items", Eq(("even",), True)) == 150
    assert await store.count("items", Gt(("n",), 289)) == 10


async def test_a_list_of_a_collection_recreated_elsewhere_reads_the_new_table(
    store: SqlDocumentStore, url: str
) -> None:
    await store.insert("items", [numbered(1, v="old")])
    assert [d["v"] for d in await store.find("items", Query())] == ["old"]
    async with sql_backend(url) as (other, _blobs):
        await other.drop("items")
        await other.insert("items", [numbered(2, v="new")])
    assert [d["v"] for d in await store.find("items", Query())] == ["new"]
    assert await store.count("items", MATCH_ALL) == 1
