"""A sorted page as two ordered streams merged, so that an index can serve the order.

A sort on a path orders most documents by the value at the path and the few whose path
meets an array by their least (greatest) item (:meth:`.QueryCompiler.sort_parts`). One
``ORDER BY`` over both is an expression no index holds. So a page of a sorted query
with a limit is two queries of ``skip + limit`` rows each, merged by one more sort::

    SELECT body FROM (
        SELECT ... WHERE no sorted path meets an array AND filter   -- the plain stream
        ORDER BY <plain parts>, id LIMIT skip + limit
      UNION ALL
        SELECT ... WHERE a sorted path meets an array AND filter     -- the walked stream
        ORDER BY <item parts>, id LIMIT skip + limit
    ) ORDER BY <parts>, id LIMIT limit OFFSET skip

In the plain stream the sorted paths are known to meet no array, so conditions on them
compile to their first branch alone; with an expression index on the leading sorted
path (``ensure_index``), that stream is one index scan in order that stops after
``skip + limit`` rows, for the filter and the order alike. The walked stream finds its
documents through the path's fanout index and is usually empty. A cursor's condition
(:mod:`.keyset`) goes into both streams, on their own sort parts, so that the index
seeks to the cursor instead of walking the pages before it.

A page led by an equality (:func:`split`) is read in an index holding the value then
the order: the key index (value, ``id``) for the default order, which then takes the
same two-stream form with no sort, or a :class:`.Composite` (value, sort, ``id``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from docbase.adapters.sql import keyset
from docbase.adapters.sql.compiler import QueryCompiler
from docbase.adapters.sql.dialects import Dialect
from docbase.adapters.sql.indexes import Composite, Indexed
from docbase.adapters.sql.values import Condition, Expr
from docbase.core.field_name_encoding import encode_names, encode_path
from docbase.core.query import (
    And,
    Between,
    Eq,
    Filter,
    Gt,
    Gte,
    In,
    Lt,
    Lte,
    Or,
    Path,
    Query,
    Regex,
)
from docbase.core.query.regex import prefix_bounds

COMPARISONS = (Eq, Gt, Gte, Lt, Lte, Between, In)
"""Conditions an expression index on their path answers by a seek."""


def _stream(compiler: QueryCompiler, body: Expr, query: Query, where: Condition,
            leading: Path | None = None) -> sa.Select[Any]:
    table = compiler.table
    columns: list[Any] = []
    # one value where the equality holds: ordering by it first changes no order, and
    # makes the order the one of the index holding it then the sort (then id)
    lead = leading is not None and compiler.dialect.traits.orders_after_equality
    order: list[Any] = [] if not lead or leading is None else [
        part.asc() for part in compiler.dialect.index_parts(
            compiler.root.fast.walk(encode_path(leading)))]
    for key in query.sort:
        descending = key.direction == -1
        for part in compiler.sort_parts(encode_names(key).path, descending):
            columns.append(part.label(f"s{len(columns)}"))
            order.append(part.desc() if descending else part.asc())
    assert query.limit is not None
    return (sa.select(body.label("body"), table.c.id, *columns).where(where)
            .order_by(*order, table.c.id.asc()).limit(written_number(query.skip + query.limit)))


def deferred_page(table: sa.TableClause, body: Expr, query: Query) -> sa.Select[Any]:
    """A page of the whole collection in key order, its rows skipped in the key index only.

    ``SELECT body ... WHERE id IN (SELECT id ... ORDER BY id LIMIT l OFFSET s) ORDER BY id``:
    the skipped rows are read in the key index alone instead of each one's row.
    PostgreSQL: an index-only scan once the table is vacuumed, about half the server's
    time for a page 5,000 rows deep (``docs/benchmarks.md``, branch ``pgspeed``). SQLite:
    a scan of the covering key index, where the plain ``OFFSET`` looked each skipped row
    up in the table (73 against 121 µs for 20 rows at 5,000 of 10,000; run 14).
    """
    assert query.limit is not None
    inner = table.alias("k")
    keys = sa.select(inner.c.id).order_by(inner.c.id.asc()).limit(written_number(query.limit))
    if query.skip:
        keys = keys.offset(written_number(query.skip))
    return (sa.select(body).select_from(table).where(table.c.id.in_(keys.scalar_subquery()))
            .order_by(table.c.id.asc()))


def compared_paths(filter: Filter) -> list[Path]:
    """The paths of the equality and range conditions ``filter`` requires, in turn.

    A ``$regex`` with a literal prefix (``^abc``) is a range too (:func:`.prefix_bounds`).

    The filter itself when it is one, or the members of a top-level ``$and`` (names
    not encoded): an index on any of them can find every matching document.
    """
    operands = filter.operands if isinstance(filter, And) else (filter,)
    return [operand.path for operand in operands if isinstance(operand, COMPARISONS)
            or (isinstance(operand, Regex)
                and prefix_bounds(operand.pattern, operand.options) is not None)]


class Split(NamedTuple):
    """How :func:`sorted_page` splits a page: its flat paths (``()``: no split) and lead."""

    flat: tuple[Path, ...] = ()
    leading: Path | None = None
    """An equality's path whose value's parts lead the plain stream's order, or none."""
    branches: tuple[Split, ...] = ()
    """An ``$or``'s page: each operand's own split (:func:`merged_branches`), or none."""


NO_SPLIT = Split()


def split(query: Query, indexed: Callable[[Indexed], bool]) -> Split:
    """The paths :func:`sorted_page` takes as flat in its plain stream, and its lead.

    The sorted paths when the leading one has an index (the index serves the order),
    and the indexed paths of the filter's equality and range conditions (the index
    seeks to the matches, which alone are sorted); only the latter when one of them is
    an equality on another path than the sorted ones, unless a :class:`.Composite`
    index holds that path then the sort: then both, led by the equality, so that the
    page is read in that index. Without a sort, an indexed equality alone, leading
    (its key index holds ``id`` after the value). Without any, one statement. (The
    walked stream's equality on a path with an item index seeks there, :mod:`.item_indexes`.)
    """
    if query.limit is None:
        return Split()
    operands = branch_filters(query.filter)
    if operands is not None and not query.sort and query.after is None:
        # each operand a page of its own, led by an indexed equality: ids in key order
        branches = tuple(split(branch_query(query, operand), indexed) for operand in operands)
        if all(part.leading is not None for part in branches):
            return Split(branches=branches)
    if isinstance(query.filter, Or):
        return Split()
    compared = [path for path in dict.fromkeys(compared_paths(query.filter)) if indexed(path)]
    equal = seek_equality(query.filter, compared)
    if not query.sort:
        return Split(tuple(compared), equal) if equal is not None else Split()
    sorted_paths = [key.path for key in query.sort]
    first = query.sort[0]
    # (the sorted path's own fanout index finds the walked stream's documents; an _id
    # meets no array)
    if equal is not None and equal != first.path and indexed(
            Composite(equal, first.path, first.direction == -1)) and (
            first.path == ("_id",) or indexed(first.path)):
        return Split((*compared, *(path for path in sorted_paths if path not in compared)),
                     equal)
    if any(path not in sorted_paths for path in equal_paths(query.filter)
           if path in compared):
        # an indexed equality on another path: seek to it and sort its matches; with the
        # sort index usable, PostgreSQL walked it when the two fields were correlated
        # (0.2 % by status sorted by price: 14.6 s at 1,000,000 documents)
        return Split(tuple(compared))
    flat = sorted_paths if indexed(sorted_paths[0]) else []
    return Split(tuple(flat + [path for path in compared if path not in flat]))


def seek_equality(filter: Filter, paths: Sequence[Path]) -> Path | None:
    """The first of ``paths`` ``filter`` requires to equal one scalar (not null), or none.

    In a stream where the path is flat its condition is ``parts = value``: one value.
    """
    operands = filter.operands if isinstance(filter, And) else (filter,)
    return next((operand.path for operand in operands
                 if isinstance(operand, Eq) and operand.path in paths
                 and operand.path != ("_id",) and operand.value is not None
                 and not isinstance(operand.value, dict | list)), None)


def equal_paths(filter: Filter) -> list[Path]:
    """The paths of the equality conditions (``Eq``, ``In``) ``filter`` requires."""
    operands = filter.operands if isinstance(filter, And) else (filter,)
    return [operand.path for operand in operands if isinstance(operand, Eq | In)]


def written_number(number: int) -> Any:
    """An OFFSET or LIMIT count written into the statement."""
    # written out, not bound: PostgreSQL then keeps one generic plan for a prepared
    # statement (with LIMIT $n unknown it plans each execution again, ~1 ms here)
    return sa.literal_column(str(int(number)), sa.Integer)


def sorted_page(dialect: Dialect, table: sa.TableClause, body: Expr, query: Query,
                split: Split, *, items: Sequence[tuple[Path, int]] = ()) -> sa.Select[Any]:
    """The statement of a page with a limit (sorted, or in key order), selecting ``body``.

    ``split.flat`` (names not encoded) are known flat in the plain stream: the sorted
    paths when the leading one has an index, and the indexed paths the filter compares
    (:func:`compared_paths`), so that their conditions are index seeks there; the plain
    stream is ordered by ``split.leading``'s parts first. ``items``: the item indexes
    (:class:`.QueryCompiler`).
    """
    assert query.limit is not None
    paths = [encode_path(path) for path in split.flat]
    walking = QueryCompiler(dialect, table, items=items)
    # (not on a flat path: there the key or composite index seeks, reading in order)
    flat = QueryCompiler(dialect, table, flat=paths, items=[
        (path, index) for path, index in items if not any(path == f[:len(path)] for f in paths)])
    # a stored _id is one string (the id column's): it never meets an array, and its
    # fanout in the walked stream's OR would read every match of the condition
    fanouts = [dialect.fanout(walking.root.fast, path) for path in paths if path != ("_id",)]
    # past a cursor each stream seeks on its own sort parts (:mod:`.keyset`), the plain
    # one in each range of the index the rows after the cursor form
    plain = [_stream(flat, body, query, sa.and_(
        *(fanout.is_not(sa.true()) for fanout in fanouts), flat.where(query.filter), *seek),
        split.leading)
        for seek in [[bound] for bound in keyset.seeks(query, flat)] or [[]]]
    seek = keyset.condition(query, walking)
    if any(encode_path(path) in dict(items) for path in equal_paths(query.filter)):
        # an item index's ids drive the walked stream (.item_indexes), not a fanout index
        fanouts = [dialect.unindexed_fanout(walking.root.fast, path)
                   for path in paths if path != ("_id",)]
    walked = [_stream(walking, body, query, sa.and_(
        sa.or_(*fanouts), walking.where(query.filter), *([] if seek is None else [seek])))
        ] if fanouts else []
    merged = sa.union_all(*(sa.select(stream.subquery()) for stream in [*plain, *walked])
                          ).subquery()
    order: list[Any] = []
    position = 0
    for key in query.sort:
        count = len(flat.sort_parts(encode_names(key).path, key.direction == -1))
        for column in list(merged.c)[2 + position:2 + position + count]:
            order.append(column.desc() if key.direction == -1 else column.asc())
        position += count
    statement = (sa.select(merged.c.body).order_by(*order, merged.c.id.asc())
                 .limit(written_number(query.limit)))
    return statement.offset(written_number(query.skip)) if query.skip else statement


MERGED_IN_VALUES = 8
"""The most values of an ``$in`` whose page merges each value's own (:func:`branch_filters`)."""


def branch_filters(filter: Filter) -> tuple[Filter, ...] | None:
    """The operands whose pages :func:`merged_branches` merges, or none.

    An ``$or``'s; or an ``$in`` of 2 to :data:`MERGED_IN_VALUES` scalars (not null) as
    one equality per value, which it is: a seek to each value's matches returns their
    ids in key order (the key index holds ``id`` after the value, an item index too),
    while the ``$in``'s ranges together are in no order, and PostgreSQL collected every
    match of an array's two values (4,000) to sort them for a page of 20.
    """
    if isinstance(filter, Or):
        return filter.operands
    if isinstance(filter, In) and 1 < len(filter.values) <= MERGED_IN_VALUES and all(
            value is not None and not isinstance(value, dict | list) for value in filter.values):
        return tuple(Eq(filter.path, value) for value in filter.values)
    return None


def branch_query(query: Query, operand: Filter) -> Query:
    """The page an ``$or``'s operand contributes to ``query``'s: its first skip + limit."""
    assert query.limit is not None
    return Query(filter=operand, limit=query.skip + query.limit)


def merged_branches(dialect: Dialect, table: sa.TableClause, body: Expr, query: Query,
                    split: Split, *, items: Sequence[tuple[Path, int]] = ()) -> sa.Select[Any]:
    """A page of an ``$or`` (or ``$in``) in key order, each operand read in its own index.

    One condition ``a OR b`` is no index's range: the database collects every match of
    both (PostgreSQL: a bitmap of 2,000 rows at 0.2 %) to sort them by key for a page of
    20. Each operand led by an indexed equality is a page in key order of its own
    (:func:`sorted_page`, its ids only), the first ``skip + limit`` of each is enough,
    ``UNION`` drops an id two operands found, and the page's bodies are read by key::

        SELECT body ... WHERE id IN (SELECT id FROM (<ids of a> UNION <ids of b>)
                                     ORDER BY id LIMIT limit OFFSET skip) ORDER BY id
    """
    operands = branch_filters(query.filter)
    assert operands is not None
    assert query.limit is not None
    streams = [sorted_page(dialect, table, table.c.id, branch_query(query, operand), part,
                           items=items)
               for operand, part in zip(operands, split.branches, strict=True)]
    ids = sa.union(*(sa.select(stream.subquery()) for stream in streams)).subquery()
    keys = sa.select(ids.c.body).order_by(ids.c.body.asc()).limit(written_number(query.limit))
    if query.skip:
        keys = keys.offset(written_number(query.skip))
    return (sa.select(body).select_from(table).where(table.c.id.in_(keys.scalar_subquery()))
            .order_by(table.c.id.asc()))
