"""``$groupby``/``$aggregate`` pushed down: one ``$group`` stage.

Group keys and aggregated fields follow objects only (``grouping.group_key``), which
is spelled out with :func:`.expressions.plain_value`. ``SUM`` and ``AVG`` take numbers
only (booleans excluded): each group's numbers are gathered on the server and added
here with core's ``number_sum`` (exact for integers, ``math.fsum`` once a float takes
part), since a native ``$sum`` adds doubles with another rounding. ``MIN``/``MAX``
are taken natively among scalars, whose BSON order is core's; the rank of the
deciding type class comes along, and when it is an object or an array (whose orders
differ) :func:`decode_rows` returns ``None`` and the store aggregates with core. It
does the same when a group key is an object or an array, because engines disagree on
when two such keys are equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from docbase.adapters.mongo import expressions as ex
from docbase.adapters.mongo.codec import decode_value
from docbase.core.grouping import number_sum
from docbase.core.ordering import sort_key
from docbase.core.query import JSON, Aggregate, AggregateRow, Path

_SCALAR_RANKS = [1, 2, 5]
_COMPOSITE_RANKS = (3, 4)


def group_stages(groupby: Sequence[Path], aggregates: Sequence[Aggregate]
                 ) -> list[dict[str, Any]]:
    """Build the stages (after the ``$match``) computing every aggregate per group key.

    The documents must come in ``_id`` order: the first-met group keys depend on it.
    """
    scope = ex.Scope()
    keys = [{"$ifNull": [ex.plain_value(scope, path), None]} for path in groupby]
    fields: dict[str, Any] = {"_id": {f"g{i}": key for i, key in enumerate(keys)} or None,
                              "n": {"$sum": 1}}
    if keys:
        fields["k"] = {"$max": {"$or": [{"$in": [ex.rank(scope, key), list(_COMPOSITE_RANKS)]}
                                        for key in keys]}}
    for i, spec in enumerate(aggregates):
        if spec.func == "COUNT":
            continue
        value = ex.plain_value(scope, spec.path)
        if spec.func in ("SUM", "AVG"):
            is_number = {"$in": [ex.type_of("$$a"), list(ex.NUMBER_TYPES)]}
            fields[f"s{i}"] = {"$push": _with(value, {"$cond": [is_number, "$$a", None]})}
        else:
            accumulator = "$min" if spec.func == "MIN" else "$max"
            rank = ex.rank(scope, "$$a")
            fields[f"m{i}"] = {accumulator: _with(value, {
                "$cond": [{"$in": [rank, _SCALAR_RANKS]}, "$$a", "$$REMOVE"]})}
            fields[f"r{i}"] = {accumulator: _with(value, {
                "$cond": [{"$gt": [rank, 0]}, rank, "$$REMOVE"]})}
    return [{"$group": fields}]


def _with(value: ex.Expr, body: ex.Expr) -> ex.Expr:
    return {"$let": {"vars": {"a": value}, "in": body}}


def decode_rows(
    raw_rows: Sequence[Mapping[str, Any]],
    groupby: Sequence[Path],
    aggregates: Sequence[Aggregate],
) -> list[AggregateRow] | None:
    """Return the rows in key order, or ``None`` when core must aggregate instead."""
    rows: list[AggregateRow] = []
    for raw in raw_rows:
        if raw.get("k"):
            return None
        key = tuple(decode_value(raw["_id"][f"g{i}"]) for i in range(len(groupby)))
        values: dict[str, JSON] = {}
        for i, spec in enumerate(aggregates):
            if spec.func in ("MIN", "MAX") and raw.get(f"r{i}") in _COMPOSITE_RANKS:
                return None
            values[spec.key] = _result(spec, raw, i)
        rows.append(AggregateRow(key, values))
    if not groupby and not rows:
        empty = {"n": 0, **{f"s{i}": [] for i in range(len(aggregates))}}
        rows.append(AggregateRow((), {spec.key: _result(spec, empty, i)
                                      for i, spec in enumerate(aggregates)}))
    rows.sort(key=lambda row: tuple(sort_key(value) for value in row.key))
    return rows


def _result(spec: Aggregate, raw: Mapping[str, Any], i: int) -> JSON:
    match spec.func:
        case "COUNT":
            return raw["n"]
        case "SUM" | "AVG":
            numbers = [n for n in raw[f"s{i}"] if n is not None]
            if spec.func == "SUM":
                return number_sum(numbers)
            return number_sum(numbers) / len(numbers) if numbers else None
        case _:
            return decode_value(raw.get(f"m{i}"))
