"""PostgreSQL inserts and updates go straight through asyncpg, the usual way otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore
from docbase.adapters.sql.postgresql.connections import CONNECTIONS
from docbase.core.errors import BackendError, Conflict, NotFound, VersionMismatch
from docbase.core.query import MATCH_ALL, Eq, Query
from docbase.core.update import parse_update
from tests.backends import numbered, postgresql_schema, refuse_usual_path, sql_backend

pytestmark = pytest.mark.postgres


@pytest.fixture
async def opened() -> AsyncIterator[tuple[SqlDocumentStore, str]]:
    """A store on a fresh PostgreSQL schema, and that schema's URL."""
    async with postgresql_schema() as url, sql_backend(url) as (store, _blobs):
        yield store, url


async def test_a_single_create_goes_through_asyncpg_and_is_stored(
    opened: tuple[SqlDocumentStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, url = opened
    await _direct_only(store, monkeypatch)
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


async def _direct_only(store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Create ``items`` the usual way, then make the usual way fail."""
    await store.insert("items", [numbered(1)])
    refuse_usual_path(store, monkeypatch)


async def test_several_documents_go_through_asyncpg_in_one_statement(
    opened: tuple[SqlDocumentStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, url = opened
    await _direct_only(store, monkeypatch)
    documents = [numbered(2, spelled=1.0, big=1e16), numbered(3, z=1, a={"b\u0000": None},
                                                                _parent_id="p")]
    await store.insert("items", documents)
    async with sql_backend(url) as (other, _blobs):
        for document in documents:
            assert await other.get("items", document["_id"]) == document
    # all or nothing: a duplicate among them stores none of the others
    with pytest.raises(Conflict):
        await store.insert("items", [numbered(4), numbered(2)])
    monkeypatch.undo()
    with pytest.raises(NotFound):
        await store.get("items", numbered(4)["_id"])


async def test_a_new_collection_goes_the_usual_way(
    opened: tuple[SqlDocumentStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = opened[0]
    await _direct_only(store, monkeypatch)
    with pytest.raises(AssertionError, match="usual way"):
        await store.insert("fresh", [numbered(4)])
    with pytest.raises(AssertionError, match="usual way"):
        await store.insert("fresh", [numbered(5), numbered(6)])


async def test_a_duplicate_id_is_a_conflict_and_the_connection_stays_usable(
    opened: tuple[SqlDocumentStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = opened[0]
    await _direct_only(store, monkeypatch)
    await store.insert("items", [numbered(2, v="first")])
    with pytest.raises(Conflict):
        await store.insert("items", [numbered(2, v="second")])
    await store.insert("items", [numbered(3)])
    monkeypatch.undo()
    assert (await store.get("items", numbered(2)["_id"]))["v"] == "first"


async def test_a_connection_lost_mid_insert_is_a_backend_error_never_sent_again(
    opened: tuple[SqlDocumentStore, str]
) -> None:
    store, url = opened
    await store.insert("items", [numbered(1)])
    table = f"c_{store.backend.cached_number('items')}"
    async with sql_backend(url) as (other, _blobs), other.engine.connect() as holder:
        # another transaction holds the id, so the direct insert waits on its lock
        await holder.execute(sa.text(f"INSERT INTO {table} (id, body, version, search) "
                                     "VALUES (:id, '{}', 0, '[]')"), {"id": numbered(2)["_id"]})
        holder_pid = (await holder.execute(sa.text("SELECT pg_backend_pid()"))).scalar()
        waiting = asyncio.create_task(store.insert("items", [numbered(2)]))
        pid = None
        while pid is None and not waiting.done():
            await asyncio.sleep(0.05)
            pid = (await holder.execute(sa.text(  # the session waiting for the holder
                "SELECT pid FROM pg_stat_activity WHERE :holder = ANY(pg_blocking_pids(pid))"),
                {"holder": holder_pid})).scalar()
        assert pid is not None, f"the insert never waited on the held row: {waiting}"
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
    opened: tuple[SqlDocumentStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, url = opened
    await store.insert("items", [numbered(1)])
    await store.insert("items", [numbered(2)])
    inserter = store._inserter
    assert inserter is not None
    assert inserter.pool._idle
    pids = [connection.get_server_pid() for connection in inserter.pool._idle]
    async with sql_backend(url) as (other, _blobs), other.engine.connect() as killer:
        for pid in pids:  # as a server restart does
            await killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    for _ in range(100):
        await asyncio.sleep(0.02)
        if all(connection.is_closed() for connection in inserter.pool._idle):
            break
    refuse_usual_path(store, monkeypatch)
    await store.insert("items", [numbered(3)])
    monkeypatch.undo()
    assert (await store.get("items", numbered(3)["_id"]))["n"] == 3


async def test_concurrent_creates_beyond_the_connections_are_all_stored(
    opened: tuple[SqlDocumentStore, str]
) -> None:
    store = opened[0]
    await store.insert("items", [numbered(0)])
    await asyncio.gather(*(store.insert("items", [numbered(n)]) for n in range(1, 41)))
    assert await store.count("items", MATCH_ALL) == 41
    assert store._inserter is not None
    assert store._inserter.pool._open <= CONNECTIONS


async def test_a_collection_recreated_elsewhere_gets_the_insert(
    opened: tuple[SqlDocumentStore, str]
) -> None:
    store, url = opened
    await store.insert("items", [numbered(1)])
    async with sql_backend(url) as (other, _blobs):
        await other.drop("items")
        await other.insert("items", [numbered(1, v="new")])
    await store.insert("items", [numbered(2)])
    assert [d["n"] for d in await store.find("items", Query())] == [1, 2]


async def test_an_update_goes_through_asyncpg_and_keeps_the_version_check(
    opened: tuple[SqlDocumentStore, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, url = opened
    await _direct_only(store, monkeypatch)
    first = numbered(1)["_id"]
    updated = await store.update("items", first, parse_update({"price": 1.0}, "patch"),
                                 stamp={"_changed": "now"}, expected_version=0)
    assert (updated["_version"], updated["price"], updated["_changed"]) == (1, 1.0, "now")
    with pytest.raises(VersionMismatch):
        await store.update("items", first, parse_update({"price": 2}, "patch"), stamp={},
                           expected_version=0)
    with pytest.raises(NotFound):
        await store.update("items", numbered(9)["_id"], parse_update({"a": 1}), stamp={})
    monkeypatch.undo()
    async with sql_backend(url) as (other, _blobs):
        assert await other.get("items", first) == updated
        assert await other.count("items", Eq(("price",), 1.0)) == 1  # the jsonb column too

