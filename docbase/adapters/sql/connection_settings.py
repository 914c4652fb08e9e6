"""What every connection of a SQL engine is set up with, and how long it may wait.

On SQLite: the driver's own transactions off (``begin`` says ``BEGIN IMMEDIATE`` for a
write), docbase's SQL functions (:mod:`.sqlite_functions`), the busy timeout, WAL mode on
a file, and a progress handler that interrupts a statement once its operation's time is
spent. On PostgreSQL: the JIT off. For both: the share of ``limits.query_timeout`` a
write waits for a lock held elsewhere (:func:`lock_wait`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from docbase.adapters.sql import sqlite_functions

_BUSY_TIMEOUT_MS = 30_000
LOCK_SHARE = 0.5
"""Share of ``limits.query_timeout`` a write may wait for a lock another transaction
holds (a PostgreSQL row, SQLite's write lock) before it gives up with ``BackendError``
(503, retry): below the statement's own bound, so that contention is never answered as
a slow query (400 ``QueryTimeout``). See :func:`lock_wait`."""
_PROGRESS_STEPS = 10_000  # SQLite VM steps between two looks at the clock


SQLITE_CACHE_SIZE = -512
"""SQLite's page cache per connection (negative: KiB). SQLite's default, 2 MiB, times the
pool's connections and the loop reader's made a worker hold up to ~30 MiB of pages the
operating system's file cache holds anyway; reading a page from there costs a system
call (``docs/benchmarks.md``, run 8)."""


def prepare_sqlite(engine: sa.Engine, *, in_memory: bool) -> None:
    """Set up each new connection of ``engine`` and the start of its transactions."""
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        # the driver must not open transactions itself: "begin" below does
        dbapi_connection.isolation_level = None
        sqlite_functions.register(dbapi_connection)
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        cursor.execute(f"PRAGMA cache_size = {SQLITE_CACHE_SIZE}")
        if not in_memory:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection: sa.Connection) -> None:
        options = connection.get_execution_options()
        if options.get("docbase_read") or options.get("docbase_locked"):
            return  # each read statement is its own transaction; the writer began itself
        connection.exec_driver_sql("BEGIN IMMEDIATE" if options.get("docbase_write") else "BEGIN")


def begin_write(conn: sa.Connection) -> sa.RootTransaction:
    """Begin a write transaction (on SQLite ``BEGIN IMMEDIATE``: the lock at once)."""
    return conn.execution_options(docbase_write=True).begin()


def begin_locked(conn: sa.Connection) -> sa.RootTransaction:
    """Begin SQLAlchemy's transaction on a connection that already holds the write lock."""
    return conn.execution_options(docbase_write=True, docbase_locked=True).begin()


def prepare_postgresql(engine: sa.Engine) -> None:
    """Set up each new connection of ``engine`` (``jit`` off)."""
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        # the planner's estimates for JSON set-returning functions are huge, which
        # makes PostgreSQL JIT-compile tiny queries for seconds; plain execution is fast
        cursor = dbapi_connection.cursor()
        cursor.execute("SET jit = off")
        cursor.close()


def lock_wait(query_timeout: float) -> float:
    """Seconds a write waits for a lock held elsewhere: :data:`LOCK_SHARE` of ``query_timeout``.

    PostgreSQL's ``lock_timeout`` (SQLSTATE 55P03) and the SQLite writer's wait for the
    file's write lock ("database is locked") both end there, before
    ``statement_timeout`` (57014) could, and :mod:`.errors` answers them as the backend
    being unavailable for now, not as a bad request.
    """
    return query_timeout * LOCK_SHARE


@contextlib.contextmanager
def interrupted(conn: sa.Connection, seconds: float) -> Iterator[None]:
    """Interrupt a SQLite statement once the operation's ``seconds`` are spent.

    SQLite has no ``statement_timeout``; its progress handler, called every few
    thousand virtual-machine steps, aborts the statement ("interrupted", which
    :mod:`.errors` turns into ``QueryTimeout``). PostgreSQL needs none of this; an
    engine on aiosqlite that a caller hands in goes without.
    """
    raw = conn.connection.driver_connection
    if not isinstance(raw, sqlite3.Connection):  # PostgreSQL, or aiosqlite's wrapper
        yield
        return
    deadline = time.monotonic() + seconds
    raw.set_progress_handler(lambda: time.monotonic() > deadline, _PROGRESS_STEPS)
    try:
        yield
    finally:
        raw.set_progress_handler(None, 0)
