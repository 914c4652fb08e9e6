r"""Compile core's filter AST into a MongoDB query document.

Each condition takes the first form that is exact for every document shape:

1. A native operator (``{"f": {"$gt": 3}}``) when MongoDB's own rule is core's: a
   one-step path and an operand without objects. These use indexes directly.
2. Otherwise ``$expr`` over :mod:`.expressions`, which spells core's rule out (nulls
   inside arrays, nested arrays, numeric steps, key order of objects, range operands
   that are objects or arrays, ``$elemMatch`` on scalars only). These cannot use an
   index. (A native condition in front, to narrow the scan, would have to select a
   superset of the matches on every server; the wire test server's traversal of
   nested arrays is not one, so that optimisation waits for a real MongoDB in CI.)
   ``filter=text`` is an ``$expr`` too, over the search field the adapter stores
   (:mod:`.codec`), so that it lower-cases as Python does.
3. Regular expressions using constructs whose meaning differs between engines
   (``\d``, ``\w``, ``\b``, inline flags, ...) are left as a *residual* filter that the
   store checks with :func:`docbase.core.evaluate.matches` on the documents the server
   returns; the rest of the query still runs on the server.

``_id`` is stored as an ObjectId, so conditions on it are translated natively.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from bson import ObjectId

from docbase.adapters.mongo import expressions as ex
from docbase.adapters.mongo.codec import SEARCH_FIELD
from docbase.adapters.mongo.keys import MONGO_KEYS
from docbase.adapters.mongo.regex import portable_regex
from docbase.core.field_name_encoding import encode_names
from docbase.core.ids import is_object_id
from docbase.core.query import (
    JSON,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
    FieldFilter,
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
    Path,
    Regex,
    Text,
)

MATCH_NOTHING: dict[str, Any] = {"_id": {"$exists": False}}
_RANGES: dict[type, tuple[str, tuple[int, ...]]] = {
    Gt: ("$gt", (1,)), Gte: ("$gte", (0, 1)), Lt: ("$lt", (-1,)), Lte: ("$lte", (-1, 0)),
}
_Range = Gt | Gte | Lt | Lte


class CompiledFilter(NamedTuple):
    """A query document for the server and what the client must still check."""

    query: dict[str, Any]
    """Selects exactly the matches, or a superset of them when ``residual`` is set."""
    residual: Filter | None
    """Conditions to check with ``evaluate.matches`` on each returned document."""


def compile_filter(filter: Filter) -> CompiledFilter:
    """Split ``filter`` into a server query and a residual checked by core."""
    server, client = _split(filter)
    # the server sees stored field names; the residual is checked on decoded documents
    query = {} if server is None else _query(encode_names(server, MONGO_KEYS))
    return CompiledFilter(query, client)


def _split(filter: Filter) -> tuple[Filter | None, Filter | None]:
    if _on_server(filter):
        return filter, None
    if isinstance(filter, And):
        parts = [_split(operand) for operand in filter.operands]
        servers = tuple(s for s, _ in parts if s is not None)
        clients = tuple(c for _, c in parts if c is not None)
        return (And(servers) if servers else None), (And(clients) if clients else None)
    return None, filter


def _on_server(filter: Filter) -> bool:
    match filter:
        case Text():
            return True
        case Not(operand=operand):
            return _on_server(operand)
        case And(operands=operands) | Or(operands=operands):
            return all(_on_server(operand) for operand in operands)
        case ElemMatch(path=path, query=query):
            return path[:1] != ("_id",) and _on_server(query)
        case Regex(pattern=pattern, options=options) if portable_regex(pattern, options) is None:
            return False
        case _:
            return filter.path[:1] != ("_id",) or _id_query(filter) is not None


def _query(filter: Filter) -> dict[str, Any]:
    match filter:
        case And(operands=operands):
            return {"$and": [_query(operand) for operand in operands]} if operands else {}
        case Or(operands=operands):
            return {"$or": [_query(operand) for operand in operands]}
        case Not(operand=operand):
            return {"$nor": [_query(operand)]}
        case Text() | ElemMatch():
            return {"$expr": expression(ex.Scope(), filter, ex.ROOT)}
    if filter.path[:1] == ("_id",):
        query = _id_query(filter)
        assert query is not None
        return query
    return _native(filter) or _computed(filter)


def _computed(filter: FieldFilter | ElemMatch) -> dict[str, Any]:
    return {"$expr": expression(ex.Scope(), filter, ex.ROOT)}


def _plain(value: JSON) -> bool:
    """No objects anywhere: MongoDB and core then agree on equality."""
    if isinstance(value, dict):
        return False
    return not isinstance(value, list) or all(_plain(item) for item in value)


def _scalar(value: JSON) -> bool:
    return value is not None and not isinstance(value, dict | list)


def _native(filter: FieldFilter) -> dict[str, Any] | None:
    """Return the native condition if it is exact for every document, else ``None``."""
    if len(filter.path) != 1 or not ex.plain_field(filter.path[0]):
        return None
    field = filter.path[0]
    match filter:
        case Eq(value=value) if _plain(value):
            return {field: value}
        case Ne(value=value) if _plain(value):
            return {field: {"$ne": value}}
        case In(values=values) if all(not isinstance(v, dict | list) for v in values):
            return {field: {"$in": list(values)}}
        case Nin(values=values) if all(not isinstance(v, dict | list) for v in values):
            return {field: {"$nin": list(values)}}
        case Gt() | Lt() if filter.value is None:
            return MATCH_NOTHING
        case Gte() | Lte() if filter.value is None:
            return {field: None}
        case Gt() | Gte() | Lt() | Lte() if _scalar(filter.value):
            return {field: {_RANGES[type(filter)][0]: filter.value}}
        case Exists(present=present):
            return {field: {"$exists": present}}
        case Regex(pattern=pattern, options=options):
            # some servers also search arrays nested in arrays: narrow natively (an
            # index on the field still helps), then decide exactly
            return {"$and": [{field: _regex(pattern, options)}, _computed(filter)]}
    return None


def _regex(pattern: str, options: str) -> dict[str, str]:
    portable = portable_regex(pattern, options)
    assert portable is not None
    return {"$regex": portable[0], "$options": portable[1]}


def _id_query(filter: FieldFilter | ElemMatch) -> dict[str, Any] | None:
    """``_id`` is a 24-hex string outside and an ObjectId inside; ``None``: residual."""
    if len(filter.path) != 1:
        return None
    match filter:
        case Eq(value=value) | Ne(value=value):
            oids = _object_ids([value])
            query = {"_id": oids[0]} if oids else MATCH_NOTHING
            return query if isinstance(filter, Eq) else {"$nor": [query]}
        case In(values=values) | Nin(values=values):
            query = {"_id": {"$in": _object_ids(values)}}
            return query if isinstance(filter, In) else {"$nor": [query]}
        case Exists(present=present):
            return {} if present else MATCH_NOTHING
        case Gt() | Gte() | Lt() | Lte() if not isinstance(filter.value, str):
            return MATCH_NOTHING  # a string is never of another type class
        case Gt() | Gte() | Lt() | Lte() if _object_ids([filter.value]):
            return {"_id": {_RANGES[type(filter)][0]: ObjectId(filter.value)}}
    return None


def _object_ids(values: tuple[JSON, ...] | list[JSON]) -> list[ObjectId]:
    # stored ids are lower-case, so only lower-case hex can equal one
    return [ObjectId(v) for v in values if is_object_id(v) and v == v.lower()]


# ---------------------------------------------------------------------------- $expr


def expression(scope: ex.Scope, filter: Filter, root: str) -> ex.Expr:
    """``evaluate.matches(filter, root)`` as an aggregation expression."""
    match filter:
        case And(operands=operands):
            return {"$and": [expression(scope, f, root) for f in operands]} if operands else True
        case Or(operands=operands):
            return {"$or": [expression(scope, f, root) for f in operands]}
        case Not(operand=operand):
            return {"$not": [expression(scope, operand, root)]}
        case Exists(path=path, present=present):
            return {"$gt" if present else "$eq": [{"$size": _values(scope, root, path)}, 0]}
        case ElemMatch(path=path, query=query, objects=objects):
            def element(el: str) -> ex.Expr:
                guard = ex.is_object(el) if objects else {
                    "$in": [ex.type_of(el), list(ex.SCALAR_TYPES)]}
                return {"$cond": [guard, expression(scope, query, el), False]}

            return scope.any(_values(scope, root, path), lambda array: {
                "$cond": [ex.is_array(array), scope.any(array, element), False]})
        case Regex(path=path, pattern=pattern, options=options):
            regex = portable_regex(pattern, options)
            assert regex is not None
            return scope.any(_reached(scope, root, path), lambda x: {"$cond": [
                {"$eq": [ex.type_of(x), "string"]},
                {"$regexMatch": {"input": x, "regex": ex.literal(regex[0]),
                                 "options": regex[1]}}, False]})
        case Ne(path=path, value=value):
            return {"$not": [expression(scope, Eq(path, value), root)]}
        case Nin(path=path, values=values):
            return {"$not": [expression(scope, In(path, values), root)]}
        case Eq(path=path, value=value):
            return _any_equal(scope, root, path, (value,))
        case In(path=path, values=values):
            return _any_equal(scope, root, path, values)
        case Gt() | Gte() | Lt() | Lte():
            return _range(scope, root, filter)
        case Between(path=path, low=low, high=high):
            if low is None or high is None:
                both = low is None and high is None
                return _any_equal(scope, root, path, (None,)) if both else False
            return scope.any(_reached(scope, root, path), lambda x: {"$and": [
                ex.ordered(scope, x, low, (0, 1)), ex.ordered(scope, x, high, (-1, 0))]})
        case Text(text=text):
            # the search field: top-level field -> its lower-cased strings (see codec)
            needle = ex.literal(text.lower())
            fields = {"$objectToArray": {"$ifNull": [f"{root}.{SEARCH_FIELD}", {}]}}
            return scope.any(fields, lambda field: scope.any(f"{field}.v", lambda s: {
                "$gte": [{"$indexOfBytes": [s, needle]}, 0]}))


def _values(scope: ex.Scope, root: str, path: Path) -> ex.Expr:
    return ex.path_values(scope, root, path)


def _reached(scope: ex.Scope, root: str, path: Path) -> ex.Expr:
    return ex.reached_values(ex.path_values(scope, root, path))


def _any_equal(scope: ex.Scope, root: str, path: Path, values: tuple[JSON, ...]) -> ex.Expr:
    if not values:
        return False

    def test(reached: str) -> ex.Expr:
        found = scope.any(reached, lambda x: {"$or": [ex.equals(scope, x, v) for v in values]})
        if None not in values:
            return found
        # a missing path is tested once, as missing, and only a null operand matches it
        return {"$or": [found, {"$eq": [{"$size": reached}, 0]}]}

    return scope.let(_reached(scope, root, path), test, "r")


def _range(scope: ex.Scope, root: str, filter: _Range) -> ex.Expr:
    if filter.value is None:
        return _any_equal(scope, root, filter.path, (None,)) if isinstance(
            filter, Gte | Lte) else False
    allowed = _RANGES[type(filter)][1]
    return scope.any(_reached(scope, root, filter.path),
                     lambda x: ex.ordered(scope, x, filter.value, allowed))
