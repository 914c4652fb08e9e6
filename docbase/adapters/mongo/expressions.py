"""Aggregation expressions that spell out core's path and ordering rules for MongoDB.

MongoDB's implicit array handling in queries and sorts is close to core's but not the
same (a missing field inside an array element counts as null, objects compare by value
type before key, an empty array sorts before null, ``$elemMatch`` looks at objects
too). Where that matters the compiler uses these expressions instead: every rule of
:mod:`docbase.core.evaluate` written out with ``$reduce``/``$map``/``$type``, so
the server applies exactly the reference semantics, whatever its own rules are.

Constants are always wrapped in ``$literal`` (a data string may start with ``$``) and
every variable name comes from a :class:`Scope`, so nested expressions never shadow
each other.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from docbase.core.evaluate import array_index
from docbase.core.ordering import type_rank
from docbase.core.query import JSON, Path

Expr: TypeAlias = Any
"""An aggregation expression: a JSON-like value of dicts, lists and scalars."""

ROOT = "$$ROOT"
NUMBER_TYPES = ("double", "int", "long", "decimal")
OBJECT_ID_TYPES = ("objectId", "objectid")
"""What ``$type`` answers for an ObjectId: MongoDB ``objectId``, the CongoDB wire server
``objectid`` (where ``_id`` sorted as missing, so ``$orderby {"_id": -1}`` came back in
ascending order)."""
SCALAR_TYPES = (*NUMBER_TYPES, "string", *OBJECT_ID_TYPES, "bool", "null")


class Scope:
    """Hands out variable names that are unique within one compiled expression."""

    def __init__(self) -> None:
        self._counter = itertools.count()

    def let(self, value: Expr, body: Callable[[str], Expr], stem: str = "v") -> Expr:
        """Bind ``value`` to a fresh variable and return ``body(reference)``."""
        name = f"{stem}{next(self._counter)}"
        return {"$let": {"vars": {name: value}, "in": body(f"$${name}")}}

    def any(self, array: Expr, predicate: Callable[[str], Expr]) -> Expr:
        """Test whether ``predicate`` holds for some element of ``array``."""
        name = f"x{next(self._counter)}"
        return {"$anyElementTrue": [{"$map": {"input": array, "as": name,
                                              "in": predicate(f"$${name}")}}]}

    def keep(self, array: Expr, predicate: Callable[[str], Expr]) -> Expr:
        """Keep the elements of ``array`` for which ``predicate`` holds."""
        name = f"x{next(self._counter)}"
        return {"$filter": {"input": array, "as": name, "cond": predicate(f"$${name}")}}

    def each(self, array: Expr, body: Callable[[str], Expr]) -> Expr:
        """Apply ``body`` to every element of ``array``."""
        name = f"x{next(self._counter)}"
        return {"$map": {"input": array, "as": name, "in": body(f"$${name}")}}


def literal(value: JSON) -> Expr:
    """Wrap a constant, so that it is never read as a field path or operator."""
    return {"$literal": value}


def type_of(x: Expr) -> Expr:
    """Give the BSON type name of ``x`` (``"missing"`` when absent)."""
    return {"$type": x}


def is_object(x: Expr) -> Expr:
    """Test that ``x`` is an embedded document."""
    return {"$eq": [type_of(x), "object"]}


def is_array(x: Expr) -> Expr:
    """Test that ``x`` is an array."""
    return {"$eq": [type_of(x), "array"]}


def is_present(x: Expr) -> Expr:
    """Test that ``x`` is not missing (a stored null is present)."""
    return {"$ne": [type_of(x), "missing"]}


def rank(scope: Scope, x: Expr) -> Expr:
    """Rank ``x``'s type class in the total order, as ``ordering.type_rank`` does.

    Missing and null are 0, numbers 1, strings 2 (``_id`` ObjectIds count as strings:
    their order is that of their hex form), objects 3, arrays 4, booleans 5.
    """
    return scope.let(type_of(x), lambda t: {"$switch": {"branches": [
        {"case": {"$in": [t, list(NUMBER_TYPES)]}, "then": 1},
        {"case": {"$in": [t, ["string", *OBJECT_ID_TYPES]]}, "then": 2},
        {"case": {"$eq": [t, "object"]}, "then": 3},
        {"case": {"$eq": [t, "array"]}, "then": 4},
        {"case": {"$eq": [t, "bool"]}, "then": 5},
    ], "default": 0}}, "t")


def plain_field(step: str) -> bool:
    """Tell whether MongoDB reads ``step`` as the key it is in a field path or query."""
    return not step.startswith("$") and "." not in step


def member(node: str, step: str) -> Expr:
    """The member ``step`` of the object ``node`` (a variable); any key, ``$`` or dots too."""
    if plain_field(step):
        return f"{node}.{step}"
    return {"$getField": {"field": literal(step), "input": node}}


def _step(scope: Scope, node: str, step: str) -> Expr:
    """List the values one path step reaches from ``node`` (a variable)."""
    child = member(node, step)
    from_elements = scope.each(
        scope.keep(node, lambda e: {"$and": [is_object(e), is_present(member(e, step))]}),
        lambda e: member(e, step),
    )
    index = array_index(step)
    if index is not None:
        indexed = {"$cond": [{"$gt": [{"$size": node}, index]},
                             [{"$arrayElemAt": [node, index]}], []]}
        from_elements = {"$concatArrays": [indexed, from_elements]}
    return {"$switch": {"branches": [
        {"case": is_object(node), "then": {"$cond": [is_present(child), [child], []]}},
        {"case": is_array(node), "then": from_elements},
    ], "default": []}}


def path_values(scope: Scope, root: str, path: Path) -> Expr:
    """List ``evaluate.path_values(root, path)``; ``root`` is a variable."""
    current: Expr = [root]
    for step in path:
        current = {"$reduce": {"input": current, "initialValue": [], "in": {
            "$concatArrays": ["$$value", _step(scope, "$$this", step)]}}}
    return current


def reached_values(values: Expr) -> Expr:
    """List ``evaluate.reached_values`` from path values: each, then array elements."""
    return {"$reduce": {"input": values, "initialValue": [], "in": {"$concatArrays": [
        "$$value", ["$$this"], {"$cond": [is_array("$$this"), "$$this", []]}]}}}


def flattened(values: Expr) -> Expr:
    """Replace every array among path values by its elements (as sorting sees them)."""
    return {"$reduce": {"input": values, "initialValue": [], "in": {"$concatArrays": [
        "$$value", {"$cond": [is_array("$$this"), "$$this", ["$$this"]]}]}}}


def equals(scope: Scope, x: Expr, value: JSON) -> Expr:
    """Test ``evaluate.json_equal(x, value)`` for a present ``x`` and a constant ``value``."""
    if value is None:
        return {"$eq": [type_of(x), "null"]}
    if isinstance(value, bool):
        return {"$and": [{"$eq": [type_of(x), "bool"]}, {"$eq": [x, literal(value)]}]}
    if isinstance(value, int | float):
        return {"$and": [{"$in": [type_of(x), list(NUMBER_TYPES)]},
                         {"$eq": [x, literal(value)]}]}
    if isinstance(value, str):
        return {"$and": [{"$eq": [type_of(x), "string"]}, {"$eq": [x, literal(value)]}]}
    if isinstance(value, list):
        items = value
        return scope.let(x, lambda c: {"$cond": [is_array(c), {"$and": [
            {"$eq": [{"$size": c}, len(items)]},
            *(equals(scope, {"$arrayElemAt": [c, i]}, item) for i, item in enumerate(items)),
        ]}, False]}, "c")
    pairs = list(value.items())

    def pair_equals(e: str, key: str, item: JSON) -> Expr:
        return {"$and": [{"$eq": [f"{e}.k", literal(key)]}, equals(scope, f"{e}.v", item)]}

    def object_equals(p: str) -> Expr:
        return {"$and": [{"$eq": [{"$size": p}, len(pairs)]}, *(
            scope.let({"$arrayElemAt": [p, i]}, functools.partial(pair_equals, key=k, item=v),
                      "e") for i, (k, v) in enumerate(pairs))]}

    return scope.let(x, lambda c: {"$cond": [
        is_object(c), scope.let({"$objectToArray": c}, object_equals, "p"), False]}, "c")


def compare(scope: Scope, x: Expr, value: JSON) -> Expr:
    """Give -1, 0 or 1 as ``ordering.compare(x, value)`` for a present ``x``."""
    target = type_rank(value)
    return scope.let(x, lambda c: scope.let(rank(scope, c), lambda r: {"$cond": [
        {"$lt": [r, target]}, -1,
        {"$cond": [{"$gt": [r, target]}, 1, _compare_same_class(scope, c, value)]}]}, "r"), "c")


def _compare_same_class(scope: Scope, c: str, value: JSON) -> Expr:
    if value is None:
        return 0
    if isinstance(value, list):
        return _compare_sequence(scope, c, [(None, item) for item in value])
    if isinstance(value, dict):
        return scope.let({"$objectToArray": c}, lambda p: _compare_sequence(
            scope, p, list(value.items())), "p")
    return {"$cmp": [c, literal(value)]}


def _compare_sequence(scope: Scope, array: str, items: Sequence[tuple[str | None, JSON]]
                      ) -> Expr:
    # element by element (for objects: key, then value), the shorter first on a tie
    size = {"$size": array}
    result: Expr = {"$cond": [{"$gt": [size, len(items)]}, 1, 0]}
    for i in reversed(range(len(items))):
        key, item = items[i]
        rest = result

        def step(e: str, key: str | None = key, item: JSON = item, rest: Expr = rest) -> Expr:
            by_value = scope.let(compare(scope, f"{e}.v" if key is not None else e, item),
                                 lambda k: {"$cond": [{"$ne": [k, 0]}, k, rest]}, "k")
            if key is None:
                return by_value
            return scope.let({"$cmp": [f"{e}.k", literal(key)]},
                             lambda k: {"$cond": [{"$ne": [k, 0]}, k, by_value]}, "k")

        result = {"$cond": [{"$lte": [size, i]}, -1,
                            scope.let({"$arrayElemAt": [array, i]}, step, "e")]}
    return result


def ordered(scope: Scope, x: Expr, value: JSON, allowed: Sequence[int]) -> Expr:
    """Test that ``x`` has ``value``'s type class and ``compare(x, value)`` in ``allowed``."""
    target = type_rank(value)
    return scope.let(x, lambda c: {"$cond": [
        {"$eq": [rank(scope, c), target]},
        {"$in": [_compare_same_class(scope, c, value), list(allowed)]},
        False,
    ]}, "c")


def plain_value(scope: Scope, path: Path) -> Expr:
    """Follow objects only, as ``grouping.group_key``; missing anywhere is missing."""
    def follow(o: str, step: str) -> Expr:
        return {"$cond": [is_object(o), member(o, step), "$$REMOVE"]}

    current: Expr = ROOT
    for step in path:
        current = scope.let(current, functools.partial(follow, step=step), "o")
    return current
