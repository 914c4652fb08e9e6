"""Hypothesis strategies for documents, queries, aggregations and updates.

Any adapter's tests may use these, typically for differential tests against
:mod:`docbase.core.evaluate`. The values, paths and documents come from
:mod:`docbase.testing.document_strategies` (small pools, so that generated queries
often hit generated documents), raw ``q`` objects and :func:`filter_to_json` from
:mod:`docbase.testing.q_objects`; this module offers all of them under one name.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hypothesis import strategies as st

from docbase.core.documents import Document
from docbase.core.evaluate import reached_values
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
from docbase.testing.document_strategies import (
    DATES,
    FIELDS,
    FLOATS,
    INDEXES,
    PATTERNS,
    REGEX_OPTIONS,
    TEXTS,
    document_sets,
    documents,
    field_names,
    json_scalars,
    json_values,
    paths,
)
from docbase.testing.q_objects import filter_to_json, json_queries


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


@functools.cache  # built once: a strategy built per example is validated again each time
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


@functools.cache  # built once: a strategy built per example is validated again each time
def sorts() -> st.SearchStrategy[tuple[SortKey, ...]]:
    """Generate up to two sort keys on distinct object paths (no numeric steps)."""
    key = st.builds(SortKey, paths(max_steps=2, numeric=False), st.sampled_from((1, -1)))
    return st.lists(key, max_size=2, unique_by=lambda k: k.path).map(tuple)


@functools.cache  # built once: a strategy built per example is validated again each time
def projections() -> st.SearchStrategy[Projection | None]:
    """Generate no projection, or one including or excluding disjoint object paths."""
    listed = st.lists(paths(max_steps=2, numeric=False), min_size=1, max_size=3)
    return st.none() | st.builds(
        Projection, listed.map(lambda ps: tuple(_prefix_free(ps))), st.booleans()
    )


@functools.cache  # built once: a strategy built per example is validated again each time
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


@functools.cache  # built once: a strategy built per example is validated again each time
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
    amounts = st.integers(-3, 3) | st.sampled_from(FLOATS)
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


def held_values_in(data: st.DataObject, documents: Sequence[Document],
                   paths: Sequence[Path]) -> In:
    """An ``$in`` of 2 or 3 scalars ``documents`` hold at its path.

    The path is one of ``paths``, or ``tags`` or ``a``, which most documents hold; a
    random value would match nothing, mostly.
    """
    path = data.draw(st.sampled_from([("tags",), ("a",)]) | st.sampled_from(list(paths)),
                     label="path")
    held = [value for document in documents for value in reached_values(document, path)
            if not isinstance(value, dict | list)]
    value = st.sampled_from(held) if held else json_scalars()
    return In(path, tuple(data.draw(st.lists(value, min_size=2, max_size=3), label="values")))


__all__ = [
    "DATES", "FIELDS", "FLOATS", "INDEXES", "PATTERNS", "REGEX_OPTIONS", "TEXTS", "aggregations",
    "document_sets", "documents", "field_names", "filter_to_json", "filters", "held_values_in",
    "json_queries", "json_scalars", "json_values", "paths", "projections", "queries", "sorts",
    "updates",
]
