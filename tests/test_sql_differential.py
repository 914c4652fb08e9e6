"""Differential properties: SQLite and PostgreSQL answer exactly what the reference does.

The memory adapter runs ``docbase.core.evaluate`` itself; the SQL adapter compiles the
same AST to SQL. Documents, queries, aggregations and updates come from
``docbase.testing.strategies``; each example loads its documents into a fresh
collection (the engine is reused). Results are compared with ``json_equal``: key order
counts, ``1 == 1.0``, ``True != 1``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docbase.core.documents import Document, new_document
from docbase.core.query import Between, Gt, Gte, Lt, Lte, Path, Query, parse_filter
from docbase.testing import strategies as gen
from docbase.testing.differential import (
    NOW,
    assert_same,
    assert_same_rows,
    loaded,
    update_outcomes,
)
from tests.backends import IN_CI, postgresql_schema, sql_backend

PROPERTY = settings(
    max_examples=500 if IN_CI else 60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(params=["sqlite", "postgresql"])
async def sql(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """One open SQL store per test function, shared by all its examples."""
    async with contextlib.AsyncExitStack() as stack:
        if request.param == "sqlite":
            url = "sqlite://"
        else:
            url = await stack.enter_async_context(postgresql_schema())
        store, _ = await stack.enter_async_context(sql_backend(url))
        yield store


@PROPERTY
@given(documents=gen.document_sets(), query=gen.queries(),
       indexed=st.lists(gen.paths(max_steps=2), max_size=2, unique=True))
async def test_find_and_count_equal_reference(sql: Any, documents: list[Document],
                                              query: Query, indexed: list[Path]) -> None:
    async with loaded(sql, documents, indexed) as (name, memory):
        assert_same(await sql.find(name, query), await memory.find(name, query))
        assert await sql.count(name, query.filter) == await memory.count(name, query.filter)


@PROPERTY
@given(documents=gen.document_sets(), q=gen.json_queries(),
       sort=gen.sorts(), skip=st.integers(0, 3), limit=st.none() | st.integers(1, 5))
async def test_parsed_q_queries_equal_reference(
    sql: Any, documents: list[Document], q: dict[str, Any], sort: Any, skip: int,
    limit: int | None,
) -> None:
    query = Query(filter=parse_filter(q, now=NOW), sort=sort, skip=skip, limit=limit)
    async with loaded(sql, documents) as (name, memory):
        assert_same(await sql.find(name, query), await memory.find(name, query))


@PROPERTY
@given(documents=gen.document_sets(), filter=gen.filters(), aggregation=gen.aggregations())
async def test_aggregate_equals_reference(sql: Any, documents: list[Document], filter: Any,
                                          aggregation: Any) -> None:
    groupby, aggregates = aggregation
    async with loaded(sql, documents) as (name, memory):
        assert_same_rows(await sql.aggregate(name, filter, groupby, aggregates),
                         await memory.aggregate(name, filter, groupby, aggregates))


@PROPERTY
@given(body=gen.documents(), update=gen.updates(), stale=st.booleans())
async def test_update_equals_reference(sql: Any, body: Document, update: Any,
                                       stale: bool) -> None:
    document = new_document(body, "api")
    async with loaded(sql, [document]) as (name, memory):
        outcomes = await update_outcomes((memory, sql), name, document["_id"], update,
                                         stale=stale)
        assert_same(outcomes[1], outcomes[0])


@PROPERTY
@given(documents=gen.document_sets(), filter=gen.filters())
async def test_delete_where_equals_reference(sql: Any, documents: list[Document],
                                             filter: Any) -> None:
    async with loaded(sql, documents) as (name, memory):
        assert sorted(await sql.delete_where(name, filter)) == sorted(
            await memory.delete_where(name, filter))
        assert_same(await sql.find(name, Query(limit=None)),
                    await memory.find(name, Query(limit=None)))


_ORDERED = st.sampled_from([Gt, Gte, Lt, Lte])


@PROPERTY
@given(documents=gen.document_sets(),
       condition=st.one_of(
           st.builds(lambda op, path, value: op(path, value), _ORDERED, gen.paths(),
                     gen.json_values(2)),
           st.builds(Between, gen.paths(), gen.json_values(2), gen.json_values(2))),
       sort=gen.sorts())
async def test_ordered_conditions_on_objects_and_arrays_equal_reference(
    sql: Any, documents: list[Document], condition: Any, sort: Any,
) -> None:
    # the shared strategies give $gt & co. scalar operands only; objects and arrays
    # compare by the total order too (pair by pair, element by element)
    query = Query(filter=condition, sort=sort, limit=None)
    async with loaded(sql, documents) as (name, memory):
        assert_same(await sql.find(name, query), await memory.find(name, query))
