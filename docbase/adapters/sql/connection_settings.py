"""How a SQL engine's transactions begin, and how long its work may wait.

What each new connection is set up with is its engine object's
(``EngineOperations.prepare``: on SQLite in ``sqlite/engine.py``, on PostgreSQL in
``postgresql/engine.py``). Here: beginning a write (on SQLite ``BEGIN IMMEDIATE``, which
the ``begin`` listener that SQLite's ``prepare`` installs reads from the execution
options), a progress handler that interrupts a SQLite statement once its operation's
time is spent, the share of ``limits.query_timeout`` a write waits for a lock held
elsewhere (:func:`lock_wait`), and the size of the connection pools.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator

import sqlalchemy as sa

LOCK_SHARE = 0.5
"""Share of ``limits.query_timeout`` a write may wait for a lock another transaction
holds (a PostgreSQL row, SQLite's write lock) before it gives up with ``BackendError``
(503, retry): below the statement's own bound, so that contention is never answered as
a slow query (400 ``QueryTimeout``). See :func:`lock_wait`."""
_PROGRESS_STEPS = 10_000  # SQLite VM steps between two looks at the clock
POOL_SIZE = 15
"""Connections an engine keeps open: up to the expected concurrency, so that a burst of
requests does not open and close overflow connections (new connection, session setup
and, on PostgreSQL, an empty prepared-statement cache) on every call; the backend's
threads (16, :mod:`.executors`) cover it."""


def begin_write(conn: sa.Connection) -> sa.RootTransaction:
    """Begin a write transaction (on SQLite ``BEGIN IMMEDIATE``: the lock at once)."""
    return conn.execution_options(docbase_write=True).begin()


def begin_locked(conn: sa.Connection) -> sa.RootTransaction:
    """Begin SQLAlchemy's transaction on a connection that already holds the write lock."""
    return conn.execution_options(docbase_write=True, docbase_locked=True).begin()


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
