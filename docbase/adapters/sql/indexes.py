"""Expression indexes on document paths, dropping collections, and query plans.

``ensure_index(collection, path)`` creates two indexes on the collection table: one on
the order of the value at the path (:meth:`.Dialect.index_parts`: what equality and
range conditions compare and what a sort on the path orders by, see :mod:`.compiler`),
then ``id``, so that the matches of an equality come in key order (the default order
of a page), and one on whether walking the path meets an array (the other branch of
every condition). ``ensure_composite`` creates a :class:`Composite` index: an equality's
path, then a sorted path, then ``id``, so that a page of one value's matches in that
order is read in the index (:mod:`.pages`). A unique index holds the key too, but NULL for null and
missing values, so that those are not constrained; on PostgreSQL it is built from the
``json`` column so that objects differing only in key order stay distinct.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import msgspec
import sqlalchemy as sa
from sqlalchemy.sql.elements import Grouping, UnaryExpression

from docbase.adapters.sql import schema
from docbase.adapters.sql.backend import SqlBackend
from docbase.adapters.sql.dialects import Dialect
from docbase.core.field_name_encoding import encode_path
from docbase.core.query import Path

_encode = msgspec.json.Encoder().encode


class Composite(NamedTuple):
    """An index on an equality's path, then a sorted path in a direction, then ``id``."""

    equal: Path
    order: Path
    descending: bool

    def __str__(self) -> str:
        """How the log names it: ``status, price -1``."""
        return f"{'.'.join(self.equal)}, {'.'.join(self.order)} {-1 if self.descending else 1}"


class Items(NamedTuple):
    """An index of every scalar a path reaches through arrays (:mod:`.item_indexes`)."""

    path: Path

    def __str__(self) -> str:
        """How the log names it: ``tags (items)``."""
        return f"{'.'.join(self.path)} (items)"


Indexed = Path | Composite | Items
"""What the registry (``docbase_indexes.path``) lists: a path, a composite, or items."""


def registry_text(index: Indexed) -> str:
    """The registry's text of ``index`` (names not encoded): a path's list, or an object."""
    if isinstance(index, Items):
        return _encode({"items": list(encode_path(index.path))}).decode()
    if isinstance(index, Composite):
        return _encode({"equal": list(encode_path(index.equal)),
                        "order": list(encode_path(index.order)),
                        "descending": index.descending}).decode()
    return _encode(list(encode_path(index))).decode()


def _create(conn: sa.Connection, table: sa.Table, name: str, *expressions: Any,
            unique: bool = False) -> None:
    # an index on expressions only cannot find its table by itself; each expression in
    # parentheses, as CREATE INDEX wants for anything but a column or a function call
    # (a descending part comes in them already; a column bare, or SQLite would take
    # "(id)" for an expression and no longer see that the index holds the column)
    sa.Index(name, *(e if isinstance(e, UnaryExpression | sa.Column) else Grouping(e)
                     for e in expressions), unique=unique, _table=table
             ).create(conn, checkfirst=False)


def ensure_index(conn: sa.Connection, backend: SqlBackend, collection: str,
                       path: Path, *, unique: bool) -> bool:
    """Create the indexes of ``path`` unless they exist; make them unique if asked.

    Whether anything was created (not: the registry said it was there already).
    """
    dialect = backend.dialect
    number = backend.number(conn, collection, create=True)
    assert number is not None
    registry = schema.indexes
    path_json = _encode(list(path)).decode()
    found = conn.execute(sa.select(registry.c.id, registry.c.is_unique).where(
        registry.c.collection_id == number, registry.c.path == path_json)).first()
    if found is not None and (found.is_unique or not unique):
        return False
    table = schema.collection_ddl(number, dialect)
    fast = dialect.root(table, exact=False)
    if found is None:
        inserted = conn.execute(sa.insert(registry).values(
            collection_id=number, path=path_json, is_unique=unique).returning(registry.c.id))
        index_id = int(inserted.scalar_one())
        _create(conn, table, f"{table.name}_f{index_id}", dialect.fanout_index(fast, path))
        if not (unique and dialect.traits.unique_index_serves_queries):
            _create(conn, table, f"{table.name}_k{index_id}",
                    *dialect.index_parts(fast.walk(path)), table.c.id)
    else:
        index_id = int(found.id)
        conn.execute(sa.update(registry).where(registry.c.id == index_id)
                           .values(is_unique=True))
    if unique:
        exact = dialect.root(table, exact=True).walk(path)
        _create(conn, table, f"{table.name}_u{index_id}", dialect.unique_key(exact),
                      unique=True)
        if found is not None and dialect.traits.unique_index_serves_queries:
            conn.execute(sa.text(f'DROP INDEX "{table.name}_k{index_id}"'))
    if dialect.traits.analyze_after_index:
        conn.execute(sa.text(f'ANALYZE "{table.name}"'))
    return True


def ensure_composite(conn: sa.Connection, backend: SqlBackend, collection: str,
                     index: Composite) -> bool:
    """Create the composite index unless it exists (names not encoded); whether it did.

    ``(equal's index parts, order's sort parts [DESC], id)``: where the equality holds,
    its parts are one value, and the rest is the order of a page sorted on ``order``.
    """
    dialect = backend.dialect
    number = backend.number(conn, collection, create=True)
    assert number is not None
    registry = schema.indexes
    text = registry_text(index)
    if conn.execute(sa.select(registry.c.id).where(
            registry.c.collection_id == number, registry.c.path == text)).first() is not None:
        return False
    inserted = conn.execute(sa.insert(registry).values(
        collection_id=number, path=text, is_unique=False).returning(registry.c.id))
    table = schema.collection_ddl(number, dialect)
    fast = dialect.root(table, exact=False)
    # every part of the sort, the container key too (PostgreSQL's index_parts lack it,
    # and then all rows of one price were sorted by it and id: the page was no seek)
    order = encode_path(index.order)
    ordered = [Grouping(part) for part in dialect.sort_parts(
        fast.walk(order), dialect.root(table, exact=True).walk(order))]
    _create(conn, table, f"{table.name}_c{int(inserted.scalar_one())}",
            *dialect.index_parts(fast.walk(encode_path(index.equal))),
            *(part.desc() if index.descending else part for part in ordered), table.c.id)
    if dialect.traits.analyze_after_index:
        conn.execute(sa.text(f'ANALYZE "{table.name}"'))
    return True


class IndexedPaths:
    """Which paths of a collection have an index, as the registry said a moment ago.

    A sorted page takes the two-stream form (:mod:`.pages`) only when its leading sorted
    path has an index: without one, the second stream is a second scan of the table.
    Answers are kept for :data:`FRESH_SECONDS`, so that an index another process (or
    this one) created is used soon after; a stale answer only picks the slower form of
    a statement that answers the same.
    """

    FRESH_SECONDS = 5.0

    def __init__(self) -> None:
        """Nothing is known yet."""
        self._known: dict[int, tuple[float, frozenset[str]]] = {}
        self._items: dict[int, tuple[tuple[Path, int], ...]] = {}

    def forget(self) -> None:
        """Forget every answer (this store just made an index)."""
        self._known.clear()

    def lacks(self, number: int, path: Indexed) -> bool:
        """Whether collection ``number`` had no index on ``path`` a moment ago (no query)."""
        known = self.known(number)
        return known is not None and registry_text(path) not in known

    def known(self, number: int) -> frozenset[str] | None:
        """The registry texts of collection ``number``'s indexes as seen a moment ago.

        ``None`` when not asked within :data:`FRESH_SECONDS` (:meth:`has` asks).
        """
        known = self._known.get(number)
        if known is None or time.monotonic() - known[0] > self.FRESH_SECONDS:
            return None
        return known[1]

    def has(self, conn: sa.Connection, number: int, path: Indexed) -> bool:
        """Whether collection ``number`` has an index on ``path`` (names not encoded)."""
        return registry_text(path) in self.seen(conn, number)

    def seen(self, conn: sa.Connection, number: int) -> frozenset[str]:
        """The registry texts of collection ``number``'s indexes, asked again when stale."""
        known = self.known(number)
        if known is None:
            registry = schema.indexes
            rows = conn.execute(sa.select(registry.c.path, registry.c.id).where(
                registry.c.collection_id == number)).all()
            known = frozenset(row.path for row in rows)
            self._known[number] = (time.monotonic(), known)
            self._items[number] = tuple(
                (tuple(msgspec.json.decode(row.path)["items"]), int(row.id))
                for row in rows if row.path.startswith('{"items"'))
        return known

    def items(self, number: int) -> tuple[tuple[Path, int], ...]:
        """The item indexes of collection ``number`` last seen: (path, registry id) pairs.

        Paths with names encoded. Without a query, however old: an item index is
        dropped only with its collection, whose number is never reused.
        """
        return self._items.get(number, ())


def drop_collection(conn: sa.Connection, backend: SqlBackend, collection: str) -> None:
    """Drop a collection's table, indexes and registry rows (unknown names are ignored)."""
    number = backend.number(conn, collection, cached=False)
    backend.forget(collection)
    if number is None:
        return
    table = schema.collection_ddl(number, backend.dialect)
    table.drop(conn, checkfirst=True)
    for statement in backend.dialect.drop_items_statements(table.name):
        conn.exec_driver_sql(statement)
    conn.execute(sa.delete(schema.indexes).where(schema.indexes.c.collection_id == number))
    conn.execute(sa.delete(schema.collections).where(schema.collections.c.id == number))


def explain(conn: sa.Connection, dialect: Dialect, statement: sa.Select[Any]) -> str:
    """Return the plan the database chooses for ``statement``, one line per step."""
    compiled = statement.compile(dialect=conn.dialect,
                                 compile_kwargs={"render_postcompile": True})
    names = compiled.positiontup or []
    parameters = tuple(compiled.params[name] for name in names)
    if dialect.traits.explain_sees_stale_schema:
        # EXPLAIN QUERY PLAN reads no table, so it would plan on this connection's cached
        # schema, which misses an index another connection just made; a read refreshes it
        conn.exec_driver_sql("SELECT count(*) FROM sqlite_master")
    rows = conn.exec_driver_sql(dialect.traits.explain_prefix + str(compiled), parameters)
    return "\n".join(str(row[-1]) for row in rows)
