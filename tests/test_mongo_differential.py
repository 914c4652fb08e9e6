"""Differential properties: the Mongo adapter answers exactly what the memory adapter does.

The memory adapter runs ``docbase.core.evaluate`` itself, so every difference found
here is a place where the compiled MongoDB query, sort, pipeline or update departs
from the reference semantics. Documents, queries and updates come from
``docbase.testing.strategies`` (shared with the SQL adapter's tests). Results are
compared with ``json_equal``: key order counts, ``1 == 1.0``, ``True != 1``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from docbase.core.documents import Document, new_document
from docbase.core.query import Query, Text, parse_filter
from docbase.testing import strategies as gen
from docbase.testing.differential import (
    NOW,
    assert_same,
    assert_same_rows,
    loaded,
    update_outcomes,
)
from tests.backends import IN_CI, MONGO_URL_VARIABLE, mongo_backend

pytestmark = pytest.mark.mongo

PROPERTY = settings(
    max_examples=500 if IN_CI else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with mongo_backend(request) as (store, _):
        yield store


def _on_wire_server() -> bool:
    return not os.environ.get(MONGO_URL_VARIABLE)


def _js_key_order(value: Any) -> bool:
    """Whether every object keeps its key order in a JavaScript object (see docs)."""
    if isinstance(value, list):
        return all(_js_key_order(item) for item in value)
    if not isinstance(value, dict):
        return True
    keys = list(value)
    integers = [k for k in keys if k.isdigit() and (k == "0" or not k.startswith("0"))
                and int(k) < 2**32 - 1]
    hoisted = sorted(integers, key=int) + [k for k in keys if k not in integers]
    return keys == hoisted and all(_js_key_order(item) for item in value.values())


@PROPERTY
@given(documents=gen.document_sets(), query=gen.queries())
async def test_find_and_count_equal_reference(mongo: Any, documents: list[Document],
                                              query: Query) -> None:
    async with loaded(mongo, documents) as (name, memory):
        assert_same(await mongo.find(name, query), await memory.find(name, query))
        assert await mongo.count(name, query.filter) == await memory.count(name, query.filter)


@PROPERTY
@given(documents=gen.document_sets(), q=gen.json_queries(),
       sort=gen.sorts(), skip=st.integers(0, 3), limit=st.none() | st.integers(1, 5))
async def test_parsed_q_queries_equal_reference(
    mongo: Any, documents: list[Document], q: dict[str, Any], sort: Any, skip: int,
    limit: int | None,
) -> None:
    query = Query(filter=parse_filter(q, now=NOW), sort=sort, skip=skip, limit=limit)
    async with loaded(mongo, documents) as (name, memory):
        assert_same(await mongo.find(name, query), await memory.find(name, query))


@PROPERTY
@given(documents=gen.document_sets(), filter=gen.filters(), aggregation=gen.aggregations())
async def test_aggregate_equals_reference(mongo: Any, documents: list[Document], filter: Any,
                                          aggregation: Any) -> None:
    groupby, aggregates = aggregation
    async with loaded(mongo, documents) as (name, memory):
        assert_same_rows(await mongo.aggregate(name, filter, groupby, aggregates),
                         await memory.aggregate(name, filter, groupby, aggregates))


@PROPERTY
@given(body=gen.documents(), update=gen.updates(), stale=st.booleans())
async def test_update_equals_reference(mongo: Any, body: Document, update: Any,
                                       stale: bool) -> None:
    document = new_document(body, "api")
    async with loaded(mongo, [document]) as (name, memory):
        outcomes = await update_outcomes((memory, mongo), name, document["_id"], update,
                                         stale=stale)
        if _on_wire_server():
            assume(_js_key_order(outcomes[0][-1]))
        assert_same(outcomes[1], outcomes[0])
        for needle in gen.TEXTS:  # the stored search strings followed the update
            assert await mongo.count(name, Text(needle)) == await memory.count(name, Text(needle))


@PROPERTY
@given(documents=gen.document_sets(), filter=gen.filters())
async def test_delete_where_equals_reference(mongo: Any, documents: list[Document],
                                             filter: Any) -> None:
    async with loaded(mongo, documents) as (name, memory):
        assert sorted(await mongo.delete_where(name, filter)) == sorted(
            await memory.delete_where(name, filter))
        assert_same(await mongo.find(name, Query(limit=None)),
                    await memory.find(name, Query(limit=None)))
