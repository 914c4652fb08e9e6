"""``async with db.batch() as batch:`` on every store: the library's atomic batches.

The writes of the block pass the pipeline as they would alone; a block that raises
stores and publishes nothing; one that ends publishes its events after commit, each
carrying the batch id. ``atomic=False`` only tags. MongoDB refuses an atomic block.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from docbase import Conflict, Database, TransactionsUnsupported, ValidationFailed
from docbase.core.changes.entries import CHANGES_COLLECTION, from_document
from docbase.core.events import ChangeEvent
from docbase.core.query import Query
from docbase.core.schema import parse_schema


@pytest.fixture
async def db(stores: Any) -> AsyncIterator[Database]:
    database = Database(*stores, name="main")
    await database.schemas.put(parse_schema("stock", {"fields": [
        {"name": "sku", "type": "text", "unique": True},
        {"name": "left", "type": "number", "min": 0}]}))
    async with database:
        yield database


def recorded(db: Database) -> list[ChangeEvent]:
    events: list[ChangeEvent] = []

    async def keep(event: ChangeEvent) -> None:
        events.append(event)

    db.changes.subscribe(keep)
    return events


async def count(db: Database, name: str) -> int:
    return len(await db.collection(name).find())


@pytest.mark.transactions
async def test_a_block_commits_its_writes_and_then_publishes_them(db: Database) -> None:
    events = recorded(db)
    async with db.batch() as batch:
        order = await db.collection("orders").insert({"customer": "ann"})
        await db.collection("orders").children(order["_id"], "lines").insert(
            {"sku": "tea", "order": order["_id"]})
        await db.collection("stock").insert({"sku": "tea", "left": 9})
        assert events == []  # held until the commit
    assert [e.collection for e in events] == ["orders", "lines", "stock"]
    assert {e.batch for e in events} == {batch.batch_id}
    assert await count(db, "orders") == await count(db, "stock") == 1


@pytest.mark.transactions
async def test_a_block_logs_its_writes_numbered_in_order_after_the_ones_before(
        db: Database) -> None:
    await db.settings.set("realtime.global", True)
    await db.collection("orders").insert({"customer": "before"})
    async with db.batch() as batch:
        for n in range(5):
            await db.collection(("orders", "stock")[n % 2]).insert(
                {"customer": f"c{n}"} if n % 2 == 0 else {"sku": f"s{n}", "left": n})
    entries = sorted((from_document(d) for d in await db.store.find(
        CHANGES_COLLECTION, Query(limit=None))), key=lambda entry: entry.seq)
    assert [e.seq for e in entries] == [1, 2, 3, 4, 5, 6]
    assert [e.collection for e in entries] == ["orders", "orders", "stock", "orders",
                                               "stock", "orders"]
    assert [e.batch for e in entries] == [None, *[batch.batch_id] * 5]


@pytest.mark.transactions
async def test_a_block_that_raises_stores_and_publishes_nothing(db: Database) -> None:
    await db.collection("stock").insert({"sku": "tea", "left": 9})
    events = recorded(db)

    async def refused() -> None:
        async with db.batch():
            await db.collection("orders").insert({"customer": "ann"})
            await db.collection("stock").insert({"sku": "cake", "left": 1})
            await db.collection("stock").insert({"sku": "tea", "left": -1})  # refused

    with pytest.raises(ValidationFailed):
        await refused()
    assert events == []
    assert await count(db, "orders") == 0
    assert [d["sku"] for d in await db.collection("stock").find()] == ["tea"]
    await db.collection("stock").insert({"sku": "cake", "left": 2})  # its claim released


async def test_a_block_that_is_not_atomic_keeps_what_it_wrote(db: Database) -> None:
    events = recorded(db)

    async def half() -> None:
        async with db.batch(atomic=False) as batch:
            await db.collection("orders").insert({"customer": "ann"})
            assert [e.batch for e in events] == [batch.batch_id]  # published at once
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        await half()
    assert await count(db, "orders") == 1


@pytest.mark.no_transactions
async def test_mongodb_refuses_an_atomic_block(db: Database) -> None:
    with pytest.raises(TransactionsUnsupported, match="MongoDB"):
        async with db.batch():
            pass


@pytest.mark.transactions
async def test_a_create_refused_by_a_unique_index_fails_at_itself_and_stores_nothing(
        db: Database) -> None:
    """A store-level unique index (``ensure_index(unique=True)``, no schema claim): the
    create that repeats a value is the one refused, where it runs in the block."""
    people = db.collection("people")
    await people.ensure_index("email", unique=True)
    reached: list[int] = []

    async def twice() -> None:
        async with db.batch():
            for n in (1, 2):
                await people.insert({"email": "ann@example.com"})
                reached.append(n)

    with pytest.raises(Conflict):
        await twice()
    assert reached == [1]
    assert await people.find() == []
