"""Paths walked through arrays on PostgreSQL by built-in jsonpath (``postgresql/walks.py``).

A condition on a path that meets arrays tests every value the path reaches. docbase's
recursive SQL functions (``docbase_reached_jsonb``) did that at ~320 µs a document; for
a path of up to three steps after the first, none of which may index an array, the
statement now lists them with ``jsonb_path_query_array``. The answers must be the
reference evaluator's (``MemoryDocumentStore``) for documents whose path is an array of
objects, a nested array (not entered), an object, a scalar, ``null`` or missing, and
the plan must not call the SQL function (its rows are ``jsonb_array_elements`` of the
jsonpaths' lists), except for the paths it is kept for.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.memory import MemoryDocumentStore
from docbase.core.documents import new_document
from docbase.core.query import Query
from docbase.core.query.filters import parse_filter
from tests.backends import sql_backend, sql_url

pytestmark = pytest.mark.postgres

DOCUMENTS: list[dict[str, Any]] = [
    {"n": 1, "a": [{"b": 1}, {"b": [2, [3]]}, 4, "x"]},
    {"n": 2, "a": {"b": [5, {"c": "deep"}]}},
    {"n": 3, "a": [[{"b": 6}], {"b": None}]},
    {"n": 4, "a": None},
    {"n": 5, "a": {"b": None, "c": [{"d": [{"e": "e1"}]}]}},
    {"n": 6, "a": [{"c": 1}, {"b": {"c": "deep"}}]},
    {"n": 7},
    {"n": 8, "a": [1, 2, 3], "tags": ["t1", ["t2"]]},
    {"n": 9, "a": {"0": {"b": "zero"}}, "tags": "t1"},
]
QUERIES: list[dict[str, Any]] = [
    {"a.b": 1}, {"a.b": 2}, {"a.b": 3}, {"a.b": 5}, {"a.b": 6}, {"a.b": None},
    {"a.b": {"$exists": True}}, {"a.b": {"$gt": 1}}, {"a.b": {"$in": [5, "x"]}},
    {"a.b.c": "deep"}, {"a.c.d.e": "e1"}, {"a": 4}, {"a": "x"},
    {"a": 2}, {"a": None}, {"a": {"$ne": 4}}, {"tags": "t1"}, {"tags": "t2"},
    {"tags": ["t2"]}, {"a": {"$elemMatch": {"b": 1}}}, {"a.b": {"$elemMatch": {"$gt": 4}}},
    {"a.0.b": "zero"}, {"a.0": 1}, {"a.b": {"$regex": "^d"}},
]
"""Conditions through arrays, objects, nested arrays, null and missing values."""


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[tuple[Any, MemoryDocumentStore]]:
    documents = [new_document(document, None) for document in DOCUMENTS]
    async with sql_url("postgresql", tmp_path) as url, sql_backend(url) as (store, _blobs), \
            MemoryDocumentStore() as memory:
        await store.insert("things", documents)
        await memory.insert("things", documents)
        yield store, memory


def _numbers(found: list[dict[str, Any]]) -> list[int]:
    return sorted(document["n"] for document in found)


async def test_walked_conditions_answer_as_the_reference(
    stores: tuple[Any, MemoryDocumentStore],
) -> None:
    store, memory = stores
    for q in QUERIES:
        query = Query(filter=parse_filter(q))
        expected = _numbers(await memory.find("things", query))
        assert _numbers(await store.find("things", query)) == expected, q
        assert await store.count("things", query.filter) == len(expected), q
    # (the cases are not vacuous: most match something, and not everything)
    answers = [_numbers(await memory.find("things", Query(filter=parse_filter(q))))
               for q in QUERIES]
    assert sum(1 for found in answers if 0 < len(found) < len(DOCUMENTS)) >= 15


@pytest.mark.parametrize(("q", "walked_by_function"), [
    ({"a.b": 1}, False), ({"a.c.d.e": "e1"}, False), ({"tags": "t1"}, False),
    ({"a.b.c.d.e": 1}, True),  # four steps after the first: the SQL function
    ({"a.0.b": "zero"}, True),  # an index step: the SQL function
])
async def test_the_plan_walks_with_jsonpath_where_it_is_exact(
    stores: tuple[Any, MemoryDocumentStore], q: dict[str, Any], walked_by_function: bool,
) -> None:
    store, _memory = stores
    plan = await store.explain("things", parse_filter(q))
    assert ("Function Scan on docbase_reached_jsonb" in plan) == walked_by_function, plan
    assert ("Function Scan on jsonb_array_elements" in plan) != walked_by_function, plan
