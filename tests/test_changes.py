"""The durable change log and ``db.changes`` on every storage backend.

Sequences, the entry shapes, resuming, the rule that a reader never steps over a
number taken but not yet stored, pruning, and the store's change signal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from docbase.adapters.memory import MemoryDocumentStore
from docbase.core.changes import CHANGES_COLLECTION, Change
from docbase.core.changes.entries import entry_id, to_document
from docbase.core.changes.reader import LogReader
from docbase.core.database import Database
from docbase.core.errors import BackendError
from docbase.core.settings import Limits


@pytest.fixture
async def db(stores: Any) -> AsyncIterator[Database]:
    database = Database(*stores, limits=Limits(change_poll_interval=0.05))
    await database.settings.set("realtime.global", True)
    try:
        yield database
    finally:
        await database.changes.close()


async def take(db: Database, count: int, *, since: int | None = 0,
               collection: str | None = None) -> list[Change]:
    """The next ``count`` entries of ``db.changes(...)``, within generous seconds."""
    taken: list[Change] = []

    async def collect() -> None:
        async for change in db.changes(collection, since=since):
            taken.append(change)
            if len(taken) == count:
                return

    await asyncio.wait_for(collect(), 20)
    return taken


async def test_every_committed_write_is_one_entry_in_order(db: Database) -> None:
    people = db.collection("people")
    ann, bob = await people.insert_many([{"name": "Ann"}, {"name": "Bob"}])
    await people.update(ann["_id"], {"age": 40})
    await people.patch(bob["_id"], {"age": 41})
    await people.delete(ann["_id"])
    changes = await take(db, 4)
    assert [c.seq for c in changes] == [1, 2, 3, 4]
    assert [(c.event, c.method, c.collection) for c in changes] == [
        ("post", "POST", "people"), ("put", "PUT", "people"), ("put", "PATCH", "people"),
        ("delete", "DELETE", "people")]
    assert [d["name"] for d in changes[0].documents] == ["Ann", "Bob"]
    assert changes[0].ids == (ann["_id"], bob["_id"])
    assert changes[1].documents[0]["age"] == 40
    assert changes[2].ids == (bob["_id"],)
    assert (changes[3].ids, changes[3].documents) == ((ann["_id"],), ())


async def test_resuming_since_a_sequence_gives_only_what_followed(db: Database) -> None:
    people = db.collection("people")
    for n in range(5):
        await people.insert({"n": n})
    changes = await take(db, 2, since=3)
    assert [(c.seq, c.documents[0]["n"]) for c in changes] == [(4, 3), (5, 4)]


async def test_iterating_one_collection_skips_the_others(db: Database) -> None:
    await db.collection("people").insert({"n": 1})
    await db.collection("orders").insert({"n": 2})
    await db.collection("people").insert({"n": 3})
    changes = await take(db, 2, collection="people")
    assert [c.documents[0]["n"] for c in changes] == [1, 3]


async def test_a_live_reader_receives_writes_made_after_it_started(db: Database) -> None:
    await db.collection("people").insert({"n": 0})
    reader = asyncio.create_task(take(db, 2, since=None))
    await asyncio.sleep(0.3)
    await db.collection("people").insert({"n": 1})
    await db.collection("people").insert({"n": 2})
    changes = await reader
    assert [c.documents[0]["n"] for c in changes] == [1, 2]


async def test_a_subscription_opened_while_the_last_one_closes_misses_nothing(
    db: Database,
) -> None:
    # The last subscriber leaving stops the process's reader; a resume arriving while it
    # stops (a client reconnecting at once) starts the next one. It must read what
    # followed its resume point, not a reader or entries left over from the first.
    people = db.collection("people")
    await people.insert({"n": 1})
    first = db.changes.subscription(0)
    await first.__aenter__()
    assert [c.seq for c in await first.next(20)] == [1]
    await people.insert({"n": 2})
    await people.insert({"n": 3})
    assert [c.seq for c in await first.next(20)][:1] == [2]
    second = db.changes.subscription(1)
    await asyncio.gather(first.__aexit__(None, None, None), second.__aenter__())
    try:
        seqs: list[int] = []
        while len(seqs) < 2:
            batch = await second.next(5)
            assert batch, f"only {seqs} after resuming from 1"
            seqs += [c.seq for c in batch]
        assert seqs == [2, 3]
    finally:
        await second.__aexit__(None, None, None)


async def test_nothing_is_logged_while_realtime_is_off(stores: Any) -> None:
    db = Database(*stores)
    await db.collection("people").insert({"n": 1})
    assert await db.store.find(CHANGES_COLLECTION, _all()) == []
    await db.settings.set("realtime.global", True)
    await db.collection("people").insert({"n": 2})
    logged = await db.store.find(CHANGES_COLLECTION, _all())
    assert [d["documents"][0]["n"] for d in logged] == [2]


async def test_custom_events_are_logged_in_sequence(db: Database) -> None:
    await db.collection("people").insert({"n": 1})
    await db.changes.publish_custom("greeting", {"hello": "world"}, author="api")
    changes = await take(db, 2)
    assert [(c.seq, c.event, c.collection, c.data) for c in changes][1] == (
        2, "greeting", None, {"hello": "world"})


async def test_concurrent_writers_get_distinct_consecutive_sequences(db: Database) -> None:
    people = db.collection("people")
    await asyncio.gather(*(people.insert({"n": n}) for n in range(30)))
    changes = await take(db, 30)
    assert [c.seq for c in changes] == list(range(1, 31))
    assert sorted(c.documents[0]["n"] for c in changes) == list(range(30))


async def test_a_reader_waits_for_a_number_taken_but_not_yet_stored(db: Database) -> None:
    log = db.changes.log
    await db.collection("people").insert({"n": 1})  # 1
    late = await log.counter.next()  # 2: its writer is slow
    await db.collection("people").insert({"n": 3})  # 3
    reader = LogReader(log, 0, grace=60)
    assert [c.seq for c in await reader.read()] == [1]
    assert [c.seq for c in await reader.read()] == []
    await db.store.insert(CHANGES_COLLECTION, [to_document(
        Change(seq=late, event="custom", data="late"))])
    assert [c.seq for c in await reader.read()] == [2, 3]


async def test_a_number_never_stored_is_skipped_after_the_grace_time(db: Database) -> None:
    log = db.changes.log
    now = [0.0]
    await log.counter.next()  # 1: its writer died before storing it
    await db.collection("people").insert({"n": 2})
    reader = LogReader(log, 0, grace=5, clock=lambda: now[0])
    assert await reader.read() == []
    now[0] = 4.9
    assert await reader.read() == []
    now[0] = 5.0
    assert [c.seq for c in await reader.read()] == [2]


async def test_pruning_keeps_the_newest_entries_and_readers_skip_the_pruned(
    stores: Any,
) -> None:
    db = Database(*stores, limits=Limits(change_max_entries=3))
    await db.settings.set("realtime.global", True)
    for n in range(5):
        await db.collection("people").insert({"n": n})
    assert await db.changes.log.prune() == 2
    kept = await db.store.find(CHANGES_COLLECTION, _all())
    assert [d["seq"] for d in kept] == [3, 4, 5]
    reader = LogReader(db.changes.log, 0, grace=3600)  # no waiting for numbers pruned
    assert [c.seq for c in await reader.read()] == [3, 4, 5]


async def test_pruning_by_age(stores: Any) -> None:
    db = Database(*stores)
    old = Change(seq=1, event="x", time="2001-01-01T00:00:00.000Z")
    await db.store.insert(CHANGES_COLLECTION, [to_document(old)])
    await db.settings.set("realtime.global", True)
    await db.changes.log.counter.next()
    await db.collection("people").insert({"n": 2})
    assert await db.changes.log.prune() == 1
    kept = await db.store.find(CHANGES_COLLECTION, _all())
    assert [d["_id"] for d in kept] == [entry_id(2)]


async def test_memory_and_postgresql_push_the_others_poll(
    store: Any, request: pytest.FixtureRequest,
) -> None:
    backend = request.node.callspec.params["stores"]
    assert (store.change_signal() is not None) == (backend in ("memory", "postgresql"))


def _all() -> Any:
    from docbase.core.query import Query

    return Query(limit=None)


class FailingLogStore(MemoryDocumentStore):
    """A store whose change-log inserts fail once: a fake, because a real backend cannot
    be made to fail one insert of one collection on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    async def insert(self, collection: str, documents: Any, *, new_ids: bool = False) -> None:
        if collection == CHANGES_COLLECTION and self.failures:
            self.failures -= 1
            raise BackendError("the change log is unavailable")
        await super().insert(collection, documents, new_ids=new_ids)


async def test_a_failing_log_write_keeps_the_client_write_and_readers_skip_its_number(
    caplog: pytest.LogCaptureFixture,
) -> None:
    db = Database(FailingLogStore(), limits=Limits(change_gap_grace=0.3,
                                                   change_poll_interval=0.05))
    await db.settings.set("realtime.global", True)
    kept = await db.collection("people").insert({"n": 1})  # its entry (number 1) fails
    assert await db.collection("people").get(kept["_id"])
    assert "the change log is unavailable" in caplog.text
    await db.collection("people").insert({"n": 2})
    [change] = await take(db, 1)
    assert (change.seq, change.documents[0]["n"]) == (2, 2)
    await db.changes.close()
