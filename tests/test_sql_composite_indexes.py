"""A page of one value's matches is read in an index, never sorted whole (EXPLAIN).

An equality sorted on another path uses a composite index (the equality's parts, the
sort's, ``id``), and an equality in the default order its key index (which holds
``id`` after the value): the plain stream of the page (``docbase/adapters/sql/pages.py``)
seeks to the value and stops after the page, with no sort of all the matches. The
answers are those of the same find without a limit (the one-statement road), cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docbase.adapters.sql import SqlDocumentStore, from_url
from docbase.adapters.sql.auto_indexes import wanted_paths
from docbase.adapters.sql.indexes import Composite, Items
from docbase.core.documents import Document, new_document
from docbase.core.query import And, Eq, In, Query, SortKey
from docbase.core.query import Path as DocPath
from docbase.core.settings import AutoIndexing
from docbase.testing import strategies as gen
from docbase.testing.differential import assert_same, loaded
from tests.backends import sql_backend, sql_url

ROWS = 5000
BY_PRICE = Query(filter=Eq(("status",), "s7"), sort=(SortKey(("price",), -1),), limit=20)
RARE = Query(filter=Eq(("vip",), True), limit=20)
OWN = Query(filter=Eq(("_createdby",), "owner3"), sort=(SortKey(("_id",), -1),), limit=20)


def _bodies() -> list[tuple[dict[str, Any], str]]:
    bodies: list[tuple[dict[str, Any], str]] = [
        ({"status": f"s{i % 10}", "price": round(i * 0.37 % 100, 2), "vip": i % 100 == 0},
         f"owner{i % 40}") for i in range(ROWS)]
    # documents the walked stream answers: a path meeting an array, mixed types
    bodies += [({"status": ["s7", "x"], "price": 5, "vip": [True]}, "owner3"),
               ({"status": "s7", "price": [1, 99.995], "vip": True}, "owner3"),
               ({"status": "s7", "price": "cheap"}, "owner3"), ({"status": "s7"}, "owner3")]
    return bodies


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with sql_url(request.param, tmp_path) as url:
        yield url


@contextlib.asynccontextmanager
async def filled(url: str, policy: AutoIndexing | None = None
                 ) -> AsyncIterator[SqlDocumentStore]:
    store, _ = from_url(url, auto_index=policy)
    async with store:
        await store.insert("items", [new_document(b, owner) for b, owner in _bodies()])
        yield store


def page_seeks(plan: str, dialect: str, index: str) -> bool:
    """Whether a stream reads ``index`` (``k``: a key index, ``c``: a composite) in order.

    SQLite: a ``SEARCH`` in it whose stream (up to ``SCAN anon_n``, its rows read by
    the merge) does not end with a sort (those before are scalar subqueries'); PostgreSQL: an
    ``Index Scan`` of it under no ``Sort`` (an ``Incremental Sort`` of the rows the
    index gives in order, by the parts it does not hold, is allowed).
    """
    lines = plan.splitlines()
    pattern = rf"(SEARCH|Index Scan) (c_\d+ USING INDEX |using |Backward using )c_\d+_{index}\d+"
    for number, line in enumerate(lines):
        if not re.search(pattern, line):
            continue
        if dialect == "sqlite":
            end = next((later for later in range(number + 1, len(lines))
                        if lines[later].startswith("SCAN anon_")), len(lines))
            return lines[end - 1].strip() != "USE TEMP B-TREE FOR ORDER BY"
        indent = len(line) - len(line.lstrip())
        parent = next((earlier for earlier in reversed(lines[:number])
                       if len(earlier) - len(earlier.lstrip()) < indent), "")
        return re.search(r"(->  |^)Sort\b", parent.strip()) is None
    return False


def test_the_check_tells_a_page_read_in_order_from_a_sort() -> None:
    sorted_rows = ("SEARCH c_1 USING INDEX c_1_k2 (<expr>=?)\nCORRELATED SCALAR SUBQUERY 2\n"
                   "USE TEMP B-TREE FOR ORDER BY\nUSE TEMP B-TREE FOR ORDER BY\nSCAN anon_2")
    assert not page_seeks(sorted_rows, "sqlite", "k")
    assert page_seeks("SEARCH c_1 USING INDEX c_1_c12 (<expr>=?)\nSCAN anon_2", "sqlite", "c")
    in_subquery = sorted_rows.replace("ORDER BY\nSCAN", "ORDER BY\nSCAN j0\nSCAN")
    assert page_seeks(in_subquery, "sqlite", "k")
    assert not page_seeks("SCAN c_1", "sqlite", "k")
    sort = ("Limit\n  ->  Sort\n        Sort Key: x\n        ->  Index Scan using c_1_k2 on c_1\n"
            "              Index Cond: (x = 1)")
    assert not page_seeks(sort, "postgresql", "k")
    assert page_seeks(sort.replace("Sort\n", "Incremental Sort\n"), "postgresql", "k")
    assert page_seeks("Limit\n  ->  Index Scan using c_1_c3 on c_1", "postgresql", "c")


async def _unlimited(store: SqlDocumentStore, query: Query) -> list[Any]:
    every = await store.find("items", Query(filter=query.filter, sort=query.sort))
    return every[:query.limit]


@pytest.mark.parametrize(("query", "index"), [(BY_PRICE, "c"), (RARE, "k"), (OWN, "c")],
                         ids=["equality-sorted-by-another", "default-order", "per-owner"])
async def test_declared_indexes_read_a_page_of_one_value_in_order(
        url: str, query: Query, index: str) -> None:
    async with filled(url) as store:
        for path in ("status", "price", "vip", "_createdby"):
            await store.ensure_index("items", (path,))
        await store.ensure_composite("items", Composite(("status",), ("price",), True))
        await store.ensure_composite("items", Composite(("_createdby",), ("_id",), True))
        plan = await store.explain("items", query)
        print(f"\n{store.dialect.name} plan for {query!r}:\n{plan}")
        assert page_seeks(plan, store.dialect.name, index), plan
        found = await store.find("items", query)
        assert len(found) == 20
        assert found == await _unlimited(store, query)


async def test_without_the_composite_the_matches_are_sorted(url: str) -> None:
    async with filled(url) as store:
        for path in ("status", "price"):
            await store.ensure_index("items", (path,))
        plan = await store.explain("items", BY_PRICE)
        assert not page_seeks(plan, store.dialect.name, "c"), plan
        assert not page_seeks(plan, store.dialect.name, "k"), plan  # sorts status's matches
        assert await store.find("items", BY_PRICE) == await _unlimited(store, BY_PRICE)


async def test_the_automatic_indexes_form_the_composite(
        url: str, caplog: pytest.LogCaptureFixture) -> None:
    async with filled(url, AutoIndexing(queries=2)) as store:
        before = await _unlimited(store, BY_PRICE)
        assert store.auto_indexer is not None
        with caplog.at_level(logging.INFO, logger="docbase.sql"):
            for _ in range(3):  # status, then price, then the composite: 2 finds each
                for _ in range(2):
                    await store.find("items", BY_PRICE)
                await store.auto_indexer.idle()
                await asyncio.sleep(0)
        made = [r.getMessage() for r in caplog.records if "created an index" in r.getMessage()]
        assert [m.split(" of collection")[0] for m in made] == [
            "created an index on 'status'", "created an index on 'price'",
            "created an index on 'status, price -1'"], made
        plan = await store.explain("items", BY_PRICE)
        assert page_seeks(plan, store.dialect.name, "c"), plan
        assert await store.find("items", BY_PRICE) == before


def test_a_composite_is_wanted_for_a_scalar_equality_sorted_on_another_path() -> None:
    # (each equality's item index last: made only where the path meets arrays)
    assert wanted_paths(BY_PRICE) == [("status",), ("price",),
                                      Composite(("status",), ("price",), True),
                                      Items(("status",))]
    assert wanted_paths(OWN) == [("_createdby",), Composite(("_createdby",), ("_id",), True),
                                 Items(("_createdby",))]
    assert wanted_paths(RARE) == [("vip",), Items(("vip",))]  # the key index holds id
    by_itself = Query(filter=Eq(("price",), 3), sort=(SortKey(("price",), 1),), limit=20)
    assert wanted_paths(by_itself) == [("price",), Items(("price",))]
    several = Query(filter=In(("status",), ("s1", "s2")), sort=BY_PRICE.sort, limit=20)
    assert wanted_paths(several) == [("status",), ("price",),  # two values: not one order
                                     Items(("status",))]
    unlimited = Query(filter=BY_PRICE.filter, sort=BY_PRICE.sort, limit=None)
    assert wanted_paths(unlimited) == []


@pytest.fixture(params=["sqlite-file", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def candidate(request: pytest.FixtureRequest, tmp_path: Path
                    ) -> AsyncIterator[SqlDocumentStore]:
    """One SQL store shared by the examples (its collections are emptied between them)."""
    async with contextlib.AsyncExitStack() as stack:
        url = await stack.enter_async_context(sql_url(request.param, tmp_path))
        store, _ = await stack.enter_async_context(sql_backend(url))
        yield store


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(documents=gen.document_sets(), path=gen.paths(max_steps=2), value=gen.json_scalars(),
       sort=gen.sorts(), data=st.data(), skip=st.integers(0, 3), limit=st.integers(0, 5),
       descending=st.booleans())
async def test_pages_led_by_an_equality_equal_reference(
        candidate: SqlDocumentStore, documents: list[Document], path: DocPath, value: Any,
        sort: Any, data: st.DataObject, skip: int, limit: int, descending: bool) -> None:
    # an indexed equality, in the default order (its key index) or sorted on another
    # path with the composite of the two: the plain stream is read in that index, any
    # type on each side, arrays in the walked stream
    filter = And((Eq(path, value), data.draw(gen.filters(), label="filter")))
    query = Query(filter=filter, sort=sort, skip=skip, limit=limit)
    indexed = [path, *([sort[0].path] if sort else [])]
    async with loaded(candidate, documents, indexed) as (name, memory):
        if sort:
            await candidate.ensure_composite(name, Composite(path, sort[0].path, descending))
            await candidate.ensure_composite(name, Composite(path, sort[0].path, not descending))
        assert_same(await candidate.find(name, query), await memory.find(name, query))
