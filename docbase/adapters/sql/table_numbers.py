"""The collection-name cache of one SQL backend: the numbers of committed tables only.

A collection's table is created by the first write into it, inside that write's
transaction. Until the transaction commits, no other connection sees the table (nor its
row in the catalog): a read on another connection that was handed its number would ask
for a table that is not there ("no such table", :class:`~.errors.MissingTable`). On a
SQLite file, group commit keeps a batch's transaction open over many writes, each of
which asks for the number again, so a cache filled from inside the transaction was
refilled as fast as a failing read emptied it (``tests/test_sql_table_numbers.py``).

So a number made inside a write transaction is kept with that connection and enters
the shared cache when SQLAlchemy says the transaction committed; a rollback forgets it.
(Kept beside the ``Connection`` object, not in its ``info``: asking an invalidated
connection for ``info`` in its rollback event checks out a new driver connection that
nothing returns.) A savepoint rolled back on the driver (:mod:`.group_commit`) cannot
say which tables went with it, so nothing that transaction created is cached: the next
look-up after the commit finds what is really there.
"""

from __future__ import annotations

import weakref
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

_UNSURE: dict[str, int] = {}
"""What a connection's open transaction created once one of its savepoints was rolled
back: nothing is taken from it (compared by identity)."""


class TableNumbers:
    """Collection name to table number, for the tables whose creation is committed."""

    def __init__(self, engine: sa.Engine) -> None:
        self._committed: dict[str, int] = {}
        # the tables each connection's open write transaction created, by name
        self._open: weakref.WeakKeyDictionary[sa.Connection, dict[str, int]] = (
            weakref.WeakKeyDictionary())
        event.listen(engine, "begin", self._settled)  # nothing left from an unended one
        event.listen(engine, "commit", self._commit)
        event.listen(engine, "rollback", self._settled)

    def get(self, collection: str) -> int | None:
        """The number of ``collection``'s committed table, if known here."""
        return self._committed.get(collection)

    def found(self, conn: sa.Connection, collection: str, number: int) -> None:
        """Remember a number looked up on ``conn`` (unless its own transaction made it)."""
        created = self._open.get(conn)
        if created is None or (created is not _UNSURE and collection not in created):
            self._committed[collection] = number

    def found_committed(self, collection: str, number: int) -> None:
        """Remember a number read where only committed tables show (SQLite's loop reads)."""
        self._committed[collection] = number

    def created(self, conn: sa.Connection, collection: str, number: int) -> None:
        """Note a table made in ``conn``'s transaction: cached once it commits."""
        created = self._open.get(conn)
        if created is None:
            created = self._open[conn] = {}
        if created is not _UNSURE:
            created[collection] = number

    def savepoint_rolled_back(self, conn: sa.Connection) -> None:
        """Cache nothing more from ``conn``'s transaction (see the module's text)."""
        self._open[conn] = _UNSURE

    def forget(self, collection: str) -> None:
        """Drop ``collection`` (its table was dropped)."""
        self._committed.pop(collection, None)

    def clear(self) -> None:
        """Drop every number (a cached table turned out to be gone)."""
        self._committed.clear()

    def _commit(self, conn: sa.Connection) -> None:
        created = self._open.pop(conn, None)
        if created and created is not _UNSURE:
            self._committed.update(created)

    def _settled(self, conn: sa.Connection, *_: Any) -> None:
        self._open.pop(conn, None)
