"""PostgreSQL's engine object: its dialect, its traits and its operations.

``postgresql://`` gets an asyncpg :class:`~sqlalchemy.ext.asyncio.AsyncEngine`, and
beside it the process's own asyncpg connections (:mod:`.connections`) for the short
ways around SQLAlchemy: point reads (:mod:`.point_reads`) and one-statement writes
(:mod:`.inserts`). docbase's SQL functions live in the database (:mod:`.functions`),
installed by the migrations. Each new connection has the JIT off: the planner's
estimates for JSON set-returning functions are huge, which made PostgreSQL JIT-compile
tiny queries for seconds.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import make_url
from typing_extensions import override

from docbase.adapters.sql.connection_settings import POOL_SIZE, lock_wait
from docbase.adapters.sql.engine_operations import HeldWay
from docbase.adapters.sql.engines import EngineTraits
from docbase.adapters.sql.postgresql import connections, functions, inserts, point_reads
from docbase.adapters.sql.postgresql.dialect import PostgresDialect
from docbase.core.errors import MissingDependencyError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

CONNECT_TIMEOUT = 5.0
"""Seconds to open a PostgreSQL connection before the call fails with ``BackendError``
(503), so that requests to an unreachable server answer rather than hang."""

POSTGRESQL = EngineTraits(
    name="postgresql", upsert=postgresql.insert,
    explain_prefix="EXPLAIN ", explain_sees_stale_schema=False,
    analyze_after_index=True, orders_after_equality=True, id_collation="C", generated_jsonb=True,
    server_functions=True,
    migration_lock="SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.docbase_layout'))",
    notifies_changes=True, supports_row_locks=True, unique_index_serves_queries=False,
    one_writer=False, rows_on_driver=False, updates_on_driver=False)


class PostgresEngine(PostgresDialect):
    """PostgreSQL 12+ on asyncpg: the engine object of ``postgresql://`` URLs."""

    traits = POSTGRESQL

    @override
    def create_engine(self, url: str, *, query_timeout: float) -> AsyncEngine:
        """See the base; ``?schema=``, ``?pool_pre_ping=``, ``?connect_timeout=`` are read.

        ``?schema=name`` sets the search path, ``?pool_pre_ping=true`` pings pooled
        connections before use, ``?connect_timeout=SECONDS`` bounds opening a connection
        (default :data:`CONNECT_TIMEOUT`). Sessions get ``statement_timeout`` =
        ``query_timeout`` and ``lock_timeout`` = ``connection_settings.lock_wait`` of it.
        """
        if importlib.util.find_spec("asyncpg") is None:
            raise MissingDependencyError("asyncpg", extra="postgresql")
        parsed = make_url(url.replace("postgres://", "postgresql://", 1) if url.startswith(
            "postgres://") else url)
        query = dict(parsed.query)
        schema = query.pop("schema", None)
        pre_ping = query.pop("pool_pre_ping", "false")
        timeout = query.pop("connect_timeout", None)
        # a statement running longer is cancelled by the server (SQLSTATE 57014): one
        # request can never hold a connection and a worker for longer
        settings = {"statement_timeout": _milliseconds(query_timeout),
                    # waiting for a lock another transaction holds ends sooner (55P03): the
                    # backend is busy, a 503 to retry, not a slow query (lock_wait)
                    "lock_timeout": _milliseconds(lock_wait(query_timeout))}
        if isinstance(schema, str):
            settings["search_path"] = schema
        connect_args: dict[str, object] = {
            "server_settings": settings,
            "timeout": float(timeout) if isinstance(timeout, str) else CONNECT_TIMEOUT}
        # without pre-ping, a lost connection fails one call (BackendError) and SQLAlchemy
        # then discards every pooled connection of that age; pre-ping costs a round trip
        # imported here: it brings SQLAlchemy's ORM (~7 MiB), which SQLite never needs
        from sqlalchemy.ext.asyncio import create_async_engine  # noqa: PLC0415

        engine = create_async_engine(parsed.set(drivername="postgresql+asyncpg", query=query),
                                     pool_size=POOL_SIZE, max_overflow=0,
                                     pool_pre_ping=pre_ping in ("true", "1", "yes"),
                                     connect_args=connect_args)
        asyncpg = importlib.import_module("asyncpg")  # found above; loaded for PostgreSQL only
        dsn = parsed.set(drivername="postgresql", query=query).render_as_string(
            hide_password=False)
        connections.register(engine, functools.partial(
            asyncpg.connect, dsn, server_settings={**settings, "jit": "off"},
            timeout=connect_args["timeout"]))
        return engine

    @override
    def prepare(self, engine: sa.Engine, *, in_memory: bool) -> None:
        @event.listens_for(engine, "connect")
        def connect(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("SET jit = off")
            cursor.close()

    @override
    def function_statements(self) -> list[str]:
        return functions.install_statements()

    @override
    def point_reader(self, engine: Any) -> point_reads.PgPointReader | None:
        return point_reads.reader_for(engine)

    @override
    def inserter(self, engine: Any, number: Callable[[str], int | None],
                 forget: Callable[[str], None], *, held: HeldWay) -> inserts.PgInserter | None:
        return inserts.inserter_for(engine, number, forget, held=held)


def _milliseconds(seconds: float) -> str:
    return str(max(1, round(seconds * 1000)))
