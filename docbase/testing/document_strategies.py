"""Hypothesis strategies for JSON values, paths and documents, and the pools they draw on.

The ground :mod:`docbase.testing.strategies` (filters, queries, updates) and
:mod:`docbase.testing.q_objects` (raw ``q`` objects) build on. Everything is drawn from
a small field alphabet (:data:`FIELDS`) and small value pools, so that generated
queries often hit generated documents, and sizes stay modest (at most 8 documents per
set, values nested at most 3 levels deep).

Generated data stays inside what every backend can store and compare the same way:
numbers are integers within ±2**53 or finite floats that round-trip exactly through
JSON; strings never hold NUL or lone surrogates; keys never start with ``_`` and
never contain ``.`` (two of :data:`FIELDS` hold NUL and U+0001, one starts with ``$``,
and is left out of ``q`` objects, where it would be an operator); regular expressions
come from a small portable set.
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from docbase.core.documents import Document, new_document
from docbase.core.query import JSON, Path

FIELDS = ("a", "b", "c", "tags", "items", "a\x00", "\x01", "$a")
"""The field names documents and queries are built from (with NUL and the escape
character of stored keys, :mod:`docbase.core.field_name_encoding`, and a ``$`` key, which the
Mongo adapter stores shifted, :mod:`docbase.adapters.mongo.keys`)."""

INDEXES = ("0", "1")
"""Numeric path steps (array indexes) that paths may contain after the first step."""

PATTERNS = ("a", "^a", "b$", "^[a-c]+$", "A", "x y", "^.{2,}$", "a|b", "[0-9]", "^$", "é",
            "a.b", "\\s", "^A.*c$")
"""Portable regular expressions: the same meaning in Python, PCRE and PostgreSQL."""

REGEX_OPTIONS = ("", "i", "m", "s", "x", "im", "is", "imsx")
"""``$options`` values, each in the canonical (sorted) form the parser produces."""

TEXTS = ("a", "B", "é", "日", "x y", "ab", "1")
"""Needles of the ``filter=`` text search."""

DATES: tuple[JSON, ...] = (
    "2016-01-01", "2016-01-01T12:30:00Z", "2016-01-01T12:30:00.123+02:00",
    "2016-02-29T23:59:59.999Z", 1451606400000, 0,
    "$currentDate", "$currentMonth", "$currentYear", "$now",
)
"""``$date`` operands of every accepted kind (parse with a fixed ``now``)."""

_ALPHABET = "abcAB xy01é日☃\n"
_STRINGS = ("", "a", "b", "A", "ab", "abc", "é", "日本", "x y", "1")

FLOATS = (0.5, -1.5, 1.0, 2.0, 1e-3, 123.25)
"""Floats drawn often: each round-trips exactly through JSON and every backend."""


@functools.cache  # built once: a strategy built per example is validated again each time
def field_names() -> st.SearchStrategy[str]:
    """Generate a field name from :data:`FIELDS`."""
    return st.sampled_from(FIELDS)


@functools.cache  # built once: a strategy built per example is validated again each time
def paths(*, max_steps: int = 3, numeric: bool = True) -> st.SearchStrategy[Path]:
    """Generate paths of 1 to ``max_steps`` steps; later ones may be indexes if ``numeric``."""
    step = st.sampled_from(FIELDS + INDEXES) if numeric else field_names()
    return st.builds(lambda first, rest: (first, *rest),
                     field_names(), st.lists(step, max_size=max_steps - 1))


@functools.cache  # built once: a strategy built per example is validated again each time
def json_scalars() -> st.SearchStrategy[JSON]:
    """Generate null, booleans, numbers and strings, biased towards small repeated values."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.integers(-(2**53), 2**53),
        st.sampled_from(FLOATS),
        st.floats(-1e15, 1e15, allow_nan=False, allow_infinity=False, allow_subnormal=False),
        st.sampled_from(_STRINGS),
        st.text(_ALPHABET, max_size=6),
    )


@functools.cache  # built once: a strategy built per example is validated again each time
def json_values(max_depth: int = 2) -> st.SearchStrategy[JSON]:
    """Generate JSON values whose arrays and objects nest at most ``max_depth`` deep."""
    return _values(max_depth)


# Hypothesis prints (and validates through) the repr of nested strategies; drawing from
# a cached strategy inside a composite keeps those reprs short.
@functools.cache
def _value_strategy(max_depth: int) -> st.SearchStrategy[JSON]:
    if max_depth <= 0:
        return json_scalars()
    inner = json_values(max_depth - 1)
    return st.one_of(
        json_scalars(),
        st.lists(inner, max_size=3),
        st.dictionaries(field_names(), inner, max_size=3),
    )


@st.composite
def _values(draw: st.DrawFn, max_depth: int) -> JSON:
    return draw(_value_strategy(max_depth))


@functools.cache  # built once: a strategy built per example is validated again each time
def documents() -> st.SearchStrategy[Document]:
    """Generate document bodies (no system fields): subsets of :data:`FIELDS`, mixed types.

    ``tags`` is usually an array of scalars and ``items`` an array of objects, but
    either may hold anything. Arrays and objects nest at most 3 levels inside the
    document (``items`` may hold arrays inside objects inside the array).
    """
    value = json_values(2)
    tags = st.lists(json_scalars(), max_size=4)
    items = st.lists(st.dictionaries(field_names(), json_values(1), max_size=3), max_size=3)
    return st.fixed_dictionaries(
        {}, optional={"a": value, "b": value, "c": value, "tags": tags | value,
                      "items": items | value},
    )


@functools.cache  # built once: a strategy built per example is validated again each time
def document_sets(max_size: int = 8) -> st.SearchStrategy[list[Document]]:
    """Generate up to ``max_size`` documents stamped by :func:`.new_document`."""
    return st.lists(documents(), max_size=max_size).map(
        lambda bodies: [new_document(body, "api") for body in bodies]
    )


__all__ = [
    "DATES", "FIELDS", "FLOATS", "INDEXES", "PATTERNS", "REGEX_OPTIONS", "TEXTS",
    "document_sets", "documents", "field_names", "json_scalars", "json_values", "paths",
]
