"""Keyset paging in SQL: the condition "after this cursor" on the ORDER BY's own keys.

A page read with a cursor (:class:`~docbase.core.query.After`) keeps the rows whose
(sort keys, ``id``) come after the cursor's, in the order the statement sorts by
(``docs/sql-adapter.md``, "Paging with a cursor")::

    k1 > c1  OR  (k1 = c1 AND (k2 > c2  OR  (k2 = c2 AND ... id > :id)))

``k`` are the very expressions of :meth:`QueryCompiler.order_by` (so filter, order and
keyset agree on every type class), ``>`` becomes ``<`` for a descending key, and ``c``
are the cursor's values turned into order keys (:meth:`Dialect.literal_key`). Where the
dialect keys null and missing as SQL NULL (SQLite, where NULL sorts first ascending and
last descending), a null cursor value changes the shape of the test instead of its
bind, so the statement depends on which values are null, never on the values: the
values are bound as parameters and one statement serves every page of a listing.
Without a sort the condition is ``id > :id``, a seek in the primary key.
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
from docbase.core.query import After, Query, check_after

ID_PARAM = "after_id"


def _param(index: int) -> str:
    return f"after_{index}"


def shape(query: Query, dialect: Dialect) -> Hashable:
    """What the keyset statement of ``query`` depends on besides its bound values."""
    after = query.after
    if after is None:
        return None
    if dialect.null_key is not None:
        return len(after.values)
    return tuple(value is None for value in after.values)


def parameters(query: Query, dialect: Dialect) -> dict[str, Any]:
    """The bound values of :func:`condition` for ``query``'s cursor (empty: no cursor)."""
    after = check_after(query).after
    if after is None:
        return {}
    found: dict[str, Any] = {ID_PARAM: after.id}
    for index, value in enumerate(after.values):
        if value is not None or dialect.null_key is not None:
            found[_param(index)] = dialect.literal_key(value)
    return found


def condition(query: Query, compiler: QueryCompiler) -> Condition | None:
    """The WHERE condition keeping the rows after ``query.after`` (``None``: no cursor).

    Raises:
        InvalidQuery: the cursor was made for another order than ``query.sort``.

    """
    after: After | None = check_after(query).after
    if after is None:
        return None
    keys = compiler.order_by(query.sort)[:-1]
    test: Condition = compiler.table.c.id > _bind(ID_PARAM)
    for index in reversed(range(len(keys))):
        sql_nulls = compiler.dialect.null_key is None
        later, same = _key_tests(keys[index], _param(index), sql_nulls=sql_nulls,
                                 null=after.values[index] is None and sql_nulls)
        test = sa.or_(later, sa.and_(same, test))
    return test


def _bind(name: str) -> Any:
    # untyped: bound as given (int, float, str, bytes), no SQLAlchemy processing
    return sa.bindparam(name, type_=NullType(), required=True)


def _key_tests(ordered: UnaryExpression[Any], name: str, *, null: bool,
               sql_nulls: bool) -> tuple[Condition, Condition]:
    """(comes after the cursor's key, equals it) for one ORDER BY key."""
    key: Expr = ordered.element
    descending = ordered.modifier is sa.sql.operators.desc_op
    if null:  # the cursor's key is SQL NULL: first ascending, last descending
        return (sa.false() if descending else key.is_not(None)), key.is_(None)
    bound = _bind(name)
    if not descending:  # a NULL key (null where it is SQL NULL) is never greater
        return key > bound, key == bound
    if sql_nulls:  # NULL keys sort after every value descending
        return sa.or_(key < bound, key.is_(None)), key == bound
    return key < bound, key == bound
