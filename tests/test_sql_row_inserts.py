"""Each way a SQL store inserts rows (``docbase/adapters/sql/row_inserts.py``).

The way is chosen once, from the engine: through the inserter (PostgreSQL on asyncpg)
or plain (SQLite, and an engine a caller built). Each is taken here on a real database,
with the rows it was given read back; the inserter is also made to decline, to show
that the rows then go the usual way, once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.sql import SqlDocumentStore, row_inserts
from docbase.adapters.sql.row_inserts import InserterInserts, PlainInserts
from docbase.core.errors import Conflict
from docbase.core.query import Query
from tests.backends import numbered, postgresql_schema, sql_backend, sql_url

WAYS = {"sqlite-file": PlainInserts, "sqlite-memory": PlainInserts,
        "postgresql": InserterInserts}


def usual_writes(store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per write transaction the backend's executor runs (the usual way)."""
    writes: list[bool] = []
    original = store.backend._run

    async def counted(work: Any, *, write: bool) -> Any:
        if write:
            writes.append(write)
        return await original(work, write=write)

    monkeypatch.setattr(store.backend, "_run", counted)
    return writes


async def check_inserts(store: SqlDocumentStore) -> None:
    """One row, many rows, and a duplicate refused whole, on a new collection."""
    await store.insert("items", [numbered(1)])
    await store.insert("items", [numbered(n) for n in range(2, 6)])
    with pytest.raises(Conflict):
        await store.insert("items", [numbered(6), numbered(2)])
    found = await store.find("items", Query())
    assert [document["n"] for document in found] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("kind", list(WAYS))
async def test_each_engine_inserts_its_own_way(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with sql_url(kind, tmp_path) as url, sql_backend(url) as (store, _blobs):
        assert type(store._insert_rows.__self__) is WAYS[kind]  # type: ignore[attr-defined]
        await store.insert("items", [numbered(1)])  # the table is made the usual way
        writes = usual_writes(store, monkeypatch)
        await store.insert("items", [numbered(2)])
        # the inserter writes into a known table past the executor
        assert len(writes) == (0 if kind == "postgresql" else 1)


async def test_a_caller_built_engine_inserts_the_plain_way() -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    async with postgresql_schema() as url:
        base, _, schema = url.partition("?schema=")
        engine = create_async_engine(base.replace("postgresql://", "postgresql+asyncpg://", 1),
                                     connect_args={"server_settings": {"search_path": schema}})
        async with SqlDocumentStore(engine, owns_engine=True) as store:
            assert type(store._insert_rows.__self__) is PlainInserts  # type: ignore[attr-defined]
            await check_inserts(store)


@pytest.fixture
async def postgresql_store(tmp_path: Path) -> AsyncIterator[SqlDocumentStore]:
    async with sql_url("postgresql", tmp_path) as url, sql_backend(url) as (store, _blobs):
        yield store


async def test_the_inserter_way_inserts_and_refuses_duplicates(
    postgresql_store: SqlDocumentStore,
) -> None:
    await check_inserts(postgresql_store)


async def test_rows_the_inserter_declines_go_the_usual_way_once(
    postgresql_store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = postgresql_store
    asked: list[int] = []

    async def declined(_collection: str, rows: Any, **_kwargs: Any) -> bool:
        asked.append(len(rows))
        return False

    assert store._inserter is not None
    monkeypatch.setattr(store._inserter, "insert", declined)
    writes = usual_writes(store, monkeypatch)
    await check_inserts(store)
    assert asked == [1, 4, 2]
    assert len(writes) == 3


async def test_rows_held_back_in_a_transaction_are_written_by_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plain way holds new rows back (``held_back.py``) and the block commits them."""
    held: list[int] = []
    hold = row_inserts.held_back_insert

    def counted(backend: Any, number: int, rows: list[Any]) -> None:
        held.append(len(rows))
        hold(backend, number, rows)

    monkeypatch.setattr(row_inserts, "held_back_insert", counted)
    async with sql_url("sqlite-file", tmp_path) as url, sql_backend(url) as (store, _blobs):
        await store.insert("items", [numbered(1)])
        async with store.transaction():
            await store.insert("items", [numbered(2), numbered(3)], new_ids=True)
            assert held == [2]
            found = await store.find("items", Query())
            assert [document["n"] for document in found] == [1, 2, 3]
        found = await store.find("items", Query())
        assert [document["n"] for document in found] == [1, 2, 3]
