"""The read half of the :class:`~docbase.core.ports.DocumentStore` contract.

Also the helpers both halves seed their stores with (:func:`seed`, :func:`doc`).

:class:`DocumentReadsContract` covers insert, get, find, count and aggregate; it is
part of :class:`docbase.testing.contract.DocumentStoreContract`, which adapters
subclass. Expected results are written out by hand from ``docs/query.md``.
"""

from __future__ import annotations

from typing import Any

import pytest

from docbase.core.documents import Document, new_document
from docbase.core.errors import Conflict, NotFound
from docbase.core.ports import DocumentStore
from docbase.core.query import (
    MATCH_ALL,
    Aggregate,
    Eq,
    Gt,
    Projection,
    Query,
    SortKey,
    Text,
)

C = "things"


def doc(**fields: Any) -> Document:
    """A stamped new document with ``fields``."""
    return new_document(fields, "api")


def ids_of(documents: list[Document]) -> list[str]:
    """The ``_id`` of each document, in order."""
    return [d["_id"] for d in documents]


async def seed(store: DocumentStore, *bodies: dict[str, Any]) -> list[Document]:
    """Insert one stamped document per body into the test collection."""
    documents = [doc(**body) for body in bodies]
    await store.insert(C, documents)
    return documents


class DocumentReadsContract:
    """Tests insert, get, find, count and aggregate of a ``store`` fixture."""

    # ---------------------------------------------------------------- insert / get

    async def test_insert_then_get_returns_equal_document(self, store: DocumentStore) -> None:
        original = doc(name="Joe", age=17, tags=["a", "b"], address={"city": "Oslo"},
                       ratio=0.5, flag=True, nothing=None, text="æøå ☃")
        await store.insert(C, [original])
        assert await store.get(C, original["_id"]) == original

    async def test_get_unknown_id_raises_not_found(self, store: DocumentStore) -> None:
        with pytest.raises(NotFound):
            await store.get(C, "0" * 24)

    async def test_get_in_unknown_collection_raises_not_found(
        self, store: DocumentStore
    ) -> None:
        with pytest.raises(NotFound):
            await store.get("never_written", "0" * 24)

    async def test_insert_duplicate_id_conflicts_and_inserts_nothing(
        self, store: DocumentStore
    ) -> None:
        first = doc(n=1)
        await store.insert(C, [first])
        fresh = doc(n=2)
        with pytest.raises(Conflict):
            await store.insert(C, [fresh, {**doc(n=3), "_id": first["_id"]}])
        assert await store.count(C, MATCH_ALL) == 1
        with pytest.raises(NotFound):
            await store.get(C, fresh["_id"])

    async def test_returned_documents_cannot_change_stored_state(
        self, store: DocumentStore
    ) -> None:
        original = doc(tags=["a"], inner={"x": 1})
        await store.insert(C, [original])
        original["tags"].append("changed-after-insert")
        got = await store.get(C, original["_id"])
        got["inner"]["x"] = 99
        found = await store.find(C, Query())
        found[0]["tags"].append("changed-after-find")
        again = await store.get(C, original["_id"])
        assert again["tags"] == ["a"]
        assert again["inner"] == {"x": 1}

    # ---------------------------------------------------------------- find / count

    async def test_find_filters_sorts_and_pages(self, store: DocumentStore) -> None:
        docs = await seed(store, {"n": 3}, {"n": 1}, {"n": 2}, {"n": 5}, {"m": 1})
        query = Query(filter=Gt(("n",), 1), sort=(SortKey(("n",), -1),), skip=1, limit=2)
        assert [d["n"] for d in await store.find(C, query)] == [3, 2]
        assert len(await store.find(C, Query())) == len(docs)

    async def test_find_default_order_is_id_ascending(self, store: DocumentStore) -> None:
        docs = await seed(store, {"n": 1}, {"n": 2}, {"n": 3})
        assert ids_of(await store.find(C, Query())) == sorted(ids_of(docs))

    async def test_find_sorts_by_id_both_ways(self, store: DocumentStore) -> None:
        docs = await seed(store, {"n": 1}, {"n": 2}, {"n": 3})
        ascending, descending = SortKey(("_id",), 1), SortKey(("_id",), -1)
        for key, limit in ((descending, None), (descending, 2), (ascending, 2)):
            expected = sorted(ids_of(docs), reverse=key is descending)[:limit]
            found = await store.find(C, Query(sort=(key,), limit=limit))
            assert ids_of(found) == expected, (key, limit)

    async def test_find_ties_broken_by_id(self, store: DocumentStore) -> None:
        docs = await seed(store, {"g": 1, "i": 0}, {"g": 0}, {"g": 1, "i": 1}, {"g": 0})
        found = await store.find(C, Query(sort=(SortKey(("g",), -1),)))
        expected = sorted(ids_of(docs[0::2])) + sorted(ids_of(docs[1::2]))
        assert ids_of(found) == expected

    async def test_find_sorts_across_types(self, store: DocumentStore) -> None:
        await seed(store, {"v": True}, {"v": "b"}, {"v": [3]}, {"v": 2}, {"v": None},
                   {"v": {"k": 1}}, {"w": 0}, {"v": "a"}, {"v": 1.5})
        found = await store.find(C, Query(sort=(SortKey(("v",)),)))
        # missing and null tie (broken by _id), then numbers, strings, objects, bools;
        # an array sorts by its smallest element ascending, so [3] sorts as the number 3
        values = [d.get("v", "<missing>") for d in found]
        assert values == [None, "<missing>", 1.5, 2, [3], "a", "b", {"k": 1}, True]

    async def test_find_limit_none_returns_everything(self, store: DocumentStore) -> None:
        await seed(store, *({"i": i} for i in range(30)))
        assert len(await store.find(C, Query(limit=None))) == 30
        assert len(await store.find(C, Query(limit=0))) == 0

    async def test_find_projection_includes_and_excludes(self, store: DocumentStore) -> None:
        (original,) = await seed(store, {"a": 1, "b": {"c": 2, "d": 3}, "e": 4})
        kept = await store.find(C, Query(projection=Projection((("a",), ("b", "c")), True)))
        assert kept == [{"_id": original["_id"], "a": 1, "b": {"c": 2}}]
        dropped = await store.find(C, Query(projection=Projection((("b",), ("e",)), False)))
        assert "b" not in dropped[0]
        assert "e" not in dropped[0]
        assert (dropped[0]["a"], dropped[0]["_version"]) == (1, 0)

    async def test_find_text_filter_is_case_insensitive(self, store: DocumentStore) -> None:
        docs = await seed(store, {"name": "Joe Smith"}, {"nested": {"deep": ["xJOEx"]}},
                          {"name": "Jane"})
        found = await store.find(C, Query(filter=Text("joe")))
        assert ids_of(found) == ids_of(docs[:2])

    async def test_find_in_unknown_collection_is_empty(self, store: DocumentStore) -> None:
        assert await store.find("never_written", Query()) == []
        assert await store.count("never_written", MATCH_ALL) == 0

    async def test_count_counts_matches_ignoring_paging(self, store: DocumentStore) -> None:
        await seed(store, {"k": "x"}, {"k": "y"}, {"k": "x"}, {})
        assert await store.count(C, Eq(("k",), "x")) == 2
        assert await store.count(C, Eq(("k",), None)) == 1
        assert await store.count(C, MATCH_ALL) == 4

    # ---------------------------------------------------------------- aggregate

    async def test_aggregate_without_groupby_gives_one_row(self, store: DocumentStore) -> None:
        await seed(store, {"s": 10}, {"s": 5}, {"s": "x"}, {"s": True}, {})
        rows = await store.aggregate(C, MATCH_ALL, (), (
            Aggregate("SUM", "s"), Aggregate("AVG", "s"), Aggregate("MIN", "s"),
            Aggregate("MAX", "s"), Aggregate("COUNT", "n")))
        assert len(rows) == 1
        assert rows[0].key == ()
        assert rows[0].values == {"SUM s": 15, "AVG s": 7.5, "MIN s": 5, "MAX s": True,
                                  "COUNT n": 5}

    async def test_float_sums_do_not_depend_on_document_order(
        self, store: DocumentStore
    ) -> None:
        # added one by one in _id order, group a gives 1.0 and group b 3.0 (1e16 + 1.0
        # rounds back to 1e16); the exact sums are 2.0 and 5.0, exact as doubles too
        await seed(store, {"g": "a", "v": 1e16}, {"g": "a", "v": 1.0},
                   {"g": "a", "v": -1e16}, {"g": "a", "v": 1.0})
        await seed(store, {"g": "b", "v": 1.0}, {"g": "b", "v": 1e16},
                   {"g": "b", "v": 1.0}, {"g": "b", "v": -1e16}, {"g": "b", "v": 3})
        rows = await store.aggregate(C, MATCH_ALL, (("g",),),
                                     (Aggregate("SUM", "v"), Aggregate("AVG", "v")))
        assert [(r.key, r.values) for r in rows] == [
            (("a",), {"SUM v": 2.0, "AVG v": 0.5}),
            (("b",), {"SUM v": 5.0, "AVG v": 1.0}),
        ]

    async def test_aggregate_on_nothing_gives_one_row(self, store: DocumentStore) -> None:
        rows = await store.aggregate(C, MATCH_ALL, (), (Aggregate("SUM", "s"),
                                                         Aggregate("AVG", "s"),
                                                         Aggregate("COUNT", "")))
        assert [(r.key, r.values) for r in rows] == [((), {"SUM s": 0, "AVG s": None,
                                                           "COUNT ": 0})]

    async def test_aggregate_groups_in_sort_order(self, store: DocumentStore) -> None:
        await seed(store, {"g": "b", "v": 1}, {"g": "a", "v": 2}, {"g": "b", "v": 3},
                   {"v": 4}, {"g": None, "v": 5}, {"g": 2, "v": 6})
        rows = await store.aggregate(C, Gt(("v",), 0), (("g",),),
                                     (Aggregate("SUM", "v"), Aggregate("COUNT", "n")))
        assert [(r.key, r.values) for r in rows] == [
            ((None,), {"SUM v": 9, "COUNT n": 2}),
            ((2,), {"SUM v": 6, "COUNT n": 1}),
            (("a",), {"SUM v": 2, "COUNT n": 1}),
            (("b",), {"SUM v": 4, "COUNT n": 2}),
        ]
