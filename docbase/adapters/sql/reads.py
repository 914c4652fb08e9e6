"""The read half of :class:`~.store.SqlDocumentStore`: gets, finds, counts, aggregates.

Queries are compiled to SQL by :mod:`.compiler` and :mod:`.aggregates`; only projection
is applied in Python, to the page of rows the database returned. The statements of
gets, finds and counts are built once per table and query shape and kept here, and the
stored JSON text of a body is decoded here (its keys too when it may hold encoded ones,
``docbase/core/field_name_encoding.py``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import msgspec
import sqlalchemy as sa

from docbase.adapters.sql import indexes, keyset, pages
from docbase.adapters.sql.aggregates import aggregate_statement
from docbase.adapters.sql.auto_indexes import AutoIndexer, wanted_paths
from docbase.adapters.sql.backend import SqlBackend
from docbase.adapters.sql.compiler import QueryCompiler
from docbase.adapters.sql.indexes import IndexedPaths
from docbase.adapters.sql.item_rows import count_of_items
from docbase.adapters.sql.loop_reads import PAGE_ROWS
from docbase.adapters.sql.plain_reads import PlainReads
from docbase.core import grouping, projection
from docbase.core.documents import Document
from docbase.core.errors import NotFound
from docbase.core.field_name_encoding import decode_keys, json_needs_decoding
from docbase.core.query import MATCH_ALL, Aggregate, AggregateRow, Filter, Path, Query

_CACHED_STATEMENTS = 512  # find statements kept per store (all dropped when full)
_encode = msgspec.json.Encoder().encode
_decode_json = msgspec.json.Decoder().decode
_decode_top = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_shape = msgspec.msgpack.Encoder().encode


def decode_body(body: str) -> Any:
    """Decode a stored body, its keys too when it may hold encoded ones."""
    value = _decode_json(body)
    return decode_keys(value) if json_needs_decoding(body) else value


def _top_level(body: str) -> dict[str, Any]:
    """A stored body's top-level fields, their values left as stored text (msgspec.Raw).

    A body that may hold encoded keys (``docbase/core/field_name_encoding.py``) is decoded in full.
    """
    return decode_body(body) if json_needs_decoding(body) else _decode_top(body)


class SqlDocumentReads:
    """The reads of a store on one :class:`~.backend.SqlBackend`, with their statements."""

    def __init__(self, backend: SqlBackend) -> None:
        """Read through ``backend``; no statement is built yet."""
        self.backend = backend
        self.dialect = backend.dialect
        self.plain = PlainReads(backend)
        """Gets by key, plain pages and counts: one operation each (:mod:`.plain_reads`)."""
        # per table number: SELECT body WHERE id = :id, built once so that a read skips
        # statement construction (tables are never renumbered, so this never goes stale)
        self._get_statements: dict[int, sa.Select[tuple[Any]]] = {}
        self._find_statements: dict[Hashable, sa.Select[Any]] = {}
        self._indexes = IndexedPaths()
        self.auto_indexer: AutoIndexer | None = None  # set by a store that indexes by itself
        self._drops_fields_in_sql = self.dialect.drops_fields

    def _body(self, table: sa.TableClause) -> Any:
        return self.dialect.body_text(table.c.body)

    async def get(self, collection: str, document_id: str) -> Document:
        """Return one stored document; raise NotFound when absent."""
        body = await self.plain.get_body(collection, document_id, self._get_statement)
        if body is None:
            raise NotFound(f"no document {document_id} in {collection!r}")
        document: Document = decode_body(body)
        return document

    def _get_statement(self, number: int) -> sa.Select[tuple[Any]]:
        statement = self._get_statements.get(number)
        if statement is None:
            table = self.backend.table_clause(number)
            statement = self._get_statements[number] = sa.select(self._body(table)).where(
                table.c.id == sa.bindparam("id", type_=sa.Text))
        return statement

    async def find(self, collection: str, query: Query) -> list[Document]:
        """Filter, sort and page in SQL; project the returned page."""
        bodies = await self._find_bodies(collection, query, ())
        documents = [decode_body(body) for body in bodies]
        if query.projection is None:
            return documents
        return [projection.project(document, query.projection) for document in documents]

    async def find_encoded(
        self, collection: str, query: Query, *, hide: Sequence[str]
    ) -> list[msgspec.Raw]:
        """The stored texts; hidden fields dropped in SQL (SQLite's ``json_remove``) or here.

        PostgreSQL has no such function for ``json``, and rebuilding each object from its
        members there cost ~7 µs a document of the server's CPU against ~3-5 here
        (``docs/benchmarks.md``, pgspeed): the one server all workers share does less.
        """
        in_sql = self._drops_fields_in_sql
        bodies = await self._find_bodies(collection, query, hide if in_sql else ())
        if not hide or in_sql:
            if "\\" not in "".join(bodies):  # no text holds an encoded key: one memchr
                return list(map(msgspec.Raw, bodies))
            return [msgspec.Raw(body if not json_needs_decoding(body) else
                                _encode(decode_body(body))) for body in bodies]
        dropped = frozenset(hide)
        return [msgspec.Raw(_encode({key: value for key, value in _top_level(body).items()
                                     if key not in dropped}))
                for body in bodies]

    async def _find_bodies(self, collection: str, query: Query, hide: Sequence[str]) -> list[str]:
        after = keyset.parameters(query, self.dialect)
        if query.filter == MATCH_ALL and not query.sort and query.limit is not None:
            # a walk of the key index (a cursor without a sort is a seek in it), needing
            # no index look-up: on the loop's thread if short (SQLite), or through asyncpg
            def statement(number: int) -> sa.Select[Any]:
                return self._find_statement(number, query, hide)

            return await self.plain.scalars(collection, statement, after,
                                            on_loop=query.skip + query.limit <= PAGE_ROWS)

        wanted = wanted_paths(query) if self.auto_indexer is not None else []
        if wanted and self.auto_indexer is not None:
            number = self.backend.cached_number(collection)
            lacking = [path for path in wanted
                       if number is not None and self._indexes.lacks(number, path)]
            if lacking:
                # counted before it runs: an unindexed find may take seconds (PostgreSQL)
                self.auto_indexer.unserved(collection, lacking[0])
                wanted = []

        def work(conn: sa.Connection) -> tuple[list[str], indexes.Indexed | None]:
            number = self.backend.number(conn, collection)
            if number is None:
                return [], None
            # (asked here, the indexes then plan the next finds without a connection)
            split, unserved = _planned(query, wanted, self._indexes.seen(conn, number))
            statement = self._find_statement(number, query, hide, split)
            return self.backend.scalars(conn, statement, after), unserved

        number = self.backend.short_way_number(collection)
        known = None if number is None else self._indexes.known(number)
        if known is None:
            bodies, unserved = await self.backend.run(work, write=False)
        else:
            # the indexes as seen a moment ago plan the statement without a connection,
            # so it is a plain read: PostgreSQL runs it through asyncpg, prepared once
            # per connection (the usual way cost ~0.7 ms more a find, docs/benchmarks.md)
            split, unserved = _planned(query, wanted, known)
            bodies = await self.plain.scalars(
                collection, lambda number: self._find_statement(number, query, hide, split),
                after)
        if unserved is not None and self.auto_indexer is not None:
            self.auto_indexer.unserved(collection, unserved)
        return bodies

    def _split(self, conn: sa.Connection, number: int, query: Query) -> pages.Split:
        """The paths a page's plain stream takes as flat, and its lead (:mod:`.pages`)."""
        return pages.split(query, lambda path: self._indexes.has(conn, number, path))

    def _find_statement(self, number: int, query: Query, hide: Sequence[str],
                        split: pages.Split = pages.NO_SPLIT) -> sa.Select[Any]:
        # built once per query shape and table: the same list read (a page of a listing)
        # comes again and again, and building the statement cost more than running it
        # keyed by the query's MessagePack form, which tells true from 1 and 1 from 1.0
        # (equal, and equally hashed, as Python values); a cursor's values are bound
        # at each run (:mod:`.keyset`), so all pages of a listing share one statement
        items = self._indexes.items(number)
        key = (number, tuple(hide), split, items,
               _shape((query.filter, query.sort, query.skip, query.limit)),
               keyset.shape(query, self.dialect))
        statement = self._find_statements.get(key)
        if statement is not None:
            return statement
        table = self.backend.table_clause(number)
        body = self._body(table)
        if hide:  # the dialect can: find_encoded asked
            body = self.dialect.without_fields(table.c.body, hide)
        if split.branches:  # an $or whose operands each an index serves: merged in key order
            statement = pages.merged_branches(self.dialect, table, body, query, split,
                                              items=items)
        elif split.flat:  # an index serves the order or the condition: two streams, one seeking
            statement = pages.sorted_page(self.dialect, table, body, query, split, items=items)
        elif (query.skip and query.limit is not None and query.filter == MATCH_ALL
              and not query.sort and query.after is None):
            statement = pages.deferred_page(table, body, query)
        else:
            compiler = QueryCompiler(self.dialect, table, items=items)
            statement = (sa.select(body).select_from(table).where(compiler.where(query.filter))
                         .order_by(*compiler.order_by(query.sort)))
            seek = keyset.condition(query, compiler)
            if seek is not None:
                statement = statement.where(seek)
            if query.skip:
                statement = statement.offset(pages.written_number(query.skip))
            if query.limit is not None:
                statement = statement.limit(pages.written_number(query.limit))
        self._cache(key, statement)
        return statement

    async def count(self, collection: str, filter: Filter) -> int:
        """Count the matching documents in SQL (on PostgreSQL through asyncpg)."""
        found = await self.plain.scalars(
            collection, lambda number: self._count_statement(number, filter))
        return int(found[0]) if found else 0  # (no table: no documents)

    def _count_statement(self, number: int, filter: Filter) -> sa.Select[Any]:
        items = self._indexes.items(number)  # (as a find last saw them)
        key = ("count", number, items, _shape(filter))  # cached as the find statements are
        statement = self._find_statements.get(key)
        if statement is None:
            table = self.backend.table_clause(number)
            statement = sa.select(sa.func.count()).select_from(table)
            if filter != MATCH_ALL:  # without WHERE, SQLite counts a b-tree's entries
                where = QueryCompiler(self.dialect, table, items=items).where(filter)
                statement = count_of_items(table, where, statement.where(where))
            self._cache(key, statement)  # (5 against 250 us for 10,000 rows)
        return statement

    def _cache(self, key: Hashable, statement: sa.Select[Any]) -> None:
        if len(self._find_statements) >= _CACHED_STATEMENTS:
            self._find_statements.clear()
        self._find_statements[key] = statement

    async def aggregate(
        self,
        collection: str,
        filter: Filter,
        groupby: Sequence[Path],
        aggregates: Sequence[Aggregate],
    ) -> list[AggregateRow]:
        """Group and aggregate in one SQL statement (see :mod:`.aggregates`)."""
        def work(conn: sa.Connection) -> list[AggregateRow]:
            table = self.backend.table(conn, collection)
            if table is None:
                return grouping.aggregate([], groupby, aggregates)
            compiler = QueryCompiler(self.dialect, table)
            statement, decode = aggregate_statement(compiler, filter, groupby, aggregates)
            return decode(conn.execute(statement).all())

        return await self.backend.run(work, write=False)

    async def collections(self) -> list[str]:
        """Return the names of the collections holding documents, sorted."""
        def work(conn: sa.Connection) -> list[str]:
            numbers = self.backend.collection_numbers(conn)
            if not numbers:
                return []
            probes = [
                sa.select(sa.literal(name, sa.Text).label("name")).where(
                    sa.select(sa.literal_column("1")).select_from(
                        self.backend.table_clause(number)).exists())
                for name, number in numbers.items()
            ]
            found = conn.execute(sa.union_all(*probes))
            return sorted(found.scalars())

        return await self.backend.run(work, write=False)

    async def explain(self, collection: str, filter: Filter | Query) -> str:
        """Return the database's query plan for ``filter``, or for a whole find (a query).

        For a query the plan is that of the very statement :meth:`find` runs.
        """
        def work(conn: sa.Connection) -> str:
            number = self.backend.number(conn, collection)
            if number is None:
                raise NotFound(f"no collection {collection!r}")
            if isinstance(filter, Query):
                split = self._split(conn, number, filter)
                statement = self._find_statement(number, filter, (), split)
            else:
                table = self.backend.table_clause(number)
                self._indexes.seen(conn, number)  # (the item indexes, as a count sees)
                statement = sa.select(table.c.id).where(QueryCompiler(
                    self.dialect, table, items=self._indexes.items(number)).where(filter))
            return indexes.explain(conn, self.dialect, statement)

        return await self.backend.run(work, write=False)


def _planned(query: Query, wanted: Sequence[indexes.Indexed], known: frozenset[str]
             ) -> tuple[pages.Split, indexes.Indexed | None]:
    """A find's page split, and the first of ``wanted`` without an index, by ``known``.

    ``known``: the registry texts of the collection's indexes (:class:`.IndexedPaths`).
    """
    def indexed(path: indexes.Indexed) -> bool:
        return indexes.registry_text(path) in known

    return pages.split(query, indexed), next((path for path in wanted if not indexed(path)),
                                             None)
