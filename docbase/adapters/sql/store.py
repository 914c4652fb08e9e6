"""A :class:`~docbase.core.ports.DocumentStore` on SQLite or PostgreSQL (SQLAlchemy Core).

The reads (gets, finds, counts, aggregates and their statements) are written in
:mod:`.reads`; this module adds the writes.

An update of one document goes the one way its engine has, chosen when the store is
built (:mod:`.row_updates`): on SQLite one write of the writer that reads, applies and
writes the row under the write lock; on PostgreSQL a compare-and-swap through asyncpg
that starts again when another writer came in between; elsewhere the row read under a
write lock and written back in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import msgspec
import sqlalchemy as sa

from docbase.adapters.sql import indexes
from docbase.adapters.sql.auto_indexes import AutoIndexer
from docbase.adapters.sql.backend import AnyEngine, SqlBackend
from docbase.adapters.sql.compiler import QueryCompiler
from docbase.adapters.sql.dialects import Row
from docbase.adapters.sql.held_back import hold_back_table
from docbase.adapters.sql.item_indexes import ensure_indexed, ensure_items
from docbase.adapters.sql.notify import PostgresChangeSignal
from docbase.adapters.sql.reads import SqlDocumentReads, decode_body
from docbase.adapters.sql.row_inserts import insert_way
from docbase.adapters.sql.row_updates import update_way
from docbase.core.documents import Document
from docbase.core.errors import Conflict, NotFound
from docbase.core.evaluate import search_strings
from docbase.core.field_name_encoding import encode_keys, encode_path, json_needs_encoding
from docbase.core.lifecycle import AsyncResource
from docbase.core.ports import DeletesByGroups, Deletion
from docbase.core.query import MATCH_ALL, Filter, Path
from docbase.core.settings import AutoIndexing
from docbase.core.update import Update
from docbase.core.versioning import check_version, versioned_id

_encode = msgspec.json.Encoder().encode


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class SqlDocumentStore(SqlDocumentReads, DeletesByGroups, AsyncResource):
    """Collections as tables ``c_<n>`` of JSON documents; see :mod:`.schema`."""

    transactional = True

    def __init__(self, engine: AnyEngine, *, owns_engine: bool = False,
                 query_timeout: float | None = None,
                 auto_index: AutoIndexing | None = None) -> None:
        """Store documents through ``engine``; ``query_timeout`` bounds each operation.

        With ``auto_index``, paths that queries keep needing are indexed by the store
        itself (:mod:`.auto_indexes`).
        """
        self.engine = engine
        backend = SqlBackend.for_engine(engine)
        if query_timeout is not None:
            backend.query_timeout = query_timeout
        super().__init__(backend)
        self._owns_engine = owns_engine
        self._signal = (PostgresChangeSignal(self.backend)
                        if self.dialect.traits.notifies_changes else None)
        # one-document inserts in one round trip on PostgreSQL (see its module)
        self._inserter = self.dialect.inserter(
            engine, self.backend.short_way_number, self.backend.forget,
            held=(self.backend.held, self.backend.cached_number))
        self._insert_rows = insert_way(self.backend, self._inserter)
        # self.current looked up at each call: tests stand in for it (a racing writer)
        self._update_row = update_way(
            self.backend, self._inserter,
            lambda collection, document_id: self.current(collection, document_id),  # noqa: PLW0108
            self._row)
        if auto_index is not None:
            self.auto_indexer = AutoIndexer(
                auto_index, lambda collection: self.count(collection, MATCH_ALL),
                self._index_automatically, self._indexes.forget)

    async def open(self) -> None:
        """Create or migrate the storage layout (idempotent)."""
        await self.backend.open()

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """See :meth:`~docbase.core.ports.DocumentStore.transaction` (:mod:`.held`)."""
        return self.backend.transaction()

    async def close(self) -> None:
        """Stop listening for changes; dispose of the engine if this store created it."""
        if self.auto_indexer is not None:
            await self.auto_indexer.idle()
        if self._signal is not None:
            await self._signal.close()
        if self._inserter is not None:
            await self._inserter.close()
        if self._owns_engine:
            await self.backend.close()

    @staticmethod
    def _row(document: Document) -> Row:
        body = _encode(document)
        if json_needs_encoding(body):  # a rare key holding U+0000 or U+0001
            body = _encode(encode_keys(document))
        return (document["_id"], body.decode(), _text(document.get("_parent_id")),
                document.get("_version", 0), _text(document.get("_created")),
                _text(document.get("_changed")), _encode(search_strings(document)).decode())

    async def insert(self, collection: str, documents: Sequence[Document], *,
                     new_ids: bool = False) -> None:
        """Insert all documents in one transaction, creating the collection if needed.

        With ``new_ids``, inside a transaction and into a table without a unique index,
        the rows are held back and written with the others before anything else runs
        (:mod:`.held_back`; on PostgreSQL by the asyncpg inserter).
        """
        if not documents:
            return
        rows = [self._row(document) for document in documents]
        held_back_into = await hold_back_table(self.backend, collection) if new_ids else None
        await self._insert_rows(collection, rows, held_back_into)

    async def update(
        self,
        collection: str,
        document_id: str,
        update: Update,
        *,
        stamp: dict[str, Any],
        expected_version: int | None = None,
    ) -> Document:
        """Apply ``update`` to the version read, written only if still that version."""
        return await self._update_row(collection, document_id, update, stamp,
                                      expected_version)

    async def current(self, collection: str, document_id: str) -> Document:
        """The stored document an update starts from (PostgreSQL: on the writes' connections).

        Raises:
            NotFound: no such document.

        """
        if self._inserter is not None:
            found = await self._inserter.read(collection, document_id)
            if found is not None:
                if not found:
                    raise NotFound(f"no document {document_id} in {collection!r}")
                document: Document = decode_body(found[0][0])
                return document
        return await self.get(collection, document_id)

    async def delete_all(self, deletions: Sequence[Deletion]) -> list[list[str]]:
        """Delete each group with one statement, all in one transaction.

        At an expected version the statement itself compares the version, so a row
        updated meanwhile is not deleted (PostgreSQL re-checks the condition on the
        updated row; SQLite writers take turns); a mismatch rolls every group back.
        """
        wanted = [list(dict.fromkeys(deletion.ids)) for deletion in deletions]
        versioned = [versioned_id(ids, d.expected_version) for ids, d in zip(
            wanted, deletions, strict=True)]

        def work(conn: sa.Connection) -> list[list[str]]:
            return [self._delete_rows(conn, d.collection, ids, version_of, d.expected_version)
                    for d, ids, version_of in zip(deletions, wanted, versioned, strict=True)]

        return await self.backend.run(work, write=True)

    def _delete_rows(self, conn: sa.Connection, collection: str, ids: list[str],
                     versioned: str | None, expected_version: int | None) -> list[str]:
        table = self.backend.table(conn, collection)
        if table is None or not ids:
            return []
        statement = sa.delete(table).where(table.c.id.in_(ids))
        if versioned is not None:
            statement = statement.where(table.c.version == expected_version)
        deleted = set(conn.execute(statement.returning(table.c.id)).scalars())
        if versioned is not None and not deleted:
            stored = conn.execute(sa.select(table.c.version)
                                  .where(table.c.id == versioned)).scalar()
            if stored is not None:
                check_version(versioned, stored, expected_version)
        return [document_id for document_id in ids if document_id in deleted]

    async def delete_where(self, collection: str, filter: Filter) -> list[str]:
        """Delete the matching documents in one statement; return their ids."""
        def work(conn: sa.Connection) -> list[str]:
            table = self.backend.table(conn, collection)
            if table is None:
                return []
            where = QueryCompiler(self.dialect, table).where(filter)
            statement = sa.delete(table).where(where).returning(table.c.id)
            return list(conn.execute(statement).scalars())

        return await self.backend.run(work, write=True)

    async def drop(self, collection: str) -> None:
        """Drop a collection's table, indexes and registration."""
        def work(conn: sa.Connection) -> None:
            indexes.drop_collection(conn, self.backend, collection)

        await self.backend.run(work, write=True)
        if self.auto_indexer is not None:
            self.auto_indexer.forget(collection)

    async def ensure_index(self, collection: str, path: Path, *, unique: bool = False) -> None:
        """Create the expression indexes of ``path`` (see :mod:`.indexes`)."""
        if unique and (held := self.backend.held()) is not None:
            held.free_of_unique.clear()  # rows of the table may no longer be held back

        def work(conn: sa.Connection) -> None:
            indexes.ensure_index(conn, self.backend, collection, encode_path(path),
                                 unique=unique)
            ensure_items(conn, self.backend, collection, indexes.Items(path))  # if arrays

        await self.backend.run(work, write=True)
        self._indexes.forget()  # (used at once)

    async def ensure_composite(self, collection: str, index: indexes.Composite) -> None:
        """Create a composite index: an equality's path, then a sort (see :mod:`.indexes`)."""
        def work(conn: sa.Connection) -> None:
            indexes.ensure_composite(conn, self.backend, collection, index)

        await self.backend.run(work, write=True)

    async def _index_automatically(self, collection: str, path: indexes.Indexed) -> bool:
        """Index ``path`` unless another process did already; whether this one did."""
        def work(conn: sa.Connection) -> bool:
            return ensure_indexed(conn, self.backend, collection, path)

        try:
            return await self.backend.run(work, write=True)
        except Conflict:  # another process inserted the registry row first: now it is there
            return await self.backend.run(work, write=True)

    def change_signal(self) -> PostgresChangeSignal | None:
        """``LISTEN/NOTIFY`` on PostgreSQL; SQLite has no push (readers poll)."""
        return self._signal
