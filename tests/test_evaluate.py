"""The reference semantics, checked against expectations worked out by hand."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from docbase.core.documents import Document
from docbase.core.evaluate import (
    count,
    json_equal,
    matches,
    path_values,
    reached_values,
    run_query,
    sort_documents,
)
from docbase.core.grouping import aggregate, group_key
from docbase.core.projection import project
from docbase.core.query import (
    Aggregate,
    AggregateRow,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
    Filter,
    Gt,
    Gte,
    In,
    Lt,
    Lte,
    Ne,
    Nin,
    Not,
    Or,
    Projection,
    Query,
    Regex,
    SortKey,
    Text,
)

D1: Document = {
    "_id": "d1", "name": "Alice", "age": 30, "tags": ["red", "blue"], "nums": [1, 10],
    "addr": {"city": "Oslo"}, "items": [{"sku": "x1", "qty": 2}, {"sku": "y2", "qty": 5}],
    "flag": True}
D2: Document = {
    "_id": "d2", "name": "bob", "age": "31", "tags": ["green"], "nums": [5],
    "addr": {"city": "Bergen", "zip": "5003"}, "items": [{"sku": "z3", "qty": 1}],
    "flag": False, "note": None}
D3: Document = {
    "_id": "d3", "name": "Carol", "age": 25.0, "tags": [], "nums": [[1, 2], 3], "items": [],
    "note": "first line\nSecond Line"}
D4: Document = {"_id": "d4", "age": None, "tags": "red", "nums": 6, "pair": [1, 2], "flag": 1}
D5: Document = {
    "_id": "d5", "name": "Eve", "tags": [["red", "blue"], "x"], "pair": [[1, 2], [3]],
    "_createdby": "alice@x"}
DOCS: list[Document] = [D1, D2, D3, D4, D5]
ALL = {"d1", "d2", "d3", "d4", "d5"}


def ids(documents: list[Document]) -> list[str]:
    return [document["_id"] for document in documents]


def matching(filter: Filter, documents: list[Document] = DOCS) -> set[str]:
    return {document["_id"] for document in documents if matches(filter, document)}


# ---------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("document", "path", "expected"),
    [
        ({"a": [1, [2, 3]]}, ("a",), [[1, [2, 3]], 1, [2, 3]]),
        ({"a": 1}, ("b",), []),
        ({"a": None}, ("a",), [None]),
        ({"a": 5}, ("a", "b"), []),
        ({"a": [{"b": 1}, {"b": [2]}, 5, [{"b": 9}], {"c": 0}]}, ("a", "b"), [1, [2], 2]),
        ({"t": ["x", "y"]}, ("t", "1"), ["y"]),
        ({"t": ["x", "y"]}, ("t", "2"), []),
        ({"t": ["x", "y"]}, ("t", "01"), []),
        ({"t": [{"0": "k"}, "z"]}, ("t", "0"), [{"0": "k"}, "k"]),
        ({"a": [{"b": [{"c": 1}, {"c": 2}]}]}, ("a", "b", "c"), [1, 2]),
        ({"a": []}, ("a",), [[]]),
        ("s", (), ["s"]),
    ],
)
def test_reached_values_walk_objects_and_one_array_level(
    document: Any, path: tuple[str, ...], expected: list[Any]
) -> None:
    assert reached_values(document, path) == expected


def test_path_values_tell_null_from_missing_and_do_not_expand() -> None:
    assert path_values({"a": None}, ("a",)) == [None]
    assert path_values({}, ("a",)) == []
    assert path_values({"a": [1, 2]}, ("a",)) == [[1, 2]]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        (None, None, True),
        (None, 0, False),
        ("1", 1, False),
        ([1, 2], [1.0, 2], True),
        ([1, 2], [2, 1], False),
        ([1], [1, 1], False),
        ({"a": 1, "b": 2}, {"a": 1, "b": 2.0}, True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, False),
        ({"a": [True]}, {"a": [1]}, False),
        ({}, [], False),
    ],
)
def test_json_equal(a: Any, b: Any, expected: bool) -> None:
    assert json_equal(a, b) is expected
    assert json_equal(b, a) is expected


# ---------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        # equality
        (Eq(("name",), "Alice"), {"d1"}),
        (Eq(("name",), "alice"), set()),
        (Eq(("age",), 30.0), {"d1"}),
        (Eq(("age",), 25), {"d3"}),
        (Eq(("age",), 31), set()),
        (Eq(("age",), None), {"d4", "d5"}),
        (Eq(("note",), None), {"d1", "d2", "d4", "d5"}),
        (Eq(("missing",), None), ALL),
        (Eq(("name", "first"), None), ALL),
        (Eq(("tags",), "red"), {"d1", "d4"}),
        (Eq(("tags",), ["red", "blue"]), {"d1", "d5"}),
        (Eq(("tags",), ["blue", "red"]), set()),
        (Eq(("tags",), []), {"d3"}),
        (Eq(("pair",), [1, 2]), {"d4", "d5"}),
        (Eq(("nums",), 2), set()),
        (Eq(("nums",), [1, 2]), {"d3"}),
        (Eq(("flag",), True), {"d1"}),
        (Eq(("flag",), 1), {"d4"}),
        (Eq(("addr",), {"city": "Oslo"}), {"d1"}),
        (Eq(("addr",), {"zip": "5003", "city": "Bergen"}), set()),
        (Eq(("addr", "city"), "Bergen"), {"d2"}),
        (Eq(("items", "sku"), "y2"), {"d1"}),
        (Eq(("items", "qty"), 1), {"d2"}),
        (Eq(("items", "0", "sku"), "x1"), {"d1"}),
        (Eq(("tags", "0"), "red"), {"d1", "d5"}),
        (Eq(("tags", "1"), "blue"), {"d1"}),
        (Eq(("nums", "0"), 1), {"d1", "d3"}),
        # negations
        (Ne(("name",), "Alice"), {"d2", "d3", "d4", "d5"}),
        (Ne(("note",), None), {"d3"}),
        (Ne(("tags",), "red"), {"d2", "d3", "d5"}),
        (Ne(("age",), 30), {"d2", "d3", "d4", "d5"}),
        # ordering, within a type class only
        (Gt(("age",), 26), {"d1"}),
        (Gt(("age",), "30"), {"d2"}),
        (Gte(("age",), 25), {"d1", "d3"}),
        (Lt(("age",), 30), {"d3"}),
        (Lte(("age",), 30), {"d1", "d3"}),
        (Gt(("age",), None), set()),
        (Lt(("age",), None), set()),
        (Gte(("age",), None), {"d4", "d5"}),
        (Lte(("note",), None), {"d1", "d2", "d4", "d5"}),
        (Gt(("nums",), 5), {"d1", "d4"}),
        (Lt(("nums",), 2), {"d1"}),
        (Gt(("flag",), False), {"d1"}),
        (Gt(("name",), "a"), {"d2"}),
        (Gt(("tags",), ["red"]), {"d1", "d5"}),
        (Gt(("addr",), {"city": "Bergen"}), {"d1", "d2"}),
        (Gt(("items", "qty"), 4), {"d1"}),
        # between: both bounds on the same reached value
        (Between(("nums",), 4, 6), {"d2", "d4"}),
        (Between(("age",), 25, 30), {"d1", "d3"}),
        (Between(("age",), "20", "40"), {"d2"}),
        (Between(("age",), None, None), {"d4", "d5"}),
        (Between(("age",), None, 40), set()),
        (Between(("items", "qty"), 3, 4), set()),
        (Between(("items", "qty"), 2, 4), {"d1"}),
        # membership
        (In(("name",), ("bob", "Eve")), {"d2", "d5"}),
        (In(("tags",), ("green", "x")), {"d2", "d5"}),
        (In(("age",), (None, 30)), {"d1", "d4", "d5"}),
        (In(("age",), ()), set()),
        (In(("tags",), (["red", "blue"],)), {"d1", "d5"}),
        (Nin(("name",), ("bob", "Eve")), {"d1", "d3", "d4"}),
        (Nin(("age",), (None,)), {"d1", "d2", "d3"}),
        (Nin(("age",), ()), ALL),
        # regular expressions, strings only
        (Regex(("name",), "^b"), {"d2"}),
        (Regex(("name",), "^[bc]"), {"d2"}),
        (Regex(("name",), "^[bc]", "i"), {"d2", "d3"}),
        (Regex(("note",), "^second", "i"), set()),
        (Regex(("note",), "^second", "im"), {"d3"}),
        (Regex(("note",), "line.second", "i"), set()),
        (Regex(("note",), "line.second", "is"), {"d3"}),
        (Regex(("name",), "a l i c e", "i"), set()),
        (Regex(("name",), "a l i c e", "ix"), {"d1"}),
        (Regex(("tags",), "^r"), {"d1", "d4"}),
        (Regex(("age",), "3"), {"d2"}),
        (Regex(("flag",), "True"), set()),
        # presence
        (Exists(("note",), True), {"d2", "d3"}),
        (Exists(("note",), False), {"d1", "d4", "d5"}),
        (Exists(("items", "sku"), True), {"d1", "d2"}),
        (Exists(("tags", "0"), True), {"d1", "d2", "d5"}),
        (Exists(("tags",), True), ALL),
        # negation
        (Not(Gt(("age",), 26)), {"d2", "d3", "d4", "d5"}),
        (Not(Eq(("name",), "Alice")), {"d2", "d3", "d4", "d5"}),
        (Not(Regex(("note",), "line")), {"d1", "d2", "d4", "d5"}),
        # elemMatch on object elements: both conditions on one element
        (ElemMatch(("items",), And((Eq(("sku",), "x1"), Gte(("qty",), 2))), True), {"d1"}),
        (ElemMatch(("items",), And((Eq(("sku",), "x1"), Gte(("qty",), 5))), True), set()),
        (And((Eq(("items", "sku"), "x1"), Gte(("items", "qty"), 5))), {"d1"}),
        (ElemMatch(("tags",), Eq(("x",), None), True), set()),
        # elemMatch on scalar elements
        (ElemMatch(("nums",), And((Gt((), 4), Lt((), 6))), False), {"d2"}),
        (And((Gt(("nums",), 4), Lt(("nums",), 6))), {"d1", "d2"}),
        (ElemMatch(("tags",), Eq((), "x"), False), {"d5"}),
        (ElemMatch(("tags",), Eq((), "red"), False), {"d1"}),
        (ElemMatch(("pair",), Eq((), [1, 2]), False), set()),
        # full-text filter
        (Text("ALI"), {"d1"}),
        (Text("osl"), {"d1"}),
        (Text("z3"), {"d2"}),
        (Text("blue"), {"d1", "d5"}),
        (Text("d1"), set()),
        (Text("31"), {"d2"}),
        (Text("second line"), {"d3"}),
        (Text("city"), set()),
        # logic
        (And(()), ALL),
        (Or((Eq(("name",), "bob"), Exists(("pair",), True))), {"d2", "d4", "d5"}),
        (Or((Eq(("name",), "nobody"),)), set()),
    ],
)
def test_filter_selects_hand_computed_documents(filter: Filter, expected: set[str]) -> None:
    assert matching(filter) == expected


NULL: Document = {"_id": "n", "f": None}
ABSENT: Document = {"_id": "m"}


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        (Eq(("f",), None), {"n", "m"}),
        (Eq(("f",), 1), set()),
        (Ne(("f",), None), set()),
        (Ne(("f",), 1), {"n", "m"}),
        (Gt(("f",), None), set()),
        (Gte(("f",), None), {"n", "m"}),
        (Lt(("f",), None), set()),
        (Lte(("f",), None), {"n", "m"}),
        (Gt(("f",), 0), set()),
        (Lt(("f",), 0), set()),
        (Between(("f",), None, None), {"n", "m"}),
        (Between(("f",), 0, 1), set()),
        (In(("f",), (None,)), {"n", "m"}),
        (In(("f",), (1,)), set()),
        (Nin(("f",), (None,)), set()),
        (Nin(("f",), (1,)), {"n", "m"}),
        (Regex(("f",), "."), set()),
        (Regex(("f",), "None"), set()),
        (Exists(("f",), True), {"n"}),
        (Exists(("f",), False), {"m"}),
        (Not(Exists(("f",), True)), {"m"}),
        (Not(Gt(("f",), 0)), {"n", "m"}),
        (ElemMatch(("f",), Eq((), None), False), set()),
        (ElemMatch(("f",), Eq(("x",), None), True), set()),
        (Text("none"), set()),
        (Text("m"), set()),
        (And(()), {"n", "m"}),
        (Or((Eq(("f",), None),)), {"n", "m"}),
    ],
)
def test_null_and_missing_under_every_operator(filter: Filter, expected: set[str]) -> None:
    assert matching(filter, [NULL, ABSENT]) == expected


def test_count_counts_matches() -> None:
    assert count(DOCS, Eq(("age",), None)) == 2
    assert count(DOCS, And(())) == 5
    assert count([], And(())) == 0


# ---------------------------------------------------------------------------- sorting

MIXED: list[Document] = [
    {"_id": "s1", "v": 3},
    {"_id": "s2", "v": "a"},
    {"_id": "s3", "v": None},
    {"_id": "s4"},
    {"_id": "s5", "v": True},
    {"_id": "s6", "v": {"k": 1}},
    {"_id": "s7", "v": [[5]]},
    {"_id": "s8", "v": False},
    {"_id": "s9", "v": 2.5},
    {"_id": "s10", "v": []},
]


def test_sort_across_types_ascending_with_id_tie_break() -> None:
    assert ids(sort_documents(MIXED, [SortKey(("v",))])) == [
        "s10", "s3", "s4", "s9", "s1", "s2", "s6", "s7", "s8", "s5"]


def test_sort_across_types_descending_keeps_id_ascending_on_ties() -> None:
    assert ids(sort_documents(MIXED, [SortKey(("v",), -1)])) == [
        "s5", "s8", "s7", "s6", "s2", "s1", "s9", "s10", "s3", "s4"]


ARRAYS: list[Document] = [
    {"_id": "a1", "v": [1, 9]},
    {"_id": "a2", "v": [4, 5]},
    {"_id": "a3", "v": 3},
    {"_id": "a4", "v": [2, "z"]},
]


def test_array_field_sorts_by_smallest_ascending_and_largest_descending() -> None:
    assert ids(sort_documents(ARRAYS, [SortKey(("v",))])) == ["a1", "a4", "a3", "a2"]
    assert ids(sort_documents(ARRAYS, [SortKey(("v",), -1)])) == ["a4", "a1", "a2", "a3"]


THROUGH: list[Document] = [
    {"_id": "p1", "items": [{"q": 5}, {"q": 1}]},
    {"_id": "p2", "items": [{"q": 3}]},
    {"_id": "p3", "items": [{"q": [0, 7]}, {"r": 1}]},
    {"_id": "p4", "items": {"q": 2}},
]


def test_path_through_arrays_sorts_by_min_or_max_of_reached_values() -> None:
    assert ids(sort_documents(THROUGH, [SortKey(("items", "q"))])) == ["p3", "p1", "p4", "p2"]
    assert ids(sort_documents(THROUGH, [SortKey(("items", "q"), -1)])) == [
        "p3", "p1", "p2", "p4"]


def test_several_keys_with_mixed_directions_then_id() -> None:
    documents: list[Document] = [
        {"_id": "m3", "g": 1, "n": "b"},
        {"_id": "m1", "g": 2, "n": "a"},
        {"_id": "m2", "g": 1, "n": "b"},
        {"_id": "m4", "g": 1, "n": "c"},
    ]
    ordered = sort_documents(documents, [SortKey(("g",)), SortKey(("n",), -1)])
    assert ids(ordered) == ["m4", "m2", "m3", "m1"]
    assert ids(sort_documents(documents, [])) == ["m1", "m2", "m3", "m4"]
    assert sort_documents([], [SortKey(("g",))]) == []


# ---------------------------------------------------------------------------- projection

SHAPED: Document = {"_id": "x", "a": 1, "b": {"c": 2, "d": 3},
          "items": [{"sku": "s", "qty": 1}, {"qty": 2}, 7], "z": [1, 2]}


@pytest.mark.parametrize(
    ("paths", "include", "expected"),
    [
        ([("a",)], True, {"_id": "x", "a": 1}),
        ([("b", "c")], True, {"_id": "x", "b": {"c": 2}}),
        ([("items", "sku")], True, {"_id": "x", "items": [{"sku": "s"}, {}]}),
        ([("b",), ("b", "c")], True, {"_id": "x", "b": {"c": 2, "d": 3}}),
        ([("b", "c"), ("b",)], True, {"_id": "x", "b": {"c": 2, "d": 3}}),
        ([("nope",)], True, {"_id": "x"}),
        ([("a", "q")], True, {"_id": "x"}),
        ([("_id",)], True, {"_id": "x"}),
        ([("a",)], False, {"_id": "x", "b": {"c": 2, "d": 3},
                           "items": [{"sku": "s", "qty": 1}, {"qty": 2}, 7], "z": [1, 2]}),
        ([("b", "c"), ("z",)], False, {"_id": "x", "a": 1, "b": {"d": 3},
                                       "items": [{"sku": "s", "qty": 1}, {"qty": 2}, 7]}),
        ([("items", "qty")], False, {"_id": "x", "a": 1, "b": {"c": 2, "d": 3},
                                     "items": [{"sku": "s"}, {}, 7], "z": [1, 2]}),
        ([("_id",), ("b",), ("items",)], False, {"a": 1, "z": [1, 2]}),
    ],
)
def test_projection(paths: list[tuple[str, ...]], include: bool, expected: dict[str, Any]) -> None:
    before = copy.deepcopy(SHAPED)
    assert project(SHAPED, Projection(tuple(paths), include)) == expected
    assert before == SHAPED


def test_projection_keeps_stored_key_order() -> None:
    result = project(SHAPED, Projection((("z",), ("b", "c"), ("a",)), include=True))
    assert list(result) == ["_id", "a", "b", "z"]


def test_projection_never_shares_mutable_parts() -> None:
    for projection in (None, Projection((("b",),), True), Projection((("a",),), False)):
        result = project(SHAPED, projection)
        result["b"]["c"] = 99
        assert SHAPED["b"] == {"c": 2, "d": 3}


# ---------------------------------------------------------------------------- run_query


def test_run_query_filters_sorts_pages_and_projects() -> None:
    query = Query(filter=Exists(("name",), True), sort=(SortKey(("name",)),), skip=1, limit=2,
                  projection=Projection((("name",),), include=True))
    # names by code point: "Alice" < "Carol" < "Eve" < "bob"
    assert run_query(DOCS, query) == [{"_id": "d3", "name": "Carol"},
                                      {"_id": "d5", "name": "Eve"}]


def test_run_query_limit_none_and_zero() -> None:
    assert ids(run_query(DOCS, Query(limit=None, skip=3))) == ["d4", "d5"]
    assert run_query(DOCS, Query(limit=0)) == []


def test_run_query_returns_copies() -> None:
    result = run_query(DOCS, Query(filter=Eq(("_id",), "d1")))
    result[0]["addr"]["city"] = "Paris"
    result[0]["tags"].append("x")
    assert D1["addr"] == {"city": "Oslo"}
    assert D1["tags"] == ["red", "blue"]


# ---------------------------------------------------------------------------- grouping


@pytest.mark.parametrize(
    ("document", "path", "expected"),
    [
        ({"a": {"b": 1}}, ("a", "b"), 1),
        ({"a": {}}, ("a", "b"), None),
        ({"a": None}, ("a",), None),
        ({"t": [1, 2]}, ("t",), [1, 2]),
        ({"items": [{"q": 1}]}, ("items", "q"), None),
        ({"t": [1, 2]}, ("t", "0"), None),
        ({"a": 5}, ("a", "b"), None),
    ],
)
def test_group_key_is_the_plain_value(
    document: dict[str, Any], path: tuple[str, ...], expected: Any
) -> None:
    assert group_key(document, path) == expected


GROUPED: list[Document] = [
    {"_id": "g1", "team": "red", "score": 10, "w": 1.5},
    {"_id": "g2", "team": "blue", "score": "7", "w": 2},
    {"_id": "g3", "team": "red", "score": True},
    {"_id": "g4", "team": None, "score": 4, "w": "x"},
    {"_id": "g5", "score": 2.5, "w": [1]},
    {"_id": "g6", "team": "blue", "score": [5], "w": None},
    {"_id": "g7", "team": 3, "score": {"a": 1}},
]
SCORE = [Aggregate("SUM", "score"), Aggregate("AVG", "score"), Aggregate("MIN", "score"),
         Aggregate("MAX", "score"), Aggregate("COUNT", "")]


def test_aggregates_per_group_with_null_and_missing_together() -> None:
    rows = aggregate(GROUPED, [("team",)], SCORE)
    assert rows == [
        AggregateRow((None,), {"SUM score": 6.5, "AVG score": 3.25, "MIN score": 2.5,
                               "MAX score": 4, "COUNT ": 2}),
        AggregateRow((3,), {"SUM score": 0, "AVG score": None, "MIN score": {"a": 1},
                            "MAX score": {"a": 1}, "COUNT ": 1}),
        AggregateRow(("blue",), {"SUM score": 0, "AVG score": None, "MIN score": "7",
                                 "MAX score": [5], "COUNT ": 2}),
        AggregateRow(("red",), {"SUM score": 10, "AVG score": 10.0, "MIN score": 10,
                                "MAX score": True, "COUNT ": 2}),
    ]
    red = rows[3].values
    assert type(red["SUM score"]) is int
    assert type(red["AVG score"]) is float


def test_aggregates_skip_null_and_missing_values() -> None:
    specs = [Aggregate("SUM", "w"), Aggregate("MIN", "w"), Aggregate("MAX", "w"),
             Aggregate("COUNT", "anything")]
    assert aggregate(GROUPED, [("team",)], specs) == [
        AggregateRow((None,), {"SUM w": 0, "MIN w": "x", "MAX w": [1], "COUNT anything": 2}),
        AggregateRow((3,), {"SUM w": 0, "MIN w": None, "MAX w": None, "COUNT anything": 1}),
        AggregateRow(("blue",), {"SUM w": 2, "MIN w": 2, "MAX w": 2, "COUNT anything": 2}),
        AggregateRow(("red",), {"SUM w": 1.5, "MIN w": 1.5, "MAX w": 1.5,
                                "COUNT anything": 2}),
    ]


def test_without_groupby_there_is_exactly_one_row() -> None:
    specs = [Aggregate("SUM", "score"), Aggregate("AVG", "score"), Aggregate("COUNT", "")]
    # numbers among the scores: 10, 4, 2.5
    assert aggregate(GROUPED, [], specs) == [
        AggregateRow((), {"SUM score": 16.5, "AVG score": 5.5, "COUNT ": 7})]
    assert aggregate([], [], specs) == [
        AggregateRow((), {"SUM score": 0, "AVG score": None, "COUNT ": 0})]
    assert aggregate([], [("team",)], specs) == []


def test_groups_by_value_equality_and_orders_keys_totally() -> None:
    documents: list[Document] = [
        {"_id": "1", "k": True, "o": {"a": 1, "b": 2}},
        {"_id": "2", "k": 1, "o": {"b": 2, "a": 1}},
        {"_id": "3", "k": 1.0, "o": {"a": 1, "b": 2}},
        {"_id": "4", "o": None},
    ]
    counted = [Aggregate("COUNT", "")]
    assert aggregate(documents, [("k",)], counted) == [
        AggregateRow((None,), {"COUNT ": 1}),
        AggregateRow((1,), {"COUNT ": 2}),
        AggregateRow((True,), {"COUNT ": 1}),
    ]
    # the key tuples compare element by element: (None, ...) < (1, ...) < (True, ...)
    rows = aggregate(documents, [("k",), ("o",)], counted)
    assert [(row.key, row.values["COUNT "]) for row in rows] == [
        ((None, None), 1),
        ((1, {"a": 1, "b": 2}), 1),
        ((1, {"b": 2, "a": 1}), 1),
        ((True, {"a": 1, "b": 2}), 1),
    ]
    assert list(rows[2].key[1]) == ["b", "a"]


def test_aggregate_results_are_copies() -> None:
    documents: list[Document] = [{"_id": "1", "k": [1], "v": {"x": 1}}]
    row = aggregate(documents, [("k",)], [Aggregate("MAX", "v")])[0]
    row.key[0].append(2)
    row.values["MAX v"]["x"] = 2
    assert documents == [{"_id": "1", "k": [1], "v": {"x": 1}}]
