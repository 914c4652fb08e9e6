"""Differential properties: the Mongo adapter answers exactly what the memory adapter does.

The memory adapter runs ``docbase.core.evaluate`` itself, so every difference found
here is a place where the compiled MongoDB query, sort, pipeline or update departs
from the reference semantics. Documents, queries and updates come from
``docbase.testing.strategies`` (shared with the SQL adapter's tests). Results are
compared with ``json_equal``: key order counts, ``1 == 1.0``, ``True != 1``.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from docbase.adapters.memory import MemoryDocumentStore
from docbase.core.documents import Document, new_document
from docbase.core.errors import Conflict
from docbase.core.evaluate import json_equal
from docbase.core.query import AggregateRow, Query, Text, parse_filter
from docbase.testing import strategies as gen
from tests.backends import IN_CI, MONGO_URL_VARIABLE, mongo_backend

pytestmark = pytest.mark.mongo

PROPERTY = settings(
    max_examples=500 if IN_CI else 40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
NOW = datetime(2024, 5, 17, 12, 30, tzinfo=UTC)


@pytest.fixture
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    async with mongo_backend(request) as (store, _):
        yield store


@contextlib.asynccontextmanager
async def loaded(mongo: Any, documents: Sequence[Document]) -> AsyncIterator[tuple[str, Any]]:
    """A fresh collection holding ``documents`` in Mongo and in a memory store."""
    name = f"c{uuid.uuid4().hex[:12]}"
    memory = MemoryDocumentStore()
    await memory.insert(name, documents)
    await mongo.insert(name, documents)
    try:
        yield name, memory
    finally:
        await mongo.drop(name)


def assert_same(got: Any, expected: Any) -> None:
    assert json_equal(got, expected), f"\n     got {got!r}\nexpected {expected!r}"


def assert_same_rows(got: list[AggregateRow], expected: list[AggregateRow]) -> None:
    assert_same([[list(r.key), r.values] for r in got],
                [[list(r.key), r.values] for r in expected])


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
    stamp = {"_changed": "2030-01-01T00:00:00.000Z", "_changedby": "someone"}
    outcomes = []
    async with loaded(mongo, [document]) as (name, memory):
        for store in (memory, mongo):
            try:
                changed = await store.update(name, document["_id"], update, stamp=stamp,
                                             expected_version=1 if stale else None)
            except Conflict as exc:
                outcomes.append((type(exc).__name__, await store.get(name, document["_id"])))
            else:
                outcomes.append(("updated", changed, await store.get(name, document["_id"])))
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
