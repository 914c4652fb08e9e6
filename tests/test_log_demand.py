"""Whether a write is logged is decided from one read per process, and loses no event.

``docbase/core/changes/demand.py``: each process keeps its answer to "does anyone
consume the change log?" (realtime, a webhook, a capture lease) for half a second, and
whatever makes a consumer waits until every process has read it again before it
returns. Two databases on two stores of one PostgreSQL schema stand for two processes:
the second has just written (its answer "nobody" is fresh) when the first registers a
consumer, and the second's next write must be in the log all the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, cast

import pytest

from docbase import Database
from docbase.adapters.memory.store import MemoryDocumentStore
from docbase.core.changes.demand import DEMAND_SECONDS
from docbase.core.changes.entries import CHANGES_COLLECTION
from docbase.core.portability.capture import capturing
from docbase.core.ports import DocumentStore
from docbase.core.query import Query
from docbase.core.settings import Limits
from tests.backends import postgresql_schema, sql_backend
from tests.store_probes import ReadCounting

LIMITS = Limits(webhook_private_targets=True)
CONSUMER_COLLECTIONS = ("_settings", "_webhooks", "_captures")


@pytest.fixture
async def two_processes() -> AsyncIterator[tuple[Database, Database]]:
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(postgresql_schema())
        first, second = [
            await stack.enter_async_context(Database(
                (await stack.enter_async_context(sql_backend(url)))[0], name="main",
                limits=LIMITS))
            for _ in range(2)]
        yield first, second


async def logged_ids(db: Database) -> set[str]:
    entries = await db.store.find(CHANGES_COLLECTION, Query(limit=None))
    return {i for entry in entries for i in entry.get("ids", ())}


async def add_webhook(first: Database) -> Any:
    return await first.webhooks.add("http://127.0.0.1:9/hook")


async def switch_realtime_on(first: Database) -> Any:
    return await first.settings.set("realtime.global", True)


REGISTRATIONS: dict[str, Callable[[Database], Awaitable[Any]]] = {
    "webhook": add_webhook, "realtime": switch_realtime_on}


@pytest.mark.parametrize("registration", sorted(REGISTRATIONS))
async def test_a_consumer_registered_by_one_process_gets_the_others_next_write(
    two_processes: tuple[Database, Database], registration: str
) -> None:
    first, second = two_processes
    unseen = await second.collection("people").insert({"name": "before"})
    await REGISTRATIONS[registration](first)
    seen = await second.collection("people").insert({"name": "after"})
    logged = await logged_ids(first)
    assert seen["_id"] in logged
    assert unseen["_id"] not in logged, "nobody consumed the log before: not logged"


async def test_a_capture_begun_by_one_process_gets_the_others_next_write(
    two_processes: tuple[Database, Database],
) -> None:
    first, second = two_processes
    await second.collection("people").insert({"name": "before"})
    async with capturing(first.store, first.auth_cache):
        seen = await second.collection("people").insert({"name": "during"})
        assert seen["_id"] in await logged_ids(first)


async def test_writes_ask_the_consumers_once_per_window_and_local_changes_at_once(
) -> None:
    store = ReadCounting(MemoryDocumentStore(), CONSUMER_COLLECTIONS)
    now = [100.0]
    async with Database(cast(DocumentStore, store), limits=LIMITS) as db:
        db.changes.demand.clock = lambda: now[0]
        people = db.collection("people")
        await people.insert({"n": 0})
        store.reads = 0
        for n in range(50):
            await people.insert({"n": n})
        assert store.reads == 0, "answered from what the first write read"
        now[0] += DEMAND_SECONDS
        await people.insert({"n": "later"})
        assert store.reads == 3, "read again once trusted for long enough: all three"
        await db.webhooks.add("http://127.0.0.1:9/hook")
        after = await people.insert({"n": "after"})
        assert after["_id"] in await logged_ids(db), "a change made here is seen at once"
