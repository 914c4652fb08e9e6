"""Each way a SQL store updates one document (``docbase/adapters/sql/row_updates.py``).

The way is chosen once, from the engine: on the driver (SQLite), compare and swap
(PostgreSQL on asyncpg) and locked (an engine a caller built, which has no short way).
Each is taken here on a real database; the compare-and-swap way is also made to find no
short way, and to lose every race, to show that it then updates the locked way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.adapters.sql.driver_updates import DriverUpdates
from docbase.adapters.sql.row_updates import SWAP_ATTEMPTS, LockedUpdates, SwappedUpdates
from docbase.core.errors import NotFound, VersionMismatch
from docbase.core.update import parse_update
from tests.backends import numbered, postgresql_schema, sql_backend, sql_url

FIRST = numbered(1)["_id"]
WAYS = {"sqlite-file": DriverUpdates, "sqlite-memory": DriverUpdates,
        "postgresql": SwappedUpdates}


@pytest.fixture
async def locked_store() -> AsyncIterator[SqlDocumentStore]:
    """A PostgreSQL store on an engine its caller built: no asyncpg short way."""
    from sqlalchemy.ext.asyncio import create_async_engine

    async with postgresql_schema() as url:
        base, _, schema = url.partition("?schema=")
        engine = create_async_engine(base.replace("postgresql://", "postgresql+asyncpg://", 1),
                                     connect_args={"server_settings": {"search_path": schema}})
        store = SqlDocumentStore(engine, owns_engine=True)
        async with store:
            await store.insert("items", [numbered(1, count=0)])
            yield store


async def check_updates(store: SqlDocumentStore) -> None:
    """Updates apply in turn, a stale expected version and a missing document refused."""
    first = await store.update("items", FIRST, parse_update({"$inc": {"count": 1}}),
                               stamp={}, expected_version=0)
    assert (first["count"], first["_version"]) == (1, 1)
    second = await store.update("items", FIRST, parse_update({"$inc": {"count": 2}}), stamp={})
    assert (second["count"], second["_version"]) == (3, 2)
    with pytest.raises(VersionMismatch):
        await store.update("items", FIRST, parse_update({"count": 9}), stamp={},
                           expected_version=1)
    with pytest.raises(NotFound):
        await store.update("items", numbered(9)["_id"], parse_update({"count": 9}), stamp={})
    with pytest.raises(NotFound):
        await store.update("nothing", FIRST, parse_update({"count": 9}), stamp={})
    assert await store.get("items", FIRST) == second


@pytest.mark.parametrize("kind", list(WAYS))
async def test_each_engine_updates_its_own_way(kind: str, tmp_path: Path) -> None:
    async with sql_url(kind, tmp_path) as url, sql_backend(url) as (store, _blobs):
        assert isinstance(store._update_row.__self__, WAYS[kind])  # type: ignore[attr-defined]
        await store.insert("items", [numbered(1, count=0)])
        await check_updates(store)


async def test_an_engine_without_short_ways_updates_under_a_lock(
    locked_store: SqlDocumentStore,
) -> None:
    assert isinstance(locked_store._update_row.__self__, LockedUpdates)  # type: ignore[attr-defined]
    await check_updates(locked_store)


@pytest.fixture
async def swapping(tmp_path: Path) -> AsyncIterator[tuple[SqlDocumentStore, list[str]]]:
    """A PostgreSQL store whose locked updates are counted."""
    async with sql_url("postgresql", tmp_path) as url, sql_backend(url) as (store, _blobs):
        await store.insert("items", [numbered(1, count=0)])
        way = store._update_row.__self__  # type: ignore[attr-defined]
        assert isinstance(way, SwappedUpdates)
        locked: list[str] = []
        update = way._locked.update

        async def counted(collection: str, *args: Any) -> Any:
            locked.append(collection)
            return await update(collection, *args)

        way._locked.update = counted  # type: ignore[method-assign]
        yield store, locked


async def test_a_swap_with_no_short_way_now_updates_under_a_lock(
    swapping: tuple[SqlDocumentStore, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, locked = swapping

    async def no_short_way(*_args: Any) -> None:
        return None

    assert store._inserter is not None
    monkeypatch.setattr(store._inserter, "swap", no_short_way)
    await check_updates(store)
    assert locked == ["items", "items"]  # the two that applied (refusals fail before)


async def test_a_swap_losing_every_race_updates_under_a_lock(
    swapping: tuple[SqlDocumentStore, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, locked = swapping
    tries: list[int] = []

    async def always_overtaken(_collection: str, _row: Any, version: int) -> bool:
        tries.append(version)
        return False

    assert store._inserter is not None
    monkeypatch.setattr(store._inserter, "swap", always_overtaken)
    changed = await store.update("items", FIRST, parse_update({"$inc": {"count": 5}}), stamp={})
    assert (changed["count"], changed["_version"]) == (5, 1)
    assert tries == [0] * SWAP_ATTEMPTS
    assert locked == ["items"]
    assert await store.get("items", FIRST) == changed


async def test_a_swap_that_wins_takes_no_lock(
    swapping: tuple[SqlDocumentStore, list[str]],
) -> None:
    store, locked = swapping
    await check_updates(store)
    assert locked == []
