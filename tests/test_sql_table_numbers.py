"""A collection table's number is handed to other connections only once it is committed.

The first write into a collection creates its table inside that write's transaction.
Before the fix, the number was cached for the whole process at once, so a read on
another connection (SQLite's loop-thread reads, PostgreSQL's pool) asked for a table it
could not see yet and failed with "no such table" (CI caught it in the change log's
counter: ``test_changes.py::test_concurrent_writers_get_distinct_consecutive_sequences``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore, from_url
from docbase.core.documents import new_document
from docbase.core.errors import BackendError, NotFound
from docbase.core.query import MATCH_ALL, Query
from tests.backends import sql_url


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path,
                ) -> AsyncIterator[SqlDocumentStore]:
    async with sql_url(request.param, tmp_path) as url:
        opened, _ = from_url(url)
        assert isinstance(opened, SqlDocumentStore)
        async with opened:
            yield opened


async def test_a_table_is_not_handed_to_other_connections_before_its_write_commits(
    store: SqlDocumentStore,
) -> None:
    backend = store.backend
    created, release = threading.Event(), threading.Event()

    def create_then_write_on(conn: sa.Connection) -> None:
        backend.number(conn, "fresh", create=True)
        created.set()
        # the other writes of a batch (SQLite's group commit) ask for the number too,
        # each after a read elsewhere may have dropped the cache, and run statements
        # (on an async engine these let the event loop go on: the work runs on its thread)
        while not release.wait(0.001):
            assert backend.number(conn, "fresh") is not None
            conn.execute(sa.text("SELECT 1"))

    writing = asyncio.create_task(backend.run(create_then_write_on, write=True))
    assert await asyncio.to_thread(created.wait, 10)
    try:
        assert backend.cached_number("fresh") is None
        for _ in range(20):  # before: BackendError, "a collection table is gone"
            with pytest.raises(NotFound):
                await store.get("fresh", "x")
            assert await store.count("fresh", MATCH_ALL) == 0
            assert await store.find("fresh", Query()) == []
    finally:
        release.set()
        await writing
    assert backend.cached_number("fresh") is not None  # remembered once committed
    await store.insert("fresh", [{**new_document({}, "api"), "_id": "x"}])
    assert (await store.get("fresh", "x"))["_id"] == "x"


async def test_a_table_created_by_a_rolled_back_write_is_not_remembered(
    store: SqlDocumentStore,
) -> None:
    backend = store.backend

    def create_then_fail(conn: sa.Connection) -> None:
        backend.number(conn, "doomed", create=True)
        raise RuntimeError("the write fails after creating the table")

    with pytest.raises(RuntimeError):
        await backend.run(create_then_fail, write=True)
    assert backend.cached_number("doomed") is None
    with pytest.raises(NotFound):
        await store.get("doomed", "x")
    await store.insert("doomed", [{**new_document({}, "api"), "_id": "x"}])
    assert (await store.get("doomed", "x"))["_id"] == "x"
    assert backend.cached_number("doomed") is not None


async def test_a_table_is_handed_out_only_once_its_commit_returned(
    store: SqlDocumentStore,
) -> None:
    # SQLAlchemy's commit event comes before the driver's COMMIT, which asyncpg awaits:
    # another task then took the number of a table not yet committed (a batch answered
    # 503 MissingTable under load). Seen from a listener of that event, added after the
    # backend's own, the number must not be out yet.
    backend = store.backend
    engine = backend.engine if isinstance(backend.engine, sa.Engine) else backend.engine.sync_engine
    seen_at_commit: list[tuple[bool, bool]] = []  # (each collection's number out?)

    def at_commit(conn: sa.Connection) -> None:
        seen_at_commit.append((backend.cached_number("committed_later") is not None,
                               backend.cached_number("held_later") is not None))

    sa.event.listen(engine, "commit", at_commit)
    try:
        await store.insert("committed_later", [new_document({"n": 1}, "api")])
        async with backend.transaction():  # a held transaction too (batches)
            await store.insert("held_later", [new_document({"n": 1}, "api")])
    finally:
        sa.event.remove(engine, "commit", at_commit)
    # the first commit made "committed_later", the held one "held_later" (the first's
    # number is out by then)
    assert seen_at_commit == [(False, False), (True, False)]
    assert backend.cached_number("committed_later") is not None  # once the commit returned
    assert backend.cached_number("held_later") is not None
    assert await store.count("held_later", MATCH_ALL) == 1


@pytest.mark.parametrize("engine", ["sqlite-file", "postgresql"])
async def test_a_batch_that_meets_a_table_dropped_elsewhere_leaves_the_next_one_working(
    engine: str, tmp_path: Path,
) -> None:
    # another process drops a collection whose number this one has cached; a batch (a
    # held transaction) cannot retry as a single write does, since its block runs once,
    # so it fails; before, it left the stale number cached and every later batch into
    # that collection failed the same way
    async with sql_url(engine, tmp_path) as url:
        (store, _), (other, _) = from_url(url), from_url(url)
        async with store, other:
            await store.insert("shared", [{**new_document({}, "api"), "_id": "a"}])
            assert store.backend.cached_number("shared") is not None
            await other.drop("shared")
            with pytest.raises(BackendError, match="gone"):
                async with store.backend.transaction():
                    await store.insert("shared", [{**new_document({}, "api"), "_id": "b"}])
            async with store.backend.transaction():
                await store.insert("shared", [{**new_document({}, "api"), "_id": "c"}])
            assert [d["_id"] for d in await other.find("shared", Query())] == ["c"]
