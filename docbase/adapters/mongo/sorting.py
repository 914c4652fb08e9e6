"""Sort in core's total order on the server, with computed sort keys.

MongoDB's own sort nearly agrees with core's order: its BSON type order puts null,
numbers, strings, objects, arrays and booleans in the same sequence. It differs on an
empty array (before null, where core treats it as missing) and on objects (compared by
value *type* before key), and a server's string collation may not be binary. So each
sort key becomes two computed fields: the rank of the value's type class and, for a
scalar, the value itself (the smallest ascending, the largest descending, among the
path's values with arrays expanded, exactly as ``evaluate.sort_documents``). Values of
one rank are of one type, which every engine orders the same way.

When the deciding value of some document is an object or an array, the rank alone
cannot order it; :func:`composite_probe` finds such documents, and the store then
sorts that query with core instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docbase.adapters.mongo import expressions as ex
from docbase.core.query import SortKey

SORT_FIELD = "_docbase_sort"
MAX_SERVER_KEYS = 15  # MongoDB sorts on at most 32 fields: two per key, plus _id
_SCALAR_RANKS = [1, 2, 5]
_COMPOSITE_RANKS = [3, 4]


def sortable_on_server(sort: Sequence[SortKey]) -> bool:
    """Tell whether the server can sort by these keys at all (MongoDB's key limit)."""
    return len(sort) <= MAX_SERVER_KEYS


def sort_stages(sort: Sequence[SortKey]) -> list[dict[str, Any]]:
    """Build the stages computing the sort keys and sorting by them, then by ``_id``."""
    if not sort:
        return [{"$sort": {"_id": 1}}]
    scope = ex.Scope()
    keys = {f"{SORT_FIELD}{i}": _key(scope, key) for i, key in enumerate(sort)}
    order: dict[str, int] = {}
    for i, key in enumerate(sort):
        order[f"{SORT_FIELD}{i}.r"] = key.direction
        order[f"{SORT_FIELD}{i}.v"] = key.direction
    order["_id"] = 1
    return [{"$addFields": keys}, {"$sort": order}]


def composite_probe(sort: Sequence[SortKey]) -> dict[str, Any]:
    """Match (after :func:`sort_stages`) the documents the keys cannot order."""
    return {"$match": {"$or": [{f"{SORT_FIELD}{i}.r": {"$in": _COMPOSITE_RANKS}}
                               for i in range(len(sort))]}}


def key_fields(sort: Sequence[SortKey]) -> list[str]:
    """List the computed fields :func:`sort_stages` adds, to be projected away."""
    return [f"{SORT_FIELD}{i}" for i in range(len(sort))]


def _key(scope: ex.Scope, key: SortKey) -> ex.Expr:
    descending = key.direction == -1
    better = "$gt" if descending else "$lt"
    values = ex.flattened(ex.path_values(scope, ex.ROOT, key.path))

    def by_values(vs: str) -> ex.Expr:
        ranks = scope.each(vs, lambda x: ex.rank(scope, x))
        # no value at all sorts as null: rank 0 both ways
        start = 0 if descending else 99
        best_rank = {"$reduce": {"input": ranks, "initialValue": start, "in": {
            "$cond": [{better: ["$$this", "$$value"]}, "$$this", "$$value"]}}}
        return scope.let(best_rank, lambda r: scope.let(
            {"$cond": [{"$eq": [r, 99]}, 0, r]}, lambda rank: {
                "r": rank,
                "v": {"$cond": [{"$in": [rank, _SCALAR_RANKS]}, _best(scope, vs, rank, better),
                                None]},
            }, "r"), "r")

    return scope.let(values, by_values, "vs")


def _best(scope: ex.Scope, values: str, rank: str, better: str) -> ex.Expr:
    candidates = scope.keep(values, lambda x: {"$eq": [ex.rank(scope, x), rank]})
    return {"$reduce": {"input": candidates, "initialValue": None, "in": {"$cond": [
        {"$or": [{"$eq": ["$$value", None]}, {better: ["$$this", "$$value"]}]},
        "$$this", "$$value"]}}}
