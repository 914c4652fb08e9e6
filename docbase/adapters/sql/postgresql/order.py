"""PostgreSQL's total order in native values: rank, number, string, container key.

A value's place in the total order (``docs/sql-adapter.md``, "Order in native values")
is compared as parts, in turn:

- **rank**: its type class, ``1`` null or missing, ``2`` number, ``3`` string,
  ``4`` object, ``5`` array, ``6`` boolean (``jsonb_typeof``);
- **number**: a number as ``float8`` (so ``1`` and ``1.0`` tie), a boolean as 0 or 1;
- **string**: a string's text ``COLLATE "C"``, i.e. by code point;
- **container**: the order key of an object or array (:mod:`.functions`), read from
  the ``json`` column so that object key order counts.

Within one rank only one part varies and the others are NULL in every value, so NULLs
never decide an order. The first three parts are plain expressions on the ``jsonb``
column that PostgreSQL evaluates itself (no function of ours) and that one expression
index holds; conditions on a scalar are written on the same expressions, so that index
serves both ``WHERE price > 50`` (``rank = 2 AND number > 50``) and ``ORDER BY price``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from docbase.adapters.sql.dialects import OPERATORS
from docbase.adapters.sql.order_keys import encode_key
from docbase.adapters.sql.values import Condition, Expr, PgValue, sql_string
from docbase.core.ordering import type_class
from docbase.core.query import JSON

RANK_NUMBERS = {"null": 1, "number": 2, "string": 3, "object": 4, "array": 5, "boolean": 6}


def _typeof(value: PgValue) -> Expr:
    typeof: Expr = getattr(sa.func, f"{value.family}_typeof")(value.expr)
    return typeof


def _text(value: PgValue) -> Expr:
    return value.expr.op("#>>", return_type=sa.Text)(sql_string("{}"))


def rank(value: PgValue) -> Expr:
    """The type class's rank (1 for null and missing)."""
    whens: list[tuple[Expr, Expr]] = [(sql_string(name), sa.literal_column(str(number)))
                                      for name, number in RANK_NUMBERS.items() if name != "null"]
    return sa.case(*whens, value=_typeof(value), else_=sa.literal_column("1"))


def number(value: PgValue) -> Expr:
    """A number as ``float8``, a boolean as 0 or 1, else NULL."""
    as_float = (sa.cast(value.expr, sa.Float) if value.family == "jsonb"
                else sa.cast(_text(value), sa.Float))
    boolean = sa.case((_text(value) == sql_string("true"), sa.literal_column("1.0")),
                      else_=sa.literal_column("0.0"))
    return sa.case((sql_string("number"), as_float), (sql_string("boolean"), boolean),
                   value=_typeof(value))


def string(value: PgValue) -> Expr:
    """A string's text compared by code point, else NULL."""
    return sa.case((_typeof(value) == sql_string("string"), _text(value))).collate("C")


def container(fast: PgValue, exact: PgValue) -> Expr:
    """The order key of an object or array (from the ``json`` value), else NULL."""
    is_container = _typeof(fast).in_([sql_string("object"), sql_string("array")])
    # the PL/pgSQL function itself, not docbase_key, which PostgreSQL would inline (and
    # plan) into every query: only objects and arrays reach it
    key: Expr = sa.func.docbase_container_key(exact.expr, type_=sa.Text)
    return sa.case((is_container, key)).collate("C")


def index_parts(fast: PgValue) -> list[Expr]:
    """The parts an expression index on a path holds: rank, number, string."""
    return [rank(fast), number(fast), string(fast)]


def sort_parts(fast: PgValue, exact: PgValue) -> list[Expr]:
    """Every part, in order."""
    return [*index_parts(fast), container(fast, exact)]


def literal_parts(value: JSON) -> list[Any]:
    """The :func:`sort_parts` of a Python value, as bind values (``None``: NULL)."""
    cls = type_class(value)
    number_part = (float(value) if cls == "number"
                   else float(value is True) if cls == "boolean" else None)
    return [RANK_NUMBERS[cls], number_part, value if cls == "string" else None,
            encode_key(value) if cls in ("object", "array") else None]


def compare(value: PgValue, op: str, operand: JSON) -> Condition:
    """``value <op> operand`` within the class of the scalar ``operand``."""
    cls = type_class(operand)
    same_class = rank(value) == sa.literal_column(str(RANK_NUMBERS[cls]))
    test: Condition
    if cls == "string":
        assert isinstance(operand, str)
        # number IS NULL holds for every string; written out, it lets the index's
        # second column be matched so that the third (the string) bounds the scan
        test = sa.and_(number(value).is_(None),
                       string(value).operate(OPERATORS[op], sa.literal(operand, sa.Text)))
    else:
        bound = float(operand) if cls == "number" else float(operand is True)
        test = number(value).operate(OPERATORS[op], sa.literal(bound, sa.Float))
    return sa.and_(same_class, test)


def equals_any(value: PgValue, operands: Sequence[JSON]) -> Condition:
    """``value`` equals one of the scalar ``operands``."""
    return sa.or_(*(compare(value, "=", operand) for operand in operands))


def is_null(value: PgValue) -> Condition:
    """``value`` is null or missing."""
    return rank(value) == sa.literal_column("1")
