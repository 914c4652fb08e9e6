"""A SQL store indexes a path by itself once sorted or filtered finds keep needing it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore, from_url
from docbase.core.composition import DatabaseSpec, build_database
from docbase.core.documents import new_document
from docbase.core.query import Eq, Gt, Query, SortKey
from docbase.core.settings import AutoIndexing, Limits
from tests.backends import sql_url

ROWS = 2000
THRESHOLD = 5
QUERY = Query(filter=Gt(("price",), 50), sort=(SortKey(("price",), -1),), limit=20)


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with sql_url(request.param, tmp_path) as url:
        yield url


@contextlib.asynccontextmanager
async def opened(url: str, policy: AutoIndexing | None) -> AsyncIterator[SqlDocumentStore]:
    store, _ = from_url(url, auto_index=policy)
    async with store:
        yield store


async def _fill(store: SqlDocumentStore, rows: int = ROWS) -> None:
    bodies: list[dict[str, Any]] = [{"price": round(i * 0.37 % 100, 2), "kind": f"k{i % 9}"}
                                    for i in range(rows)]
    bodies += [{"price": [10, 99.995]}, {"price": "cheap"}]
    await store.insert("items", [new_document(b, "api") for b in bodies])


def _index_scan(plan: str, dialect: str) -> bool:
    if dialect == "sqlite":
        return re.search(r"USING INDEX c_\d+_k\d+", plan) is not None
    return re.search(r"Index Scan( Backward)? (using|on) c_\d+_k\d+", plan) is not None


async def _run(store: SqlDocumentStore, query: Query, times: int) -> list[Any]:
    found: list[Any] = []
    for _ in range(times):
        found = await store.find("items", query)
    if store.auto_indexer is not None:
        await store.auto_indexer.idle()
    return found


async def test_sorted_finds_past_the_threshold_get_an_index_the_plan_uses(url: str) -> None:
    async with opened(url, AutoIndexing(queries=THRESHOLD)) as store:
        await _fill(store)
        before = await store.find("items", QUERY)
        assert not _index_scan(await store.explain("items", QUERY), store.dialect.name)
        await _run(store, QUERY, THRESHOLD - 1)  # with the one above: the threshold
        plan = await store.explain("items", QUERY)
        assert _index_scan(plan, store.dialect.name), plan
        assert await store.find("items", QUERY) == before  # the same answer, now served


async def test_filtered_finds_with_a_limit_count_too(url: str) -> None:
    query = Query(filter=Eq(("kind",), "k3"), limit=10)
    async with opened(url, AutoIndexing(queries=THRESHOLD)) as store:
        await _fill(store)
        before = await _run(store, query, THRESHOLD)
        plan = await store.explain("items", Eq(("kind",), "k3"))
        assert _index_scan(plan, store.dialect.name), plan
        assert await store.find("items", query) == before


@pytest.mark.parametrize(("query", "path"), [
    (Query(sort=(SortKey(("_created",), -1),), limit=20), "_created"),  # newest first
    (Query(filter=Eq(("_createdby",), "owner1"), sort=(SortKey(("_id",), -1),), limit=20),
     "_createdby"),  # a user's own documents, newest first
    (Query(filter=Eq(("kind",), "k3"), sort=(SortKey(("price",), -1),), limit=20), "kind"),
], ids=["newest-first", "per-owner", "condition-before-sort"])
async def test_the_condition_and_the_fields_docbase_sets_get_the_index(
        url: str, caplog: pytest.LogCaptureFixture, query: Query, path: str) -> None:
    # the path the condition compares is indexed rather than the sorted one (the index
    # then seeks to the matches), and _created or _createdby like any other field
    async with opened(url, AutoIndexing(queries=THRESHOLD)) as store:
        await _fill(store)
        await store.insert("items", [new_document({"price": i, "kind": "k3"}, "owner1")
                                     for i in range(5)])
        before = await store.find("items", query)
        with caplog.at_level(logging.INFO, logger="docbase.sql"):
            await _run(store, query, THRESHOLD)
        made = [r.getMessage() for r in caplog.records if "created an index" in r.getMessage()]
        assert made, caplog.text
        assert made[0].startswith(f"created an index on {path!r}"), made
        plan = await store.explain("items", query)
        assert _index_scan(plan, store.dialect.name), plan
        assert await store.find("items", query) == before


async def test_a_dropped_and_refilled_collection_is_indexed_again(url: str) -> None:
    async with opened(url, AutoIndexing(queries=THRESHOLD)) as store:
        await _fill(store)
        await _run(store, QUERY, THRESHOLD)
        await store.drop("items")
        await _fill(store)
        assert not _index_scan(await store.explain("items", QUERY), store.dialect.name)
        await _run(store, QUERY, THRESHOLD)
        plan = await store.explain("items", QUERY)
        assert _index_scan(plan, store.dialect.name), plan


async def test_below_the_threshold_no_index_is_made(url: str) -> None:
    async with opened(url, AutoIndexing(queries=THRESHOLD)) as store:
        await _fill(store)
        await _run(store, QUERY, THRESHOLD - 1)
        await _run(store, Query(filter=Gt(("price",), 50), limit=None), THRESHOLD)  # no limit
        assert not _index_scan(await store.explain("items", QUERY), store.dialect.name)


async def test_off_makes_no_index(url: str) -> None:
    assert Limits(auto_index=False).auto_indexing() is None
    async with opened(url, Limits(auto_index=False).auto_indexing()) as store:
        await _fill(store)
        await _run(store, QUERY, THRESHOLD * 5)
        assert store.auto_indexer is None
        assert not _index_scan(await store.explain("items", QUERY), store.dialect.name)


async def test_a_collection_over_the_size_cap_gets_no_index_and_a_log_line(
        url: str, caplog: pytest.LogCaptureFixture) -> None:
    policy = AutoIndexing(queries=THRESHOLD, max_documents=ROWS // 2)
    async with opened(url, policy) as store:
        await _fill(store)
        with caplog.at_level(logging.INFO, logger="docbase.sql"):
            await _run(store, QUERY, THRESHOLD * 2)
        assert not _index_scan(await store.explain("items", QUERY), store.dialect.name)
        assert any("index: true" in r.getMessage() and "'price'" in r.getMessage()
                   for r in caplog.records), caplog.text


async def test_the_log_names_collection_and_path_never_values(
        url: str, caplog: pytest.LogCaptureFixture) -> None:
    query = Query(filter=Eq(("kind",), "secret-value"), limit=3)
    async with opened(url, AutoIndexing(queries=THRESHOLD)) as store:
        await _fill(store)
        with caplog.at_level(logging.INFO, logger="docbase.sql"):
            await _run(store, query, THRESHOLD)
        lines = [r.getMessage() for r in caplog.records if r.name == "docbase.sql"]
        assert any("'kind'" in line and "'items'" in line for line in lines), lines
        assert not any("secret-value" in line for line in lines), lines


async def test_two_stores_on_one_database_racing_both_succeed(
        url: str, caplog: pytest.LogCaptureFixture) -> None:
    policy = AutoIndexing(queries=THRESHOLD)
    async with opened(url, policy) as first, opened(url, policy) as second:
        await _fill(first)
        before = await first.find("items", QUERY)

        async def load(store: SqlDocumentStore) -> None:
            for _ in range(THRESHOLD):
                await store.find("items", QUERY)

        with caplog.at_level(logging.INFO, logger="docbase.sql"):
            await asyncio.gather(load(first), load(second))
            assert first.auto_indexer is not None
            assert second.auto_indexer is not None
            await asyncio.gather(first.auto_indexer.idle(), second.auto_indexer.idle())
        made = [r for r in caplog.records if "created an index" in r.getMessage()]
        assert len(made) == 1, caplog.text  # one made it; the other found it made
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
        for store in (first, second):
            plan = await store.explain("items", QUERY)
            assert _index_scan(plan, store.dialect.name), plan
            assert await store.find("items", QUERY) == before

        def registered(conn: Any) -> int:
            return int(conn.execute(sa.text(
                "SELECT count(*) FROM docbase_indexes WHERE path = '[\"price\"]'")).scalar_one())

        assert await first.backend.run(registered, write=False) == 1


def test_a_served_database_indexes_by_itself_unless_told_not_to(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path}/d.db"
    on = build_database(DatabaseSpec(name="d", storage=storage, limits=Limits()))
    off = build_database(DatabaseSpec(name="d", storage=storage,
                                      limits=Limits(auto_index=False)))
    assert getattr(on.documents.inner, "auto_indexer", None) is not None
    assert getattr(off.documents.inner, "auto_indexer", None) is None
