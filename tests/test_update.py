"""PUT and PATCH bodies: parse_update and apply_update, with hand-computed results."""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

import pytest

from docbase.core.errors import Conflict, InvalidQuery
from docbase.core.update import (
    IncOp,
    PullOp,
    PushOp,
    SetOp,
    UnsetOp,
    Update,
    apply_update,
    parse_update,
)


def put(document: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    return apply_update(document, parse_update(body, "put"))


def patch(document: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    return apply_update(document, parse_update(body, "patch"))


# ---------------------------------------------------------------------------- parsing


def test_put_body_parses_to_operations_in_order() -> None:
    body = {
        "name": "Joe",
        "$set": {"address.city": "Oslo"},
        "$unset": {"nick": ""},
        "$inc": {"age": 1},
        "$push": {"tags": "new"},
        "$pull": {"scores": 3},
    }
    assert parse_update(body) == Update((
        SetOp(("name",), "Joe"),
        SetOp(("address", "city"), "Oslo"),
        UnsetOp(("nick",)),
        IncOp(("age",), 1),
        PushOp(("tags",), "new"),
        PullOp(("scores",), 3),
    ))


def test_put_plain_fields_are_top_level_and_patch_fields_are_dot_paths() -> None:
    assert parse_update({"address": {"city": "Oslo"}}, "put") == Update(
        (SetOp(("address",), {"city": "Oslo"}),)
    )
    assert parse_update({"address.city": "Oslo"}, "patch") == Update(
        (SetOp(("address", "city"), "Oslo"),)
    )


@pytest.mark.parametrize(
    ("given", "amount"),
    [(1, 1), (-2.5, -2.5), ("1", 1), ("-3", -3), ("0.5", 0.5), ("1e3", 1000.0)],
)
def test_inc_takes_numbers_and_numeric_strings(given: Any, amount: float) -> None:
    (op,) = parse_update({"$inc": {"age": given}}).ops
    assert op == IncOp(("age",), amount)
    assert type(op.amount) is type(amount)


@pytest.mark.parametrize("given", ["one", "", "nan", "Infinity", "-inf", True, None, [1], {"n": 1}])
def test_inc_refuses_non_numbers(given: Any) -> None:
    with pytest.raises(InvalidQuery, match=re.escape("$inc on 'age'")):
        parse_update({"$inc": {"age": given}})


@pytest.mark.parametrize("mode", ["put", "patch"])
def test_system_fields_in_a_body_are_ignored(mode: Literal["put", "patch"]) -> None:
    body = {"_id": "5f0c0c0c0c0c0c0c0c0c0c0c", "_version": 9, "_created": "x", "_changed": "x",
            "_createdby": "eve", "_changedby": "eve", "_parent_id": "p", "_parent_def": "d",
            "_parent_field": "f", "name": "Joe"}
    assert parse_update(body, mode) == Update((SetOp(("name",), "Joe"),))


def test_system_fields_in_operators_are_ignored() -> None:
    body = {"$set": {"_version": 5, "_created.x": 1, "a": 1}, "$inc": {"_version": 1},
            "$unset": {"_id": ""}}
    assert parse_update(body) == Update((SetOp(("a",), 1),))


@pytest.mark.parametrize(
    ("body", "mode", "part"),
    [
        ({"a": 1, "$set": {"a": 2}}, "put", "'a' twice"),
        ({"$set": {"a": 1}, "$unset": {"a": ""}}, "put", "'a' twice"),
        ({"$set": {"a": 1}, "$inc": {"a.b": 1}}, "put", "'a' twice"),
        ({"$push": {"a.b": 1}, "$pull": {"a.b": 1}}, "put", "'a.b' twice"),
        ({"a": {"b": 1}, "a.b": 2}, "patch", "'a' twice"),
        ({"$rename": {"a": "b"}}, "put", "'$rename'"),
        ({"$set": {"a": 1}}, "patch", "'$set'"),
        ({"$set": ["a"]}, "put", "$set needs an object"),
        ({"$set": {"a..b": 1}}, "put", "'a..b'"),
        ({"a..b": 1}, "patch", "'a..b'"),
    ],
    ids=["field-and-$set", "$set-and-$unset", "enclosing-path", "$push-and-$pull",
         "patch-enclosing", "unknown-operator", "operator-in-patch", "operator-not-object",
         "bad-operator-path", "bad-patch-path"],
)
def test_bad_bodies_are_refused_naming_the_part(
    body: dict[str, Any], mode: Literal["put", "patch"], part: str
) -> None:
    with pytest.raises(InvalidQuery, match=re.escape(part)):
        parse_update(body, mode)


@pytest.mark.parametrize("body", [[{"a": 1}], "a", None])
def test_body_must_be_an_object(body: Any) -> None:
    with pytest.raises(InvalidQuery, match="must be a JSON object"):
        parse_update(body)


# ---------------------------------------------------------------------------- applying


def test_set_creates_objects_on_the_way() -> None:
    assert put({"a": 1}, {"$set": {"b.c.d": 2}}) == {"a": 1, "b": {"c": {"d": 2}}}
    assert put({"b": {"x": 1}}, {"$set": {"b.c": 2}}) == {"b": {"x": 1, "c": 2}}


def test_set_replaces_an_array_element_by_index() -> None:
    assert put({"tags": ["a", "b"]}, {"$set": {"tags.1": "z"}}) == {"tags": ["a", "z"]}
    assert put({"items": [{"n": 1}]}, {"$set": {"items.0.n": 2}}) == {"items": [{"n": 2}]}


@pytest.mark.parametrize(
    ("document", "body"),
    [
        ({"a": 5}, {"$set": {"a.b": 1}}),
        ({"a": "text"}, {"$inc": {"a.b": 1}}),
        ({"tags": ["a"]}, {"$set": {"tags.3": "z"}}),
        ({"tags": ["a"]}, {"$set": {"tags.x": "z"}}),
        ({"tags": ["a", "b"]}, {"$set": {"tags.01": "z"}}),
        ({"items": [{"n": 1}, {"n": 2}]}, {"$inc": {"items.01.n": 1}}),
        ({"tags": ["a"]}, {"$set": {"tags.+0": "z"}}),
    ],
    ids=["through-number", "through-string", "index-out-of-range", "key-on-array",
         "non-canonical-index", "non-canonical-index-on-the-way", "signed-index"],
)
def test_set_through_a_scalar_or_past_an_array_is_a_conflict(
    document: dict[str, Any], body: dict[str, Any]
) -> None:
    with pytest.raises(Conflict):
        put(document, body)


def test_unset_removes_and_ignores_missing_paths() -> None:
    document = {"a": 1, "b": {"c": 2, "d": 3}, "e": 4}
    assert put(document, {"$unset": {"a": "", "b.c": "", "x.y": "", "e.f": ""}}) == {
        "b": {"d": 3}, "e": 4
    }


def test_unset_of_an_array_element_leaves_null() -> None:
    assert put({"tags": ["a", "b", "c"]}, {"$unset": {"tags.1": ""}}) == {
        "tags": ["a", None, "c"]
    }


def test_an_index_is_read_as_queries_read_it_so_01_names_no_element() -> None:
    # queries (docbase/core/evaluate.py array_index) take only canonical decimals
    assert put({"tags": ["a", "b"]}, {"$unset": {"tags.01": ""}}) == {"tags": ["a", "b"]}
    assert put({"tags": ["a", "b"]}, {"$set": {"tags.0": "z"}}) == {"tags": ["z", "b"]}
    assert put({"m": [[1, 2]]}, {"$push": {"m.0": 3}}) == {"m": [[1, 2, 3]]}
    with pytest.raises(Conflict):
        put({"m": [[1, 2]]}, {"$push": {"m.00": 3}})


def test_inc_adds_and_creates_missing_fields() -> None:
    document = {"age": 17, "score": 1.5, "stats": {"visits": 2}}
    assert put(document, {"$inc": {"age": "1", "score": 1, "stats.visits": -2, "new": 5,
                                   "deep.count": 1}}) == {
        "age": 18, "score": 2.5, "stats": {"visits": 0}, "new": 5, "deep": {"count": 1}
    }


@pytest.mark.parametrize("current", ["17", True, None, [1], {"n": 1}])
def test_inc_on_a_non_number_is_a_conflict(current: Any) -> None:
    with pytest.raises(Conflict, match=re.escape("cannot $inc 'age'")):
        put({"age": current}, {"$inc": {"age": 1}})


def test_push_appends_and_creates_missing_arrays() -> None:
    assert put({"tags": ["a"]}, {"$push": {"tags": "b"}}) == {"tags": ["a", "b"]}
    assert put({}, {"$push": {"tags": ["x"]}}) == {"tags": [["x"]]}
    assert put({"o": {}}, {"$push": {"o.list": {"k": 1}}}) == {"o": {"list": [{"k": 1}]}}


@pytest.mark.parametrize("current", ["a", 1, None, {"x": 1}])
def test_push_to_a_non_array_is_a_conflict(current: Any) -> None:
    with pytest.raises(Conflict, match=re.escape("cannot $push to 'tags'")):
        put({"tags": current}, {"$push": {"tags": "b"}})


def test_pull_removes_every_deeply_equal_element() -> None:
    document = {"items": [{"a": 1, "b": [2]}, {"b": [2], "a": 1}, {"a": 1}, {"a": 1, "b": [2]},
                          1, 1.0, True, "1"]}
    assert put(document, {"$pull": {"items": {"a": 1, "b": [2]}}}) == {
        "items": [{"b": [2], "a": 1}, {"a": 1}, 1, 1.0, True, "1"]
    }
    # numbers by value, never booleans or strings
    assert put(document, {"$pull": {"items": 1}})["items"][-2:] == [True, "1"]
    assert len(put(document, {"$pull": {"items": 1}})["items"]) == 6


def test_pull_from_missing_is_nothing_and_from_a_non_array_a_conflict() -> None:
    assert put({"a": 1}, {"$pull": {"tags": "x", "o.list": 1}}) == {"a": 1}
    with pytest.raises(Conflict, match=re.escape("cannot $pull from 'a'")):
        put({"a": 1}, {"$pull": {"a": 1}})


def test_put_merges_top_level_fields_whole() -> None:
    document = {"name": "Joe", "address": {"city": "Oslo", "zip": "0150"}, "age": 17}
    assert put(document, {"address": {"city": "Bergen"}, "email": "j@x.no"}) == {
        "name": "Joe", "address": {"city": "Bergen"}, "age": 17, "email": "j@x.no"
    }


def test_patch_sets_only_the_given_properties_by_dot_path() -> None:
    document = {"name": "Joe", "address": {"city": "Oslo", "zip": "0150"}}
    assert patch(document, {"address.city": "Bergen", "age": 18}) == {
        "name": "Joe", "address": {"city": "Bergen", "zip": "0150"}, "age": 18
    }


def test_put_combines_fields_and_operators() -> None:
    document = {"name": "Joe", "age": 17, "tags": ["a"]}
    assert put(document, {"name": "Jo", "$inc": {"age": 1}, "$push": {"tags": "b"}}) == {
        "name": "Jo", "age": 18, "tags": ["a", "b"]
    }


def test_apply_does_not_mutate_its_input_nor_alias_the_values() -> None:
    document = {"a": {"b": [1, 2]}, "tags": ["x"], "n": 1}
    before = copy.deepcopy(document)
    value = {"deep": [1]}
    update = parse_update({"$set": {"a.c": value}, "$push": {"tags": value}, "$inc": {"n": 1},
                           "$pull": {"a.b": 1}})
    result = apply_update(document, update)
    assert document == before
    assert result == {"a": {"b": [2], "c": {"deep": [1]}}, "tags": ["x", {"deep": [1]}], "n": 2}
    value["deep"].append(2)
    result["a"]["b"].append(3)
    assert result["a"]["c"] == {"deep": [1]}
    assert document == before


def test_a_failed_apply_leaves_the_input_unchanged() -> None:
    document = {"a": 1, "b": "x"}
    with pytest.raises(Conflict):
        put(document, {"$set": {"c": 1}, "$inc": {"b": 1}})
    assert document == {"a": 1, "b": "x"}


def test_put_dotted_key_is_a_path_like_patch() -> None:
    from docbase.core.update import apply_update, parse_update

    original = {"_id": "x", "a": {"b": 0, "c": 1}}
    assert apply_update(original, parse_update({"a.b": 5}, "put")) == {
        "_id": "x", "a": {"b": 5, "c": 1}}
    assert parse_update({"a.b": 5}, "put") == parse_update({"a.b": 5}, "patch")
