"""``$groupby`` / ``$aggregate`` pushed down: one SELECT with window functions, GROUP BY.

The result must equal ``docbase.core.grouping.aggregate`` exactly, which fixes details a
plain ``GROUP BY`` does not:

- groups are keyed by order key (``1`` and ``1.0`` together, objects by key order), and
  the returned key is the value of the group's first document (smallest ``_id``);
- ``SUM`` of integers is exact; once a float takes part, the sum is the correctly
  rounded one of core's ``number_sum`` (``math.fsum``), which the dialect's
  :meth:`~.dialects.Dialect.float_sum` aggregate provides; ``AVG`` is that sum divided
  by the count;
- ``MIN``/``MAX`` return the value of the first document holding the least/greatest
  key, ignoring null and missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import msgspec
import sqlalchemy as sa

from docbase.adapters.sql.compiler import QueryCompiler
from docbase.core.field_name_encoding import decode_keys, encode_path
from docbase.core.query import JSON, Aggregate, AggregateRow, Filter, Path

_decode = msgspec.json.Decoder().decode

Decoder = Callable[[Sequence[Any]], list[AggregateRow]]


def _json(text: str | None) -> JSON:
    return None if text is None else decode_keys(_decode(text))


def aggregate_statement(
    compiler: QueryCompiler,
    filter: Filter,
    groupby: Sequence[Path],
    aggregates: Sequence[Aggregate],
) -> tuple[sa.Select[Any], Decoder]:
    """Build the statement computing the aggregation, and the decoder of its rows."""
    dialect, table, root = compiler.dialect, compiler.table, compiler.root.exact
    identity = table.c.id
    inner: list[Any] = []
    groups = []
    for i, path in enumerate(groupby):
        value = root.walk(encode_path(path))
        groups.append(compiler.key(value).label(f"g{i}"))
        inner.append(dialect.json_text(value).label(f"gj{i}"))
    inner.extend(groups)
    partition = [g.element for g in groups] or None

    def window(*order: Any) -> Any:
        return sa.func.row_number().over(partition_by=partition, order_by=list(order))

    inner.append(window(identity.asc()).label("first"))
    for j, spec in enumerate(aggregates):
        if spec.func == "COUNT":
            continue
        value = root.walk(encode_path(spec.path))
        if spec.func in ("SUM", "AVG"):
            number = value.number()
            inner.append(number.label(f"n{j}"))
            inner.append(sa.case((value.is_float(), 1), else_=0).label(f"f{j}"))
        else:
            key = compiler.key(value)
            is_null = dialect.key_is_null(key)
            direction = key.desc() if spec.func == "MAX" else key.asc()
            inner.append(window(sa.case((is_null, 1), else_=0), direction, identity.asc())
                         .label(f"w{j}"))
            inner.append(sa.case((is_null, 1), else_=0).label(f"z{j}"))
            inner.append(dialect.json_text(value).label(f"v{j}"))
    rows = sa.select(*inner).where(compiler.where(filter)).subquery("grouped")

    outer: list[Any] = [sa.func.count().label("count")]
    outer.extend(sa.func.max(sa.case((rows.c.first == 1, rows.c[f"gj{i}"])))
                 for i in range(len(groupby)))
    for j, spec in enumerate(aggregates):
        if spec.func in ("SUM", "AVG"):
            outer.extend([sa.func.sum(rows.c[f"n{j}"]), sa.func.count(rows.c[f"n{j}"]),
                          sa.func.sum(rows.c[f"f{j}"]),
                          dialect.float_sum(sa.cast(rows.c[f"n{j}"], sa.Float))])
        elif spec.func in ("MIN", "MAX"):
            picked = (rows.c[f"w{j}"] == 1) & (rows.c[f"z{j}"] == 0)
            outer.append(sa.func.max(sa.case((picked, rows.c[f"v{j}"]))))
    group_columns = [rows.c[f"g{i}"] for i in range(len(groupby))]
    statement = sa.select(*outer).select_from(rows)
    if group_columns:
        statement = statement.group_by(*group_columns).order_by(
            *(dialect.order(column) for column in group_columns))

    def decode(result_rows: Sequence[Any]) -> list[AggregateRow]:
        return [_row(row, len(groupby), aggregates, dialect.float_total)
                for row in result_rows]

    return statement, decode


def _row(row: Sequence[Any], width: int, aggregates: Sequence[Aggregate],
         float_total: Callable[[Any], float]) -> AggregateRow:
    count = row[0]
    key = tuple(_json(text) for text in row[1:1 + width])
    position = 1 + width
    values: dict[str, JSON] = {}
    for spec in aggregates:
        if spec.func == "COUNT":
            values[spec.key] = count
            continue
        if spec.func in ("MIN", "MAX"):
            values[spec.key] = _json(row[position])
            position += 1
            continue
        exact, numbers, floats, float_sum = row[position:position + 4]
        position += 4
        total: int | float
        if not numbers:
            total = 0
        elif floats:
            total = float_total(float_sum)
        else:
            total = int(exact) if isinstance(exact, Decimal | int) else int(float(exact))
        if spec.func == "SUM":
            values[spec.key] = total
        else:
            values[spec.key] = total / numbers if numbers else None
    return AggregateRow(key, values)
