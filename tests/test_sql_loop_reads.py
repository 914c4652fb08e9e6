"""Lookups by id on a SQLite file run on the event loop's thread, and never wait there."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from docbase.adapters.sql import SqlDocumentStore, from_url
from docbase.adapters.sql.executors import SqliteFileExecutor
from docbase.adapters.sql.loop_reads import PAGE_ROWS
from docbase.core.errors import NotFound
from docbase.core.query import After, Eq, Query, SortKey
from tests.backends import numbered, refuse_usual_path, sql_backend


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlDocumentStore]:
    async with sql_backend(f"sqlite:///{tmp_path}/loop.db") as (opened, _blobs):
        yield opened


@pytest.fixture
async def other(tmp_path: Path, store: SqlDocumentStore) -> AsyncIterator[SqlDocumentStore]:
    """A second store on the same file, with its own engine: another process's view."""
    opened, _blobs = from_url(f"sqlite:///{tmp_path}/loop.db")
    async with opened:
        yield opened


async def test_get_by_id_is_answered_on_the_loop_thread(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1), numbered(2, name="two")])
    await store.get("items", numbered(1)["_id"])  # the collection's table number is now known
    refuse_usual_path(store, monkeypatch)
    assert await store.get("items", numbered(2)["_id"]) == numbered(2, name="two")
    with pytest.raises(NotFound):
        await store.get("items", numbered(3)["_id"])


async def test_unknown_collection_goes_the_usual_way(store: SqlDocumentStore) -> None:
    assert store.plain.body_now("nothing", numbered(1)["_id"]) is None
    with pytest.raises(NotFound):
        await store.get("nothing", numbered(1)["_id"])


async def test_a_collection_without_a_table_is_answered_on_the_loop_thread(
    store: SqlDocumentStore, other: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A get from a table nobody made (the rate limiter's counters on every request)
    takes no worker thread, and a table another process makes is found at once."""
    await store.insert("items", [numbered(1)])  # the backend is open and ready
    refuse_usual_path(store, monkeypatch)
    with pytest.raises(NotFound):
        await store.get("_rate_counters", numbered(1)["_id"])
    await other.insert("_rate_counters", [numbered(2)])
    assert await store.get("_rate_counters", numbered(2)["_id"]) == numbered(2)


async def test_writes_of_another_store_are_read_at_once(
    store: SqlDocumentStore, other: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1)])
    await store.get("items", numbered(1)["_id"])
    refuse_usual_path(store, monkeypatch)
    await other.insert("items", [numbered(2)])
    assert (await store.get("items", numbered(2)["_id"]))["n"] == 2
    await other.delete("items", [numbered(1)["_id"]])
    with pytest.raises(NotFound):
        await store.get("items", numbered(1)["_id"])


async def test_collection_recreated_by_another_store_reads_the_new_table(
    store: SqlDocumentStore, other: SqlDocumentStore
) -> None:
    await store.insert("items", [numbered(1, v="old")])
    assert (await store.get("items", numbered(1)["_id"]))["v"] == "old"
    await other.drop("items")
    await other.insert("items", [numbered(1, v="new")])
    assert (await store.get("items", numbered(1)["_id"]))["v"] == "new"


class _Busy:
    """A connection on which SQLite would have to wait: every statement is refused."""

    def execute(self, *_args: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")


async def test_a_lookup_that_would_wait_goes_to_a_worker_thread(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(1)])
    await store.get("items", numbered(1)["_id"])
    executor = store.backend.executor
    assert isinstance(executor, SqliteFileExecutor)
    reader = executor.loop_reader
    monkeypatch.setattr(reader, "_connection", _Busy())
    assert store.plain.body_now("items", numbered(1)["_id"]) is None
    assert (await store.get("items", numbered(1)["_id"]))["n"] == 1


async def test_another_thread_reads_the_usual_way(store: SqlDocumentStore) -> None:
    await store.insert("items", [numbered(1)])
    await store.get("items", numbered(1)["_id"])
    answers: list[Any] = []
    thread = threading.Thread(
        target=lambda: answers.append(store.plain.body_now("items", numbered(1)["_id"])))
    thread.start()
    thread.join()
    assert answers == [None]
    assert store.plain.body_now("items", numbered(1)["_id"]) is not None


async def test_first_pages_of_a_list_are_read_on_the_loop_thread(
    store: SqlDocumentStore, other: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(n, secret="s") for n in range(1, 6)])
    await store.get("items", numbered(1)["_id"])  # the collection's table number is now known
    refuse_usual_path(store, monkeypatch)
    page = await store.find_encoded("items", Query(skip=1, limit=3), hide=("secret",))
    assert [msgspec.json.decode(text) for text in page] == [numbered(n) for n in (2, 3, 4)]
    await other.insert("items", [numbered(6)])  # another process's write: seen at once
    assert [d["n"] for d in await store.find("items", Query(skip=4, limit=10))] == [5, 6]
    for scan in (Query(filter=Eq(("n",), 2), limit=1), Query(limit=PAGE_ROWS + 1),
                 Query(sort=(SortKey(("n",), -1),), limit=1)):  # not a short walk of the key
        with pytest.raises(AssertionError, match="went the usual way"):
            await store.find("items", scan)


async def test_a_cursor_page_in_key_order_is_read_on_the_loop_thread(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.insert("items", [numbered(n) for n in range(1, 8)])
    await store.get("items", numbered(1)["_id"])
    refuse_usual_path(store, monkeypatch)
    after = After((), (), numbered(3)["_id"])  # a seek in the key index, as short a walk
    assert [d["n"] for d in await store.find("items", Query(limit=2, after=after))] == [4, 5]
    with pytest.raises(AssertionError, match="went the usual way"):  # a deep offset
        await store.find("items", Query(skip=PAGE_ROWS, limit=1, after=after))


async def test_a_deep_skip_leaves_the_event_loop_free(store: SqlDocumentStore) -> None:
    # a page read on the loop thread would finish within the first turn the loop gives
    # it; a deep offset goes to a worker thread, and gets by id go on meanwhile
    await store.insert("items", [numbered(n, pad="x" * 200) for n in range(1, 10_001)])
    first = numbered(1)["_id"]
    await store.get("items", first)

    async def turns_while(query: Query) -> int:
        read = asyncio.ensure_future(store.find("items", query))
        turns = 0
        while not read.done():
            assert (await store.get("items", first))["n"] == 1
            turns += 1
            await asyncio.sleep(0)
        assert len(await read) == 10
        return turns

    assert await turns_while(Query(limit=10)) == 1  # the shallow page: on the loop thread
    assert await turns_while(Query(skip=9_990, limit=10)) > 1
