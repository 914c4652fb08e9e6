"""Where MongoDB's own rules differ from core's, the Mongo adapter answers core's way.

Each test names the native MongoDB behaviour it guards against, stores documents that
trigger it and checks the adapter's answer, written out by hand from
docs/query.md ("Semantics"). The compile-shape tests at the end say which form each kind of
condition takes (native operator, ``$expr``, or a residual checked by core).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from docbase.adapters.mongo import MongoDocumentStore
from docbase.adapters.mongo.codec import SEARCH_FIELD
from docbase.adapters.mongo.filters import compile_filter
from docbase.adapters.mongo.regex import portable_regex
from docbase.core.documents import Document, new_document
from docbase.core.errors import Conflict
from docbase.core.query import (
    MATCH_ALL,
    Aggregate,
    And,
    Between,
    ElemMatch,
    Eq,
    Gt,
    Gte,
    In,
    Ne,
    Query,
    Regex,
    SortKey,
    Text,
    parse_filter,
)
from docbase.core.update import parse_update
from tests.backends import mongo_backend

pytestmark = pytest.mark.mongo

C = "things"


@pytest.fixture
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[MongoDocumentStore]:
    async with mongo_backend(request) as (store, _):
        yield store


async def seed(store: MongoDocumentStore, *bodies: dict[str, Any]) -> list[Document]:
    documents = [new_document(body, "api") for body in bodies]
    await store.insert(C, documents)
    return documents


async def found(store: MongoDocumentStore, query: Query, key: str = "k") -> list[Any]:
    return [document.get(key) for document in await store.find(C, query)]


# ---------------------------------------------------------------- filters


async def test_null_through_array_needs_every_reached_value(mongo: MongoDocumentStore) -> None:
    """MongoDB: ``{"a.b": null}`` matches ``a: [{b: 1}, {}]`` (the ``{}`` counts as null)."""
    await seed(mongo, {"k": 1, "a": [{"b": 1}, {}]}, {"k": 2, "a": [{"b": None}]},
               {"k": 3, "a": [1, 2]}, {"k": 4, "a": {"b": 5}})
    assert await found(mongo, Query(filter=Eq(("a", "b"), None))) == [2, 3]
    assert await found(mongo, Query(filter=Ne(("a", "b"), None))) == [1, 4]


async def test_gte_null_matches_missing_fields(mongo: MongoDocumentStore) -> None:
    """Some servers leave missing fields out of ``{"$gte": null}``; core includes them."""
    await seed(mongo, {"k": 1, "f": None}, {"k": 2}, {"k": 3, "f": 0})
    assert await found(mongo, Query(filter=Gte(("f",), None))) == [1, 2]
    assert await found(mongo, Query(filter=Gt(("f",), None))) == []


async def test_between_needs_one_value_within_both_bounds(mongo: MongoDocumentStore) -> None:
    """MongoDB: ``{"$gte": 5, "$lte": 6}`` on ``[1, 10]`` matches (1 <= 6, 10 >= 5)."""
    await seed(mongo, {"k": 1, "f": [1, 10]}, {"k": 2, "f": [1, 5.5]}, {"k": 3, "f": 6})
    assert await found(mongo, Query(filter=Between(("f",), 5, 6))) == [2, 3]


async def test_elem_match_on_operators_sees_scalar_elements_only(
    mongo: MongoDocumentStore,
) -> None:
    """MongoDB: ``{"$elemMatch": {"$ne": 1}}`` matches ``[[1]]`` and ``[{"a": 1}]``."""
    await seed(mongo, {"k": 1, "f": [[1]]}, {"k": 2, "f": [{"a": 1}]}, {"k": 3, "f": [1, 2]})
    query = Query(filter=parse_filter({"f": {"$elemMatch": {"$ne": 1}}}))
    assert await found(mongo, query) == [3]


async def test_object_equality_respects_key_order(mongo: MongoDocumentStore) -> None:
    """Some servers compare objects ignoring key order; core (like MongoDB) does not."""
    await seed(mongo, {"k": 1, "f": {"a": 1, "b": 2}}, {"k": 2, "f": {"b": 2, "a": 1}},
               {"k": 3, "f": [{"a": 1, "b": 2}]})
    assert await found(mongo, Query(filter=Eq(("f",), {"a": 1, "b": 2}))) == [1, 3]


async def test_range_on_objects_uses_core_order(mongo: MongoDocumentStore) -> None:
    """MongoDB orders objects by each value's type before its key; core by key first."""
    await seed(mongo, {"k": 1, "f": {"a": "x"}}, {"k": 2, "f": {"b": 1}}, {"k": 3, "f": "s"})
    assert await found(mongo, Query(filter=Gt(("f",), {"a": "z"}))) == [2]


async def test_in_with_an_array_operand_matches_equal_arrays(
    mongo: MongoDocumentStore,
) -> None:
    await seed(mongo, {"k": 1, "f": []}, {"k": 2, "f": [[]]}, {"k": 3, "f": [1]})
    assert await found(mongo, Query(filter=In(("f",), ([],)))) == [1, 2]


async def test_numeric_step_indexes_and_names_a_key(mongo: MongoDocumentStore) -> None:
    await seed(mongo, {"k": 1, "a": [5, 7]}, {"k": 2, "a": [{"0": 5}]}, {"k": 3, "a": {"0": 5}})
    assert await found(mongo, Query(filter=Eq(("a", "0"), 5))) == [1, 2, 3]


async def test_regex_anchors_and_dot_follow_python(mongo: MongoDocumentStore) -> None:
    """``$`` also matches before a final newline and ``.`` never matches one, as in ``re``."""
    await seed(mongo, {"k": 1, "s": "ab\n"}, {"k": 2, "s": "a\nb"}, {"k": 3, "s": "AB"})
    assert await found(mongo, Query(filter=Regex(("s",), "b$"))) == [1, 2]
    assert await found(mongo, Query(filter=Regex(("s",), "b\\n$"))) == [1]
    assert await found(mongo, Query(filter=Regex(("s",), "a.b"))) == []
    assert await found(mongo, Query(filter=Regex(("s",), "a.b", "s"))) == [2]
    assert await found(mongo, Query(filter=Regex(("s",), "^b", "im"))) == [2]
    assert await found(mongo, Query(filter=Regex(("s",), "a b", "ix"))) == [1, 3]


async def test_unportable_regex_is_checked_by_core(mongo: MongoDocumentStore) -> None:
    """``\\d`` means Unicode digits in Python, ASCII digits in PCRE: core decides."""
    await seed(mongo, {"k": 1, "s": "٣"}, {"k": 2, "s": "3"}, {"k": 3, "s": "x"})
    query = Query(filter=Regex(("s",), r"^\d$"), sort=(SortKey(("k",), -1),), limit=1)
    assert await found(mongo, query) == [2]


async def test_text_filter_pages_after_matching(mongo: MongoDocumentStore) -> None:
    await seed(mongo, *({"k": i, "name": "Joe" if i % 2 else "Ann"} for i in range(10)),
               {"k": 10, "deep": {"list": ["xJOEx"]}})
    query = Query(filter=And((Text("joe"), Gt(("k",), 2))), sort=(SortKey(("k",), -1),),
                  skip=1, limit=3)
    assert await found(mongo, query) == [9, 7, 5]
    assert await mongo.count(C, Text("joe")) == 6


async def test_text_filter_follows_updates(mongo: MongoDocumentStore) -> None:
    """The stored search strings change with native updates and with replacements."""
    (document,) = await seed(mongo, {"name": "Ann", "tags": ["Red"], "n": 1,
                                     "deep": {"x": "Blue", "y": 2}})
    updates = [({"name": "Bob"}, "bob", "ann"),
               ({"$push": {"tags": "Green"}}, "green", None),
               ({"$pull": {"tags": "Red"}}, "green", "red"),
               ({"$set": {"deep.y": "Violet"}}, "violet", None),
               ({"$set": {"deep.x": 3}}, "violet", "blue"),
               ({"$unset": {"deep": ""}}, "bob", "violet")]
    for body, present, gone in updates:
        await mongo.update(C, document["_id"], parse_update(body), stamp={})
        assert await mongo.count(C, Text(present)) == 1, body
        if gone is not None:
            assert await mongo.count(C, Text(gone)) == 0, body
    raw = await mongo.database[C].find_one()
    assert raw is not None
    assert sorted(raw[SEARCH_FIELD]) == ["name", "tags"]


async def test_id_conditions_use_hex_strings(mongo: MongoDocumentStore) -> None:
    documents = await seed(mongo, {"k": 1}, {"k": 2}, {"k": 3})
    ids = sorted(d["_id"] for d in documents)
    assert [d["_id"] for d in await mongo.find(C, Query(filter=Gt(("_id",), ids[0])))] == ids[1:]
    assert await mongo.count(C, In(("_id",), (ids[2], "not-an-id"))) == 1
    assert await mongo.count(C, Eq(("_id",), ids[0].upper())) == 0


# ---------------------------------------------------------------- sorting


async def test_empty_array_sorts_as_missing(mongo: MongoDocumentStore) -> None:
    """MongoDB sorts ``[]`` before null; core sorts it as missing (equal to null)."""
    documents = await seed(mongo, {"k": 1, "v": 0}, {"k": 2, "v": []}, {"k": 3, "v": None},
                           {"k": 4})
    ascending = [d["_id"] for d in await mongo.find(C, Query(sort=(SortKey(("v",)),)))]
    assert ascending == [*sorted(d["_id"] for d in documents[1:]), documents[0]["_id"]]


async def test_array_sorts_by_smallest_ascending_largest_descending(
    mongo: MongoDocumentStore,
) -> None:
    await seed(mongo, {"k": 1, "v": [1, 9]}, {"k": 2, "v": [5]}, {"k": 3, "v": ["a", 0]})
    assert await found(mongo, Query(sort=(SortKey(("v",)),))) == [3, 1, 2]
    assert await found(mongo, Query(sort=(SortKey(("v",), -1),))) == [3, 1, 2]


async def test_objects_sort_by_key_before_value_type(mongo: MongoDocumentStore) -> None:
    """MongoDB puts ``{"b": 1}`` before ``{"a": "x"}`` (number before string)."""
    await seed(mongo, {"k": 1, "v": {"b": 1}}, {"k": 2, "v": {"a": "x"}}, {"k": 3, "v": True})
    assert await found(mongo, Query(sort=(SortKey(("v",)),), limit=2)) == [2, 1]


async def test_string_order_is_by_code_point(mongo: MongoDocumentStore) -> None:
    """A server's locale collation would put ``a`` before ``B``; code points do not."""
    await seed(mongo, {"k": "b"}, {"k": "B"}, {"k": "a"}, {"k": "_"}, {"k": "é"}, {"k": "10"},
               {"k": "9"})
    assert await found(mongo, Query(sort=(SortKey(("k",)),))) == [
        "10", "9", "B", "_", "a", "b", "é"]


async def test_more_sort_keys_than_the_server_sorts_by(mongo: MongoDocumentStore) -> None:
    """MongoDB sorts by at most 32 fields; 16 keys (two fields each) are sorted by core."""
    await seed(mongo, *({"k": i, "v": -i} for i in range(5)))
    sort = (*(SortKey((f"f{i}",)) for i in range(15)), SortKey(("v",)))
    assert await found(mongo, Query(sort=sort, skip=1, limit=2)) == [3, 2]


# ---------------------------------------------------------------- aggregates and updates


async def test_aggregates_by_object_values_follow_core(mongo: MongoDocumentStore) -> None:
    await seed(mongo, {"g": {"a": 1, "b": 2}, "v": {"b": 1}}, {"g": {"b": 2, "a": 1},
                                                              "v": {"a": "x"}})
    rows = await mongo.aggregate(C, MATCH_ALL, (("g",),), (Aggregate("MIN", "v"),
                                                          Aggregate("COUNT", "")))
    assert [(r.key, r.values) for r in rows] == [
        (({"a": 1, "b": 2},), {"MIN v": {"b": 1}, "COUNT ": 1}),
        (({"b": 2, "a": 1},), {"MIN v": {"a": "x"}, "COUNT ": 1}),
    ]


async def test_sum_of_doubles_is_correctly_rounded_like_core(mongo: MongoDocumentStore) -> None:
    """Core sums doubles with ``math.fsum``; MongoDB's ``$sum`` rounds its own way."""
    await seed(mongo, {"v": 1e16}, {"v": 1.0}, {"v": "x"}, {"v": -1e16}, {"v": 1.0},
               {"v": True})
    (row,) = await mongo.aggregate(C, MATCH_ALL, (), (Aggregate("SUM", "v"),
                                                      Aggregate("AVG", "v")))
    assert row.values == {"SUM v": 2.0, "AVG v": 0.5}  # added one by one: 1.0, or 0.0


async def test_pull_of_an_object_removes_equal_elements_only(
    mongo: MongoDocumentStore,
) -> None:
    """MongoDB's ``$pull`` reads an object as a query: it would remove ``{"x": 1, "y": 2}``."""
    (document,) = await seed(mongo, {"l": [{"x": 1}, {"x": 1, "y": 2}, {"y": 2, "x": 1}]})
    changed = await mongo.update(C, document["_id"], parse_update({"$pull": {"l": {"x": 1}}}),
                                 stamp={})
    assert changed["l"] == [{"x": 1, "y": 2}, {"y": 2, "x": 1}]


async def test_new_keys_keep_the_order_of_the_update(mongo: MongoDocumentStore) -> None:
    """MongoDB adds new fields of one update in lexicographic order; core in body order."""
    (document,) = await seed(mongo, {"a": 1})
    changed = await mongo.update(C, document["_id"], parse_update({"z": 1, "m": 2}), stamp={})
    assert [k for k in changed if not k.startswith("_")] == ["a", "z", "m"]


async def test_set_past_the_end_of_an_array_conflicts(mongo: MongoDocumentStore) -> None:
    """MongoDB pads the array with nulls; core refuses, changing nothing."""
    (document,) = await seed(mongo, {"l": [1]})
    with pytest.raises(Conflict):
        await mongo.update(C, document["_id"], parse_update({"$set": {"l.3": 1}}), stamp={})
    assert (await mongo.get(C, document["_id"]))["l"] == [1]


# ---------------------------------------------------------------- compiled forms


def test_one_step_conditions_compile_to_native_operators() -> None:
    compiled = compile_filter(parse_filter({"n": {"$gt": 3}, "s": {"$in": ["a", None]},
                                            "t": {"$regex": "^ab", "$options": "i"}}))
    assert compiled.residual is None
    greater, listed, regex = compiled.query["$and"]
    assert (greater, listed) == ({"n": {"$gt": 3}}, {"s": {"$in": ["a", None]}})
    # a native regex narrows (and may use an index), $expr decides
    native, exact = regex["$and"]
    assert (native, set(exact)) == ({"t": {"$regex": "^ab", "$options": "i"}}, {"$expr"})


def test_dotted_and_composite_conditions_compile_to_expr() -> None:
    for condition in (Eq(("a", "b"), 1), Eq(("a",), {"x": 1}), ElemMatch(("a",), Eq((), 1),
                                                                        objects=False)):
        compiled = compile_filter(condition)
        assert compiled.residual is None
        assert set(compiled.query) == {"$expr"}


def test_text_compiles_to_expr_and_unportable_regex_stays_residual() -> None:
    compiled = compile_filter(And((Eq(("n",), 1), Text("x"), Regex(("s",), r"\w"))))
    first, text = compiled.query["$and"]
    assert (first, set(text)) == ({"n": 1}, {"$expr"})
    assert compiled.residual == And((Regex(("s",), r"\w"),))


@pytest.mark.parametrize(("pattern", "options", "portable"), [
    ("^a.b$", "", ("^a[^\n]b(?=\n?(?![\\s\\S]))", "")),
    ("a b # note", "ix", ("ab", "i")),
    (r"\d", "", None),
    ("(?i)a", "", None),
    ("[]a]", "", None),
])
def test_portable_regex(pattern: str, options: str, portable: tuple[str, str] | None) -> None:
    assert portable_regex(pattern, options) == portable
