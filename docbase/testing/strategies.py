"""Hypothesis strategies for documents, queries, aggregations and updates.

Any adapter's tests may use these, typically for differential tests against
:mod:`docbase.core.evaluate`. Everything is drawn from a small field alphabet
(:data:`FIELDS`) and small value pools, so that generated queries often hit generated
documents, and sizes stay modest (at most 8 documents per set, values nested at most
3 levels deep).

Generated data stays inside what every backend can store and compare the same way:
numbers are integers within ±2**53 or finite floats that round-trip exactly through
JSON; strings never hold NUL or lone surrogates; keys never start with ``_`` and
never contain ``.`` (two of :data:`FIELDS` hold NUL and U+0001, one starts with ``$``,
and is left out of ``q`` objects, where it would be an operator); regular expressions
come from a small portable set.

:func:`filter_to_json` turns a parsed filter back into a ``q`` object (the inverse of
:func:`docbase.core.query.parse_filter` on its output), for round-trip properties.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hypothesis import strategies as st

from docbase.core.documents import Document, new_document
from docbase.core.query import (
    JSON,
    MATCH_ALL,
    Aggregate,
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
    Projection,
    Query,
    Regex,
    SortKey,
    Text,
)
from docbase.core.update import IncOp, PullOp, PushOp, SetOp, UnsetOp, Update, UpdateOp

FIELDS = ("a", "b", "c", "tags", "items", "a\x00", "\x01", "$a")
"""The field names documents and queries are built from (with NUL and the escape
character of stored keys, :mod:`docbase.core.stored_keys`, and a ``$`` key, which the
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
_FLOATS = (0.5, -1.5, 1.0, 2.0, 1e-3, 123.25)


def field_names() -> st.SearchStrategy[str]:
    """Generate a field name from :data:`FIELDS`."""
    return st.sampled_from(FIELDS)


def paths(*, max_steps: int = 3, numeric: bool = True) -> st.SearchStrategy[Path]:
    """Generate paths of 1 to ``max_steps`` steps; later ones may be indexes if ``numeric``."""
    step = st.sampled_from(FIELDS + INDEXES) if numeric else field_names()
    return st.builds(lambda first, rest: (first, *rest),
                     field_names(), st.lists(step, max_size=max_steps - 1))


def json_scalars() -> st.SearchStrategy[JSON]:
    """Generate null, booleans, numbers and strings, biased towards small repeated values."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.integers(-(2**53), 2**53),
        st.sampled_from(_FLOATS),
        st.floats(-1e15, 1e15, allow_nan=False, allow_infinity=False, allow_subnormal=False),
        st.sampled_from(_STRINGS),
        st.text(_ALPHABET, max_size=6),
    )


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


def document_sets(max_size: int = 8) -> st.SearchStrategy[list[Document]]:
    """Generate up to ``max_size`` documents stamped by :func:`.new_document`."""
    return st.lists(documents(), max_size=max_size).map(
        lambda bodies: [new_document(body, "api") for body in bodies]
    )


# ---------------------------------------------------------------------------- filters


def _operands() -> st.SearchStrategy[JSON]:
    return st.one_of(json_scalars(), json_values(1))


def _conditions(path: st.SearchStrategy[Path]) -> st.SearchStrategy[Filter]:
    value, scalar = _operands(), json_scalars()
    values = st.lists(value, max_size=3).map(tuple)
    return st.one_of(
        st.builds(Eq, path, value),
        st.builds(Ne, path, value),
        st.builds(Gt, path, scalar),
        st.builds(Gte, path, scalar),
        st.builds(Lt, path, scalar),
        st.builds(Lte, path, scalar),
        st.builds(Between, path, scalar, scalar),
        st.builds(In, path, values),
        st.builds(Nin, path, values),
        st.builds(Regex, path, st.sampled_from(PATTERNS), st.sampled_from(REGEX_OPTIONS)),
        st.builds(Exists, path, st.booleans()),
    )


def _and(operands: st.SearchStrategy[Filter], size: int) -> st.SearchStrategy[Filter]:
    return st.lists(operands, min_size=size, max_size=size).map(lambda fs: And(tuple(fs)))


def _elem_matches() -> st.SearchStrategy[Filter]:
    fields = _conditions(paths(max_steps=2))
    element = _conditions(st.just(()))
    return st.one_of(
        st.builds(ElemMatch, paths(), fields | _and(fields, 2), st.just(True)),
        st.builds(ElemMatch, paths(), element | st.builds(Not, element) | _and(element, 2),
                  st.just(False)),
    )


@functools.cache
def _leaf_strategy(text: bool) -> st.SearchStrategy[Filter]:
    leaves = _conditions(paths()) | _elem_matches() | st.just(MATCH_ALL)
    return leaves | st.builds(Text, st.sampled_from(TEXTS)) if text else leaves


@st.composite
def _leaves(draw: st.DrawFn, text: bool) -> Filter:
    return draw(_leaf_strategy(text))


def filters(*, text: bool = True) -> st.SearchStrategy[Filter]:
    """Generate filter ASTs using every node type (``Text`` only when ``text``).

    Field conditions use dot paths through objects and arrays, numeric steps included;
    operands mix every type class, null included. ``ElemMatch`` comes in both kinds,
    and the empty ``And`` (:data:`~docbase.core.query.MATCH_ALL`) may appear anywhere.
    """
    leaves = _leaves(text)

    def extend(children: st.SearchStrategy[Filter]) -> st.SearchStrategy[Filter]:
        operands = st.lists(children, min_size=1, max_size=3).map(tuple)
        return st.one_of(st.builds(Not, children), st.builds(And, operands),
                         st.builds(Or, operands))

    return st.recursive(leaves, extend, max_leaves=6)


# ---------------------------------------------------------------------------- queries


def _prefix_free(candidates: Sequence[Path]) -> list[Path]:
    """Keep the paths, in order, that neither enclose nor extend an earlier kept one."""
    kept: list[Path] = []
    for path in candidates:
        if not any(path[: len(k)] == k or k[: len(path)] == path for k in kept):
            kept.append(path)
    return kept


def sorts() -> st.SearchStrategy[tuple[SortKey, ...]]:
    """Generate up to two sort keys on distinct object paths (no numeric steps)."""
    key = st.builds(SortKey, paths(max_steps=2, numeric=False), st.sampled_from((1, -1)))
    return st.lists(key, max_size=2, unique_by=lambda k: k.path).map(tuple)


def projections() -> st.SearchStrategy[Projection | None]:
    """Generate no projection, or one including or excluding disjoint object paths."""
    listed = st.lists(paths(max_steps=2, numeric=False), min_size=1, max_size=3)
    return st.none() | st.builds(
        Projection, listed.map(lambda ps: tuple(_prefix_free(ps))), st.booleans()
    )


def queries(*, text: bool = True) -> st.SearchStrategy[Query]:
    """Generate a :class:`Query` with filter, sort, skip, limit (``None``: none), projection."""
    return st.builds(
        Query,
        filter=filters(text=text),
        sort=sorts(),
        skip=st.integers(0, 4),
        limit=st.none() | st.integers(0, 6),
        projection=projections(),
    )


def aggregations() -> st.SearchStrategy[tuple[tuple[Path, ...], tuple[Aggregate, ...]]]:
    """Generate ``(groupby, aggregates)``: up to two group paths, one to three aggregates.

    Paths follow objects only; aggregates have distinct result keys.
    """
    groupby = st.lists(paths(max_steps=2, numeric=False), max_size=2, unique=True).map(tuple)
    measured = st.builds(
        lambda func, path: Aggregate(func, ".".join(path)),
        st.sampled_from(("SUM", "AVG", "MIN", "MAX")), paths(max_steps=2, numeric=False),
    )
    counted = st.builds(lambda name: Aggregate("COUNT", name), st.sampled_from(("", "n", "a")))
    aggregates = st.lists(measured | counted, min_size=1, max_size=3,
                          unique_by=lambda a: a.key).map(tuple)
    return st.tuples(groupby, aggregates)


# ---------------------------------------------------------------------------- updates


@functools.cache  # one strategy per path: there are few, and building them is slow
def _update_ops(path: Path) -> st.SearchStrategy[UpdateOp]:
    amounts = st.integers(-3, 3) | st.sampled_from(_FLOATS)
    return st.one_of(
        st.builds(SetOp, st.just(path), json_values(1)),
        st.just(UnsetOp(path)),
        st.builds(IncOp, st.just(path), amounts),
        st.builds(PushOp, st.just(path), json_scalars()),
        st.builds(PullOp, st.just(path), json_scalars()),
    )


_UPDATE_TARGETS = st.lists(paths(max_steps=2), min_size=1, max_size=4)


@st.composite
def updates(draw: st.DrawFn) -> Update:
    """Generate an :class:`Update` of one to four operations on disjoint paths.

    Paths may step through arrays by index and values are of any type, so applying one
    may meet type conflicts (``$inc`` on a string, ``$push`` to an object, ...).
    """
    targets = draw(_UPDATE_TARGETS)
    return Update(tuple(draw(_update_ops(path)) for path in _prefix_free(targets)))


# ---------------------------------------------------------------------------- raw q


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


# ---------------------------------------------------------------------------- serialise

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


__all__ = [
    "DATES", "FIELDS", "INDEXES", "PATTERNS", "REGEX_OPTIONS", "TEXTS", "aggregations",
    "document_sets", "documents", "field_names", "filter_to_json", "filters", "json_queries",
    "json_scalars", "json_values", "paths", "projections", "queries", "sorts", "updates",
]
