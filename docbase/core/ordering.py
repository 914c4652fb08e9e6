"""The one total order over JSON values, shared by sorting, ``MIN``/``MAX`` and ``$gt``.

Ascending, the type classes come in this order (``docs/query.md``, "Semantics"):

1. missing and null (equal to each other),
2. numbers, by value (``1 == 1.0``; ``bool`` is *not* a number),
3. strings, by code point,
4. objects, pair by pair in stored key order (key first, then value), shorter first
   on a tie,
5. arrays, element by element, shorter first on a tie,
6. booleans, ``false < true``.

Objects and arrays nest: their members are compared with this same order. The rule
that an array *field* sorts by its smallest (or largest) element belongs to sorting
documents and lives in :mod:`docbase.core.evaluate`; here an array is just a value.
"""

from __future__ import annotations

import enum
from typing import Any, Final, Literal, TypeAlias

from docbase.core.query import JSON


class Missing(enum.Enum):
    """The type of :data:`MISSING`; an enum so that ``value is MISSING`` narrows types."""

    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = Missing.MISSING
"""Stands for a path that reaches no value (different from a stored null)."""

TypeClass: TypeAlias = Literal["null", "number", "string", "object", "array", "boolean"]
"""The six JSON type classes; comparisons such as ``$gt`` hold only within one."""

OrderKey: TypeAlias = tuple[Any, ...]
"""A plain tuple whose Python ordering is the total order of the value it encodes."""

_RANKS: Final[dict[TypeClass, int]] = {
    "null": 0,
    "number": 1,
    "string": 2,
    "object": 3,
    "array": 4,
    "boolean": 5,
}


def type_class(value: JSON) -> TypeClass:
    """Return the type class of a JSON value; :data:`MISSING` is in class ``"null"``.

    Raises:
        TypeError: ``value`` is not a JSON value (``dict`` with ``str`` keys, ``list``,
            ``str``, ``int``, ``float``, ``bool``, ``None``) nor :data:`MISSING`.

    """
    if value is None or value is MISSING:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def type_rank(value: JSON) -> int:
    """Return the position of the value's type class in the order (null 0 ... boolean 5).

    Raises:
        TypeError: ``value`` is not a JSON value nor :data:`MISSING`.

    """
    return _RANKS[type_class(value)]


def sort_key(value: JSON) -> OrderKey:
    """Encode ``value`` as a tuple that Python orders exactly as the total order.

    Usable as ``key=`` of :func:`sorted`, and hashable: two values get equal keys exactly
    when :func:`compare` says they are equal (so ``1`` and ``1.0`` share a key, while
    ``1`` and ``True`` do not, and neither do objects whose keys differ in order).

    Raises:
        TypeError: ``value`` (or something inside it) is not a JSON value.

    """
    kind = type_class(value)
    rank = _RANKS[kind]
    if kind == "null":
        return (rank,)
    if kind == "object":
        return (rank, tuple((key, sort_key(item)) for key, item in value.items()))
    if kind == "array":
        return (rank, tuple(sort_key(item) for item in value))
    # numbers, strings and booleans already order correctly among their own class
    return (rank, value)


def compare(a: JSON, b: JSON) -> int:
    """Return -1, 0 or 1 as ``a`` sorts before, with or after ``b``.

    Raises:
        TypeError: either value is not a JSON value nor :data:`MISSING`.

    """
    key_a, key_b = sort_key(a), sort_key(b)
    if key_a < key_b:
        return -1
    return 1 if key_a > key_b else 0
