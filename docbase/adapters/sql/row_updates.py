"""How a SQL store updates one document: one way per engine, chosen once per store.

Each way is an :data:`UpdateRow` (collection, id, update, stamp, expected version ->
the document written), and the store picks one when it is built
(:func:`update_way`), from what its engine object says it has:

- **on the driver** (SQLite: ``traits.updates_on_driver``): one write of the writer
  reads, applies and writes the row under the write lock (:mod:`.driver_updates`);
- **compare and swap** (an engine object with an inserter: PostgreSQL on asyncpg,
  :class:`SwappedUpdates`): the document is read, the update applied in Python and the
  row written with one statement that compares the version read; when another writer
  changed it in between, no row matches and the update starts again from the newer
  version (an expected version then no longer matches: ``VersionMismatch``). After
  :data:`SWAP_ATTEMPTS`, or when the inserter has no short way now (inside a
  transaction, no connection to be had), it updates as the locked way does;
- **locked** (any other engine, such as one a caller built: :class:`LockedUpdates`): the
  row is read under a write lock (``SELECT ... FOR UPDATE`` where ``traits`` say rows
  lock) and written back in one transaction.

``tests/test_sql_row_updates.py`` takes each way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import sqlalchemy as sa

from docbase.adapters.sql.backend import SqlBackend
from docbase.adapters.sql.dialects import COLUMNS, Row
from docbase.adapters.sql.driver_updates import DriverUpdates
from docbase.adapters.sql.engine_operations import Inserter
from docbase.adapters.sql.reads import decode_body
from docbase.core.documents import Document
from docbase.core.errors import NotFound
from docbase.core.update import Update
from docbase.core.versioning import updated_document

SWAP_ATTEMPTS = 3
"""Optimistic tries of a compare-and-swap update before it locks the row."""
RowOf = Callable[[Document], Row]
Current = Callable[[str, str], Awaitable[Document]]


class UpdateRow(Protocol):
    """Apply ``update`` to one stored document, written only if still the version read.

    Raises:
        NotFound: no such document.
        VersionMismatch: it is not at ``expected_version``.
        DocbaseError: what applying ``update`` to it raised.

    """

    def __call__(self, collection: str, document_id: str, update: Update,
                 stamp: dict[str, Any], expected_version: int | None, /) -> Awaitable[Document]:
        """See the class."""


class LockedUpdates:
    """Read the row under a write lock, apply, write it back: one transaction."""

    def __init__(self, backend: SqlBackend, row_of: RowOf) -> None:
        self.backend = backend
        self.dialect = backend.dialect
        self._row_of = row_of

    async def update(self, collection: str, document_id: str, update: Update,
                     stamp: dict[str, Any], expected_version: int | None) -> Document:
        """See :class:`UpdateRow`."""
        def work(conn: sa.Connection) -> Document:
            table = self.backend.table(conn, collection)
            if table is None:
                raise NotFound(f"no document {document_id} in {collection!r}")
            read = sa.select(self.dialect.body_text(table.c.body)).where(
                table.c.id == document_id)
            if self.dialect.traits.supports_row_locks:
                read = read.with_for_update()
            body = conn.execute(read).scalar()
            if body is None:
                raise NotFound(f"no document {document_id} in {collection!r}")
            current: Document = decode_body(body)
            changed = updated_document(document_id, current, update, stamp, expected_version)
            values = dict(zip(COLUMNS[1:], self._row_of(changed)[1:], strict=True))
            conn.execute(sa.update(table).where(table.c.id == document_id).values(
                body=self.dialect.json_param("p_body"),
                search=self.dialect.search_param("p_search"),
                parent_id=values["parent_id"], version=values["version"],
                created=values["created"], changed=values["changed"],
            ), {"p_body": values["body"], "p_search": values["search"]})
            return changed

        return await self.backend.run(work, write=True)


class SwappedUpdates:
    """Read, apply and compare-and-swap through the engine's inserter; else locked."""

    def __init__(self, inserter: Inserter, current: Current, row_of: RowOf,
                 locked: LockedUpdates) -> None:
        """``current`` reads the document an update starts from (the store's)."""
        self.inserter = inserter
        self._current = current
        self._row_of = row_of
        self._locked = locked

    async def update(self, collection: str, document_id: str, update: Update,
                     stamp: dict[str, Any], expected_version: int | None) -> Document:
        """See :class:`UpdateRow`."""
        for _ in range(SWAP_ATTEMPTS):
            current = await self._current(collection, document_id)
            version = current.get("_version")
            changed = updated_document(document_id, current, update, stamp, expected_version)
            swapped = await self.inserter.swap(collection, self._row_of(changed), version or 0)
            if swapped is None:  # no short way now
                break
            if swapped:
                return changed
        return await self._locked.update(collection, document_id, update, stamp,
                                         expected_version)


def update_way(backend: SqlBackend, inserter: Inserter | None, current: Current,
               row_of: RowOf) -> UpdateRow:
    """The one way ``backend``'s engine updates a document (see the module)."""
    if backend.dialect.traits.updates_on_driver:
        return DriverUpdates(backend, row_of).update
    locked = LockedUpdates(backend, row_of)
    if inserter is None:
        return locked.update
    return SwappedUpdates(inserter, current, row_of, locked).update
