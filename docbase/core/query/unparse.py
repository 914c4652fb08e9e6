"""A parsed filter written back as a ``q`` object: the inverse of ``parse_filter``.

For every filter :func:`~docbase.core.query.parse_filter` returns,
``parse_filter(filter_to_json(f)) == f`` (a property of ``tests/test_properties.py``).
The remote client (``docbase/client/query_params.py``) sends a parsed query with it; the
property tests generate filters and check the round trip.
"""

from __future__ import annotations

from docbase.core.query.ast import (
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


__all__ = ["filter_to_json"]
