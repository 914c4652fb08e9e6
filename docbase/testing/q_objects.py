"""Raw ``q`` objects for property tests: Hypothesis strategies, and a filter written as one.

:func:`json_queries` generates ``q`` objects as clients send them, for the parser and
for fuzzing; :func:`filter_to_json` (:mod:`docbase.core.query.unparse`, where the remote
client uses it too) turns a parsed filter back into a ``q`` object, for round-trip
properties. Both are also offered by :mod:`docbase.testing.strategies`.
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from docbase.core.query import (
    JSON,
    Path,
)
from docbase.core.query.unparse import filter_to_json
from docbase.testing.document_strategies import DATES, PATTERNS, json_scalars, json_values, paths


def _keys(value: JSON) -> tuple[str, ...]:
    """Every key of ``value``, at any depth."""
    if isinstance(value, dict):
        return (*value, *(key for item in value.values() for key in _keys(item)))
    if isinstance(value, list):
        return tuple(key for item in value for key in _keys(item))
    return ()


def _q_path(path: Path) -> bool:
    """Tell whether a ``q`` object can name ``path`` (no step starts with ``$``)."""
    return not any(step.startswith("$") for step in path)


def _dated(values: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    return values | st.sampled_from(DATES).map(lambda d: {"$date": d})


# Strategies are built once per shape and cached: building them on every draw makes
# Hypothesis validate them afresh each time, which is slow.
_Q_SCALAR = _dated(json_scalars())
_Q_VALUE = _dated(json_values(1).filter(lambda value: _q_path(_keys(value))))
_Q_VALUES = st.lists(_Q_VALUE, max_size=3)
_Q_PATTERNS = st.sampled_from(PATTERNS)
_Q_OPTIONS = st.one_of(st.none(), st.sampled_from(("", "i", "mi", "xs", "smix")))
_Q_EXISTS = st.sampled_from((True, False, 0, 1))
_Q_LOGICAL = st.lists(st.sampled_from(("$and", "$or")), max_size=2, unique=True)
_Q_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$bt", "$in", "$nin", "$regex",
                "$exists")


@functools.cache
def _q_operator_objects(depth: int, element: bool) -> st.SearchStrategy[dict[str, JSON]]:
    nested = () if depth <= 0 else ("$not",) if element else ("$not", "$elemMatch")
    names = st.lists(st.sampled_from(_Q_OPERATORS + nested), min_size=1, max_size=3,
                     unique=True)
    return _q_operators(names, depth, element)


@functools.cache
def _q_negated(depth: int, element: bool) -> st.SearchStrategy[JSON]:
    return _q_operator_objects(depth, element) | _Q_VALUE


@functools.cache
def _q_elem_matched(depth: int) -> st.SearchStrategy[JSON]:
    return _q_operator_objects(depth, True) | _q_document_objects(depth, True)


@st.composite
def _q_operators(
    draw: st.DrawFn, names: st.SearchStrategy[list[str]], depth: int, element: bool
) -> dict[str, JSON]:
    ops: dict[str, JSON] = {}
    for name in draw(names):
        match name:
            case "$eq" | "$ne":
                ops[name] = draw(_Q_VALUE)
            case "$gt" | "$gte" | "$lt" | "$lte":
                ops[name] = draw(_Q_SCALAR)
            case "$bt":
                ops[name] = [draw(_Q_SCALAR), draw(_Q_SCALAR)]
            case "$in" | "$nin":
                ops[name] = draw(_Q_VALUES)
            case "$regex":
                ops[name] = draw(_Q_PATTERNS)
                if (options := draw(_Q_OPTIONS)) is not None:
                    ops["$options"] = options
            case "$exists":
                ops[name] = draw(_Q_EXISTS)
            case "$not":
                ops[name] = draw(_q_negated(depth - 1, element))
            case _:
                ops[name] = draw(_q_elem_matched(depth - 1))
    return ops


@functools.cache
def _q_document_objects(depth: int, non_empty: bool) -> st.SearchStrategy[dict[str, JSON]]:
    keys = st.lists(paths().filter(_q_path).map(".".join), min_size=int(non_empty),
                    max_size=3, unique=True)
    condition = _Q_VALUE | _q_operator_objects(depth, False)
    operands = None
    if depth > 0:
        operands = st.lists(_q_document_objects(depth - 1, False), min_size=1, max_size=2)
    return _q_documents(keys, condition, operands)


@st.composite
def _q_documents(
    draw: st.DrawFn,
    keys: st.SearchStrategy[list[str]],
    condition: st.SearchStrategy[JSON],
    operands: st.SearchStrategy[list[dict[str, JSON]]] | None,
) -> dict[str, JSON]:
    q: dict[str, JSON] = {key: draw(condition) for key in draw(keys)}
    if operands is not None:
        for op in draw(_Q_LOGICAL):
            q[op] = draw(operands)
    return q


@functools.cache  # built once: a strategy built per example is validated again each time
def json_queries(max_depth: int = 3) -> st.SearchStrategy[dict[str, JSON]]:
    """Generate raw ``q`` objects that :func:`~docbase.core.query.parse_filter` accepts.

    It uses every operator of ``docs/query.md``, ``$date`` operands of every kind (parse them with
    a fixed ``now``), ``$not`` with operators or a plain value, ``$elemMatch`` with
    element operators or field conditions, and ``$and``/``$or`` up to ``max_depth``.
    """
    return _q_document_objects(max_depth, False)


__all__ = ["filter_to_json", "json_queries"]
