"""SQLite file writes: one writer per process, the waiting writes committed together."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore, from_url
from docbase.adapters.sql.group_commit import take_write_lock
from docbase.core.errors import Conflict, NotFound
from docbase.core.query import Query
from docbase.core.update import SetOp, Update
from tests.backends import numbered, sql_backend, traced_statements


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlDocumentStore]:
    async with sql_backend(f"sqlite:///{tmp_path}/writes.db") as (opened, _blobs):
        yield opened


def _count_commits(store: SqlDocumentStore) -> list[int]:
    commits = [0]
    engine = store.engine
    assert isinstance(engine, sa.Engine)

    @sa.event.listens_for(engine, "commit")
    def counted(_conn: Any) -> None:
        commits[0] += 1

    return commits


async def _hold_writer(store: SqlDocumentStore, seconds: float) -> asyncio.Task[None]:
    """Keep the writer busy, so that the writes queued meanwhile form one batch."""
    task = asyncio.create_task(store.backend.run(lambda _conn: time.sleep(seconds),
                                                 write=True))
    await asyncio.sleep(0.05)
    return task


async def test_concurrent_writes_commit_in_fewer_transactions(store: SqlDocumentStore) -> None:
    await store.insert("items", [numbered(0)])
    commits = _count_commits(store)
    holding = await _hold_writer(store, 0.3)
    await asyncio.gather(*(store.insert("items", [numbered(n)]) for n in range(1, 41)))
    await holding
    assert commits[0] <= 3  # the held batch, then the 40 waiting ones (maybe in two)
    for n in range(41):
        assert (await store.get("items", numbered(n)["_id"]))["n"] == n


async def test_a_batch_of_good_writes_runs_without_savepoints(store: SqlDocumentStore) -> None:
    await store.insert("items", [numbered(0)])
    statements = traced_statements(store)

    holding = await _hold_writer(store, 0.3)
    await asyncio.gather(*(store.insert("items", [numbered(n)]) for n in range(1, 11)))
    await holding
    inserts = [s for s in statements if s.startswith("INSERT INTO c_")]
    assert len(inserts) == 10
    assert not [s for s in statements if "SAVEPOINT" in s]
    assert len(await store.find("items", Query(limit=None))) == 11


async def test_a_failing_write_fails_alone_in_its_batch(store: SqlDocumentStore) -> None:
    await store.insert("items", [numbered(1)])
    commits = _count_commits(store)
    holding = await _hold_writer(store, 0.3)
    results = await asyncio.gather(
        store.insert("items", [numbered(2)]),
        store.insert("items", [numbered(3), numbered(1)]),  # numbered(1) exists: all of it fails
        store.update("items", numbered(9)["_id"], Update((SetOp(("x",), 1),)), stamp={}),
        store.update("items", numbered(1)["_id"], Update((SetOp(("x",), 1),)), stamp={}),
        store.insert("items", [numbered(4)]),
        return_exceptions=True,
    )
    await holding
    assert commits[0] == 2
    assert results[0] is None
    assert isinstance(results[1], Conflict)
    assert isinstance(results[2], NotFound)
    assert isinstance(results[3], dict)
    assert results[3]["x"] == 1
    assert results[4] is None
    for n in (1, 2, 4):
        assert (await store.get("items", numbered(n)["_id"]))["n"] == n
    with pytest.raises(NotFound):
        await store.get("items", numbered(3)["_id"])
    assert (await store.get("items", numbered(1)["_id"]))["_version"] == 1


async def test_a_batch_failing_after_creating_a_collection_forgets_its_table(
    store: SqlDocumentStore,
) -> None:
    # The first write creates the collection's table, the second conflicts with it:
    # the all-or-nothing attempt rolls the table back, and the writes run again with
    # savepoints must not use the table number cached by the rolled-back attempt.
    await store.insert("items", [numbered(0)])
    holding = await _hold_writer(store, 0.3)
    results = await asyncio.gather(
        store.insert("fresh", [numbered(1)]),
        store.insert("fresh", [numbered(1)]),  # the same _id: exactly one of them wins
        return_exceptions=True,
    )
    await holding
    assert sorted(type(result).__name__ for result in results) == ["Conflict", "NoneType"]
    assert (await store.get("fresh", numbered(1)["_id"]))["n"] == 1


async def test_a_table_made_in_a_savepoint_rolled_back_is_never_taken_for_committed(
    store: SqlDocumentStore,
) -> None:
    # In the second attempt (savepoints), the failing write creates "doomed" and is
    # rolled back to its savepoint; the batch commits the others. SQLAlchemy sees no
    # rollback there, so the backend must not cache "doomed" from that transaction.
    backend = store.backend
    await store.insert("items", [numbered(0)])

    def create_then_fail(conn: sa.Connection) -> None:
        backend.number(conn, "doomed", create=True)
        raise RuntimeError("fails after creating its table")

    holding = await _hold_writer(store, 0.3)
    results = await asyncio.gather(
        store.insert("kept", [numbered(1)]),
        backend.run(create_then_fail, write=True),
        store.insert("kept", [numbered(2)]),
        return_exceptions=True,
    )
    await holding
    assert results[0] is None
    assert results[2] is None
    assert isinstance(results[1], RuntimeError)
    assert backend.cached_number("doomed") is None
    with pytest.raises(NotFound):
        await store.get("doomed", numbered(1)["_id"])
    assert [d["n"] for d in await store.find("kept", Query(limit=None))] == [1, 2]


WRITER = textwrap.dedent("""
    import asyncio, sys
    from docbase.adapters.sql import from_url

    async def main():
        store, _ = from_url(sys.argv[1])
        async with store:
            async def one(n):
                await store.insert("items", [{"_id": f"{n:024x}", "_version": 0, "n": n}])
                print(n, flush=True)  # acknowledged: committed
            n = 0
            while True:
                await asyncio.gather(*(one(n + i) for i in range(16)))
                n += 16

    asyncio.run(main())
""")


def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/killed.db"
    acknowledged: list[int] = []
    with subprocess.Popen([sys.executable, "-c", WRITER, url], stdout=subprocess.PIPE,
                          text=True, env={**os.environ}) as process:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        while len(acknowledged) < 500 and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            acknowledged.append(int(line))
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        acknowledged += [int(line) for line in process.stdout.read().split()]
    assert len(acknowledged) >= 500

    async def stored() -> set[int]:
        reopened, _ = from_url(url)
        async with reopened:
            return {d["n"] for d in await reopened.find("items", Query(limit=None))}

    assert set(acknowledged) <= asyncio.run(stored())


async def test_a_batch_waits_for_another_process_holding_the_lock(
    store: SqlDocumentStore, tmp_path: Path
) -> None:
    await store.insert("items", [numbered(1)])
    other = sqlite3.connect(tmp_path / "writes.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's batch
    inserting = asyncio.create_task(store.insert("items", [numbered(2)]))
    await asyncio.sleep(0.3)
    assert not inserting.done()
    other.execute("COMMIT")
    other.close()
    await asyncio.wait_for(inserting, 30)
    assert (await store.get("items", numbered(2)["_id"]))["n"] == 2


def test_the_write_lock_is_given_up_after_its_timeout(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        take_write_lock(waiter, timeout=0.05)
    assert waiter.in_transaction is False
    holder.execute("COMMIT")
    take_write_lock(waiter, timeout=0.05)
    assert waiter.in_transaction
    waiter.execute("COMMIT")
    holder.close()
    waiter.close()
