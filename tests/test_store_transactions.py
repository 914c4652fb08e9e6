"""``DocumentStore.transaction()`` on every store: all or nothing, read your own writes.

MongoDB (the wire server has no transactions) refuses it with
``TransactionsUnsupported`` before anything runs.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

import pytest

from docbase.core.documents import new_document
from docbase.core.errors import Conflict, TransactionsUnsupported
from docbase.core.query import Query
from docbase.core.update import SetOp, Update


class Undo(Exception):
    """Raised inside a block to roll it back."""


def doc(**fields: Any) -> dict[str, Any]:
    return new_document(fields, "api")


async def ids(store: Any, collection: str) -> set[str]:
    return {d["_id"] for d in await store.find(collection, Query(limit=None))}


@pytest.mark.transactions
async def test_a_block_commits_every_write_together(store: Any) -> None:
    kept = doc(n=1)
    await store.insert("t", [kept])
    first, second = doc(n=2), doc(n=3)
    async with store.transaction():
        await store.insert("t", [first])
        await store.insert("u", [second])
        await store.update("t", kept["_id"], Update((SetOp(("n",), 9),)), stamp={})
        assert (await store.get("t", first["_id"]))["n"] == 2  # its own write, read back
        assert await store.delete("t", [first["_id"]]) == [first["_id"]]
    assert await ids(store, "t") == {kept["_id"]}
    assert await ids(store, "u") == {second["_id"]}
    assert (await store.get("t", kept["_id"]))["n"] == 9


@pytest.mark.transactions
async def test_new_documents_of_a_block_are_read_back_and_committed_in_order(
        store: Any) -> None:
    kept = doc(n=0)
    await store.insert("t", [kept])
    made = [doc(n=n) for n in range(1, 7)]
    async with store.transaction():
        for document in made:  # PostgreSQL holds these back until something else runs
            await store.insert(("t", "u")[document["n"] % 2], [document], new_ids=True)
        assert [d["n"] for d in await store.find("t", Query(limit=None))] == [0, 2, 4, 6]
        await store.insert("u", [doc(n=7), doc(n=9)], new_ids=True)
        await store.update("u", made[0]["_id"], Update((SetOp(("n",), 11),)), stamp={})
        await store.insert("t", [doc(n=8)], new_ids=True)  # held back to the commit
    assert sorted(d["n"] for d in await store.find("t", Query(limit=None))) == [0, 2, 4, 6, 8]
    assert sorted(d["n"] for d in await store.find("u", Query(limit=None))) == [3, 5, 7, 9, 11]


@pytest.mark.transactions
async def test_new_documents_of_a_block_that_raises_are_not_stored(store: Any) -> None:
    async def undone() -> None:
        async with store.transaction():
            await store.insert("t", [doc(n=1)], new_ids=True)
            await store.insert("t", [doc(n=2)], new_ids=True)
            raise Undo

    with pytest.raises(Undo):
        await undone()
    assert await ids(store, "t") == set()


@pytest.mark.transactions
async def test_a_block_whose_new_documents_cannot_be_written_commits_nothing(
        store: Any) -> None:
    kept = doc(n=1)
    await store.insert("t", [kept])
    async def broken_promise() -> None:
        async with store.transaction():
            await store.insert("t", [doc(n=2)], new_ids=True)
            await store.insert("t", [kept], new_ids=True)  # not new after all

    with pytest.raises(Conflict):  # at the insert, or (held back) at the commit
        await broken_promise()
    assert await ids(store, "t") == {kept["_id"]}


@pytest.mark.transactions
async def test_a_block_that_raises_leaves_nothing_behind(store: Any) -> None:
    kept = doc(n=1)
    await store.insert("t", [kept])

    async def undone() -> None:
        async with store.transaction():
            await store.insert("t", [doc(n=2)])
            await store.insert("new_collection", [doc(n=3)])
            await store.update("t", kept["_id"], Update((SetOp(("n",), 9),)), stamp={})
            await store.delete("t", [kept["_id"]])
            raise Undo

    with pytest.raises(Undo):
        await undone()
    assert await ids(store, "t") == {kept["_id"]}
    assert (await store.get("t", kept["_id"]))["n"] == 1
    assert await ids(store, "new_collection") == set()
    await store.insert("new_collection", [doc(n=4)])  # usable after the rollback
    assert len(await ids(store, "new_collection")) == 1


@pytest.mark.transactions
async def test_a_failed_operation_inside_a_block_is_undone_alone(store: Any) -> None:
    kept = doc(n=1)
    await store.insert("t", [kept])
    async with store.transaction():
        added = doc(n=2)
        await store.insert("t", [added])
        with pytest.raises(Conflict):
            await store.insert("t", [doc(n=3), kept])  # a taken _id: neither is stored
        with pytest.raises(Conflict):
            await store.insert("t", [kept])  # one row alone (PostgreSQL: no savepoint)
        await store.insert("t", [doc(n=4)])
    assert len(await ids(store, "t")) == 3


@pytest.mark.transactions
async def test_a_block_inside_a_block_that_raises_undoes_only_its_own_writes(
        store: Any) -> None:
    kept, outer, inner = doc(n=1), doc(n=2), doc(n=3)
    await store.insert("t", [kept])

    async def undone() -> None:
        async with store.transaction():
            await store.insert("t", [inner])
            await store.update("t", kept["_id"], Update((SetOp(("n",), 9),)), stamp={})
            await store.delete("t", [outer["_id"]])
            await store.insert("inner_only", [doc(n=4)])
            raise Undo

    async with store.transaction():
        await store.insert("t", [outer])
        await store.update("t", kept["_id"], Update((SetOp(("n",), 5),)), stamp={})
        with pytest.raises(Undo):
            await undone()
        assert await ids(store, "t") == {kept["_id"], outer["_id"]}
        assert (await store.get("t", kept["_id"]))["n"] == 5
        await store.insert("t", [doc(n=6)])  # the outer block goes on
    assert len(await ids(store, "t")) == 3
    assert (await store.get("t", kept["_id"]))["n"] == 5
    assert await ids(store, "inner_only") == set()


@pytest.mark.transactions
async def test_another_task_does_not_write_inside_a_block(store: Any) -> None:
    others: list[asyncio.Task[None]] = []

    async def undone() -> None:
        async with store.transaction():
            await store.insert("t", [doc(n=1)])
            others.append(asyncio.create_task(store.insert("t", [doc(n=2)]),
                                              context=contextvars.Context()))  # not inside
            await asyncio.sleep(0.05)  # the other task may wait for the block, or not
            raise Undo

    with pytest.raises(Undo):
        await undone()
    await others[0]
    assert len(await ids(store, "t")) == 1  # the other task's write, not the block's


@pytest.mark.transactions
async def test_another_task_does_not_read_what_a_block_has_not_committed(store: Any) -> None:
    kept = doc(n=1)
    await store.insert("t", [kept])
    seen: list[asyncio.Task[set[str]]] = []

    async def undone() -> None:
        async with store.transaction():
            await store.insert("t", [doc(n=2)])
            await store.delete("t", [kept["_id"]])
            seen.append(asyncio.create_task(ids(store, "t"), context=contextvars.Context()))
            await asyncio.sleep(0.05)  # the reader may wait for the block, or not
            raise Undo

    with pytest.raises(Undo):
        await undone()
    assert await seen[0] == {kept["_id"]}  # neither the insert nor the delete showed


@pytest.mark.parametrize("stores", [  # not an in-memory SQLite database: one connection,
    "memory", "sqlite-file",             # so another task's read waits for the block
    pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True)
async def test_a_block_may_await_another_tasks_read(store: Any) -> None:
    """A block that awaits a read made by another task (a cache fetch it shares) goes
    on: that read does not wait for the block, and sees what was committed."""
    kept = doc(n=1)
    await store.insert("t", [kept])
    async with store.transaction():
        await store.insert("t", [doc(n=2)])
        elsewhere = asyncio.create_task(ids(store, "t"), context=contextvars.Context())
        assert await asyncio.wait_for(elsewhere, 30) == {kept["_id"]}
    assert len(await ids(store, "t")) == 2


@pytest.mark.no_transactions
async def test_mongodb_refuses_a_transaction(store: Any) -> None:
    with pytest.raises(TransactionsUnsupported):
        store.transaction()
    assert await ids(store, "t") == set()


@pytest.mark.parametrize("stores", ["sqlite-file", "sqlite-memory"], indirect=True)
async def test_sqlite_blocks_take_turns_on_one_kept_thread_that_closing_stops(
        store: Any) -> None:
    """A block runs on a thread of its own, kept for the next block (starting one per
    block cost more than a keyed write's stored answer); closing the store stops it."""
    def thread(_conn: Any) -> threading.Thread:
        return threading.current_thread()

    seen = []
    for n in range(3):
        async with store.transaction():
            await store.insert("t", [doc(n=n)])
            seen.append(await store.backend.run(thread, write=True))
    assert seen[0] is seen[1] is seen[2]
    assert seen[0].name.startswith("docbase-sql-transaction")
    assert len(await ids(store, "t")) == 3
    await store.close()
    seen[0].join(30)
    assert not seen[0].is_alive()
