"""Hypothesis properties of the query language, the reference evaluator and the memory adapter."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401 - registers and loads the settings profile
from docbase.adapters.memory import MemoryDocumentStore
from docbase.core import evaluate
from docbase.core.documents import Document
from docbase.core.errors import Conflict
from docbase.core.ordering import MISSING, compare
from docbase.core.query import (
    JSON,
    Aggregate,
    Filter,
    Projection,
    Query,
    SortKey,
    parse_filter,
)
from docbase.core.update import Update, apply_update
from docbase.testing.strategies import (
    document_sets,
    documents,
    filter_to_json,
    filters,
    json_queries,
    json_values,
    projections,
    queries,
    sorts,
    updates,
)

C = "things"
NOW = datetime(2024, 5, 17, 13, 45, 12, 345000, tzinfo=UTC)


def ids(documents: Sequence[Document]) -> list[str]:
    return [d["_id"] for d in documents]


def with_store(documents: list[Document], work: Any) -> Any:
    """Run ``work(store)`` on a memory store holding ``documents``."""
    async def main() -> Any:
        async with MemoryDocumentStore() as store:
            if documents:
                await store.insert(C, documents)
            return await work(store)

    return asyncio.run(main())


# ---------------------------------------------------------------------------- parser


@given(json_queries())
def test_parse_serialise_parse_gives_the_same_ast(q: dict[str, JSON]) -> None:
    parsed = parse_filter(q, now=NOW)
    text = msgspec.json.encode(filter_to_json(parsed))
    reparsed = parse_filter(msgspec.json.decode(text), now=NOW)
    assert reparsed == parsed
    # == on structs says 1 == True; the encoded forms tell them apart
    assert msgspec.json.encode(reparsed) == msgspec.json.encode(parsed)


@given(json_queries())
def test_serialised_query_is_a_fixed_point(q: dict[str, JSON]) -> None:
    once = filter_to_json(parse_filter(q, now=NOW))
    assert filter_to_json(parse_filter(once, now=NOW)) == once


# ---------------------------------------------------------------------------- order


@given(json_values(), json_values(), json_values())
def test_compare_is_a_total_order(a: JSON, b: JSON, c: JSON) -> None:
    assert compare(a, a) == 0
    assert compare(a, b) in (-1, 0, 1)
    assert compare(a, b) == -compare(b, a)
    if compare(a, b) <= 0 and compare(b, c) <= 0:
        assert compare(a, c) <= 0
    if compare(a, b) == 0 and compare(b, c) == 0:
        assert compare(a, c) == 0


@given(json_values(), json_values())
def test_compare_equal_means_json_equal(a: JSON, b: JSON) -> None:
    assert (compare(a, b) == 0) == evaluate.json_equal(a, b)
    assert compare(a, copy.deepcopy(a)) == 0
    assert evaluate.json_equal(a, copy.deepcopy(a))


@given(json_values())
def test_missing_sorts_with_null_before_every_other_value(value: JSON) -> None:
    assert compare(MISSING, None) == 0
    assert compare(MISSING, value) == (0 if value is None else -1)


@given(document_sets(), sorts(), st.randoms(use_true_random=False))
def test_sort_result_does_not_depend_on_input_order(
    documents: list[Document], sort: tuple[SortKey, ...], random: Any
) -> None:
    shuffled = list(documents)
    random.shuffle(shuffled)
    assert ids(evaluate.sort_documents(shuffled, sort)) == ids(
        evaluate.sort_documents(documents, sort)
    )


@given(document_sets(), sorts())
def test_sort_is_a_permutation_and_defaults_to_id_order(
    documents: list[Document], sort: tuple[SortKey, ...]
) -> None:
    ordered = evaluate.sort_documents(documents, sort)
    assert sorted(ids(ordered)) == sorted(ids(documents))
    if not sort:
        assert ids(ordered) == sorted(ids(documents))


# ---------------------------------------------------------------------------- store


@given(document_sets(), filters())
def test_count_equals_the_length_of_find(documents: list[Document], filter: Filter) -> None:
    async def work(store: MemoryDocumentStore) -> tuple[int, list[Document]]:
        return (await store.count(C, filter),
                await store.find(C, Query(filter=filter, limit=None)))

    counted, found = with_store(documents, work)
    assert counted == len(found)
    assert ids(found) == [d["_id"] for d in evaluate.sort_documents(documents, ())
                          if evaluate.matches(filter, d)]


@given(document_sets(), queries(), st.integers(1, 4))
def test_paging_with_skip_and_max_concatenates_to_the_full_result(
    documents: list[Document], query: Query, page: int
) -> None:
    full_query = msgspec.structs.replace(query, skip=0, limit=None)

    async def work(store: MemoryDocumentStore) -> tuple[list[Document], list[Document]]:
        full = await store.find(C, full_query)
        pages: list[Document] = []
        for skip in range(0, len(documents) + page, page):
            pages += await store.find(
                C, msgspec.structs.replace(full_query, skip=skip, limit=page)
            )
        return full, pages

    full, pages = with_store(documents, work)
    assert pages == full


@given(document_sets(), queries())
def test_skip_and_max_slice_the_full_result(documents: list[Document], query: Query) -> None:
    async def work(store: MemoryDocumentStore) -> tuple[list[Document], list[Document]]:
        full = await store.find(C, msgspec.structs.replace(query, skip=0, limit=None))
        return full, await store.find(C, query)

    full, paged = with_store(documents, work)
    end = None if query.limit is None else query.skip + query.limit
    assert paged == full[query.skip:end]


@given(document_sets(), queries(), projections())
def test_projection_never_changes_which_documents_are_found(
    documents: list[Document], query: Query, projection: Projection | None
) -> None:
    async def work(store: MemoryDocumentStore) -> tuple[list[Document], list[Document]]:
        return (await store.find(C, query),
                await store.find(C, msgspec.structs.replace(query, projection=projection)))

    plain, projected = with_store(documents, work)
    assert ids(plain) == ids(projected)


@pytest.mark.parametrize("include", [False, True], ids=["exclude", "include"])
@given(documents=document_sets(), query=queries())
def test_projecting_away_an_unrelated_field_leaves_the_rest_unchanged(
    include: bool, documents: list[Document], query: Query
) -> None:
    # "zz" is outside the strategies' field alphabet and never a string, so no filter
    # (not even the text search) and no sort looks at it
    extended = [{**d, "zz": i} for i, d in enumerate(documents)]
    kept = tuple((name,) for name in {k for d in extended for k in d} - {"zz"})
    projection = Projection(kept, include=True) if include else Projection((("zz",),), False)
    base = msgspec.structs.replace(query, projection=None)

    async def work(store: MemoryDocumentStore) -> tuple[list[Document], list[Document]]:
        return (await store.find(C, base),
                await store.find(C, msgspec.structs.replace(base, projection=projection)))

    plain, projected = with_store(extended, work)
    assert projected == [{k: v for k, v in d.items() if k != "zz"} for d in plain]


@given(document_sets(), filters(), st.lists(st.sampled_from(["a", "b", "tags"]), max_size=2,
                                            unique=True))
def test_group_counts_add_up_to_the_count(
    documents: list[Document], filter: Filter, groupby: list[str]
) -> None:
    count = Aggregate("COUNT", "")

    async def work(store: MemoryDocumentStore) -> tuple[int, list[Any]]:
        rows = await store.aggregate(C, filter, tuple((g,) for g in groupby), (count,))
        return await store.count(C, filter), rows

    total, rows = with_store(documents, work)
    assert sum(row.values["COUNT "] for row in rows) == total
    if not groupby:
        assert len(rows) == 1


# ---------------------------------------------------------------------------- updates


@given(documents(), updates())
def test_apply_update_never_changes_its_input(body: Document, update: Update) -> None:
    before = copy.deepcopy(body)
    try:
        result = apply_update(body, update)
    except Conflict:
        result = None
    assert body == before
    if result is not None:
        assert msgspec.json.decode(msgspec.json.encode(result)) == result
