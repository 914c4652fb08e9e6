"""SQLite updates: read, apply and write one document in one write of the writer.

An update of one document on SQLite is one piece of work for the writer
(:mod:`.group_commit` on a file): it reads the row, applies the update in Python
(:func:`~docbase.core.versioning.updated_document`) and writes the row back, in plain
SQL on the driver's connection, inside the write transaction. The write lock is held
from the read on, so no other writer, in this process or another, comes in between:
nothing to compare and swap, nothing to start again.

The earlier way read the row on the event loop's thread (:mod:`.loop_reads`) and
swapped it in the writer's next batch. Every commit makes a reading connection drop its
page cache, so under a load of writes that read went back to the file each time; the
writer's own connection keeps its pages warm. A patch of one field went from ~450 to
~300 µs of CPU (``benchmarks/inprocess_bench.py patch``, ``docs/benchmarks.md``).

An update that cannot be applied (no such document, a version mismatch, an update the
document refuses) is found before anything is written, so it is handed back as the
work's result rather than raised: the other writes of its batch are not rolled back
and run again for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from docbase.adapters.sql.backend import SqlBackend
from docbase.adapters.sql.dialects import Row, swap_sql
from docbase.adapters.sql.reads import decode_body
from docbase.adapters.sql.schema import lookup_sql, table_name
from docbase.core.documents import Document
from docbase.core.errors import DocbaseError, NotFound
from docbase.core.update import Update
from docbase.core.versioning import updated_document


class DriverUpdates:
    """One-document updates of a SQLite store, each one write of its writer."""

    def __init__(self, backend: SqlBackend, row_of: Callable[[Document], Row]) -> None:
        """Updates run by ``backend``; ``row_of`` is the store's encoding of a row."""
        self.backend = backend
        self._row_of = row_of
        self._writes: dict[int, str] = {}  # the UPDATE of each table

    async def update(self, collection: str, document_id: str, update: Update,
                     stamp: dict[str, Any], expected_version: int | None) -> Document:
        """Apply ``update`` to the stored document; return what was written.

        Raises:
            NotFound: no such document.
            VersionMismatch: it is not at ``expected_version``.
            DocbaseError: what applying ``update`` to it raised.

        """
        def work(conn: sa.Connection) -> Document | DocbaseError:
            number = self.backend.number(conn, collection)
            driver = conn.connection.driver_connection
            assert driver is not None
            found = None if number is None else driver.execute(
                lookup_sql(number, "body", "?"), (document_id,)).fetchone()
            if number is None or found is None:
                return NotFound(f"no document {document_id} in {collection!r}")
            current: Document = decode_body(found[0])
            try:
                changed = updated_document(document_id, current, update, stamp,
                                           expected_version)
            except DocbaseError as refused:  # nothing was written: the batch goes on
                return refused
            written = driver.execute(self._write(number),
                                     (*self._row_of(changed), current.get("_version") or 0))
            assert written.rowcount == 1, "the row changed under the write lock"
            return changed

        outcome = await self.backend.run(work, write=True, short=True)  # one row by key
        if isinstance(outcome, DocbaseError):
            raise outcome
        return outcome

    def _write(self, number: int) -> str:
        statement = self._writes.get(number)
        if statement is None:
            statement = self._writes[number] = swap_sql(table_name(number), "?")
        return statement
