"""Keyset paging in SQL: the condition "after this cursor" on the ORDER BY's own parts.

A page read with a cursor (:class:`~docbase.core.query.After`) keeps the rows whose
sort parts and ``id`` come after the cursor's, in the order the statement sorts by
(``docs/sql-adapter.md``, "Paging with a cursor")::

    p1 > c1  OR  (p1 = c1 AND (p2 > c2  OR  (p2 = c2 AND ... id > :id)))

``p`` are the very expressions the ORDER BY uses (:meth:`QueryCompiler.sort_key`, a
few parts per sort key), so filter, order and keyset agree on every type class, and an
expression index that serves the order serves the seek too. ``>`` becomes ``<`` for a
descending key. ``c`` are the parts of the cursor's sort values computed in Python
(:meth:`Dialect.literal_parts`) and bound as parameters. A part may be SQL NULL (a
null value on SQLite, the parts of other classes on PostgreSQL): NULL sorts first
ascending and last descending, and where the cursor's part is NULL the test changes
shape rather than binding a NULL, so the statement depends on which parts are NULL,
never on the values: one statement serves every page of a listing.
Without a sort the condition is ``id > :after_id``, a seek in the primary key.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import UnaryExpression
from sqlalchemy.types import NullType

from docbase.adapters.sql.compiler import QueryCompiler
from docbase.adapters.sql.dialects import Dialect
from docbase.adapters.sql.values import Condition, Expr
from docbase.core.field_name_encoding import encode_keys
from docbase.core.query import After, Query, check_after

ID_PARAM = "after_id"


def _parts(after: After, dialect: Dialect) -> list[list[Any]]:
    # object keys as stored (docbase/core/field_name_encoding.py), as the sort parts read them
    return [dialect.literal_parts(encode_keys(value)) for value in after.values]


def shape(query: Query, dialect: Dialect) -> Hashable:
    """What the keyset statement of ``query`` depends on besides its bound values."""
    if query.after is None:
        return None
    return tuple(tuple(part is None for part in parts)
                 for parts in _parts(query.after, dialect))


def parameters(query: Query, dialect: Dialect) -> dict[str, Any]:
    """The bound values of :func:`condition` for ``query``'s cursor (empty: no cursor)."""
    after = check_after(query).after
    if after is None:
        return {}
    found: dict[str, Any] = {ID_PARAM: after.id}
    for index, parts in enumerate(_parts(after, dialect)):
        for number, part in enumerate(parts):
            if part is not None:
                found[f"after_{index}_{number}"] = part
    return found


def condition(query: Query, compiler: QueryCompiler) -> Condition | None:
    """The WHERE condition keeping the rows after ``query.after`` (``None``: no cursor).

    Raises:
        InvalidQuery: the cursor was made for another order than ``query.sort``.

    """
    found = seeks(query, compiler)
    if not found:
        return None
    return found[0] if len(found) == 1 else sa.or_(*found)


def seeks(query: Query, compiler: QueryCompiler) -> list[Condition]:
    """The rows after ``query.after`` as conditions whose union they are (``[]``: none).

    Each is the keyset condition under a bound an index on the first sort key can seek
    to, when there is one (:func:`_ranges`): a sorted page reads each as a stream.

    Raises:
        InvalidQuery: the cursor was made for another order than ``query.sort``.

    """
    after = check_after(query).after
    if after is None:
        return []
    tests: list[tuple[Condition, Condition]] = []
    ranges: list[Condition] = []
    for index, (key, parts) in enumerate(zip(query.sort, _parts(after, compiler.dialect),
                                             strict=True)):
        ordered = compiler.sort_key(key)
        if len(ordered) != len(parts):
            raise AssertionError("Dialect.literal_parts disagrees with its sort_parts")
        names = [f"after_{index}_{number}" for number in range(len(parts))]
        tests.extend(_part_tests(part, name, null=value is None)
                     for part, name, value in zip(ordered, names, parts, strict=True))
        if index == 0:
            ranges = _ranges(ordered, names, parts, compiler.dialect)
    test: Condition = compiler.table.c.id > _bind(ID_PARAM)
    for later, same in reversed(tests):
        test = sa.or_(later, sa.and_(same, test))
    return [sa.and_(bound, test) for bound in ranges] if ranges else [test]


def _ranges(ordered: list[UnaryExpression[Any]], names: list[str], parts: list[Any],
            dialect: Dialect) -> list[Condition]:
    """Bounds implied by the keyset that an index on the first sort key can seek to.

    ``(p1, ..., pk) >= (c1, ..., ck)`` (``<=`` descending) over the leading parts whose
    cursor value is not NULL: it only repeats the keyset, which its ORs hide from the
    planner. Where NULL parts decide the order (SQLite), descending, a NULL first part
    sorts after every value, so the rows after the cursor are two ranges of the index:
    ``p1 <= c1``, then ``p1 IS NULL``.
    """
    descending = ordered[0].modifier is sa.sql.operators.desc_op
    count = next((i for i, part in enumerate(parts) if part is None), len(parts))
    if count == 0:
        return []
    left = [part.element for part in ordered[:count]]
    right = [_bind(name) for name in names[:count]]
    if descending and not dialect.nulls_follow_class:
        tail: Condition = left[0].is_(None)
        return [left[0] <= right[0], tail]
    low: Any = left[0] if count == 1 else sa.tuple_(*left)
    high: Any = right[0] if count == 1 else sa.tuple_(*right)
    test: Condition = low <= high if descending else low >= high
    return [test]


def _bind(name: str) -> Any:
    # untyped: bound as given (int, float, str, bytes), no SQLAlchemy processing
    return sa.bindparam(name, type_=NullType(), required=True)


def _part_tests(ordered: UnaryExpression[Any], name: str, *,
                null: bool) -> tuple[Condition, Condition]:
    """(comes after the cursor's part, equals it) for one ORDER BY part."""
    part: Expr = ordered.element
    descending = ordered.modifier is sa.sql.operators.desc_op
    if null:  # the cursor's part is NULL: first ascending, last descending
        return (sa.false() if descending else part.is_not(None)), part.is_(None)
    bound = _bind(name)
    if descending:  # a NULL part sorts after every value
        return sa.or_(part < bound, part.is_(None)), part == bound
    return part > bound, part == bound
