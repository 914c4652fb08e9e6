from __future__ import annotations

import copy
import itertools
import random
from typing import Any

import pytest

from docbase.core.ordering import MISSING, compare, sort_key, type_class, type_rank

# Written out by hand in ascending order, each strictly less than the next.
ASCENDING: list[Any] = [
    None,
    -5,
    0,
    1.5,
    2,
    "",
    "B",          # "B" is U+0042, before every lower-case letter
    "a",
    "é",          # U+00E9, after ASCII
    {},
    {"a": 1},     # shorter first on a tie
    {"a": 1, "b": 0},
    {"a": 2},     # first pair decides: 1 < 2
    {"a": True},  # number < boolean as values
    {"b": 0},     # key "a" < key "b" before any value
    [],
    [None],
    [1],
    [1, 2],
    [1, "a"],     # 2 < "a"
    [2],
    ["a"],
    [{}],
    [[]],
    [False],
    False,
    True,
]


def test_ascending_list_compares_pairwise_as_written() -> None:
    for (i, a), (j, b) in itertools.combinations(enumerate(ASCENDING), 2):
        assert compare(a, b) == -1, (i, j)
        assert compare(b, a) == 1, (i, j)
    for value in ASCENDING:
        assert compare(value, copy.deepcopy(value)) == 0


def test_sort_key_sorts_shuffled_values_back_into_order() -> None:
    shuffled = list(ASCENDING)
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=sort_key) == ASCENDING
    assert sorted(shuffled, key=sort_key, reverse=True) == ASCENDING[::-1]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (None, MISSING, 0),
        (MISSING, None, 0),
        (MISSING, -1e308, -1),
        (1, 1.0, 0),
        (True, 1, 1),
        (False, 10**30, 1),
        (1, True, -1),
        ("10", 9, 1),
        ("Z", "a", -1),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, -1),
        ({"a": [1]}, {"a": [1]}, 0),
        ({"x": {"y": 1}}, {"x": {"y": 1.0}}, 0),
        ([1, [2, 3]], [1, [2, 4]], -1),
        ([3], [1, 2], 1),
        ([[1]], [1], 1),
        ({}, [], -1),
        ([], "zzz", 1),
        ({"a": None}, {"a": 0}, -1),
    ],
)
def test_compare_across_and_within_type_classes(a: object, b: object, expected: int) -> None:
    assert compare(a, b) == expected
    assert compare(b, a) == -expected


@pytest.mark.parametrize(
    ("value", "rank", "klass"),
    [
        (MISSING, 0, "null"),
        (None, 0, "null"),
        (0, 1, "number"),
        (-2.5, 1, "number"),
        ("", 2, "string"),
        ({}, 3, "object"),
        ([], 4, "array"),
        (False, 5, "boolean"),
        (True, 5, "boolean"),
    ],
)
def test_type_rank_and_class_put_bool_after_everything(
    value: object, rank: int, klass: str
) -> None:
    assert type_rank(value) == rank
    assert type_class(value) == klass


def test_sort_key_is_hashable_and_equal_for_equal_values() -> None:
    assert sort_key(1) == sort_key(1.0)
    assert hash(sort_key({"a": [1, None]})) == hash(sort_key({"a": [1.0, None]}))
    assert sort_key(1) != sort_key(True)
    assert sort_key({"a": 1, "b": 2}) != sort_key({"b": 2, "a": 1})
    assert sort_key(None) == sort_key(MISSING)


def test_non_json_values_are_refused() -> None:
    with pytest.raises(TypeError, match="tuple"):
        type_class((1, 2))
    with pytest.raises(TypeError, match="set"):
        sort_key([{1}])


def test_missing_is_a_singleton_that_survives_copy() -> None:
    assert copy.deepcopy(MISSING) is MISSING
    assert repr(MISSING) == "MISSING"
