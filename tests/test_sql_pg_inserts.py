"""PostgreSQL single-document inserts go straight through asyncpg, the usual way otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore
from docbase.adapters.sql.pg_inserts import CONNECTIONS
from docbase.core.errors import BackendError, Conflict, NotFound
from docbase.core.query import MATCH_ALL, Query
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


async def test_a_single_create_goes_through_asyncpg_and_is_stored(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    await store.insert("items", [numbered(1)])  # the usual way: creates the table
    refuse_usual_path(store, monkeypatch)
    stored = numbered(2, name="two", nested={"a\u0000key": [1, 2.5]}, _parent_id="p")
    await store.insert("items", [stored])
    async with sql_backend(url) as (other, _blobs):  # another process's view
        assert await other.get("items", numbered(2)["_id"]) == stored

        def columns(conn: sa.Connection) -> tuple[object, ...]:
            table = other.backend.table(conn, "items")
            assert table is not None
            return tuple(conn.execute(sa.select(table.c.parent_id, table.c.version)
                                      .where(table.c.id == numbered(2)["_id"])).one())

        assert await other.backend.run(columns, write=False) == ("p", 0)


async def test_several_documents_and_a_new_collection_go_the_usual_way(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1)])
    refuse_usual_path(store, monkeypatch)
    with pytest.raises(AssertionError, match="usual way"):
        await store.insert("items", [numbered(2), numbered(3)])
    with pytest.raises(AssertionError, match="usual way"):
        await store.insert("fresh", [numbered(4)])


async def test_a_duplicate_id_is_a_conflict_and_the_connection_stays_usable(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1)])
    refuse_usual_path(store, monkeypatch)
    await store.insert("items", [numbered(2, v="first")])
    with pytest.raises(Conflict):
        await store.insert("items", [numbered(2, v="second")])
    await store.insert("items", [numbered(3)])
    monkeypatch.undo()
    assert (await store.get("items", numbered(2)["_id"]))["v"] == "first"


async def test_a_connection_lost_mid_insert_is_a_backend_error_never_sent_again(
    store: SqlDocumentStore, url: str
) -> None:
    await store.insert("items", [numbered(1)])
    table = f"c_{store.backend._cached_number('items')}"
    async with sql_backend(url) as (other, _blobs), other.engine.connect() as holder:
        # another transaction holds the id, so the direct insert waits on its lock
        await holder.execute(sa.text(f"INSERT INTO {table} (id, body, version, search) "
                                     "VALUES (:id, '{}', 0, '[]')"), {"id": numbered(2)["_id"]})
        waiting = asyncio.create_task(store.insert("items", [numbered(2)]))
        pid = None
        for _ in range(100):
            await asyncio.sleep(0.05)
            pid = (await holder.execute(sa.text(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE 'INSERT INTO %'"))).scalar()
            if pid is not None:
                break
        assert pid is not None, "the insert never waited on the held row"
        async with other.engine.connect() as killer:
            await killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(BackendError):
            await waiting
        await holder.rollback()
    with pytest.raises(NotFound):  # not stored, and not sent again behind the caller's back
        await store.get("items", numbered(2)["_id"])
    await store.insert("items", [numbered(2)])  # the next one gets a fresh connection
    assert (await store.get("items", numbered(2)["_id"]))["n"] == 2


async def test_connections_closed_while_idle_are_not_used(
    store: SqlDocumentStore, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1)])
    await store.insert("items", [numbered(2)])
    inserter = store._inserter
    assert inserter is not None
    assert inserter._idle
    pids = [connection.get_server_pid() for connection in inserter._idle]
    async with sql_backend(url) as (other, _blobs), other.engine.connect() as killer:
        for pid in pids:  # as a server restart does
            await killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    for _ in range(100):
        await asyncio.sleep(0.02)
        if all(connection.is_closed() for connection in inserter._idle):
            break
    refuse_usual_path(store, monkeypatch)
    await store.insert("items", [numbered(3)])
    monkeypatch.undo()
    assert (await store.get("items", numbered(3)["_id"]))["n"] == 3


async def test_concurrent_creates_beyond_the_connections_are_all_stored(
    store: SqlDocumentStore,
) -> None:
    await store.insert("items", [numbered(0)])
    await asyncio.gather(*(store.insert("items", [numbered(n)]) for n in range(1, 41)))
    assert await store.count("items", MATCH_ALL) == 41
    assert store._inserter is not None
    assert store._inserter._open <= CONNECTIONS


async def test_a_collection_recreated_elsewhere_gets_the_insert(
    store: SqlDocumentStore, url: str
) -> None:
    await store.insert("items", [numbered(1)])
    async with sql_backend(url) as (other, _blobs):
        await other.drop("items")
        await other.insert("items", [numbered(1, v="new")])
    await store.insert("items", [numbered(2)])
    assert [d["n"] for d in await store.find("items", Query())] == [1, 2]
