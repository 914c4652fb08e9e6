"""Raw ``q`` objects for property tests: Hypothesis strategies, and a filter written as one.

:func:`json_queries` generates ``q`` objects as clients send them, for the parser and
for fuzzing; :func:`filter_to_json` turns a parsed filter back into a ``q`` object (the
inverse of :func:`docbase.core.query.parse_filter` on its output), for round-trip
properties. Both are also offered by :mod:`docbase.testing.strategies`.
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from docbase.core.query import (
    JSON,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
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


def json_queries(max_depth: int = 3) -> st.SearchStrategy[dict[str, JSON]]:
    """Generate raw ``q`` objects that :func:`~docbase.core.query.parse_filter` accepts.

    It uses every operator of ``docs/query.md``, ``$date`` operands of every kind (parse them with
    a fixed ``now``), ``$not`` with operators or a plain value, ``$elemMatch`` with
    element operators or field conditions, and ``$and``/``$or`` up to ``max_depth``.
    """
    return _q_document_objects(max_depth, False)


# ---------------------------------------------------------------------------- filter to q

_COMPARISONS: dict[type, str] = {Eq: "$eq", Ne: "$ne", Gt: "$gt", Gte: "$gte", Lt: "$lt",
                                 Lte: "$lte"}


def filter_to_json(filter: Filter) -> dict[str, JSON]:
    """Serialise a filter AST back to a ``q`` object.

    For every filter :func:`~docbase.core.query.parse_filter` returns,
    ``parse_filter(filter_to_json(f)) == f``. Conditions on one path are merged into
    one operator object where their operators differ, and fall back to ``$and``.

    Raises:
        ValueError: the filter has no ``q`` form: it holds :class:`Text` (the ``filter``
            URL parameter), an empty ``Or``, or a ``Not`` that is not about one path.

    """
    q = _document(filter)
    if q is None:
        raise ValueError(f"{filter!r} cannot be written as a q object")
    return q


def _document(filter: Filter) -> dict[str, JSON] | None:
    entry = _field_entry(filter)
    if entry is None and isinstance(filter, And) and len(filter.operands) != 1:
        entries = [_entry(operand) for operand in filter.operands]
        merged = {e[0]: e[1] for e in entries if e is not None}
        if len(merged) == len(entries):
            return merged
    entry = entry or _entry(filter)
    return None if entry is None else {entry[0]: entry[1]}


def _entry(filter: Filter) -> tuple[str, JSON] | None:
    entry = _field_entry(filter)
    if entry is None and isinstance(filter, And | Or) and filter.operands:
        operands = [_document(operand) for operand in filter.operands]
        if all(q is not None for q in operands):
            return ("$and" if isinstance(filter, And) else "$or"), operands
    return entry


def _field_entry(filter: Filter) -> tuple[str, JSON] | None:
    path = _subject(filter)
    conditions = None if not path else _conditions_on(filter, path)
    if path is None or conditions is None:
        return None
    if isinstance(filter, Eq) and not isinstance(filter.value, dict):
        return ".".join(path), filter.value
    return ".".join(path), conditions


def _subject(filter: Filter) -> Path | None:
    """Return the one path ``filter`` is about, if there is one."""
    if isinstance(filter, Not):
        return _subject(filter.operand)
    if isinstance(filter, And):
        subjects = {_subject(operand) for operand in filter.operands}
        return subjects.pop() if len(filter.operands) >= 2 and len(subjects) == 1 else None
    if isinstance(filter, Or | Text):
        return None
    return filter.path


def _conditions_on(filter: Filter, path: Path) -> dict[str, JSON] | None:
    """Return ``filter`` as one operator object on ``path``, or ``None`` if it is not one."""
    match filter:
        case Eq() | Ne() | Gt() | Gte() | Lt() | Lte() if filter.path == path:
            return {_COMPARISONS[type(filter)]: filter.value}
        case Between(low=low, high=high) if filter.path == path:
            return {"$bt": [low, high]}
        case In(values=values) | Nin(values=values) if filter.path == path:
            return {"$in" if isinstance(filter, In) else "$nin": list(values)}
        case Regex(pattern=pattern, options=options) if filter.path == path:
            return {"$regex": pattern, "$options": options} if options else {"$regex": pattern}
        case Exists(present=present) if filter.path == path:
            return {"$exists": present}
        case ElemMatch(query=query, objects=objects) if filter.path == path:
            inner = _document(query) if objects else _conditions_on(query, ())
            return {"$elemMatch": inner} if inner else None
        case Not(operand=operand):
            inner = _conditions_on(operand, path)
            return None if inner is None else {"$not": inner}
        case And(operands=operands) if len(operands) >= 2:
            merged: dict[str, JSON] = {}
            for operand in operands:
                part = _conditions_on(operand, path)
                if part is None or merged.keys() & part.keys():
                    return None
                merged.update(part)
            return merged
    return None


__all__ = ["filter_to_json", "json_queries"]
