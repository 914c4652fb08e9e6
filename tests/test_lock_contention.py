"""A write waiting on a lock another transaction holds answers 503 and Retry-After.

Before, ``limits.query_timeout`` was PostgreSQL's ``statement_timeout`` alone, so a
PATCH waiting on a row another session had locked was cancelled as a slow query and
answered ``400 QueryTimeout``: the client was told its request was bad when it was not.
Now sessions also carry ``lock_timeout`` (half the query timeout), which ends such a
wait first (SQLSTATE 55P03) and answers ``503 BackendError`` with ``Retry-After``; the
same request succeeds once the lock is released. SQLite's writer likewise waits for the
file's write lock half the query timeout, then answers 503 ("database is locked").

The blockers are real: a second PostgreSQL session holding ``SELECT ... FOR UPDATE``
on the document's row in an open transaction, and a second process holding SQLite's
write lock (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.pool import NullPool

from docbase.adapters.sql import schema
from docbase.core.composition import DatabaseSpec, build_database
from docbase.core.database import Database
from docbase.core.errors import BackendError
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase, live_docbase
from tests.backends import postgresql_schema

QUERY_TIMEOUT = 1.0
"""The test databases' ``limits.query_timeout``: locks are waited for 0.5 s."""
ANSWER_WITHIN = 3.0
"""Seconds the refused write may take (0.5 s lock wait, plus a loaded machine)."""
CHANGE = {"name": "Bea"}


@contextlib.asynccontextmanager
async def row_locked(url: str, collection: str, document_id: str,
                     ) -> AsyncIterator[AsyncConnection]:
    """Another PostgreSQL session holds ``document_id``'s row ``FOR UPDATE``, in an open
    transaction, until the block ends (then it commits)."""
    base, _, schema_name = url.partition("?schema=")
    engine = create_async_engine(base.replace("postgresql://", "postgresql+asyncpg://", 1),
                                 poolclass=NullPool)
    try:
        async with engine.begin() as conn:  # commits when the block ends
            await conn.execute(sa.text(f'SET LOCAL search_path TO "{schema_name}"'))
            number = (await conn.execute(
                sa.select(schema.collections.c.id)
                .where(schema.collections.c.name == collection))).scalar_one()
            locked = await conn.execute(sa.text(
                f"SELECT id FROM {schema.table_name(number)} WHERE id = :id FOR UPDATE"),
                {"id": document_id})
            assert locked.scalar_one() == document_id
            yield conn
    finally:
        await engine.dispose()


@contextlib.contextmanager
def sqlite_write_locked(path: Path) -> Iterator[None]:
    """Another process holds SQLite's write lock on ``path`` until the block ends."""
    with subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE')\n"
         "print('locked', flush=True)\n"
         "sys.stdin.readline()\n"
         "c.execute('COMMIT')\n"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdin is not None
        assert holder.stdout is not None
        try:
            assert holder.stdout.readline().strip() == "locked"
            yield
        finally:
            holder.stdin.close()  # the holder commits and exits
            holder.wait(10)


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[Database]:
    async with build_database(DatabaseSpec("main", url, Limits(query_timeout=QUERY_TIMEOUT))
                              ) as db:
        yield db


async def timed_refusal(db: Database, document_id: str) -> float:
    """PATCH through the library while the lock is held: BackendError, in time."""
    started = time.monotonic()
    with pytest.raises(BackendError, match="locked"):
        await db.collection("people").patch(document_id, CHANGE)
    took = time.monotonic() - started
    assert took < ANSWER_WITHIN, took
    return took


async def refused_over_https(live: LiveDocbase, document_id: str) -> float:
    """PATCH over HTTPS while the lock is held: 503 JSON with Retry-After, in time."""
    started = time.monotonic()
    refused = await live.client.patch(f"/rest/people/{document_id}", json=CHANGE,
                                      headers=live.auth())
    took = time.monotonic() - started
    assert refused.status_code == 503, refused.text
    assert refused.json()["name"] == "BackendError"
    assert "locked" in refused.json()["message"]
    assert int(refused.headers["retry-after"]) > 0
    assert took < ANSWER_WITHIN, took
    return took


@pytest.mark.postgres
async def test_a_patch_waiting_on_a_row_lock_is_a_backend_error_then_succeeds() -> None:
    async with postgresql_schema() as url, opened(url) as db:
        people = db.collection("people")
        stored = await people.insert({"name": "Ann"})
        async with row_locked(url, "people", stored["_id"]):
            took = await timed_refusal(db, stored["_id"])
            # a lock wait ends at lock_timeout, never at statement_timeout (1 s)
            assert took >= 0.4, took
            assert await people.get(stored["_id"]) == stored  # reads are not blocked
        patched = await people.patch(stored["_id"], CHANGE)
        assert patched["name"] == "Bea"
        assert patched["_version"] == stored["_version"] + 1


@pytest.mark.postgres
async def test_a_row_lock_answers_503_with_retry_after_over_https(tmp_path: Path) -> None:
    async with postgresql_schema() as url, opened(url) as db, live_docbase(
            {"main": db}, tmp_path) as live:
        created = await live.client.post("/rest/people", json={"name": "Ann"},
                                         headers=live.auth())
        ident = created.json()["_id"]
        async with row_locked(url, "people", ident):
            took = await refused_over_https(live, ident)
            unchanged = await db.collection("people").get(ident)
            assert (unchanged["name"], unchanged["_version"]) == ("Ann", 0)
        again = await live.client.patch(f"/rest/people/{ident}", json=CHANGE,
                                        headers=live.auth())
        assert again.status_code == 200, again.text
        assert again.json()["name"] == "Bea"
    print(f"\nPostgreSQL row lock: 503 after {took:.2f} s")


async def test_sqlite_write_lock_of_another_process_answers_503_then_succeeds(
    tmp_path: Path
) -> None:
    path = tmp_path / "locked.db"
    async with opened(f"sqlite:///{path}") as db, live_docbase({"main": db}, tmp_path) as live:
        people = db.collection("people")
        stored = await people.insert({"name": "Ann"})
        with sqlite_write_locked(path):
            await timed_refusal(db, stored["_id"])
            took = await refused_over_https(live, stored["_id"])
            assert await people.get(stored["_id"]) == stored  # WAL: readers go on
        again = await live.client.patch(f"/rest/people/{stored['_id']}", json=CHANGE,
                                        headers=live.auth())
        assert again.status_code == 200, again.text
        assert (await people.get(stored["_id"]))["name"] == "Bea"
    print(f"\nSQLite write lock: 503 after {took:.2f} s")
