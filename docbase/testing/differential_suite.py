"""The differential properties, written once and run against every candidate adapter.

Each property loads generated documents into a candidate store and into the memory
store (the reference, which runs ``docbase.core.evaluate`` itself) and asserts that
both answer alike; see :mod:`docbase.testing.differential` for the scaffolding.

Hypothesis binds its settings to a test function when decorating it, and an adapter
may need another number of examples, so :func:`differential_properties` builds a fresh
suite class per example count. A test module subclasses it once per adapter family and
provides a ``candidate`` fixture yielding an open, empty store::

    class TestSqlDifferential(differential_properties(60)):
        @pytest.fixture(params=["sqlite", "postgresql"])
        async def candidate(self, request): ...
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from docbase.core.documents import META_FIELDS, Document, new_document, read_shape
from docbase.core.paging import cursor_of
from docbase.core.ports import DocumentStore
from docbase.core.query import (
    And,
    Between,
    Eq,
    Filter,
    Gt,
    Gte,
    In,
    Lt,
    Lte,
    Or,
    Path,
    Query,
    Regex,
    SortKey,
    Text,
    parse_cursor,
    parse_filter,
)
from docbase.testing import strategies as gen
from docbase.testing.differential import (
    NOW,
    assert_same,
    assert_same_rows,
    loaded,
    update_outcomes,
)

_ORDERED = st.sampled_from([Gt, Gte, Lt, Lte])


class DifferentialCandidate:
    """What a candidate adapter's suite may refine: which update outcomes it compares."""

    def comparable_update(self, stored: Document) -> bool:
        """Whether an update that left ``stored`` in the reference can be compared.

        Every outcome is, unless a test server is known to depart from the reference
        in a way the adapter cannot see (the subclass then says which).
        """
        return True


def differential_properties(max_examples: int) -> type[DifferentialCandidate]:
    """Build the differential suite class running ``max_examples`` examples per property.

    The subclass provides a ``candidate`` fixture: an open, empty store, shared by all
    examples of one test function (each example loads a fresh collection).
    """
    property_settings = settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    # a paging example reads a page per round trip, and with hundreds of examples the
    # generated sets grow until one run takes minutes: at most 40 examples
    paging_settings = settings(property_settings, max_examples=min(max_examples, 150))
    # one plan's property (an $or or $in page of indexed equalities), on top of the general
    # find property's $or conditions: 100 examples (~10 s an engine), not CI's 250
    narrow_settings = settings(property_settings, max_examples=min(max_examples, 100))

    class DifferentialProperties(DifferentialCandidate):
        """Every property: the candidate answers what the memory reference answers."""

        @property_settings
        @given(documents=gen.document_sets(), query=gen.queries(),
               indexed=st.lists(gen.paths(max_steps=2), max_size=2, unique=True))
        async def test_find_and_count_equal_reference(
            self, candidate: DocumentStore, *, documents: list[Document], query: Query,
            indexed: list[Path],
        ) -> None:
            async with loaded(candidate, documents, indexed) as (name, memory):
                assert_same(await candidate.find(name, query), await memory.find(name, query))
                assert (await candidate.count(name, query.filter)
                        == await memory.count(name, query.filter))

        @property_settings
        @given(documents=gen.document_sets(), sort=gen.sorts(), data=st.data(),
               skip=st.integers(0, 3), limit=st.integers(0, 5))
        async def test_sorted_pages_through_an_index_equal_reference(
            self, candidate: DocumentStore, *, documents: list[Document], sort: Any,
            data: st.DataObject, skip: int, limit: int,
        ) -> None:
            # the leading sorted path indexed (SQL: the page's two-stream form), filtered
            # by another condition or by a range on that very path, any type on each side
            sort = sort or (SortKey(("a",), -1),)
            ranged = st.builds(lambda op, value: op(sort[0].path, value), _ORDERED,
                               gen.json_values(1))
            filter = data.draw(gen.filters() | ranged, label="filter")
            query = Query(filter=filter, sort=sort, skip=skip, limit=limit)
            async with loaded(candidate, documents, [sort[0].path]) as (name, memory):
                assert_same(await candidate.find(name, query), await memory.find(name, query))

        @property_settings
        @given(documents=gen.document_sets(), sort=gen.sorts(), data=st.data(),
               path=gen.paths(max_steps=2), skip=st.integers(0, 3), limit=st.integers(0, 5))
        async def test_sorted_pages_seeking_an_indexed_condition_equal_reference(
            self, candidate: DocumentStore, *, documents: list[Document], sort: Any,
            data: st.DataObject, path: Path, skip: int, limit: int,
        ) -> None:
            # a condition on an indexed path that is not the sorted one (SQL: the plain
            # stream seeks to it), an equality, a range or a $regex with a literal prefix
            sort = sort or (SortKey(("a",), -1),)
            condition = data.draw(
                st.builds(lambda op, value: op(path, value), _ORDERED | st.just(Eq),
                          gen.json_values(1))
                | st.builds(lambda p, o: Regex(path, p, o), st.sampled_from(gen.PATTERNS),
                            st.sampled_from(gen.REGEX_OPTIONS)), label="condition")
            filter = And((condition, data.draw(gen.filters(), label="filter")))
            query = Query(filter=filter, sort=sort, skip=skip, limit=limit)
            async with loaded(candidate, documents, [path]) as (name, memory):
                assert_same(await candidate.find(name, query), await memory.find(name, query))

        @narrow_settings
        @given(documents=gen.document_sets(), data=st.data(),
               paths=st.lists(gen.paths(max_steps=2), min_size=1, max_size=2, unique=True),
               skip=st.integers(0, 3), limit=st.integers(0, 5))
        async def test_or_and_in_pages_of_indexed_equalities_equal_reference(
            self, candidate: DocumentStore, *, documents: list[Document], data: st.DataObject,
            paths: list[Path], skip: int, limit: int,
        ) -> None:
            # each operand led by an equality on an indexed path (SQL: a page of each
            # operand in its index, merged in key order), alone or with another condition;
            # or an $in on an indexed path, merged as one equality per value
            equal = st.builds(Eq, st.sampled_from(paths), gen.json_values(1))
            operand = equal | st.builds(lambda e, f: And((e, f)), equal, gen.filters())
            filter: Filter = (gen.held_values_in(data, documents, paths)
                              if data.draw(st.booleans(), label="$in") else
                              Or(tuple(data.draw(st.lists(operand, min_size=2, max_size=3)))))
            indexed = list(dict.fromkeys([*paths, *([filter.path] if isinstance(filter, In)
                                                    else [])]))
            query = Query(filter=filter, skip=skip, limit=limit)
            async with loaded(candidate, documents, indexed) as (name, memory):
                assert_same(await candidate.find(name, query), await memory.find(name, query))

        @property_settings
        @given(documents=gen.document_sets(), query=gen.queries(), metafields=st.booleans())
        async def test_encoded_find_equals_reference_encoded(
            self, candidate: DocumentStore, *, documents: list[Document], query: Query,
            metafields: bool,
        ) -> None:
            query = msgspec.structs.replace(query, projection=None)
            async with loaded(candidate, documents) as (name, memory):
                found = await candidate.find_encoded(name, query,
                                           hide=() if metafields else META_FIELDS)
                expected = [read_shape(d, metafields=metafields)
                            for d in await memory.find(name, query)]
                # compared as JSON (1 == 1.0, key order counts): a wire server may hand
                # back an integral double as an integer, which JSON does not tell apart
                assert_same([msgspec.json.decode(raw) for raw in found], expected)

        @property_settings
        @given(documents=gen.document_sets(), q=gen.json_queries(),
               sort=gen.sorts(), skip=st.integers(0, 3), limit=st.none() | st.integers(1, 5))
        async def test_parsed_q_queries_equal_reference(
            self, candidate: DocumentStore, *, documents: list[Document], q: dict[str, Any],
            sort: Any, skip: int, limit: int | None,
        ) -> None:
            query = Query(filter=parse_filter(q, now=NOW), sort=sort, skip=skip, limit=limit)
            async with loaded(candidate, documents) as (name, memory):
                assert_same(await candidate.find(name, query), await memory.find(name, query))

        @property_settings
        @given(documents=gen.document_sets(), filter=gen.filters(),
               aggregation=gen.aggregations())
        async def test_aggregate_equals_reference(
            self, candidate: DocumentStore, *, documents: list[Document], filter: Any,
            aggregation: Any,
        ) -> None:
            groupby, aggregates = aggregation
            async with loaded(candidate, documents) as (name, memory):
                assert_same_rows(await candidate.aggregate(name, filter, groupby, aggregates),
                                 await memory.aggregate(name, filter, groupby, aggregates))

        @property_settings
        @given(body=gen.documents(), update=gen.updates(), stale=st.booleans())
        async def test_update_equals_reference(
            self, candidate: DocumentStore, *, body: Document, update: Any, stale: bool,
        ) -> None:
            document = new_document(body, "api")
            async with loaded(candidate, [document]) as (name, memory):
                outcomes = await update_outcomes((memory, candidate), name, document["_id"],
                                                 update, stale=stale)
                assume(self.comparable_update(outcomes[0][-1]))
                assert_same(outcomes[1], outcomes[0])
                for needle in gen.TEXTS:  # the stored search strings followed the update
                    assert (await candidate.count(name, Text(needle))
                            == await memory.count(name, Text(needle)))

        @property_settings
        @given(documents=gen.document_sets(), filter=gen.filters())
        async def test_delete_where_equals_reference(
            self, candidate: DocumentStore, *, documents: list[Document], filter: Any,
        ) -> None:
            async with loaded(candidate, documents) as (name, memory):
                assert sorted(await candidate.delete_where(name, filter)) == sorted(
                    await memory.delete_where(name, filter))
                assert_same(await candidate.find(name, Query(limit=None)),
                            await memory.find(name, Query(limit=None)))

        @property_settings
        @given(documents=gen.document_sets(),
               condition=st.one_of(
                   st.builds(lambda op, path, value: op(path, value), _ORDERED, gen.paths(),
                             gen.json_values(2)),
                   st.builds(Between, gen.paths(), gen.json_values(2), gen.json_values(2))),
               sort=gen.sorts())
        async def test_ordered_conditions_on_objects_and_arrays_equal_reference(
            self, candidate: DocumentStore, *, documents: list[Document], condition: Any,
            sort: Any,
        ) -> None:
            # the shared strategies give $gt & co. scalar operands only; objects and arrays
            # compare by the total order too (pair by pair, element by element)
            query = Query(filter=condition, sort=sort, limit=None)
            async with loaded(candidate, documents) as (name, memory):
                assert_same(await candidate.find(name, query), await memory.find(name, query))

        @paging_settings
        @given(documents=gen.document_sets(), filter=gen.filters(), sort=gen.sorts(),
               size=st.integers(1, 4), inserted=st.lists(gen.documents(), max_size=3),
               indexed=st.booleans())
        async def test_cursor_pages_equal_one_unpaged_query(
            self, candidate: DocumentStore, *, documents: list[Document], filter: Any,
            sort: Any, size: int, inserted: list[dict[str, Any]], indexed: bool,
        ) -> None:
            # page by cursor (its text round trip included) until a short page; documents
            # inserted after the first page may show up, but nothing twice, none skipped;
            # an index on the leading sorted path may serve the order and the seek
            whole = Query(filter=filter, sort=sort, limit=None)
            index = [sort[0].path] if indexed and sort else []
            async with loaded(candidate, documents, index) as (name, memory):
                expected = await memory.find(name, whole)
                assert_same(await candidate.find(name, whole), expected)
                paged = await _paged(candidate, name, whole, size, inserted)
                ids = [d["_id"] for d in paged]
                assert len(ids) == len(set(ids)), "a document came twice"
                if not inserted:
                    assert_same(paged, expected)
                    return
                assert {d["_id"] for d in expected} <= set(ids), "a document was skipped"
                await memory.insert(name, [d for d in paged if d["_id"] not in
                                           {e["_id"] for e in expected}])
                in_order = [d for d in await memory.find(name, whole) if d["_id"] in ids]
                assert_same(paged, in_order)

    return DifferentialProperties


async def _paged(store: DocumentStore, name: str, whole: Query, size: int,
                 inserted: list[dict[str, Any]]) -> list[Document]:
    """Every page of ``whole`` in ``size``, read with cursors; ``inserted`` after page 1."""
    pages: list[Document] = []
    query = msgspec.structs.replace(whole, limit=size)
    for _ in range(100):  # more pages than documents: a cursor that does not advance
        page = await store.find(name, query)
        pages.extend(page)
        if inserted and len(pages) == len(page):
            await store.insert(name, [new_document(body, "api") for body in inserted])
        if len(page) < size:
            return pages
        after = parse_cursor(cursor_of(page[-1], query))
        query = msgspec.structs.replace(query, after=after)
    raise AssertionError(f"paging did not end: {whole!r} size {size}, {pages[:3]!r}, "
                         f"cursor {query.after!r}")
