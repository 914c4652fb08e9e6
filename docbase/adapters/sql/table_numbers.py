"""The collection-name cache of one SQL backend: the numbers of committed tables only.

A collection's table is created by the first write into it, inside that write's
transaction. Until the transaction commits, no other connection sees the table (nor its
row in the catalog): a read on another connection that was handed its number would ask
for a table that is not there ("no such table", :class:`~.errors.MissingTable`). On a
SQLite file, group commit keeps a batch's transaction open over many writes, each of
which asks for the number again, so a cache filled from inside the transaction was
refilled as fast as a failing read emptied it (``tests/test_sql_table_numbers.py``).

So a number made inside a write transaction is kept with that connection and enters
the shared cache once the transaction committed; a rollback forgets it. SQLAlchemy's
``commit`` event comes *before* the driver's ``COMMIT``, which asyncpg awaits: another
request's task ran meanwhile, took the number, and wrote to a table whose creation was
not committed yet (a batch answered 503 ``MissingTable`` under load,
``tests/test_sql_table_numbers.py``). So the event only sets the numbers aside with
the pooled connection, and they enter the cache when the connection is checked back in
to the pool, after its ``COMMIT`` returned (not if it was invalidated meanwhile).
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
        # what a commit made, by pool entry, until the entry is checked in
        self._committing: weakref.WeakKeyDictionary[Any, dict[str, int]] = (
            weakref.WeakKeyDictionary())
        event.listen(engine, "begin", self._settled)  # nothing left from an unended one
        event.listen(engine, "commit", self._commit)
        event.listen(engine, "rollback", self._settled)
        event.listen(engine.pool, "checkin", self._checked_in)

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
        if created and created is not _UNSURE:  # (the driver's COMMIT comes after this)
            entry = conn.connection._connection_record
            self._committing.setdefault(entry, {}).update(created)

    def _checked_in(self, dbapi_connection: Any, entry: Any) -> None:
        created = self._committing.pop(entry, None)
        if created and dbapi_connection is not None:  # (None: invalidated)
            self._committed.update(created)

    def _settled(self, conn: sa.Connection, *_: Any) -> None:
        self._open.pop(conn, None)
