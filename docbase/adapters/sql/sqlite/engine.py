"""SQLite's engine object: its dialect, its traits and its operations.

A file gets a synchronous engine that the stores drive from worker threads, one hop per
operation (an ``AsyncEngine`` with aiosqlite that a caller hands in works too, at
several hops per operation); ``sqlite://`` gets one in-memory database on one
connection, whose operations take turns (:mod:`docbase.adapters.sql.executors`). Each new
connection has the driver's own transactions off (the ``begin`` listener says ``BEGIN
IMMEDIATE`` for a write), docbase's SQL functions (:mod:`.functions`), the busy
timeout, a small page cache and, on a file, WAL mode.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool
from typing_extensions import override

from docbase.adapters.sql.connection_settings import POOL_SIZE
from docbase.adapters.sql.engines import EngineTraits
from docbase.adapters.sql.sqlite import functions
from docbase.adapters.sql.sqlite.dialect import SqliteDialect

_BUSY_TIMEOUT_MS = 30_000
SQLITE_CACHE_SIZE = -512
"""SQLite's page cache per connection (negative: KiB). SQLite's default, 2 MiB, times the
pool's connections and the loop reader's made a worker hold up to ~30 MiB of pages the
operating system's file cache holds anyway; reading a page from there costs a system
call (``docs/benchmarks.md``, run 8)."""

SQLITE = EngineTraits(
    name="sqlite", upsert=sqlite.insert,
    explain_prefix="EXPLAIN QUERY PLAN ", explain_sees_stale_schema=True,
    analyze_after_index=False, orders_after_equality=False, id_collation=None,
    generated_jsonb=False,
    server_functions=False, migration_lock=None, notifies_changes=False,
    supports_row_locks=False, unique_index_serves_queries=True, one_writer=True,
    rows_on_driver=True, updates_on_driver=True)


class SqliteEngine(SqliteDialect):
    """SQLite 3.38+: the engine object of ``sqlite:///path.db`` and ``sqlite://``."""

    traits = SQLITE

    @override
    def create_engine(self, url: str, *, query_timeout: float) -> sa.Engine:
        parsed = make_url(url)
        threads = {"check_same_thread": False}  # connections move between worker threads
        if parsed.database in (None, "", ":memory:"):
            # one connection holds the in-memory database; the backend serialises its use
            return sa.create_engine("sqlite+pysqlite://", poolclass=StaticPool,
                                    connect_args=threads)
        return sa.create_engine(parsed.set(drivername="sqlite+pysqlite"),
                                pool_size=POOL_SIZE, max_overflow=0,
                                connect_args={**threads, "timeout": 30})

    @override
    def prepare(self, engine: sa.Engine, *, in_memory: bool) -> None:
        @event.listens_for(engine, "connect")
        def connect(dbapi_connection: Any, _record: Any) -> None:
            # the driver must not open transactions itself: "begin" below does
            dbapi_connection.isolation_level = None
            functions.register(dbapi_connection)
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
            connection.exec_driver_sql(
                "BEGIN IMMEDIATE" if options.get("docbase_write") else "BEGIN")
