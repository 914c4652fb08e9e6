"""Each path of the plain reads (``docbase/adapters/sql/plain_reads.py``), on every engine.

A get by key, a page of a list without filter or sort and a count are one operation
each: the engine's short way where it has one and can answer (a SQLite file on the
loop's thread, PostgreSQL through asyncpg), the usual way (the executor) otherwise. The
tests count the usual way's runs to see which path answered, and make the short way
decline to show that the usual way then gives the same answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.sql import SqlDocumentStore
from docbase.core.errors import NotFound
from docbase.core.query import MATCH_ALL, Eq, Gt, In, Or, Query, SortKey
from tests.backends import numbered, sql_backend, sql_url

SHORT_GETS = {"sqlite-file": True, "sqlite-memory": False, "postgresql": True}
"""Whether the engine has a short way for a get by key."""
SHORT_PAGES = SHORT_GETS
"""... for a short page of a list (SQLite file: on the loop's thread)."""
SHORT_COUNTS = {"sqlite-file": False, "sqlite-memory": False, "postgresql": True}
"""... for a count of a whole collection (SQLite counts in a worker thread: a scan)."""
SHORT_FINDS = {"sqlite-file": False, "sqlite-memory": False, "postgresql": True}
"""... for a find with a filter or a sort, once the collection's indexes were seen (SQLite:
in a worker thread, where a find that scans cannot hold up the loop)."""
FINDS = [
    (Query(filter=Eq(("n",), 4)), [4]),
    (Query(filter=Eq(("flag",), True), sort=(SortKey(("n",), -1),), limit=2), [5, 3]),
    (Query(filter=Or((Gt(("n",), 4), In(("tag",), ("t1", "t2")))), limit=10), [1, 2, 5]),
    (Query(filter=Eq(("tags",), "x"), skip=1), [2, 3, 4, 5]),
]
"""Finds whose statements bind typed values (booleans, arrays of path names), with
their answers (the values of ``n``), in collection ``flags`` (:func:`flags`)."""


async def flags(store: SqlDocumentStore) -> None:
    """Fill collection ``flags``: odd documents flagged, with ``tags`` an array."""
    await store.insert("flags", [numbered(n, flag=n % 2 == 1, tag=f"t{n}",
                                          tags=["x"] if n % 2 else "x") for n in range(1, 6)])


@pytest.fixture(params=list(SHORT_GETS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(kind: str, tmp_path: Path) -> AsyncIterator[SqlDocumentStore]:
    async with sql_url(kind, tmp_path) as url, sql_backend(url) as (opened, _blobs):
        await opened.insert("items", [numbered(n) for n in range(1, 6)])
        await opened.get("items", numbered(1)["_id"])  # the table's number is now known
        yield opened


def usual_runs(store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A list that gets one entry per work the backend's executor runs (the usual way)."""
    runs: list[bool] = []
    original = store.backend._run

    async def counted(work: Any, *, write: bool) -> Any:
        runs.append(write)
        return await original(work, write=write)

    monkeypatch.setattr(store.backend, "_run", counted)
    return runs


def decline_short_ways(store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every short way of the executor answer "not here"."""
    async def not_soon(*_args: Any) -> None:
        return None

    executor = store.backend.executor
    monkeypatch.setattr(executor, "body_soon", not_soon)
    monkeypatch.setattr(executor, "scalars_soon", not_soon)
    monkeypatch.setattr(executor, "scalars_now", lambda *_args: None)
    monkeypatch.setattr(executor, "number_now", lambda *_args: None)


async def test_a_get_takes_the_short_way_where_the_engine_has_one(
    kind: str, store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = usual_runs(store, monkeypatch)
    assert await store.get("items", numbered(2)["_id"]) == numbered(2)
    with pytest.raises(NotFound):
        await store.get("items", numbered(9)["_id"])
    assert len(runs) == (0 if SHORT_GETS[kind] else 2)


async def test_a_get_goes_the_usual_way_when_the_short_way_declines(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    decline_short_ways(store, monkeypatch)
    runs = usual_runs(store, monkeypatch)
    assert await store.get("items", numbered(3)["_id"]) == numbered(3)
    with pytest.raises(NotFound):
        await store.get("items", numbered(9)["_id"])
    with pytest.raises(NotFound):
        await store.get("nothing", numbered(1)["_id"])
    assert len(runs) == 3


async def test_a_get_in_a_transaction_reads_what_the_block_wrote(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(*_args: Any) -> None:
        raise AssertionError("took a short way inside a transaction")

    monkeypatch.setattr(store.backend.executor, "body_soon", refuse)
    async with store.transaction():
        await store.insert("items", [numbered(7)])
        assert await store.get("items", numbered(7)["_id"]) == numbered(7)


async def test_a_get_from_a_collection_without_a_table_is_not_found(
    kind: str, store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = usual_runs(store, monkeypatch)
    with pytest.raises(NotFound):
        await store.get("nothing", numbered(1)["_id"])
    # a SQLite file looks the table up on the loop's thread too; the others ask the usual way
    assert len(runs) == (0 if kind == "sqlite-file" else 1)


async def test_a_plain_page_and_a_count_take_the_short_way_where_there_is_one(
    kind: str, store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = usual_runs(store, monkeypatch)
    page = await store.find("items", Query(limit=3))
    assert [document["n"] for document in page] == [1, 2, 3]
    assert len(runs) == (0 if SHORT_PAGES[kind] else 1)
    runs.clear()
    assert await store.count("items", MATCH_ALL) == 5
    assert len(runs) == (0 if SHORT_COUNTS[kind] else 1)
    assert await store.count("items", Eq(("n",), 4)) == 1


async def test_a_plain_page_and_a_count_go_the_usual_way_when_the_short_way_declines(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    decline_short_ways(store, monkeypatch)
    runs = usual_runs(store, monkeypatch)
    page = await store.find("items", Query(skip=1, limit=2))
    assert [document["n"] for document in page] == [2, 3]
    assert await store.count("items", MATCH_ALL) == 5
    assert len(runs) == 2


async def test_a_plain_page_and_a_count_of_a_collection_without_a_table_are_empty(
    store: SqlDocumentStore,
) -> None:
    assert await store.find("nothing", Query(limit=3)) == []
    assert await store.count("nothing", MATCH_ALL) == 0
    assert await store.count("nothing", Eq(("n",), 1)) == 0


async def test_a_page_past_the_loop_threads_bound_is_not_read_on_it(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page longer than ``loop_reads.PAGE_ROWS`` may scan: never on the loop's thread."""
    def refuse(*_args: Any) -> None:
        raise AssertionError("a long page was read on the loop's thread")

    monkeypatch.setattr(store.backend.executor, "scalars_now", refuse)
    page = await store.find("items", Query(skip=2, limit=1000))
    assert [document["n"] for document in page] == [3, 4, 5]


@pytest.mark.parametrize(("query", "expected"), FINDS)
async def test_a_find_takes_the_short_way_once_the_indexes_were_seen(
    kind: str, store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch,
    query: Query, expected: list[int],
) -> None:
    await flags(store)
    await store.ensure_index("flags", ("n",))
    first = await store.find("flags", query)  # (may ask the usual way for the indexes)
    assert [document["n"] for document in first] == expected
    runs = usual_runs(store, monkeypatch)
    assert await store.find("flags", query) == first
    assert len(runs) == (0 if SHORT_FINDS[kind] else 1)


@pytest.mark.parametrize(("query", "expected"), FINDS)
async def test_a_find_goes_the_usual_way_when_the_short_way_declines(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch,
    query: Query, expected: list[int],
) -> None:
    await flags(store)
    assert [document["n"] for document in await store.find("flags", query)] == expected
    decline_short_ways(store, monkeypatch)
    runs = usual_runs(store, monkeypatch)
    assert [document["n"] for document in await store.find("flags", query)] == expected
    assert len(runs) == 1


async def test_a_find_in_a_transaction_reads_what_the_block_wrote(
    store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.find("items", Query(filter=Eq(("n",), 7)))  # the indexes are seen

    async def refuse(*_args: Any) -> None:
        raise AssertionError("took a short way inside a transaction")

    monkeypatch.setattr(store.backend.executor, "scalars_soon", refuse)
    async with store.transaction():
        await store.insert("items", [numbered(7)])
        found = await store.find("items", Query(filter=Eq(("n",), 7)))
    assert [document["n"] for document in found] == [7]
