"""Reads of one row by primary key, on the event loop's own thread (SQLite files only).

A lookup by primary key costs SQLite a few microseconds. Handing it to a worker thread
and back costs far more (an executor future, waking the loop up, two hand-overs of the
GIL: ~50-70 µs), and SQLAlchemy's execute path ~30 µs on top (``docs/benchmarks.md``).
So :class:`LoopReader` answers such lookups, and the first pages of a list in key order
(at most :data:`PAGE_ROWS` rows, no filter: an index walk as short as the page), on
the thread that asks, with a connection of its own per thread, in autocommit: each
statement reads the last committed state (WAL), the writes of this process and of
every other one included.

It never waits: its busy timeout is 0, so a lookup SQLite cannot answer at once (a
checkpoint resetting the WAL, a table dropped by another process, ...) answers
:data:`UNANSWERED` and the caller asks the usual way, in a worker thread. Scans and
writes never come here.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from typing import Any, Final

from docbase.adapters.sql import schema

UNANSWERED: Final = None
"""What :meth:`LoopReader.body` returns when the lookup has to go the usual way."""

_NOT_FOUND: Final[list[tuple[str]]] = []
NO_TABLE: Final = -1
"""What :meth:`LoopReader.number` returns for a collection that has no table (yet)."""
PAGE_ROWS: Final = 256
"""The most rows (skipped ones included) a list read may walk on the event loop."""


LOOP_READER_CACHE_SIZE = -2048
"""The page cache of the loop's one connection (negative: KiB), SQLite's default 2 MiB.

The pool's connections keep a small cache (``sqlite.engine.SQLITE_CACHE_SIZE``),
but this one serves most gets by id: with 512 KiB a get read twice as many pages from
the operating system (1.4 ``pread`` a request against 0.6), each a system call on the
loop's thread. One connection a worker, so 1.5 MiB more a worker."""


class LoopReader:
    """Primary-key lookups of a SQLite file database, on the calling thread.

    The connection is made by the first thread that reads and used only by it (the event
    loop's); a read from another thread answers :data:`UNANSWERED`.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._thread: int | None = None

    def body(self, number: int, document_id: str) -> list[tuple[str]] | None:
        """Return the body row of ``document_id`` in table ``number`` (``[]``: no such row).

        Returns :data:`UNANSWERED` when SQLite cannot answer without waiting, or on
        another thread than the first reader's.
        """
        rows = self.rows(schema.lookup_sql(number, "body", "?"), (document_id,))
        return UNANSWERED if rows is None else (rows or _NOT_FOUND)

    def number(self, collection: str) -> int | None:
        """Return the table number of ``collection`` as committed (:data:`NO_TABLE`: none).

        A get from a collection without a table (a system collection nothing was written
        to yet, such as the rate limiter's counters) is answered here too, instead of by
        a lookup on a worker thread each time. Returns :data:`UNANSWERED` as
        :meth:`body` does.
        """
        rows = self.rows(schema.number_sql("?"), (collection,))
        if rows is None:
            return UNANSWERED
        return int(rows[0][0]) if rows else NO_TABLE

    def rows(self, sql: str, parameters: tuple[Any, ...]) -> list[Any] | None:
        """Every row of a read bounded by a key (a lookup, a short page in key order).

        Returns :data:`UNANSWERED` as :meth:`body` does.
        """
        connection = self._connection
        if connection is None or self._thread != threading.get_ident():
            connection = self._connect()
            if connection is None:
                return UNANSWERED
        try:
            # fetchall steps to the end, which resets the statement and ends the read
            rows: list[Any] = connection.execute(sql, parameters).fetchall()
        except sqlite3.Error:
            return UNANSWERED
        return rows

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None:
            return None  # another thread's connection: that thread reads with it
        try:
            connection = sqlite3.connect(self.path, timeout=0, isolation_level=None,
                                         check_same_thread=True, cached_statements=256)
            connection.execute("PRAGMA query_only = 1")
            connection.execute(f"PRAGMA cache_size = {LOOP_READER_CACHE_SIZE}")
        except sqlite3.Error:
            return None
        self._connection, self._thread = connection, threading.get_ident()
        return connection

    def close(self) -> None:
        """Close the connection (from the thread that made it; elsewhere it is dropped)."""
        connection, self._connection, self._thread = self._connection, None, None
        if connection is not None:
            # made by another thread: the garbage collector closes it there
            with contextlib.suppress(sqlite3.ProgrammingError):
                connection.close()
